"""The search benchmark's corpus: real projects from PyPI, docstrings turned into
queries, and a stripped copy to index.

Used by ``bench/search_bench.py`` and ``bench/search_latency.py`` (run those).
Source distributions are downloaded at benchmark time into a temporary folder,
never committed. Only code files are copied (Python, JavaScript, TypeScript, TSX):
prose docs are left out because they often repeat the docstrings word for word.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from search_queries import documented, first_sentence, python_parses, strip_docs

from codecite.chunking.grammars import detect_language
from codecite.evaluate import GoldenQuery, Relevant

#: Projects searched, pinned. jupyterlab-git ships its TypeScript/TSX sources
#: (``src/``, ~900 JSDoc comments) next to its Python server extension.
PROJECTS = ("click==8.1.8", "requests==2.32.3", "rich==14.0.0", "jupyterlab-git==0.51.1")
CODE_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx"})
SKIPPED_DIRS = frozenset({"node_modules", "labextension", "static", ".git"})
TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "ui-tests", "testutils"})
#: At most this many queries per project (a seeded sample), to bound the run time.
MAX_QUERIES = 300
SEED = 20261129


@dataclass
class Corpus:
    """One project ready to index: the stripped copy and its golden queries."""

    name: str
    spec: str
    root: Path
    golden: list[GoldenQuery]
    files: int = 0
    lines: int = 0
    stats: Counter[str] = field(default_factory=Counter)


def fetch_sdist(spec: str, dest: Path) -> Path:
    """``pip download`` one source distribution and unpack it; returns its folder.

    ``--no-binary NAME`` (not ``:all:``) so pip may use wheels for the build
    backend it runs to read the sdist's metadata (jupyterlab-git needs jupyterlab).
    """
    name = spec.split("==")[0]
    dl = dest / "downloads"
    dl.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--no-binary",
            name,
            spec,
            "-d",
            str(dl),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    key = name.lower().replace("-", "_") + "_"
    archive = next(
        p for p in sorted(dl.iterdir()) if p.name.lower().replace("-", "_").startswith(key)
    )
    out = dest / "src"
    out.mkdir(exist_ok=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(out)
        folder = out / archive.name.removesuffix(".zip")
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(out, filter="data")
        folder = out / archive.name.removesuffix(".tar.gz")
    return folder


def code_files(root: Path) -> list[tuple[str, str]]:
    """(posix path relative to ``root``, language) of the code files to copy."""
    found = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or SKIPPED_DIRS.intersection(rel.parts[:-1]):
            continue
        language = detect_language(rel.as_posix())
        if language in CODE_LANGUAGES and ".min." not in path.name:
            found.append((rel.as_posix(), language))
    return found


def is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1]
    return (
        bool(TEST_DIRS.intersection(p.lower() for p in parts[:-1]))
        or name.startswith("test_")
        or name == "conftest.py"
        or ".test." in name
        or ".spec." in name
    )


def _candidates(text: str, language: str, path: str) -> list[tuple[str, Relevant]]:
    out = []
    for item in documented(text, language):
        sentence = first_sentence(item.doc)
        if sentence:
            out.append((sentence, Relevant(path, item.start_line, item.end_line)))
    return out


def build_corpus(spec: str, source: Path, copy_root: Path) -> Corpus:
    """Copy ``source``'s code files to ``copy_root`` without docstrings; derive queries."""
    name = spec.split("==")[0]
    corpus = Corpus(name=name, spec=spec, root=copy_root, golden=[])
    found: list[tuple[str, Relevant, str]] = []
    for rel, language in code_files(source):
        text = (source / rel).read_text(encoding="utf-8", errors="replace")
        stripped = strip_docs(text, language)
        if stripped.count("\n") != text.count("\n"):
            raise AssertionError(f"{rel}: stripping changed the line count")
        if language == "python" and python_parses(text):
            corpus.stats["python files checked"] += 1
            corpus.stats["stripped files that no longer parse"] += not python_parses(stripped)
        target = copy_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(stripped, encoding="utf-8")
        corpus.files += 1
        corpus.lines += text.count("\n") + 1
        if not is_test_path(rel):
            found += [(s, r, language) for s, r in _candidates(text, language, rel)]
    corpus.golden = _golden(name, found, corpus.stats)
    return corpus


def _golden(
    name: str, found: list[tuple[str, Relevant, str]], stats: Counter[str]
) -> list[GoldenQuery]:
    """One query per first sentence that names exactly one definition; sampled."""
    counts = Counter(sentence.lower() for sentence, _, _ in found)
    unique = [(s, r, lang) for s, r, lang in found if counts[s.lower()] == 1]
    stats["documented definitions (non-test)"] = len(found)
    stats["ambiguous sentences dropped"] = len(found) - len(unique)
    if len(unique) > MAX_QUERIES:
        unique = random.Random(f"{SEED}-{name}").sample(unique, MAX_QUERIES)
        unique.sort(key=lambda item: (item[1].path, item[1].start_line))
    return [
        GoldenQuery(id=f"{name}-{i:03d}", query=s, relevant=(r,), persona=lang, kind=name)
        for i, (s, r, lang) in enumerate(unique, start=1)
    ]


def prepare(specs: tuple[str, ...], workdir: Path) -> list[Corpus]:
    """Download every project into ``workdir`` and build its stripped corpus."""
    corpora = []
    for spec in specs:
        name = spec.split("==")[0]
        source = fetch_sdist(spec, workdir / "sdists" / name)
        copy_root = workdir / "stripped" / name
        if copy_root.exists():
            shutil.rmtree(copy_root)
        corpora.append(build_corpus(spec, source, copy_root))
    return corpora
