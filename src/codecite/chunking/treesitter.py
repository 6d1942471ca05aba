"""The tree-sitter chunker: definitions found by :mod:`.syntax` become chunks.

- ``function`` / ``method``: the definition's whole lines, from its first
  decorator/attribute or the comment block directly above it (no blank line
  between; a ``/** ... */`` doc block one blank line above, as JSDoc is often
  written, but not a file's header) to its last line. TypeScript overload
  signatures directly above an implementation of the same name belong to its
  chunk (the chunk then parses alone). Longer than ``max_chunk_lines``: cut at the body's top-level
  statements into parts 1..n (part 1 holds the header; each part's context
  repeats the signature).
- ``class``: the skeleton (:mod:`.skeleton`) over the class's whole line range; a
  skeleton longer than ``max_chunk_lines`` is cut between members into parts 1..n
  of about ``class_part_lines``, each over its own lines (later parts repeat the
  class signature in their context).
- ``constant``: a top-level declaration of one name with its doc (a comment above
  it, a Python attribute docstring below it, a comment on its line), at most
  ``max_chunk_lines``: a module of documented settings is a chunk a setting.
- ``module``: the lines no function/class/constant/window chunk covers, blank edges
  trimmed, each elided span marked by a ``<comment> ...`` line. Made when the
  file has top-level statements (imports, constants, code, package lines).
- ``window``: top-level regions tree-sitter could not parse (ERROR nodes).

Context format (plain text, one item per line; ``<c>`` is the language's line
comment marker, ``#`` or ``//``)::

    <c> path: billing/orders.py
    <c> imports:
    from decimal import Decimal          (first 15 import/package lines, then
    import logging                        "<c> ... N more import lines")
    <c> in:
    class Order:                         (enclosing namespaces and classes,
        class Status:                     4 spaces deeper per level)
    <c> part 2 of 3 of:
    def build(self) -> str:              (only for parts of a split function)

A module chunk's context is the path line only (its content holds the imports);
a module longer than ``max_chunk_lines`` is cut at top-level statements into
parts, and parts 2.. get the imports and ``<c> part i of n`` in their context.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from tree_sitter import Node, Tree

from ..config import Config
from ..types import Chunk
from .languages import LanguageSpec, get_spec
from .names import attached_docstring, python_docstring
from .skeleton import skeleton
from .syntax import Definition, FileSyntax, Walker, last_row
from .text import draft, split_lines, trim, window_chunks

#: Import lines repeated in each chunk's context.
MAX_IMPORT_LINES = 15


@dataclass
class _File:
    """One file being chunked."""

    text: str
    source: bytes
    lines: list[str]
    line_starts: list[int]
    spec: LanguageSpec
    path: str
    language: str
    repo: str
    config: Config
    imports: list[str]
    classes: dict[str, Definition]

    def chunk(self, **fields: object) -> Chunk:
        return draft(repo=self.repo, path=self.path, language=self.language, **fields)  # type: ignore[arg-type]

    def content(self, start_row: int, end_row: int) -> str:
        return "\n".join(self.lines[start_row : end_row + 1])

    def context(
        self, headers: tuple[str, ...], extra: list[str] | None = None, *, imports: bool = True
    ) -> str:
        marker = self.spec.comment_marker
        out = [f"{marker} path: {self.path}"]
        if self.imports and imports:
            out.append(f"{marker} imports:")
            out.extend(self.imports)
        if headers:
            out.append(f"{marker} in:")
            out.extend("    " * depth + header for depth, header in enumerate(headers))
        return "\n".join(out + (extra or []))


def chunk_code(
    text: str, tree: Tree, *, path: str, language: str, repo: str, config: Config
) -> list[Chunk]:
    """Chunks of a source file of a tree-sitter language (ids left empty)."""
    spec = get_spec(language)
    if spec is None:
        raise ValueError(f"no tree-sitter spec for language {language!r}")
    source = text.encode("utf-8", "surrogatepass")
    module = path.rsplit("/", 1)[-1].split(".", 1)[0]
    found = Walker(spec, source, module).walk(tree.root_node)
    lines = split_lines(text)
    file = _File(
        text=text,
        source=source,
        lines=lines,
        line_starts=_line_starts(source),
        spec=spec,
        path=path,
        language=language,
        repo=repo,
        config=config,
        imports=_import_lines(found, source, spec),
        classes={},
    )
    chunks: list[Chunk] = []
    covered: list[tuple[int, int]] = []
    limit = max(1, config.index.max_chunk_lines)
    definitions = [  # a documented constant longer than a chunk stays in the module's lines
        d
        for d in _flatten(found.definitions)
        if d.kind != "constant" or d.end_row - d.start_row < limit
    ]
    for definition in definitions:  # the first class of a name: Rust struct before its impls
        if definition.kind == "class":
            file.classes.setdefault(definition.qualname, definition)
    for definition in definitions:
        if definition.kind == "class":
            chunks.extend(_class_chunks(file, definition))
        else:
            chunks.extend(_function_chunks(file, definition))
        covered.append((definition.start_row, definition.end_row))
    for first, last in _error_runs(found.errors, covered, len(lines)):
        covered.append((first, last))
        chunks.extend(
            window_chunks(
                lines,
                first + 1,
                last + 1,
                config=config,
                repo=repo,
                path=path,
                language=language,
                context=file.context(()),
            )
        )
    if found.statements:
        chunks.extend(_module_chunks(file, found, covered, tree.root_node))
    return chunks


def _error_runs(
    errors: list[Node], covered: list[tuple[int, int]], line_count: int
) -> list[tuple[int, int]]:
    """Row ranges of unparsable regions, without the rows of definitions beside them."""
    taken = {row for first, last in covered for row in range(first, last + 1)}
    runs: list[tuple[int, int]] = []
    for error in errors:
        start: int | None = None
        last = min(last_row(error), line_count - 1)
        for row in range(error.start_point.row, last + 2):
            free = row <= last and row not in taken
            if free and start is None:
                start = row
            elif not free and start is not None:
                runs.append((start, row - 1))
                start = None
    return runs


def _line_starts(source: bytes) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in re.finditer(b"\n", source))
    return starts


def _flatten(definitions: list[Definition]) -> list[Definition]:
    out: list[Definition] = []
    for definition in definitions:
        out.append(definition)
        out.extend(_flatten(definition.members))
    return out


def _import_lines(found: FileSyntax, source: bytes, spec: LanguageSpec) -> list[str]:
    lines: list[str] = []
    for node in found.imports:
        text = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
        lines.extend(line.rstrip() for line in text.strip().splitlines() if line.strip())
    if len(lines) > MAX_IMPORT_LINES:
        rest = len(lines) - MAX_IMPORT_LINES
        lines = [*lines[:MAX_IMPORT_LINES], f"{spec.comment_marker} ... {rest} more import lines"]
    return lines


def _headers(file: _File, definition: Definition) -> tuple[str, ...]:
    """Enclosing headers; a method defined outside its class (Go receivers, C++
    ``A::f``) gets the header of its class when the file defines it."""
    owner = file.classes.get(definition.parent) if definition.detached else None
    if owner is None:
        return definition.headers
    return (*owner.headers, owner.signature)


def _class_chunks(file: _File, definition: Definition) -> list[Chunk]:
    """The class's skeleton, one chunk; a skeleton longer than ``max_chunk_lines`` (a
    class of many documented fields and methods) is cut between members into parts
    1..n of about ``class_part_lines`` each, over its own lines (part 1 holds the
    header and docstring; later parts repeat the class signature in their context), so
    that a field of a 900-line outline is found by its own words."""
    whole = skeleton(definition, file.spec, file.source, file.line_starts)
    parts = _class_parts(file, definition, whole.count("\n") + 1)
    if len(parts) == 1:
        return _part_chunks(file, definition, "class", parts, definition.headers, lambda _: whole)

    def content(rows: tuple[int, int]) -> str:
        return skeleton(definition, file.spec, file.source, file.line_starts, rows)

    return _part_chunks(
        file, definition, "class", parts, definition.headers, content, label_first=False
    )


def _class_parts(file: _File, definition: Definition, total: int) -> list[tuple[int, int]]:
    """Row ranges of a class's parts (``total``: its whole skeleton's lines): its whole
    range unless the skeleton is longer than ``max_chunk_lines``, else cut at the body's
    top-level statements (a member with the comments above it) so that each part's
    skeleton is about equally long."""
    first, last = definition.start_row, definition.end_row
    limit = max(1, file.config.index.max_chunk_lines)
    if definition.body is None or total <= limit:
        return [(first, last)]
    units = [(a, b) for a, b in _statement_units(definition.body, file.spec) if first <= a]
    if len(units) < 2:
        return [(first, last)]
    count = -(-total // max(1, min(limit, file.config.index.class_part_lines)))
    target = -(-total // count)
    parts: list[tuple[int, int]] = []
    start, held = first, units[0][0] - first  # the header rows count for part 1
    for unit_start, unit_end in units:
        text = skeleton(
            definition, file.spec, file.source, file.line_starts, (unit_start, unit_end)
        )
        grown = text.count("\n") + 1
        if held and held + grown > target and len(parts) < count - 1:
            kept = trim(file.lines, start + 1, unit_start)
            parts.append((start, (kept[1] - 1) if kept else unit_start - 1))
            start, held = unit_start, 0
        held += grown
    parts.append((start, last))
    return parts


def _function_chunks(file: _File, definition: Definition) -> list[Chunk]:
    return _part_chunks(
        file,
        definition,
        definition.kind,
        _split(file, definition),
        _headers(file, definition),
        lambda rows: file.content(*rows),
    )


def _part_chunks(
    file: _File,
    definition: Definition,
    kind: str,
    parts: list[tuple[int, int]],
    headers: tuple[str, ...],
    content: Callable[[tuple[int, int]], str],
    label_first: bool = True,
) -> list[Chunk]:
    """One chunk per part (row range) of a definition; when there are several, their
    context says "part i of n of:" and the signature (``label_first=False``: not for
    part 1, which holds the header itself)."""
    chunks = []
    for number, (first, last) in enumerate(parts, start=1):
        extra = None
        if len(parts) > 1 and (label_first or number > 1):
            marker = file.spec.comment_marker
            extra = [f"{marker} part {number} of {len(parts)} of:", definition.signature]
        chunks.append(
            file.chunk(
                kind=kind,
                name=definition.name,
                qualname=definition.qualname,
                start_line=first + 1,
                end_line=last + 1,
                content=content((first, last)),
                context=file.context(headers, extra),
                signature=definition.signature,
                docstring=definition.docstring,
                parent=definition.parent,
                part=number if len(parts) > 1 else 0,
            )
        )
    return chunks


def _split(file: _File, definition: Definition) -> list[tuple[int, int]]:
    """Row ranges of the parts of a function: one range unless it is too long."""
    first, last = definition.start_row, definition.end_row
    limit = max(1, file.config.index.max_chunk_lines)
    if last - first + 1 <= limit or definition.body is None:
        return [(first, last)]
    # Aim for parts of equal size rather than full parts and a small remainder.
    count = -(-(last - first + 1) // limit)
    target = -(-(last - first + 1) // count)
    parts: list[tuple[int, int]] = []
    start, seen = first, False
    for unit_start, unit_end in _statement_units(definition.body, file.spec):
        if seen and unit_end - start + 1 > target and last - start + 1 > limit:
            kept = trim(file.lines, start + 1, unit_start)
            parts.append((start, (kept[1] - 1) if kept else unit_start - 1))
            start = unit_start
        seen = True
    parts.append((start, last))
    return parts


def _statement_units(body: Node, spec: LanguageSpec) -> list[tuple[int, int]]:
    """Row ranges of a body's top-level statements, comments joined to the next one."""
    children = list(body.named_children)
    if len(children) == 1 and children[0].type.endswith("_list"):
        children = children[0].named_children
    units: list[tuple[int, int]] = []
    pending: int | None = None
    for child in children:
        if child.type in spec.comments:
            pending = child.start_point.row if pending is None else pending
            continue
        units.append((child.start_point.row if pending is None else pending, last_row(child)))
        pending = None
    return units


