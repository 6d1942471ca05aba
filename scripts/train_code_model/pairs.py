"""Training pairs (query, code) for the static code model (issue 24), from open data.

    python scripts/train_code_model/pairs.py docstrings --sdists /work/model-data/sdists \
        --out /work/model-data/pairs
    python scripts/train_code_model/pairs.py npm --npm /work/model-data/npm \
        --out /work/model-data/pairs
    python scripts/train_code_model/pairs.py commits --repos scripts/train_code_model/repos.txt \
        --out /work/model-data/pairs
    python scripts/train_code_model/pairs.py tree --root ~/src/our-service --out ours/  # your code

Each kind of pair is a JSON line ``{"q", "d", "g", "src"}`` (query, document text,
group: pairs of one group are positives of one another, never in-batch negatives):

- ``docstrings``: from every source distribution downloaded by ``fetch_sdists.py``,
  the first sentence of each function, method or class docstring (at least
  :data:`MIN_WORDS` words) and that definition's codecite chunk cut from a copy of the
  file with *every* docstring removed (``bench/search_queries.strip_docs``, the
  benchmark's own stripping), embedded as codecite embeds it (``embed_text``). Tests,
  vendored copies of excluded projects and distributions under a licence that is not
  open (or not stated) are skipped; a sentence found on more than
  :data:`MAX_SENTENCE_REPEATS` definitions is dropped (boilerplate), and a
  distribution gives at most :data:`MAX_PER_PACKAGE` pairs (generated SDKs would
  otherwise dominate).
- ``npm``: the same pairs for JavaScript and TypeScript, from the npm packages
  downloaded by ``fetch_npm.py``: the first sentence of a ``/** ... */`` doc comment
  on a function, method, class or interface and that definition's chunk cut from the
  file with every doc comment removed; minified, bundled (``node_modules/``) and
  declaration (``.d.ts``) files are skipped, the licence is read from
  ``package.json``, and a sentence counts once a package (its ESM, CommonJS and
  bundled builds repeat each function).
- ``tree``: the same docstring and doc comment pairs from source folders of your own
  (``--root``, repeated: Python, JavaScript, TypeScript), for retraining on a
  company's code; no licence or exclusion checks.
- ``commits``: from git mirrors (``repos.txt``: ``owner/name`` of a mirror under
  ``--mirrors``, or the path of any local clone), each non-merge commit that changed
  1-3 non-test Python files: its message (subject and first paragraph of the body,
  without trailers) and every function or method the commit changed, as it was
  *before* the commit (the code a bug report is written against).

Every source is checked against ``exclusions.py`` (names, vendored folders). Writes
``docstrings.jsonl`` / ``npm.jsonl`` / ``commits.jsonl``, each with its
``KIND.manifest.json`` (each source's name, version or commit, licence and pair
count; what was skipped and why).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "bench"))

from exclusions import excluded_name, excluded_repo, vendored_path  # noqa: E402
from fetch_npm import excluded_package  # noqa: E402
from search_queries import documented, strip_docs  # noqa: E402

from codecite.chunking import chunk_file  # noqa: E402
from codecite.chunking.grammars import detect_language  # noqa: E402
from codecite.config import Config  # noqa: E402
from codecite.embed.text import embed_text  # noqa: E402
from codecite.graph.testmap import is_test_path  # noqa: E402
from codecite.types import Chunk  # noqa: E402

MIN_WORDS = 4
MAX_SENTENCE_REPEATS = 3
MAX_PER_PACKAGE = 150
MAX_FILE_BYTES = 400_000
#: Python files of a distribution larger than this are skipped (generated code).
MAX_SOURCE_BYTES = 150_000
#: A distribution's files are read in a seeded random order until this many pairs
#: (before de-duplication) are found: big SDKs cost no more than a few files' time.
MAX_RAW_PER_PACKAGE = 200
#: Commits used per repository, newest first (``--max-commits``).
MAX_COMMITS_PER_REPO = 400
MAX_QUERY_CHARS = 600
SEED = 24
DEFINITIONS = frozenset({"function", "method", "class"})
JS_DEFINITIONS = DEFINITIONS | {"interface"}
#: npm package files read for doc comments (declaration files restate an API: skipped).
JS_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
#: Minified files and declaration files (no bodies: they restate an API).
SKIPPED_JS = (".min.js", ".d.ts", ".d.mts", ".d.cts")
#: A file whose lines average more than this many characters is minified or bundled.
MAX_MEAN_LINE = 160
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_DEF_NAME = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", re.MULTILINE)

# --------------------------------------------------------------------------- licences

#: (pattern, licence family): the first match names a distribution's licence.
_LICENCES = [
    (r"\bAGPL|Affero", "AGPL"),
    (r"\bLGPL|(?i:Lesser General Public)", "LGPL"),
    (r"\bGPL\b(?![- ]compatible)|(?i:General Public License)", "GPL"),
    (r"Apache", "Apache"),
    (r"\bMIT\b|Expat|Permission is hereby granted, free of charge", "MIT"),
    (r"\bBSD|0BSD|Redistribution and use in source and binary forms", "BSD"),
    (r"BlueOak", "BlueOak"),
    (r"\bISC\b", "ISC"),
    (r"Python Software Foundation|\bPSF", "PSF"),
    (r"Mozilla|\bMPL", "MPL"),
    (r"Unlicense|Public Domain|CC0", "Public domain"),
    (r"zlib|Zlib", "Zlib"),
    (r"HPND|Historical Permission", "HPND"),
    (r"Eclipse|\bEPL", "EPL"),
]
#: Licence families whose code is used (open, and not a strong copyleft).
OPEN = frozenset(
    {"Apache", "MIT", "BSD", "ISC", "PSF", "MPL", "Public domain", "Zlib", "HPND", "LGPL", "EPL"}
    | {"BlueOak"}
)


def licence_of(text: str) -> str:
    for pattern, family in _LICENCES:
        if re.search(pattern, text):
            return family
    return ""


def metadata_licence(pkg_info: str) -> str:
    """A licence family from PKG-INFO: License-Expression, License, then classifiers."""
    fields = {"License-Expression": [], "License": [], "Classifier": []}  # type: dict[str, list[str]]
    for line in pkg_info.splitlines():
        key, _, value = line.partition(":")
        if key in fields:
            fields[key].append(value.strip())
        if not line.strip():
            break  # the body (long description) starts
    for value in fields["License-Expression"] + fields["License"][:1]:
        found = licence_of(value[:200])
        if found:
            return found
    return licence_of(" ".join(c for c in fields["Classifier"] if c.startswith("License")))


# --------------------------------------------------------------------------- docstrings


def first_sentence(doc: str, min_words: int = MIN_WORDS) -> str | None:
    import inspect

    paragraph = inspect.cleandoc(doc).strip().split("\n\n", 1)[0]
    flat = " ".join(paragraph.split())
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0].strip()
    if len(sentence.split()) < min_words or len(sentence) > MAX_QUERY_CHARS:
        return None
    if sentence.startswith((":", ">>>", "..", "@", "#")):
        return None
    return sentence


def definition_chunk(chunks: list[Chunk], start: int, lines: list[str]) -> Chunk | None:
    """The smallest definition chunk holding line ``start`` that defines the name on
    the first ``def``/``class`` line from there (decorators skipped)."""
    match = _DEF_NAME.search("\n".join(lines[start - 1 : start + 20]))
    if match is None:
        return None
    holding = [
        c
        for c in chunks
        if c.kind in DEFINITIONS and c.start_line <= start <= c.end_line and c.name == match[1]
    ]
    return min(holding, key=lambda c: (c.end_line - c.start_line, c.part), default=None)


def js_definition_chunk(chunks: list[Chunk], start: int) -> Chunk | None:
    """The definition chunk (function, method, class, interface) that begins where a
    documented JavaScript/TypeScript definition does (line ``start``); None when the
    chunker did not cut it alone (a function nested in another)."""
    holding = [c for c in chunks if c.kind in JS_DEFINITIONS and abs(c.start_line - start) <= 1]
    innermost = lambda c: (-c.start_line, c.end_line - c.start_line, c.part)  # noqa: E731
    return min(holding, key=innermost, default=None)


def file_pairs(
    text: str, path: str, repo: str, config: Config, language: str = "python"
) -> list[tuple[str, str]]:
    """(first sentence, embedded text of the stripped definition) of one source file
    (Python docstrings; JavaScript/TypeScript ``/** ... */`` doc comments)."""
    if language == "python" and '"""' not in text and "'''" not in text:
        return []  # no docstring (a one-quote docstring is rare)
    if language != "python" and "/**" not in text:
        return []
    found = [(d, first_sentence(d.doc)) for d in documented(text, language)]
    found = [(d, s) for d, s in found if s]
    if not found:
        return []
    stripped = strip_docs(text, language)
    chunks = chunk_file(stripped, path=path, language=language, repo=repo, config=config)
    lines = stripped.splitlines()
    out = []
    for doc, sentence in found:
        if language == "python":
            chunk = definition_chunk(chunks, doc.start_line, lines)
        else:
            chunk = js_definition_chunk(chunks, doc.start_line)
        if chunk is not None and sentence is not None:
            out.append((sentence, embed_text(chunk)))
    return out


