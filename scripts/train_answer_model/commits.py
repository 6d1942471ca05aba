"""Step 1b of the answer model's recipe: questions in people's words, from commits.

A docstring's first sentence is written by the code's author about the code; people ask
in other words ("why does the retry give up after a minute?"). A commit's subject is
written by a person about a change of behaviour, in the words of the bug or feature
it deals with, and the code it changed is where the answer lives. For every training
project of ``projects.txt`` whose repository is named there (a mirror of it under
``--mirrors``, as the ``fetch`` tool or ``git clone --mirror`` leaves it):

- the released tree (the sdist ``prepare.py`` downloaded) is indexed as a user's would
  be, docstrings kept (``WORKDIR/<name>/index-full``);
- each commit of the history that changed at most :data:`MAX_DEFINITIONS` functions of
  non-test code files becomes a question: its subject, cleaned of issue numbers,
  prefixes and trailing references; right = the changed definitions, as the released
  tree holds them (same path, same qualified name). Commits that change no behaviour
  (releases, merges, formatting, typing, docs, tests only, dependency bumps) are
  skipped by the words their subjects start with.

    python scripts/train_answer_model/commits.py --workdir /work/answer-train \\
        --mirrors /work/.mirror

Writes ``WORKDIR/<name>/golden-commits.jsonl`` (id, query, commit, refs: path, start,
end); a project already done is skipped. No evaluation project is read: the list is
``projects.txt`` (``exclusions.py`` refuses the evaluation projects).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from prepare import SEED, projects  # noqa: E402

import codecite  # noqa: E402
from codecite.chunking import chunk_file  # noqa: E402
from codecite.config import Config  # noqa: E402
from codecite.graph.testmap import is_test_path  # noqa: E402

#: Questions kept per project (sampled with a fixed seed), as for docstrings.
MAX_QUESTIONS = 150
#: A commit that changed more definitions than this is not about one piece of code.
MAX_DEFINITIONS = 2
#: Subjects shorter than this say too little to be a question ("Fix typo").
MIN_WORDS = 4
#: Subjects starting with these words change no behaviour a question would ask about.
SKIP_START = re.compile(
    r"^((merge|revert|release|bump|update|prepare|pin|unpin|drop|remove|add|fix|improve|"
    r"clean|move|rename|reformat|format|refactor)(s|d|ed|es|ing)?\b\s*"
    r"(the |a |an |some |more |missing |new |unused |dead |for )*"
    r"(version|changelog|docs?|documentation|docstrings?|readme|copyright|dependenc\w*|"
    r"deps|tests?|typos?|types?|typing|type hints?|annotations?|lint\w*|flake8|mypy|"
    r"pre-commit|ci|travis|tox|support for python|python \d|imports?|whitespace|"
    r"comments?|examples?|code style|style|up\b|cleanup)\b"
    r"|merge|revert|release|version|changelog|typo|docs?\b|lint|format|style|black|"
    r"ruff|flake8|isort|pre-commit|mypy|typing|tests?\b|ci\b|minor|wip|fixup|squash|"
    r"back ?port|cherry|refactor|rename|cleanup|clean ?up)",
    re.IGNORECASE,
)
#: Issue numbers, pull-request references and prefixes, cleaned off a subject.
_REFS = re.compile(r"\(?#\d+\)?|\(?gh-\d+\)?|\bfixes\s+#?\d+|\bcloses\s+#?\d+", re.I)
_PREFIX = re.compile(r"^(\[[^\]]*\]\s*|[a-z]+(\([^)]*\))?!?:\s+|[A-Za-z_./]+\.py:\s+)+")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def subject(message: str) -> str | None:
    """The commit's subject as a question would say it, or None when it is no question."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    text = _PREFIX.sub("", _REFS.sub("", first)).strip(" .:-")
    text = re.sub(r"\s+", " ", text)
    if len(text.split()) < MIN_WORDS or SKIP_START.match(text):
        return None
    return text


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(mirror), *args],
        check=True, capture_output=True, text=True, errors="replace",
    ).stdout  # fmt: skip


def commits(mirror: Path) -> Iterator[tuple[str, str, list[str]]]:
    """(sha, message, changed code files) of each non-merge commit, newest first."""
    log = git(mirror, "log", "--no-merges", "--format=%x00%H%x01%B%x01", "--name-only",
              "--diff-filter=M", "HEAD")  # fmt: skip
    for record in log.split("\x00")[1:]:
        sha, rest = record.split("\x01", 1)  # a message may hold the separator itself
        message, files = rest.rsplit("\x01", 1)
        paths = [f for f in files.split() if f.endswith(".py")]
        yield sha, message, paths


def changed_lines(mirror: Path, sha: str, path: str) -> set[int]:
    """The lines of ``path`` as ``sha`` left it that the commit added or changed."""
    lines: set[int] = set()
    diff = git(mirror, "show", "--format=", "-U0", sha, "--", path)
    for line in diff.splitlines():
        m = _HUNK.match(line)
        if m:
            start, count = int(m.group(1)), int(m.group(2) or 1)
            lines.update(range(start, start + max(count, 1)))
    return lines


