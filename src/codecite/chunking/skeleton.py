"""Class skeletons: a class's source with the bodies of its methods and nested
classes elided, so that "what is this class" is answerable in one chunk.

Elided bodies become the spec's ``elision`` text: ``{ /* ... */ }`` in brace
languages (valid syntax in all of them), ``...`` in Python (after the docstring,
which is kept), ``# ...`` in Ruby. Fields, properties, signatures, decorators and
doc comments stay. The result is dedented.
"""

from __future__ import annotations

import textwrap

from tree_sitter import Node

from .languages import LanguageSpec
from .syntax import Definition

Edit = tuple[int, int, str]


def skeleton(
    definition: Definition,
    spec: LanguageSpec,
    source: bytes,
    line_starts: list[int],
    rows: tuple[int, int] | None = None,
) -> str:
    """The skeleton text of a class over its full line range, or over ``rows`` (first,
    last; 0-based, inclusive) of it: a part of a large class, cut between members."""
    first_row, last_row = rows or (definition.start_row, definition.end_row)
    start = line_starts[first_row]
    end = _line_end(source, line_starts, last_row)
    edits: list[Edit] = []
    if definition.group_keyword:
        edits.append(
            (definition.node.start_byte, definition.node.start_byte, definition.group_keyword)
        )
    for member in definition.members:
        edit = _elide(member, spec, source)
        if edit is not None:
            edits.append(edit)
    pieces: list[bytes] = []
    cursor = start
    for edit_start, edit_end, replacement in sorted(edits):
        if edit_start < cursor or edit_end > end:
            continue
        pieces.append(source[cursor:edit_start])
        pieces.append(replacement.encode("utf-8"))
        cursor = edit_end
    pieces.append(source[cursor:end])
    text = b"".join(pieces).decode("utf-8", "replace")
    return textwrap.dedent(text).strip("\n")


def _line_end(source: bytes, line_starts: list[int], row: int) -> int:
    """Byte offset of the end of a row, newline excluded."""
    if row + 1 < len(line_starts):
        return line_starts[row + 1] - 1
    return len(source)


def _elide(member: Definition, spec: LanguageSpec, source: bytes) -> Edit | None:
    body = member.body
    if body is None or body.type not in spec.block_bodies:
        return None
    if spec.python_docstrings:
        return _elide_python(body, source)
    if spec.elision.startswith("#"):  # Ruby: a comment line, or nil on one line
        same_line = body.start_point.row == member.node.start_point.row
        return body.start_byte, body.end_byte, "nil" if same_line else spec.elision
    return body.start_byte, body.end_byte, spec.elision


def _elide_python(body: Node, source: bytes) -> Edit:
    """Keep a Python docstring, replace the rest of the block with ``...``."""
    line_start = source.rfind(b"\n", 0, body.start_byte) + 1
    indent = source[line_start : body.start_byte].decode("utf-8", "replace")
    after_doc = "; ..." if indent.strip() else "\n" + indent + "..."  # one-line block or not
    first = next((c for c in body.named_children if c.type != "comment"), None)
    is_doc = (
        first is not None
        and first.type == "expression_statement"
        and first.named_child_count == 1
        and first.named_children[0].type in ("string", "concatenated_string")
    )
    if first is not None and is_doc and first.end_byte < body.end_byte:
        return first.end_byte, body.end_byte, after_doc
    if first is not None and is_doc:
        return body.end_byte, body.end_byte, ""
    return body.start_byte, body.end_byte, "..."