def _module_chunks(
    file: _File, found: FileSyntax, covered: list[tuple[int, int]], root: Node
) -> list[Chunk]:
    """Lines outside function/class/window chunks, elided spans marked; cut at
    top-level statements into parts when longer than ``max_chunk_lines``."""
    rows: list[int | None] = []  # source rows, None for an elided span
    for index, (first, last) in enumerate(_uncovered_runs(file.lines, covered)):
        rows.extend([None] if index else [])  # runs are maximal: code lies between
        rows.extend(range(first, last + 1))
    cuts = {node.start_point.row for node in found.statements}
    parts = _cut_rows(rows, cuts, max(1, file.config.index.max_chunk_lines))
    name, qualname = _module_names(file.path, file.language)
    docstring = _module_docstring(file, root)
    marker = f"{file.spec.comment_marker} ..."
    chunks = []
    for number, part in enumerate(parts, start=1):
        real = [row for row in part if row is not None]
        context = file.context((), imports=False)  # the content holds the imports
        if number > 1:  # later parts lack them: put them in the context
            label = f"{file.spec.comment_marker} part {number} of {len(parts)}"
            context = file.context((), [label])
        chunks.append(
            file.chunk(
                kind="module",
                name=name,
                qualname=qualname,
                start_line=real[0] + 1,
                end_line=real[-1] + 1,
                context=context,
                docstring=docstring,
                content="\n".join(marker if row is None else file.lines[row] for row in part),
                part=number if len(parts) > 1 else 0,
            )
        )
    return chunks