def archive_members(path: Path) -> Iterator[tuple[str, bytes]]:
    """(member path, bytes) of a distribution's regular files: an sdist's without its
    top folder, a wheel's as they are (its ``*.dist-info/METADATA`` as ``PKG-INFO``)."""
    if path.suffix in (".zip", ".whl"):
        wheel = path.suffix == ".whl"
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.is_dir() or info.file_size > MAX_FILE_BYTES:
                    continue
                name = info.filename
                if wheel and name.endswith(".dist-info/METADATA"):
                    name = "PKG-INFO"
                elif wheel and ".dist-info/" in name:
                    continue
                yield (name if wheel else name.split("/", 1)[-1]), zf.read(info)
        return
    with tarfile.open(path) as tar:
        for member in tar:
            if member.isfile() and member.size <= MAX_FILE_BYTES:
                handle = tar.extractfile(member)
                if handle is not None:
                    yield member.name.split("/", 1)[-1], handle.read()


def distribution_pairs(kind: str, record: dict[str, Any], folder: str) -> dict[str, Any]:
    """Pairs and statistics of one downloaded distribution (``kind`` "sdist" or "npm"),
    kept in a cache folder beside the downloads (an interrupted run resumes)."""
    cached = Path(folder) / "pairs-cache" / f"{record['file']}.json"
    if cached.exists():
        return dict(json.loads(cached.read_text()))
    result = _distribution_pairs(kind, record, Path(folder) / record["file"])
    result["skipped"] = dict(result["skipped"])
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".tmp")
    tmp.write_text(json.dumps(result))
    tmp.replace(cached)
    return result


