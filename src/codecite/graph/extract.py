"""Extract a file's imports and references (calls, base classes) from its syntax tree.

One query per language (:mod:`codecite.graph.queries`) finds call sites, base types and
import statements in a single pass; small tables turn a callee node into
``(name, qualifier)``. Each reference is attributed to the innermost function/method chunk
whose line range contains it, else the innermost class chunk, else the module chunk
(else a line-window chunk); a reference in no chunk is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

import tree_sitter
from tree_sitter import Node, Query, QueryCursor

from codecite.chunking.grammars import get_language
from codecite.graph.imports import READERS, REQUIRE_READERS
from codecite.graph.queries import IMPORT_CALLS, NAME_FIELDS, NAME_TYPES, QUERIES
from codecite.types import Chunk, FileFacts, Import, Reference

#: Chunk kinds in attribution order: later kinds win over earlier ones.
_PAINT_ORDER = ("window", "module", "constant", "class", "function", "method")
_TRAILING_SEP = re.compile(r"\s*(?:\?\.|&\.|\.|::|->|\\)\s*$")
_SPACES = re.compile(r"\s+")
_MAX_DEPTH = 8


@cache
def _query(language: str) -> Query:
    return Query(get_language(language), QUERIES[language])


def supported(language: str) -> bool:
    """True when the graph extractor knows this language."""
    return language in QUERIES


def extract_facts(
    tree: tree_sitter.Tree,
    text: str,
    *,
    language: str,
    path: str,
    chunks: Sequence[Chunk],
) -> FileFacts:
    """Imports and references of one parsed file; references point at ``chunks``.

    ``path`` is informational (not used yet); unsupported languages give empty facts.
    """
    if language not in QUERIES:
        return FileFacts()
    source = text.encode("utf-8", "surrogatepass")
    captures = QueryCursor(_query(language)).captures(tree.root_node)
    imports = _imports(captures, language)
    owner = _owner_by_line(chunks, _PAINT_ORDER)
    class_owner = _owner_by_line(chunks, ("class",))
    refs: list[tuple[int, Reference]] = []
    skip = IMPORT_CALLS.get(language, frozenset())
    for node in captures.get("call", ()):
        split = split_name(node, source)
        if split is None or split[0] in skip:
            continue
        name, qualifier, line = split
        chunk_id = owner.get(line)
        if chunk_id:
            refs.append((node.start_byte, Reference(chunk_id, name, qualifier, "call", line)))
    for node in captures.get("base", ()):
        split = split_name(node, source)
        if split is not None and (chunk_id := class_owner.get(split[2], "")):
            ref = Reference(chunk_id, split[0], split[1], "inherit", split[2])
            refs.append((node.start_byte, ref))
    refs.extend(_rust_impls(captures.get("impl", ()), source, chunks))
    refs.sort(key=lambda item: (item[1].line, item[0]))
    return FileFacts(imports=tuple(imports), refs=tuple(ref for _, ref in refs))


def _imports(captures: dict[str, list[Node]], language: str) -> list[Import]:
    out: list[Import] = []
    reader = READERS.get(language)
    if reader is not None:
        for node in captures.get("import", ()):
            out.extend(reader(node))
    require = REQUIRE_READERS.get(language)
    if require is not None:
        out.extend(require(node) for node in captures.get("require", ()))
    out = [imp for imp in out if imp.module]
    out.sort(key=lambda imp: imp.line)
    return out


def split_name(node: Node, source: bytes) -> tuple[str, str, int] | None:
    """``(name, qualifier, line)`` of a callee/type expression, or None when it has no name.

    The name is the last identifier (``c`` in ``a.b.c``, ``max`` in ``std::max<int>``); the
    qualifier is the source text before it, separator and whitespace removed (``a.b``).
    """
    name_node = _name_node(node)
    if name_node is None:
        return None
    name = source[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace")
    qualifier = ""
    if name_node.start_byte > node.start_byte:
        raw = source[node.start_byte : name_node.start_byte].decode("utf-8", "replace")
        qualifier = _SPACES.sub("", _TRAILING_SEP.sub("", raw))
    return name, qualifier, name_node.start_point[0] + 1


def _name_node(node: Node) -> Node | None:
    for _ in range(_MAX_DEPTH):
        if node.type in NAME_TYPES:
            return node
        ways = NAME_FIELDS.get(node.type)
        if ways is None:
            return None
        nxt: Node | None = None
        for way in ways:
            if way == "first":
                nxt = node.named_children[0] if node.named_child_count else None
            elif way == "last":
                nxt = node.named_children[-1] if node.named_child_count else None
            else:
                nxt = node.child_by_field_name(way)
            if nxt is not None:
                break
        if nxt is None:
            return None
        node = nxt
    return None


def _owner_by_line(chunks: Sequence[Chunk], kinds: Sequence[str]) -> dict[int, str]:
    """Line → id of the chunk a reference on that line belongs to.

    Chunks of later ``kinds`` overwrite earlier ones; within a kind, larger ranges are
    painted first so the innermost one wins. Cost: the sum of the painted line ranges.
    """
    rank = {kind: i for i, kind in enumerate(kinds)}
    ordered = sorted(
        (c for c in chunks if c.kind in rank),
        key=lambda c: (rank[c.kind], -(c.end_line - c.start_line), c.start_line),
    )
    owner: dict[int, str] = {}
    for chunk in ordered:
        for line in range(chunk.start_line, chunk.end_line + 1):
            owner[line] = chunk.id
    return owner


def _rust_impls(
    nodes: Sequence[Node], source: bytes, chunks: Sequence[Chunk]
) -> list[tuple[int, Reference]]:
    """``impl Trait for Type``: the Type's class chunk inherits Trait — its struct/enum chunk
    when the file has one, else the impl block's own chunk; skipped without either."""
    out: list[tuple[int, Reference]] = []
    for node in nodes:
        trait, typ = node.child_by_field_name("trait"), node.child_by_field_name("type")
        if trait is None or typ is None:
            continue
        base, target = split_name(trait, source), split_name(typ, source)
        if base is None or target is None:
            continue
        line = base[2]
        named = [c for c in chunks if c.kind == "class" and c.name == target[0]]
        named.sort(key=lambda c: c.start_line <= line <= c.end_line)
        if named:
            ref = Reference(named[0].id, base[0], base[1], "inherit", line)
            out.append((trait.start_byte, ref))
    return out
