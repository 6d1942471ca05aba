"""Property: every function/method chunk parses on its own (docs/DESIGN.md section 3),
checked with :func:`codecite.chunking.reparse.parses_alone` (its docstring says how
methods are wrapped in a minimal shell). The same property is checked on real
Python files of the installed packages.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from codecite.chunking import chunk_file, parse
from codecite.chunking.grammars import detect_language
from codecite.chunking.reparse import parses_alone
from codecite.config import Config
from codecite.types import Chunk

FIXTURES = Path(__file__).parent / "fixtures" / "languages"
CODE_FIXTURES = [
    "python.py",
    "javascript.js",
    "typescript.ts",
    "tsx.tsx",
    "go.go",
    "java.java",
    "rust.rs",
    "c.c",
    "cpp.cpp",
    "c_sharp.cs",
    "ruby.rb",
    "php.php",
]


def _code_chunks(path: Path, name: str) -> list[Chunk]:
    text = path.read_text(encoding="utf-8")
    language = detect_language(name)
    chunks = chunk_file(text, path=name, language=language, repo="r", config=Config())
    return [c for c in chunks if c.kind in ("function", "method") and c.part == 0]


@pytest.mark.parametrize("name", CODE_FIXTURES)
def test_every_function_chunk_of_fixture_parses_alone(name: str) -> None:
    chunks = _code_chunks(FIXTURES / name, name)
    assert chunks, f"{name} has no function/method chunk"
    failing = [f"{c.qualname} {c.start_line}-{c.end_line}" for c in chunks if not parses_alone(c)]
    assert failing == []


def _site_python_files(limit: int) -> list[Path]:
    root = Path(sysconfig.get_paths()["purelib"])
    picked: list[Path] = []
    for package in ("hypothesis", "typer", "rich", "httpx", "pathspec", "click"):
        folder = root / package
        if folder.is_dir():
            picked.extend(sorted(folder.rglob("*.py"))[:8])
    return picked[:limit]


def test_every_function_chunk_of_installed_python_parses_alone() -> None:
    files = _site_python_files(40)
    if not files:
        pytest.skip("no installed pure-Python packages to read")
    failing: list[str] = []
    total = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if parse(text, "python").root_node.has_error:
            continue
        for chunk in _code_chunks(path, path.name):
            total += 1
            if not parses_alone(chunk):
                failing.append(f"{path}:{chunk.start_line} {chunk.qualname}")
    assert total > 100
    assert failing == []


@pytest.mark.parametrize("name", CODE_FIXTURES)
def test_class_skeletons_of_fixture_parse(name: str) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    language = detect_language(name)
    chunks = chunk_file(text, path=name, language=language, repo="r", config=Config())
    classes = [c for c in chunks if c.kind == "class"]
    failing = [c.qualname for c in classes if not parses_alone(c)]
    assert failing == []