def _read_sources(result: dict[str, Any], files: list[tuple[str, bytes]], config: Config) -> None:
    """Add the pairs of a distribution's source ``files`` to ``result``, in a seeded
    random order until :data:`MAX_RAW_PER_PACKAGE`; what is skipped is counted."""
    name = result["name"]
    random.Random(f"{SEED}-{name}").shuffle(files)
    for rel, data in files:
        if len(result["pairs"]) >= MAX_RAW_PER_PACKAGE:
            result["skipped"]["files not read (enough pairs)"] += 1
            continue
        if len(data) > MAX_SOURCE_BYTES:
            result["skipped"]["files over 150 KB"] += 1
            continue
        if is_test_path(rel) or rel.startswith(("docs/", "doc/", "examples/")):
            result["skipped"]["test, docs or example files"] += 1
            continue
        vendored = vendored_path(rel)
        if vendored:
            result["skipped"][f"vendored copy of {vendored}"] += 1
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            result["skipped"]["files not UTF-8"] += 1
            continue
        language = "python" if rel.endswith(".py") else detect_language(rel)
        if language != "python" and len(text) > MAX_MEAN_LINE * (text.count("\n") + 1):
            result["skipped"]["minified or bundled files"] += 1
            continue
        try:
            result["pairs"] += file_pairs(text, rel, name, config, language)
        except (RecursionError, ValueError, AssertionError):
            result["skipped"]["files that failed to chunk"] += 1


