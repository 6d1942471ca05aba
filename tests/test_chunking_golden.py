"""Golden chunk boundaries of the language fixtures.

``tests/fixtures/languages/golden/<file>.json`` holds ``[kind, qualname,
start_line, end_line]`` for every chunk of ``<file>``, in order. Each golden was
checked by reading it against its fixture. After a deliberate change to the
chunker, rewrite them with ``python tests/test_chunking_golden.py`` and read the
diff against the fixtures again before committing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from codecite.chunking import chunk_file
from codecite.chunking.grammars import detect_language
from codecite.config import Config

FIXTURES = Path(__file__).parent / "fixtures" / "languages"
GOLDEN = FIXTURES / "golden"
FILES = [
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
    "markdown.md",
    "config.yaml",
    "config.json",
    "broken.py",
]


def boundaries(name: str) -> list[list[object]]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    chunks = chunk_file(
        text, path=name, language=detect_language(name), repo="fixtures", config=Config()
    )
    return [[c.kind, c.qualname, c.start_line, c.end_line] for c in chunks]


@pytest.mark.parametrize("name", FILES)
def test_chunk_boundaries_match_golden(name: str) -> None:
    expected = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    assert boundaries(name) == expected


def _regenerate() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for name in FILES:
        rows = ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in boundaries(name))
        (GOLDEN / f"{name}.json").write_text(f"[\n{rows}\n]\n", encoding="utf-8")
        print(f"wrote golden/{name}.json")


if __name__ == "__main__":
    sys.exit(_regenerate())
