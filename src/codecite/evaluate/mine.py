"""A golden set mined from the repository's own git history (``codecite eval --mine``).

Each recent commit that changes a few definitions becomes one question: the query
is the commit subject, cleaned of ticket references and ``fix:``-style prefixes;
the expected answer is the definitions (functions, methods, classes) the commit
changed that still exist at HEAD, with their line ranges from the index.

How a commit is read: ``git show --unified=0`` gives the changed lines of each
file in the commit's own version; that version (``git show COMMIT:path``) is cut
with :func:`codecite.chunking.chunk_file`, and each changed line goes to the
innermost definition that holds it (a deletion to the definition holding both
lines around it). Definitions are then looked up at HEAD by (path, qualname).

Commits are read newest first and skipped, with the reason counted, when they are:

- ``merge``: more than one parent;
- ``revert``, ``release`` (version bumps, changelogs), ``dependency`` (dependency
  bumps), ``typo`` (typo/spelling fixes), ``formatting`` (formatting, lint, style),
  ``chore`` (``docs:``/``test:``/``ci:``/``build:``/``chore:`` commits, "Update the
  docs"...): by subject, see :data:`SKIP_SUBJECTS`;
- ``vague-subject``: fewer than :data:`MIN_SUBJECT_WORDS` words once cleaned;
- ``no-source``: no change to a source file (only tests, docs, config, data);
- ``huge``: more than :data:`MAX_SOURCE_FILES` source files or
  :data:`MAX_SOURCE_LINES` changed source lines;
- ``formatting``: also when the diff changes whitespace only;
- ``no-definition``: source lines changed, but none inside a definition;
- ``too-many-definitions``: more than :data:`MAX_DEFINITIONS` definitions changed;
- ``gone-at-head``: none of the changed definitions exists at HEAD any more;
- ``duplicate``: a newer kept commit has the same query.

Definitions in test files are never expected answers: the subject describes the
behaviour, the test only checks it. The set is biased (README, "eval --mine"):
subjects are terse and written for people who know the code, and a commit's
definitions are not always what its subject asks about.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..api import Index
from ..chunking import chunk_file
from ..chunking.grammars import detect_language, is_code_language
from ..errors import UserError
from ..progress import Progress, ProgressFn
from ..types import Chunk
from ..walk import decode_text
from . import EvalReport, GoldenQuery, Relevant, Retrieved, evaluate

__all__ = [
    "MineRun",
    "MineStats",
    "MinedDefinition",
    "MinedQuery",
    "MinedSet",
    "clean_subject",
    "mine_golden",
    "run_mine",
    "write_golden",
]

log = logging.getLogger(__name__)

#: Most commits read (newest first) while looking for ``n`` questions.
MAX_COMMITS = 2000
#: A kept commit changes at least one and at most this many definitions...
MAX_DEFINITIONS = 5
#: ...in at most this many source files...
MAX_SOURCE_FILES = 8
#: ...with at most this many added + removed source lines.
MAX_SOURCE_LINES = 400
#: A query needs at least this many words once cleaned.
MIN_SUBJECT_WORDS = 3
#: Chunk kinds that are definitions.
DEFINITION_KINDS = frozenset({"function", "method", "class"})
#: The ``kind`` of a mined golden query.
MINED_KIND = "mined"
#: Skip reason → subject pattern (case-insensitive, tried in this order).
SKIP_SUBJECTS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "merge": r"^merge (pull request|branch|commit|remote-tracking|tag)\b",
        "revert": r"^(revert|reverts|reverted|undo)\b",
        "release": r"^(release|releasing|prepare (for )?release|version|start v?\d|v?\d+\.\d+)"
        r"|\bbump(ed|s)? (the )?(version|to v?\d)|\b(changelog|changes\.(rst|md)|"
        r"release notes|news entry)\b",
        "dependency": r"^(build\(deps\)|chore\(deps\))|^bump\b|"
        r"^(update|upgrade|pin)s? \S+ (from \S+ )?to v?\d+\.\d+|\bdependenc(y|ies)\b|"
        r"\bdeps\b|\brequirements\b|pre-commit autoupdate|\[pre-commit\.ci\]",
        "typo": r"\btypos?\b|\bspelling\b|\bmisspel",
        "formatting": r"^style\b|\b(reformat|reformatted|formatting|whitespace|lint|linting|"
        r"flake8|pylint|isort|black|prettier|ruff format|code style)\b",
        "chore": r"^(docs?|tests?|ci|build|chore)(\([^)]*\))?!?:|"
        r"^(update|improve|fix|add|clarify|correct|expand)(s|ed)?( the| some)? "
        r"(docs?|documentation|docstrings?|comments?)\b",
    }.items()
}
#: Removed from subjects, in order: conventional-commit types, tickets, issue references.
SUBJECT_NOISE = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"^(feat|feature|fix|bugfix|hotfix|perf|refactor|enh|enhancement)(\([^)]*\))?!?:\s*",
        r"^\[?(gh|bpo|issue)-?\s?#?\d+\]?:?\s*",
        r"^\[?[A-Z][A-Z0-9]+-\d+\]?:?\s*",
        r"\[(skip ci|ci skip|wip)\]|^wip:?\s*",
        r"\s*\(((fixes|closes|resolves|refs?|see)\s+)?(#|gh-)\d+([,\s]+(#|gh-)\d+)*\)",
        r"\b(fixes|fixed|closes|closed|resolves|resolved|refs?|see)\s+#\d+",
        r"#\d+",
    )
)
#: Test files: their definitions are never expected answers.
TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|specs?)/|(^|/)(test_[^/]*|[^/]*_tests?\.[^/.]+|"
    r"[^/]*\.(test|spec)\.[^/.]+|conftest\.py)$"
)
#: Documentation folders: code in them is not source.
DOCS_PATH = re.compile(r"(^|/)(docs?|documentation)/")
_HUNK = re.compile(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class MinedDefinition:
    """An expected answer: a definition at HEAD, lines as the index has them."""

    path: str
    qualname: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class MinedQuery:
    commit: str  # full hash
    id: str  # short hash
    subject: str  # as written
    query: str  # cleaned
    definitions: tuple[MinedDefinition, ...]

    def to_golden(self) -> GoldenQuery:
        return GoldenQuery(
            id=self.id,
            query=self.query,
            relevant=tuple(Relevant(d.path, d.start_line, d.end_line) for d in self.definitions),
            kind=MINED_KIND,
        )

    def to_json(self) -> dict[str, Any]:
        """A line of the golden file (``load_golden`` reads it; extra keys are ignored)."""
        return {
            "id": self.id,
            "query": self.query,
            "relevant": [asdict(d) for d in self.definitions],
            "kind": MINED_KIND,
            "commit": self.commit,
            "subject": self.subject,
        }


@dataclass(frozen=True)
class MineStats:
    scanned: int  # commits read
    kept: int
    skipped: dict[str, int]  # reason → commits

    def to_json(self) -> dict[str, Any]:
        return {"scanned": self.scanned, "kept": self.kept, "skipped": dict(self.skipped)}


@dataclass(frozen=True)
class MinedSet:
    queries: tuple[MinedQuery, ...]
    stats: MineStats

    def golden(self) -> list[GoldenQuery]:
        return [q.to_golden() for q in self.queries]

    def summary(self) -> str:
        """One line for people: how many questions from how many commits, and why not more."""
        why = ", ".join(f"{count} {reason}" for reason, count in self.stats.skipped.items())
        return f"mined {self.stats.kept} questions from {self.stats.scanned} commits" + (
            f" (skipped: {why})" if why else ""
        )


@dataclass(frozen=True)
class MineRun:
    """What ``codecite eval --mine`` shows: the mined set and its evaluation."""

    mined: MinedSet
    report: EvalReport

    def to_json(self) -> dict[str, Any]:
        return {**self.report.to_json(), "mined": self.mined.stats.to_json()}


@dataclass
class _FileDiff:
    path: str
    changed: list[tuple[int, int]] = field(default_factory=list)  # new-version line ranges
    deleted_after: list[int] = field(default_factory=list)  # deletions after this new line
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


class _Skip(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------- public


def mine_golden(
    index: Index,
    *,
    n: int = 50,
    max_commits: int = MAX_COMMITS,
    on_progress: ProgressFn | None = None,
) -> MinedSet:
    """Up to ``n`` questions from the newest ``max_commits`` commits of ``index.root``."""
    if n < 1:
        raise UserError(f"n must be at least 1, got {n}")
    root = index.root
    if _git(root, "rev-parse", "--verify", "-q", "HEAD") is None:
        raise UserError(f"{root} is not a git repository with commits; --mine reads its history")
    at_head = _definitions_at_head(index.chunks())
    kept: list[MinedQuery] = []
    skipped: Counter[str] = Counter()
    queries_seen: set[str] = set()
    scanned = 0
    for commit, short, parents, subject in _log(root, max_commits):
        scanned += 1
        try:
            query = _query_of(subject, parents)
            found = _definitions_of(index, commit, at_head)
            if query.lower() in queries_seen:
                raise _Skip("duplicate")
        except _Skip as skip:
            skipped[skip.reason] += 1
            log.debug("commit %s skipped (%s): %s", short, skip.reason, subject)
            continue
        queries_seen.add(query.lower())
        kept.append(MinedQuery(commit, short, subject, query, found))
        if on_progress is not None:
            on_progress(Progress("mine", len(kept), n, short))
        if len(kept) >= n:
            break
    stats = MineStats(scanned, len(kept), dict(skipped.most_common()))
    return MinedSet(tuple(kept), stats)


def write_golden(mined: MinedSet, path: str | Path) -> None:
    """Write the set as golden JSONL (``codecite eval PATH`` reads it back)."""
    lines = (json.dumps(q.to_json(), ensure_ascii=False) + "\n" for q in mined.queries)
    try:
        Path(path).write_text("".join(lines), encoding="utf-8")
    except OSError as exc:
        raise UserError(
            f"cannot write the golden file {path}: {exc}; choose another --out"
        ) from None


def run_mine(
    index: Index,
    *,
    n: int = 50,
    out: str | Path | None = None,
    k: int = 10,
    expand: bool | None = None,
    rerank: bool | None = None,
    on_progress: ProgressFn | None = None,
) -> MineRun:
    """``codecite eval --mine``: mine ``n`` questions, write them to ``out`` when given,
    search each one (``k``, ``expand``, ``rerank`` as for ``eval``) and score the results."""
    mined = mine_golden(index, n=n, on_progress=on_progress)
    if not mined.queries:
        raise UserError(
            f"no question could be mined from the history of {index.root}: {mined.summary()}; "
            "write a golden file by hand and run `codecite eval GOLDEN.jsonl`"
        )
    if out is not None:
        write_golden(mined, out)
    golden = mined.golden()
    results = [
        [
            Retrieved(h.chunk.path, h.chunk.start_line, h.chunk.end_line)
            for h in index.search(q.query, k=k, expand=expand, rerank=rerank).hits
        ]
        for q in golden
    ]
    return MineRun(mined, evaluate(golden, results, k=k))


# --------------------------------------------------------------------------- subjects


def clean_subject(subject: str) -> str:
    """The subject as a question: ticket references and ``fix:``-style prefixes removed."""
    text = subject.strip()
    for pattern in SUBJECT_NOISE:
        text = pattern.sub(" ", text).strip()
    text = re.sub(r"\s[-–:]+(?=\s)", " ", f" {text} ")  # "Fix #12 - x" left "Fix - x"
    return " ".join(text.split()).strip(" .:;,-")


def _query_of(subject: str, parents: int) -> str:
    if parents > 1:
        raise _Skip("merge")
    for reason, pattern in SKIP_SUBJECTS.items():
        if pattern.search(subject):
            raise _Skip(reason)
    query = clean_subject(subject)
    if len(query.split()) < MIN_SUBJECT_WORDS:
        raise _Skip("vague-subject")
    return query


# --------------------------------------------------------------------------- diffs


def _definitions_of(
    index: Index, commit: str, at_head: dict[tuple[str, str], MinedDefinition]
) -> tuple[MinedDefinition, ...]:
    """The changed definitions of a commit that exist at HEAD, or :class:`_Skip`."""
    diff = _git(
        index.root,
        "show",
        "--format=",
        "--unified=0",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--relative",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        commit,
    )
    files = list(_parse_diff(diff or ""))
    if not files:
        raise _Skip("no-source")
    source = [f for f in files if _is_source(f.path)]
    if not source:
        raise _Skip("no-source")
    lines = sum(len(f.added) + len(f.removed) for f in source)
    if len(source) > MAX_SOURCE_FILES or lines > MAX_SOURCE_LINES:
        raise _Skip("huge")
    if all(_squeeze(f.added) == _squeeze(f.removed) for f in files):
        raise _Skip("formatting")
    changed: dict[tuple[str, str], None] = {}
    for f in source:
        for qualname in _changed_qualnames(index, commit, f):
            changed[(f.path, qualname)] = None
    if not changed:
        raise _Skip("no-definition")
    if len(changed) > MAX_DEFINITIONS:
        raise _Skip("too-many-definitions")
    found = tuple(at_head[key] for key in changed if key in at_head)
    if not found:
        raise _Skip("gone-at-head")
    return found


def _parse_diff(diff: str) -> Iterator[_FileDiff]:
    """Files of a ``--unified=0`` diff with their changed lines (deleted files left out)."""
    current: _FileDiff | None = None
    in_header = False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            if current is not None:
                yield current
            current, in_header = None, True
        elif in_header and line.startswith("+++ "):
            target = line[4:].rstrip("\t")
            current = _FileDiff(target[2:]) if target.startswith("b/") else None
        elif current is None:
            continue
        elif line.startswith("@@ "):
            in_header = False
            hunk = _HUNK.match(line)
            if hunk:
                start, count = int(hunk[1]), int(hunk[2] or 1)
                if count:
                    current.changed.append((start, start + count - 1))
                else:
                    current.deleted_after.append(start)
        elif not in_header and line[:1] in ("+", "-"):
            (current.added if line[0] == "+" else current.removed).append(line[1:])
    if current is not None:
        yield current


def _squeeze(lines: Sequence[str]) -> str:
    return re.sub(r"\s+", "", "".join(lines))


def _is_source(path: str) -> bool:
    if TEST_PATH.search(path) or DOCS_PATH.search(path):
        return False
    return is_code_language(detect_language(path))


def _changed_qualnames(index: Index, commit: str, diff: _FileDiff) -> Iterator[str]:
    """Qualnames of the innermost definitions holding the changed lines, in file order."""
    raw = _git_bytes(index.root, "show", f"{commit}:./{diff.path}")
    text = None if raw is None else decode_text(raw)
    if text is None:
        return
    language = detect_language(diff.path)
    chunks = chunk_file(
        text, path=diff.path, language=language, repo=index.repo, config=index.config
    )
    defs = [c for c in chunks if c.kind in DEFINITION_KINDS]
    hits: dict[str, None] = {}
    for start, end in diff.changed:
        for line in range(start, end + 1):
            inner = _innermost(defs, line, line)
            if inner is not None:
                hits[inner.qualname] = None
    for after in diff.deleted_after:
        inner = _innermost(defs, after, after + 1)
        if inner is not None:
            hits[inner.qualname] = None
    yield from hits


def _innermost(defs: Iterable[Chunk], first: int, last: int) -> Chunk | None:
    holding = [d for d in defs if d.start_line <= first and last <= d.end_line]
    return min(holding, key=lambda d: d.end_line - d.start_line, default=None)


def _definitions_at_head(chunks: Iterable[Chunk]) -> dict[tuple[str, str], MinedDefinition]:
    """(path, qualname) → the definition's lines: split parts and overloads joined; a
    class is its header, up to its first method (so a method does not answer for it)."""
    spans: dict[tuple[str, str], tuple[int, int]] = {}
    first_child: dict[tuple[str, str], int] = {}
    for c in chunks:
        if c.kind not in DEFINITION_KINDS or TEST_PATH.search(c.path):
            continue
        key = (c.path, c.qualname)
        lo, hi = spans.get(key, (c.start_line, c.end_line))
        spans[key] = (min(lo, c.start_line), max(hi, c.end_line))
        if c.parent:
            parent = (c.path, c.parent)
            first_child[parent] = min(first_child.get(parent, c.start_line), c.start_line)
    for key, child in first_child.items():
        if key in spans and spans[key][0] < child:
            spans[key] = (spans[key][0], child - 1)
    return {key: MinedDefinition(*key, lo, hi) for key, (lo, hi) in spans.items()}


# --------------------------------------------------------------------------- git


def _log(root: Path, limit: int) -> Iterator[tuple[str, str, int, str]]:
    """(hash, short hash, number of parents, subject) of the newest commits."""
    prefix = (_git(root, "rev-parse", "--show-prefix") or "").strip()
    args = ["log", f"-n{limit}", "--format=%H%x1f%h%x1f%P%x1f%s%x1e"]
    out = _git(root, *args, *(["--", "."] if prefix else []))
    for record in (out or "").split("\x1e"):
        parts = record.strip("\n").split("\x1f")
        if len(parts) == 4:
            commit, short, parents, subject = parts
            yield commit, short, len(parents.split()), subject


def _git(root: Path, *args: str) -> str | None:
    """Text output of a git command in ``root``; None when it fails."""
    out = _git_bytes(root, *args)
    return None if out is None else out.decode("utf-8", "surrogateescape")


def _git_bytes(root: Path, *args: str) -> bytes | None:
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotePath=false", "-c", "log.showSignature=false", *args],
            cwd=root,
            capture_output=True,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
            check=False,
        )
    except OSError as exc:
        raise UserError(f"cannot run git ({exc}); --mine needs git on the PATH") from None
    if proc.returncode != 0:
        log.debug("git %s failed: %s", " ".join(args), proc.stderr.decode(errors="replace"))
        return None
    return proc.stdout