def package_json_licence(data: bytes) -> str:
    """A licence family from an npm ``package.json`` (``license``, or the old
    ``licenses`` list)."""
    try:
        meta = json.loads(data)
    except ValueError:
        return ""
    value = meta.get("license") if isinstance(meta, dict) else None
    if isinstance(value, dict):
        value = value.get("type")
    if not value and isinstance(meta, dict) and isinstance(meta.get("licenses"), list):
        value = " ".join(str(x.get("type", "")) for x in meta["licenses"] if isinstance(x, dict))
    return licence_of(str(value)[:200]) if value else ""


def _npm_source(rel: str) -> bool | str:
    """Whether an npm package's member is read: a JavaScript/TypeScript source (not
    minified, not a declaration file), or why not (a bundled dependency's copy)."""
    if not rel.endswith(JS_SUFFIXES) or rel.endswith(SKIPPED_JS):
        return False
    return "bundled node_modules files" if "node_modules/" in rel else True


#: Per kind of distribution: the exclusion check and what it counts, the member
#: holding the licence and how it is read, and which members are sources (True),
#: not (False), or skipped for a reason (the reason).
_KINDS: dict[str, tuple[Any, str, str, Any, Any]] = {
    "sdist": (
        excluded_name, "excluded distribution", "PKG-INFO",
        lambda data: metadata_licence(data.decode("utf-8", "replace")),
        lambda rel: rel.endswith(".py"),
    ),
    "npm": (
        excluded_package, "excluded package", "package.json", package_json_licence, _npm_source,
    ),
}  # fmt: skip


def _distribution_pairs(kind: str, record: dict[str, Any], archive: Path) -> dict[str, Any]:
    excluded, excluded_label, metadata, licence_of_metadata, is_source = _KINDS[kind]
    result: dict[str, Any] = {
        "name": record["name"],
        "version": record["version"],
        "file": record["file"],
        "sha256": record.get("sha256") or record.get("integrity", ""),
        "licence": "",
        "pairs": [],
        "skipped": Counter(),
    }
    why = excluded(record["name"])
    if why:
        result["skipped"][excluded_label] += 1
        result["excluded"] = why
        return result
    meta, files = b"", []
    try:
        for rel, data in archive_members(archive):
            if rel == metadata:
                meta = data
                continue
            source = is_source(rel)
            if isinstance(source, str):
                result["skipped"][source] += 1
            elif source:
                files.append((rel, data))
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        result["skipped"][f"unreadable archive ({type(exc).__name__})"] += 1
        return result
    result["licence"] = licence_of_metadata(meta)
    if result["licence"] not in OPEN:
        result["skipped"]["licence not open or not stated"] += 1
        return result
    _read_sources(result, files, Config())
    return result


def run_docstrings(args: argparse.Namespace) -> None:
    _run_distributions(args, Path(args.sdists), "sdist", "docstrings")


def run_npm(args: argparse.Namespace) -> None:
    _run_distributions(args, Path(args.npm), "npm", "npm")


