"""A symbol's neighbourhood: who calls it, what it calls, what it inherits from and
which tests exercise it, one or two hops out, kept small enough to read. A class is
called where it is constructed and where its methods are called (its own methods'
calls of each other left out). A module's neighbourhood is by file: the files it uses
and those that use it (``codecite docs``)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Protocol

from ..graph.testmap import is_test_path
from ..types import Chunk, Edge
from .model import Link, Neighbourhood, Node, cite

#: Neighbours shown per role next to the symbol, and per neighbour one hop further.
FIRST_HOP = 6
SECOND_HOP = 2
#: Edges read per chunk and relation.
EDGE_LIMIT = 200
#: Files shown on each side of a module.
FILE_NEIGHBOURS = 8


class GraphSource(Protocol):
    """What a neighbourhood reads: chunks by id and edges both ways."""

    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]: ...
    def edges_from(self, chunk_id: str, kind: str | None = None) -> list[Edge]: ...
    def edges_to(self, chunk_id: str, kind: str | None = None) -> list[Edge]: ...


def _label(chunk: Chunk) -> str:
    if chunk.kind in ("module", "file", "window"):
        return f"{chunk.path} (top level)"
    return chunk.qualname


def _node(chunk: Chunk, role: str, hops: int) -> Node:
    return Node(chunk.id, _label(chunk), role, hops, chunk.path, chunk.start_line, chunk.end_line)


class _Builder:
    def __init__(self, graph: GraphSource, own: set[str]) -> None:
        self.graph, self.own = graph, own
        self.nodes: dict[str, Node] = {}
        self.links: list[Link] = []
        self.left_out: Counter[str] = Counter()

    def others(self, ids: Sequence[str], kind: str, incoming: bool) -> list[tuple[str, int]]:
        """(neighbour id, line of the first link) across ``ids``, most links first."""
        count: Counter[str] = Counter()
        line: dict[str, int] = {}
        for chunk_id in ids:
            read = self.graph.edges_to if incoming else self.graph.edges_from
            for e in read(chunk_id, kind)[:EDGE_LIMIT]:
                other = e.src if incoming else e.dst
                if other not in self.own:
                    count[other] += 1
                    line.setdefault(other, e.line)
        return [(o, line[o]) for o, _ in sorted(count.items(), key=lambda x: (-x[1], x[0]))]

    def grow(
        self, near: Chunk, ids: Sequence[str], kind: str, role: str, hops: int, limit: int
    ) -> list[Chunk]:
        """Add up to ``limit`` neighbours of ``ids`` (drawn at ``near``) in ``role``."""
        incoming = role in ("caller", "test")
        found = self.others(ids, kind, incoming)
        fresh = [(o, ln) for o, ln in found if o not in self.nodes]
        chunks = self.graph.get_chunks([o for o, _ in fresh[:limit]])
        added = []
        for other, at in fresh[:limit]:
            chunk = chunks.get(other)
            if chunk is None:
                continue
            shown = "test" if role == "caller" and is_test_path(chunk.path) else role
            self.nodes[other] = _node(chunk, shown, hops)
            where = chunk if incoming else near  # the edge stands in its source
            citation = cite(where.path, at, at) if at else ""
            src, dst = (other, near.id) if incoming else (near.id, other)
            self.links.append(Link(src, dst, kind, citation))
            added.append(chunk)
        self.left_out[role] += max(len(fresh) - limit, 0)
        return added


def neighbourhood(
    graph: GraphSource,
    chunks: Sequence[Chunk],
    members: Sequence[Chunk] = (),
    hops: int = 2,
    impact: bool = False,
) -> Neighbourhood:
    """The neighbourhood of the definition made of ``chunks`` (a class: with its
    ``members``), ``hops`` (1 or 2) out; tests one hop out. ``impact``: only what a
    change of it reaches (its callers, theirs, and the tests), for "what breaks if I
    change X"."""
    head = chunks[0]
    ids = [c.id for c in chunks]
    every = ids + [m.id for m in members]
    b = _Builder(graph, set(every))
    b.nodes[head.id] = _node(head, "self", 0)
    tests = b.grow(head, every, "tests", "test", 1, FIRST_HOP)
    b.own |= {t.id for t in tests}  # a test that calls it is drawn once, as its test
    callers = b.grow(head, every, "calls", "caller", 1, FIRST_HOP)
    callees = [] if impact else b.grow(head, ids, "calls", "callee", 1, FIRST_HOP)
    bases = [] if impact else b.grow(head, ids, "inherits", "base", 1, FIRST_HOP)
    if hops >= 2:
        b.own |= set(b.nodes)
        for role, kind, found in (
            ("caller", "calls", callers),
            ("callee", "calls", callees),
            ("base", "inherits", bases),
        ):
            for other in found:
                b.grow(other, [other.id], kind, role, 2, SECOND_HOP)
    left = tuple(sorted((r, n) for r, n in b.left_out.items() if n))
    return Neighbourhood(head.qualname, tuple(b.nodes.values()), tuple(b.links), left)


def file_neighbourhood(
    path: str, edges: Sequence[tuple[str, str, str, int]], limit: int = FILE_NEIGHBOURS
) -> Neighbourhood:
    """A file and the files it imports or calls into ("callee") and that import or call
    into it ("caller"; "test" for test files), from ``edges`` (source path, target
    path, kind, line of the first such edge), heaviest first."""
    uses: dict[str, int] = defaultdict(int)
    used_by: dict[str, int] = defaultdict(int)
    first: dict[tuple[str, str], int] = {}
    for src, dst, _, line in edges:
        if src == dst:
            continue
        if src == path:
            uses[dst] += 1
        elif dst == path:
            used_by[src] += 1
        first.setdefault((src, dst), line)
    nodes = [Node(path, path, "self", 0, path, 1, 1)]
    links: list[Link] = []
    left: Counter[str] = Counter()
    for role, weights in (("callee", uses), ("caller", used_by)):
        ranked = sorted(weights.items(), key=lambda x: (-x[1], x[0]))
        for other, _ in ranked[:limit]:
            kind = "test" if role == "caller" and is_test_path(other) else role
            if all(n.id != other for n in nodes):  # a file both ways is drawn once
                nodes.append(Node(other, other, kind, 1, other, 1, 1))
            src, dst = (path, other) if role == "callee" else (other, path)
            at = first.get((src, dst), 0)
            links.append(Link(src, dst, "uses", cite(src, at, at) if at else ""))
        left[role] += max(len(ranked) - limit, 0)
    kept = tuple(sorted((r, n) for r, n in left.items() if n))
    return Neighbourhood(path, tuple(nodes), tuple(links), kept)
