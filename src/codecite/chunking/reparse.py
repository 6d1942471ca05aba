"""Does a function/method chunk parse on its own? (docs/DESIGN.md section 3)

Each part-0 ``function``/``method`` chunk is re-parsed alone with the grammar of
its language; the tree must hold no ERROR or MISSING node. A method is not
always valid syntax at the top level of a file, so a chunk that does not parse
bare is tried again inside a minimal shell (the first shell that parses wins):

- python: the content is dedented (methods are indented in their class)
- java, c_sharp: ``class _Shell { ... }``
- javascript, typescript, tsx: ``class _Shell { ... }`` (methods, class fields),
  then ``({ ... })`` (members of an object literal)
- php: ``<?php`` first, then ``<?php class _Shell { ... }``
- rust: ``impl _Shell { ... }``; cpp: ``class _Shell { ... };``
- go, c, ruby: none (their functions and methods are top-level syntax)

Used by the tests and by ``bench/chunk_quality.py``.
"""

from __future__ import annotations

import textwrap

from ..types import Chunk
from . import parse

_CLASS = "class _Shell {{\n{}\n}}"
SHELLS: dict[str, list[str]] = {
    "python": [],
    "java": [_CLASS],
    "c_sharp": [_CLASS],
    "javascript": [_CLASS, "({{\n{}\n}})"],
    "typescript": [_CLASS, "({{\n{}\n}})"],
    "tsx": [_CLASS, "({{\n{}\n}})"],
    "php": ["<?php\n{}", "<?php\nclass _Shell {{\n{}\n}}"],
    "rust": ["impl _Shell {{\n{}\n}}"],
    "cpp": ["class _Shell {{\n{}\n}};"],
    "go": [],
    "c": [],
    "ruby": [],
}


def _clean(text: str, language: str) -> bool:
    """No ERROR/MISSING node. A newline is added, as files end with one (Go's
    grammar wants a line end after a type declaration)."""
    return not parse(text + "\n", language).root_node.has_error


def parses_alone(chunk: Chunk) -> bool:
    content = chunk.content
    if chunk.language == "python":
        content = textwrap.dedent(content)
    if chunk.language != "php" and _clean(content, chunk.language):
        return True
    return any(_clean(shell.format(content), chunk.language) for shell in SHELLS[chunk.language])