def _run_distributions(args: argparse.Namespace, folder: Path, source: str, kind: str) -> None:
    """Pairs of every distribution downloaded into ``folder``, written as ``KIND.jsonl``
    with its manifest (boilerplate sentences dropped, at most
    :data:`MAX_PER_PACKAGE` pairs a distribution)."""
    records = [json.loads(line) for line in (folder / "downloads.jsonl").read_text().splitlines()]
    records = [r for r in records if "file" in r]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for n, result in enumerate(
            pool.map(
                partial(distribution_pairs, source),
                records,
                [str(folder)] * len(records),
                chunksize=4,
            ),
            1,
        ):
            if source == "npm":
                # one sentence once a package: its ESM, CommonJS and bundled builds
                # repeat each function (negatives of one another otherwise)
                result["pairs"] = list({q: (q, d) for q, d in result["pairs"][::-1]}.values())
            results.append(result)
            if n % 100 == 0:
                total = sum(len(r["pairs"]) for r in results)
                print(f"{n}/{len(records)} distributions, {total} raw pairs", flush=True)
    # Boilerplate sentences (on more than a few definitions anywhere) are dropped.
    counts = Counter(q.lower() for r in results for q, _ in r["pairs"])
    rng = random.Random(SEED)
    written, manifest = 0, []
    with (out / f"{kind}.jsonl").open("w") as fh:
        for r in results:
            pairs = [(q, d) for q, d in r["pairs"] if counts[q.lower()] <= MAX_SENTENCE_REPEATS]
            pairs = list(dict.fromkeys(pairs))
            dropped = len(r["pairs"]) - len(pairs)
            if len(pairs) > MAX_PER_PACKAGE:
                pairs = rng.sample(pairs, MAX_PER_PACKAGE)
            for i, (q, d) in enumerate(pairs):
                fh.write(json.dumps({"q": q, "d": d, "g": f"{r['name']}:{i}", "src": "doc"}) + "\n")
            written += len(pairs)
            manifest.append(
                {
                    "name": r["name"],
                    "version": r["version"],
                    "file": r["file"],
                    "sha256": r["sha256"],
                    "licence": r["licence"],
                    "pairs": len(pairs),
                    "repeated_or_duplicate_dropped": dropped,
                    "skipped": dict(r["skipped"]),
                    **({"excluded": r["excluded"]} if "excluded" in r else {}),
                }
            )
    summary = _summary(manifest, written)
    (out / f"{kind}.manifest.json").write_text(
        json.dumps({"summary": summary, "sources": manifest}, indent=1) + "\n"
    )
    print(json.dumps(summary, indent=1))


def _summary(manifest: list[dict[str, Any]], written: int) -> dict[str, Any]:
    skipped: Counter[str] = Counter()
    for m in manifest:
        skipped.update(m["skipped"])
    used = [m for m in manifest if m["pairs"]]
    return {
        "sources": len(manifest),
        "sources_used": len(used),
        "pairs": written,
        "licences_used": dict(Counter(m["licence"] for m in used).most_common()),
        "skipped": dict(skipped.most_common()),
    }


# --------------------------------------------------------------------------- commits

_TRAILER = re.compile(r"^(Signed-off-by|Co-authored-by|Reviewed-by|Change-Id|Cc):", re.I)
_NOISE = re.compile(
    r"^(merge|bump|release|prepare release|version|update changelog|changelog|"
    r"\[pre-commit|pre-commit|auto-?update|revert|typo|fix typo|lint|format|reformat|"
    r"apply black|run black|blacken|isort|update readme|docs?:|bumped|prep)",
    re.I,
)
_PR_REF = re.compile(r"\s*\((?:#|gh-)\d+\)|\s*#\d+\b")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def commit_message(subject: str, body: str) -> str | None:
    """Subject + the body's first paragraph, trailers and PR references removed."""
    subject = _PR_REF.sub("", subject).strip()
    if len(subject.split()) < 3 or _NOISE.match(subject):
        return None
    paragraph = body.strip().split("\n\n", 1)[0] if body.strip() else ""
    lines = [ln for ln in paragraph.splitlines() if ln.strip() and not _TRAILER.match(ln)]
    text = " ".join([subject, *(" ".join(lines).split())]).strip()
    return text[:MAX_QUERY_CHARS]


def _git(git_dir: str, *args: str, check: bool = True) -> str:
    """Git's output (with ``check=False``, what it printed before failing: a mirror with
    a shallow history ends its log at the first missing commit)."""
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=check,
        errors="replace",
    ).stdout  # fmt: skip