def changed_definitions(mirror: Path, sha: str, path: str) -> set[str]:
    """Qualified names of the functions and methods the commit changed in ``path``."""
    lines = changed_lines(mirror, sha, path)
    if not lines:
        return set()
    try:
        text = git(mirror, "show", f"{sha}:{path}")
    except subprocess.CalledProcessError:
        return set()
    names = set()
    config = Config()
    for chunk in chunk_file(text, path=path, language="python", repo="-", config=config):
        if chunk.kind in ("function", "method") and any(
            chunk.start_line <= n <= chunk.end_line for n in lines
        ):
            names.add(chunk.qualname)
    return names


def released(index_dir: Path, tree: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """(path, qualname) -> lines of every function and method of the released tree."""
    out = {}
    with codecite.open_index(tree, index_dir=index_dir, create=False) as idx:
        for chunk in idx.store.chunks():
            if chunk.kind in ("function", "method"):
                out.setdefault((chunk.path, chunk.qualname), (chunk.start_line, chunk.end_line))
    return out


def source_tree(folder: Path) -> Path:
    (source,) = [p for p in (folder / "download" / "src").iterdir() if p.is_dir()]
    return source


def index_full(folder: Path) -> Path:
    """The released tree indexed as a user's would be (docstrings kept)."""
    index_dir = folder / "index-full"
    if not (index_dir / ".complete").is_file():
        with codecite.open_index(source_tree(folder), index_dir=index_dir) as idx:
            idx.update()
        (index_dir / ".complete").write_text("")
    return index_dir


def mine_commits(name: str, folder: Path, mirror: Path) -> int:
    target = folder / "golden-commits.jsonl"
    if target.is_file():
        return -1
    index_dir = index_full(folder)
    where = released(index_dir, source_tree(folder))
    found, seen = [], set()
    for sha, message, paths in commits(mirror):
        text = subject(message)
        code = [p for p in paths if not is_test_path(p)]
        if text is None or not code or len(code) > MAX_DEFINITIONS or text.lower() in seen:
            continue
        names = [(p, q) for p in code for q in changed_definitions(mirror, sha, p)]
        if not 1 <= len(names) <= MAX_DEFINITIONS or any(n not in where for n in names):
            continue
        seen.add(text.lower())
        refs = [{"path": p, "start": where[(p, q)][0], "end": where[(p, q)][1]} for p, q in names]
        found.append({"query": text, "commit": sha, "refs": refs})
    rng = random.Random(f"{SEED}-commits-{name}")
    picked = rng.sample(found, min(MAX_QUESTIONS, len(found)))
    with target.open("w") as fh:
        for i, row in enumerate(picked, start=1):
            fh.write(json.dumps({"id": f"{name}-commit-{i:03d}", **row}) + "\n")
    return len(picked)


def repositories(path: Path) -> dict[str, str]:
    """name -> ``owner/repo`` from ``projects.txt``'s second column."""
    out = {}
    for line in path.read_text().splitlines():
        parts = line.split("#")[0].split()
        if len(parts) >= 2:
            out[parts[0].split("==")[0]] = parts[1]
    return out


def mirrored(argv: list[str] | None, description: str) -> Iterator[tuple[str, Path, Path]]:
    """The arguments of a step that reads the repositories (``--workdir``, ``--mirrors``,
    ``--projects``), then each listed project's name, prepared folder and mirror (one
    without either is reported and skipped)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--workdir", default="/work/answer-train", help="prepare.py's workdir")
    parser.add_argument("--mirrors", default="/work/.mirror", help="<owner>+<repo>/repo mirrors")
    parser.add_argument("--projects", default="projects.txt", help="the list (beside this)")
    args = parser.parse_args(argv)
    listed = HERE / args.projects
    repos = repositories(listed)
    for spec in projects(listed):
        name = spec.split("==")[0]
        folder = Path(args.workdir) / name
        mirror = Path(args.mirrors) / repos.get(name, "-").replace("/", "+") / "repo"
        if not (folder / ".complete").is_file() or not mirror.is_dir():
            print(f"{name}: skipped (prepare.py first, and a mirror of its repository)")
            continue
        yield name, folder, mirror


def main(argv: list[str] | None = None) -> int:
    for name, folder, mirror in mirrored(argv, __doc__.split("\n\n")[0]):
        started = time.perf_counter()
        try:
            n = mine_commits(name, folder, mirror)
        except Exception as exc:  # one project's failure is reported, the rest go on
            print(f"{name}: FAILED {type(exc).__name__}: {exc}", flush=True)
            continue
        if n >= 0:
            print(f"{name}: {n} commit questions, {time.perf_counter() - started:.0f} s",
                  flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