def _uncovered_runs(lines: list[str], covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Maximal row ranges outside ``covered``, blank lines at their ends trimmed."""
    is_covered = [False] * len(lines)
    for first, last in covered:
        for row in range(first, min(last, len(lines) - 1) + 1):
            is_covered[row] = True
    runs: list[tuple[int, int]] = []
    row = 0
    while row < len(lines):
        end = row
        while end < len(lines) and not is_covered[end]:
            end += 1
        kept = trim(lines, row + 1, end) if end > row else None
        if kept is not None:
            runs.append((kept[0] - 1, kept[1] - 1))
        row = end + 1
    return runs


def _cut_rows(rows: list[int | None], cuts: set[int], limit: int) -> list[list[int | None]]:
    """Cut a row list into parts of at most ``limit`` rows, at statement starts or
    elision markers when there is one (else at the limit)."""
    parts: list[list[int | None]] = []
    current: list[int | None] = []
    for row in rows:
        current.append(row)
        if len(current) <= limit:
            continue
        at = max(
            (i for i in range(1, len(current)) if current[i] is None or current[i] in cuts),
            default=len(current) - 1,
        )
        parts.append(current[:at])
        current = current[at:]
    parts.append(current)
    return [_strip_markers(part) for part in parts if any(r is not None for r in part)]


def _strip_markers(part: list[int | None]) -> list[int | None]:
    while part and part[0] is None:
        part = part[1:]
    while part and part[-1] is None:
        part = part[:-1]
    return part


#: A comment that is a licence or copyright notice: the boilerplate many files open
#: with (``// Copyright 2014 ... All rights reserved``, ``/*! ... MIT Licensed */``,
#: ``SPDX-License-Identifier``), never what the file is about.
_NOTICE = re.compile(
    r"\bcopyright\b|©|\bspdx-license-identifier\b|\blicensed under\b|"
    r"\buse of this source code is governed\b|\bpermission is hereby granted\b|"
    r"\ball rights reserved\b",
    re.I,
)


def _module_docstring(file: _File, root: Node) -> str:
    """A file's description: Python's module docstring; elsewhere the first block of
    comments (lines without a blank between) at the top of the file that is not a
    licence or copyright notice (``// Copyright ...`` then ``// Package x does ...``
    gives the second)."""

    def text(node: Node) -> str:
        return file.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    if file.spec.python_docstrings:
        return python_docstring(root, text)
    blocks: list[list[Node]] = []
    for child in root.named_children:
        if child.type not in file.spec.comments:
            break
        if blocks and last_row(blocks[-1][-1]) >= child.start_point.row - 1:
            blocks[-1].append(child)
        else:
            blocks.append([child])
    for block in blocks:
        doc = attached_docstring(block, text, file.language)
        if not _NOTICE.search(doc):
            return doc
    return ""


def _module_names(path: str, language: str) -> tuple[str, str]:
    """(name, qualname) of a file's module chunk: ``billing.orders`` for Python,
    the path without its extension elsewhere."""
    pure = PurePosixPath(path)
    if language != "python":
        return pure.stem, str(pure.with_suffix(""))
    parts = list(pure.with_suffix("").parts)
    if parts[:1] == ["src"] and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return parts[-1], ".".join(parts)
