"""A definition's neighbours in the stored graph, as a reader means them: the links of
the whole definition (every part of a long one) and, for a class, of what it holds. A
class's callers are its construction sites and its methods' callers; its callees, what
its methods call; its tests, the tests of it and of its methods and the tests that
construct it. Links inside the definition are left out; each neighbour comes once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from ..store.protocols import ChunkReader, GraphReader
from ..types import Chunk
from .testmap import is_test_path


class GraphStore(ChunkReader, GraphReader, Protocol):
    """What this reads: chunks and edges (a store is one)."""


def definition_chunks(store: ChunkReader, chunk: Chunk) -> list[Chunk]:
    """Every part of ``chunk``'s definition and, for a class, the definitions in it."""
    in_file = [c for c in store.chunks(chunk.path) if c.path == chunk.path]
    parts = [c for c in in_file if c.qualname == chunk.qualname and c.kind == chunk.kind]
    if chunk.id not in {c.id for c in parts}:
        parts.append(chunk)
    if chunk.kind != "class":
        return parts
    prefix = chunk.qualname + "."
    return parts + [c for c in in_file if c.qualname.startswith(prefix)]


def definition_links(
    store: GraphStore, chunk: Chunk, kind: str, incoming: bool, limit: int
) -> list[tuple[Chunk, int]]:
    """Chunks linked by ``kind`` edges (into the definition when ``incoming``) to any
    chunk of ``chunk``'s definition (:func:`definition_chunks`), with the line of the
    first link; code before tests, then by place. ``kind == "tests"`` adds, for a class,
    the tests that construct it (``calls`` edges from test files into the class)."""
    own = definition_chunks(store, chunk)
    own_ids = {c.id for c in own}
    lines: dict[str, int] = {}

    def add(edges: Iterable[tuple[str, int]]) -> None:
        for far, line in edges:
            if far not in own_ids and far not in lines:
                lines[far] = line

    for c in own:
        edges = store.edges_to(c.id, kind) if incoming else store.edges_from(c.id, kind)
        add((e.src if incoming else e.dst, e.line) for e in edges)
    constructing: set[str] = set()
    if kind == "tests" and chunk.kind == "class":
        heads = [c for c in own if c.qualname == chunk.qualname]
        calls = [e for c in heads for e in store.edges_to(c.id, "calls")]
        constructing = {e.src for e in calls}
        add((e.src, e.line) for e in calls)
    found = store.get_chunks(lines)
    out = [
        (found[i], line)
        for i, line in lines.items()
        if i in found and (i not in constructing or is_test_path(found[i].path))
    ]
    out.sort(key=lambda o: (is_test_path(o[0].path), o[0].path, o[0].start_line))
    return out[:limit]
