"""Which definition a tool's ``symbol`` names, and its neighbours in the code graph.

Built on the public :meth:`Index.find_symbol` and :meth:`Index.related`, with what the
tools add: ``path::qualname`` to pick one of several definitions, the parts of a long
definition grouped into one, a class with its methods (for its tests), and callers
marked when they are tests."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from ... import SYMBOL_LIMIT, Chunk, Index
from ...errors import UserError
from .spans import chunk_json, cite

#: Kinds that are not definitions (a symbol look-up falls back to them only).
COARSE_KINDS = frozenset({"module", "window", "file", "section"})
#: :meth:`Index.related`'s limit when every edge is wanted (the tools cap what they list).
EVERY_EDGE = sys.maxsize


@dataclass(frozen=True)
class Definition:
    """A symbol's definition: its chunks (one, or the parts of a long one)."""

    path: str
    qualname: str
    chunks: tuple[Chunk, ...]

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.chunks]

    @property
    def head(self) -> Chunk:
        return self.chunks[0]

    @property
    def start_line(self) -> int:
        return min(c.start_line for c in self.chunks)

    @property
    def end_line(self) -> int:
        return max(c.end_line for c in self.chunks)

    @property
    def citation(self) -> str:
        return cite(self)

    def to_json(self, repo: str) -> dict[str, Any]:
        data = chunk_json(self.head, repo)
        data.update(start_line=self.start_line, end_line=self.end_line, citation=self.citation)
        return data


def find_definitions(index: Index, symbol: str) -> list[Definition]:
    """The definitions ``symbol`` names: a qualified name (``Order.mark_paid``), a plain
    name (``mark_paid``), a dotted path ending in a name (``orders.Order.mark_paid``) or
    ``path::qualname``. Exact qualified names win over plain names; definitions win over
    module/file chunks; the parts of a long definition are grouped into one."""
    path, sep, name = symbol.strip().rpartition("::")
    name = name.strip()
    if not sep:
        path = ""
    if not name:
        raise UserError("the symbol is empty; give a function, method or class name")
    chunks = index.find_symbol(name, SYMBOL_LIMIT)
    if path:
        chunks = [c for c in chunks if c.path == path.strip().strip("/")]
    fine = [c for c in chunks if c.kind not in COARSE_KINDS]
    groups: dict[tuple[str, str], list[Chunk]] = {}
    for chunk in fine or chunks:
        groups.setdefault((chunk.path, chunk.qualname), []).append(chunk)
    return [
        Definition(p, q, tuple(sorted(cs, key=lambda c: (c.part, c.start_line))))
        for (p, q), cs in sorted(groups.items(), key=lambda kv: (len(kv[0][0]), kv[0]))
    ]


def with_members(index: Index, definition: Definition) -> Definition:
    """A class together with its methods (the tests of a class include the tests of its
    methods); any other definition as it is."""
    if definition.head.kind != "class":
        return definition
    prefix = definition.qualname + "."
    members = [
        c
        for c in index.chunks(definition.path)
        if c.path == definition.path and c.qualname.startswith(prefix)
    ]
    return Definition(definition.path, definition.qualname, (*definition.chunks, *members))


@dataclass(frozen=True)
class Neighbour:
    """A chunk at the other end of graph edges from a definition."""

    chunk: Chunk
    lines: tuple[int, ...]
    is_test: bool


def graph_neighbours(index: Index, definition: Definition, relation: str) -> list[Neighbour]:
    """The chunks :meth:`Index.related` links to any chunk of ``definition`` by
    ``relation`` (``callers``, ``callees``, ``tests``), each once with all its lines;
    links inside the definition are left out. Callers that are tests are marked and
    listed last."""
    own = set(definition.ids)
    found: dict[str, Chunk] = {}
    lines: dict[str, list[int]] = {}
    for chunk in definition.chunks:
        for far, line in index.related(chunk, relation, EVERY_EDGE):
            if far.id not in own:
                found.setdefault(far.id, far)
                lines.setdefault(far.id, []).append(line)
    tested_by: set[str] = set()
    if relation == "callers":
        for chunk in definition.chunks:
            tested_by |= {test.id for test, _ in index.related(chunk, "tests", EVERY_EDGE)}
    result = [
        Neighbour(found[i], tuple(sorted({ln for ln in at if ln})), i in tested_by)
        for i, at in lines.items()
    ]
    result.sort(key=lambda n: (n.is_test, n.chunk.path, n.chunk.start_line))
    return result