class Blobs:
    """File contents at a commit through one ``git cat-file --batch`` process."""

    def __init__(self, git_dir: str) -> None:
        self.proc = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def read(self, spec: str) -> bytes | None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(spec.encode() + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            return None
        data = self.proc.stdout.read(int(header[2]))
        self.proc.stdout.readline()
        return data

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def changed_ranges(patch: str) -> dict[str, list[tuple[int, int]]]:
    """Old-side line ranges of each file's hunks (``-U0`` patch)."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    path = None
    for line in patch.splitlines():
        if line.startswith("--- "):
            path = line[6:] if line.startswith("--- a/") else None
        elif path and (m := _HUNK.match(line)):
            start, count = int(m[1]), int(m[2] or "1")
            # a pure insertion (count 0) touches the line it follows
            ranges.setdefault(path, []).append((start, start + max(count, 1) - 1))
    return ranges


def repo_pairs(repo: str, mirrors: str, max_commits: int, cache: str) -> dict[str, Any]:
    """Pairs of one mirror (``owner/name``), newest commits first; kept in ``cache``
    (one JSON file per repository and setting) so an interrupted run resumes."""
    cached = Path(cache) / f"{repo.replace('/', '+')}-{max_commits}.json"
    if cached.exists():
        return dict(json.loads(cached.read_text()))
    result = _repo_pairs(repo, mirrors, max_commits)
    result["skipped"] = dict(result["skipped"])
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(result))
    return result


def _repo_pairs(repo: str, mirrors: str, max_commits: int) -> dict[str, Any]:
    local = Path(repo).expanduser()
    if local.is_absolute() or repo.startswith((".", "~")):  # a clone of your own
        git_dir = str(local / ".git") if (local / ".git").exists() else str(local)
    else:
        git_dir = str(Path(mirrors) / repo.replace("/", "+") / "repo")
    result: dict[str, Any] = {"repo": repo, "pairs": [], "skipped": Counter(), "commits_used": 0}
    why = None if local.is_absolute() else excluded_repo(repo)
    if why:
        result["excluded"] = why
        return result
    result["head"] = _git(git_dir, "rev-parse", "HEAD").strip()
    names = _git(git_dir, "ls-tree", "--name-only", "HEAD").split()
    starts = ("LICENSE", "LICENCE", "COPYING")
    licence_file = next((n for n in names if n.upper().startswith(starts)), "")
    text = _git(git_dir, "show", f"HEAD:{licence_file}") if licence_file else ""
    result["licence"] = licence_of(text[:800])
    if result["licence"] not in OPEN and not local.is_absolute():
        result["skipped"]["licence not open or not found"] += 1
        return result
    # One pass over the history: each commit's parents, message and changed files.
    log = _git(
        git_dir, "log", "--no-merges", "--name-only", "--format=%x1e%H%x00%P%x00%s%x00%b%x00",
        "HEAD", check=False,
    )  # fmt: skip
    config, blobs, used = Config(), Blobs(git_dir), 0
    for entry in log.split("\x1e"):
        if used >= max_commits:
            break
        fields = entry.split("\x00")
        if len(fields) != 5 or not fields[1] or " " in fields[1]:
            continue
        sha, parent, subject, body, names = fields
        message = commit_message(subject, body)
        if message is None:
            result["skipped"]["commit messages of no use"] += 1
            continue
        files = [f for f in names.split() if f.endswith(".py") and not is_test_path(f)]
        if not 1 <= len(files) <= 3:
            result["skipped"]["commits changing 0 or over 3 source files"] += 1
            continue
        if any(vendored_path(f) for f in files):
            result["skipped"]["commits touching a vendored copy"] += 1
            continue
        try:
            patch = _git(git_dir, "diff", "-U0", "--no-renames", parent, sha, "--", *files)
        except subprocess.CalledProcessError:
            result["skipped"]["commits missing from the mirror"] += 1
            continue
        docs = []
        for path, spans in changed_ranges(patch).items():
            data = blobs.read(f"{parent}:{path}")
            if data is None or len(data) > MAX_FILE_BYTES:
                continue
            text = data.decode("utf-8", "replace")
            try:
                chunks = chunk_file(text, path=path, language="python", repo=repo, config=config)
            except (RecursionError, ValueError):
                continue
            for chunk in chunks:
                if chunk.kind in ("function", "method") and any(
                    a <= chunk.end_line and chunk.start_line <= b for a, b in spans
                ):
                    docs.append(embed_text(chunk))
        docs = list(dict.fromkeys(docs))
        if not 1 <= len(docs) <= 4:
            result["skipped"]["commits changing 0 or over 4 functions"] += 1
            continue
        used += 1
        result["pairs"] += [(message, d, sha[:12]) for d in docs]
    blobs.close()
    result["commits_used"] = used
    return result


def run_commits(args: argparse.Namespace) -> None:
    repos = [
        line.split("#")[0].strip()
        for line in Path(args.repos).read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest, written = [], 0
    with ProcessPoolExecutor(args.jobs) as pool, (out / "commits.jsonl").open("w") as fh:
        n = len(repos)
        cache = str(out / "commits-cache")
        for r in pool.map(
            repo_pairs, repos, [args.mirrors] * n, [args.max_commits] * n, [cache] * n
        ):
            for q, d, sha in r["pairs"]:
                fh.write(
                    json.dumps({"q": q, "d": d, "g": f"{r['repo']}@{sha}", "src": "commit"}) + "\n"
                )
            written += len(r["pairs"])
            manifest.append(
                {
                    "repo": r["repo"],
                    "head": r.get("head", ""),
                    "licence": r.get("licence", ""),
                    "commits": r["commits_used"],
                    "max_commits": args.max_commits,
                    "pairs": len(r["pairs"]),
                    "skipped": dict(r["skipped"]),
                    **({"excluded": r["excluded"]} if "excluded" in r else {}),
                }
            )
            print(f"{r['repo']}: {r['commits_used']} commits, {len(r['pairs'])} pairs", flush=True)
    used = [m for m in manifest if m["pairs"]]
    summary = {
        "sources": len(manifest),
        "sources_used": len(used),
        "commits": sum(m["commits"] for m in manifest),
        "pairs": written,
        "licences_used": dict(Counter(m["licence"] for m in used).most_common()),
    }
    (out / "commits.manifest.json").write_text(
        json.dumps({"summary": summary, "sources": manifest}, indent=1) + "\n"
    )
    print(json.dumps(summary, indent=1))


def run_tree(args: argparse.Namespace) -> None:
    """Docstring and doc comment pairs from local source folders (your own Python,
    JavaScript and TypeScript code)."""
    config, out = Config(), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    with (out / "docstrings.jsonl").open("w") as fh:
        for root in map(Path, args.root):
            files = sorted(root.expanduser().rglob("*"))
            for file in files:
                rel = file.relative_to(root.expanduser()).as_posix()
                if not rel.endswith((".py", *JS_SUFFIXES)) or rel.endswith(SKIPPED_JS):
                    continue
                if "node_modules/" in rel or is_test_path(rel) or not file.is_file():
                    continue
                if file.stat().st_size > MAX_SOURCE_BYTES:
                    continue
                text = file.read_text(encoding="utf-8", errors="replace")
                language = "python" if rel.endswith(".py") else detect_language(rel)
                found = file_pairs(text, rel, root.name, config, language)
                for i, (q, d) in enumerate(found):
                    group = f"{root.name}:{rel}:{i}"
                    fh.write(json.dumps({"q": q, "d": d, "g": group, "src": "doc"}) + "\n")
                    written += 1
    summary = {"sources": len(args.root), "sources_used": len(args.root), "pairs": written}
    manifest = {"summary": summary, "sources": [{"name": r, "pairs": 0} for r in args.root]}
    (out / "docstrings.manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps(summary))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="kind", required=True)
    docs = sub.add_parser("docstrings")
    docs.add_argument("--sdists", default="/work/model-data/sdists")
    npm = sub.add_parser("npm")
    npm.add_argument("--npm", default="/work/model-data/npm", help="fetch_npm.py's folder")
    tree = sub.add_parser("tree")
    tree.add_argument("--root", action="append", required=True, help="a source folder")
    commits = sub.add_parser("commits")
    commits.add_argument("--repos", default=str(HERE / "repos.txt"))
    commits.add_argument("--mirrors", default="/work/.mirror")
    commits.add_argument("--max-commits", type=int, default=MAX_COMMITS_PER_REPO)
    for p in (docs, npm, commits, tree):
        p.add_argument("--out", default="/work/model-data/pairs")
        p.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    runs = {"docstrings": run_docstrings, "npm": run_npm, "commits": run_commits}
    (runs | {"tree": run_tree})[args.kind](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
