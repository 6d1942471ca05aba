"""The system map: the parts of a repository as boxes and the imports and calls
between them as arrows, each cited (``codecite map``).

    store ─► file sizes + edges by file ─► folder tree ─► cut (≤ max_boxes parts,
          --focus opens one part; the parts beyond it kept for their arrows)
          ─► arrows: edges between two boxes summed, the first ones kept as evidence
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace

from ..errors import UserError
from ..graph.testmap import is_test_path
from ..store.protocols import GraphOverview, PathEdge
from .model import Arrow, Box, Evidence, Stats, SystemMap
from .parts import box_of, build_tree, context_units, cut, find_folder, openable, owner_index

#: Edge kinds an arrow is made of: one part imports or calls another.
MAP_EDGE_KINDS: tuple[str, ...] = ("imports", "calls")
#: Boxes a map has at most (a reader takes in about 25 at once).
MAX_BOXES = 25
#: Edges cited per arrow.
EVIDENCE_PER_ARROW = 12
#: Arrows drawn per box at most (the lighter ones are in the JSON only): a picture
#: with more is a tangle no reader follows.
ARROWS_PER_BOX = 1.5
#: Parts beyond a ``--focus`` shown (those with the heaviest arrows into or out of it).
MAX_OUTSIDE = 8


def evidence_of(edge: PathEdge) -> Evidence:
    """Where an edge stands: its line, else the chunk it leaves from."""
    start, end = (edge.line, edge.line) if edge.line else (edge.src_start, edge.src_end)
    if edge.kind == "imports":
        return Evidence(edge.kind, edge.src_path, start, end, edge.src_path, edge.dst_path)
    source = edge.src_qualname or edge.src_path
    return Evidence(edge.kind, edge.src_path, start, end, source, edge.dst_qualname)


def arrows_between(
    edges: Sequence[PathEdge], owner: dict[str, str], keep: set[str] | None = None
) -> list[Arrow]:
    """Edges between two different boxes summed into arrows, heaviest first; with
    ``keep``, only arrows with at least one end in it."""
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    evidence: dict[tuple[str, str], list[Evidence]] = defaultdict(list)
    for e in edges:
        src, dst = owner.get(e.src_path), owner.get(e.dst_path)
        if src is None or dst is None or src == dst:
            continue
        if keep is not None and src not in keep and dst not in keep:
            continue
        counts[src, dst][e.kind] += 1
        if len(evidence[src, dst]) < EVIDENCE_PER_ARROW:
            evidence[src, dst].append(evidence_of(e))
    arrows = [
        Arrow(src, dst, sum(c.values()), tuple(sorted(c.items())), tuple(evidence[src, dst]))
        for (src, dst), c in counts.items()
    ]
    return sorted(arrows, key=lambda a: (-a.weight, a.src, a.dst))


def choose_drawn(arrows: Sequence[Arrow], boxes: int) -> list[Arrow]:
    """``arrows`` (heaviest first), those to draw marked: each box's heaviest arrow out
    and in, then the heaviest others up to ``ARROWS_PER_BOX`` per box."""
    limit = max(int(ARROWS_PER_BOX * boxes), 1)
    keep: set[int] = set()
    seen_out: set[str] = set()
    seen_in: set[str] = set()
    for i, a in enumerate(arrows):
        if a.src not in seen_out or a.dst not in seen_in:
            keep.add(i)
        seen_out.add(a.src)
        seen_in.add(a.dst)
    for i in range(len(arrows)):
        if len(keep) >= limit:
            break
        keep.add(i)
    return [a if i in keep else replace(a, drawn=False) for i, a in enumerate(arrows)]


def file_pairs(edges: Sequence[PathEdge]) -> int:
    """Arrows of the unclustered picture: pairs of different files with an edge."""
    return len({(e.src_path, e.dst_path) for e in edges if e.src_path != e.dst_path})


def system_map(
    store: GraphOverview,
    repo: str,
    focus: str = "",
    max_boxes: int = MAX_BOXES,
    kinds: Sequence[str] = MAP_EDGE_KINDS,
    tests: bool = False,
) -> SystemMap:
    """The map of ``repo``'s indexed code, or of the folder ``focus`` with the parts
    beyond it that its arrows reach; test files only with ``tests``."""
    sizes = store.file_sizes()
    root = build_tree(sizes, tests)
    if not root.parts():
        tested = " (test files only: draw them with --tests)" if not tests and sizes else ""
        raise UserError(
            f"no code in the index of {repo} to draw{tested}; documentation and "
            "configuration files are not part of the map"
        )
    top = find_folder(root, focus)
    units = cut(top, max_boxes)
    inside = [(u, box_of(u, top.path)) for u in units]
    edges = store.path_edges(kinds)
    keep = {b.id for _, b in inside}
    owner = owner_index(inside)
    own_files = set(owner)
    if top is not root.compressed():
        outside = [(u, box_of(u, top.path, outside=True)) for u in context_units(root, top)]
        owner.update(owner_index(outside))
        arrows = arrows_between(edges, owner, keep)
        reach = Counter[str]()
        for a in arrows:
            reach[a.src if a.src not in keep else a.dst] += a.weight
        shown = {b for b, _ in reach.most_common(MAX_OUTSIDE)}
        arrows = [a for a in arrows if (a.src in keep or a.src in shown)]
        arrows = [a for a in arrows if (a.dst in keep or a.dst in shown)]
        inside += [(u, b) for u, b in outside if b.id in shown]
    else:
        arrows = arrows_between(edges, owner)
    boxes: tuple[Box, ...] = tuple(b for _, b in inside)
    arrows = choose_drawn(arrows, len(boxes))
    code = build_tree(sizes, tests=True).all_files()
    stats = Stats(
        files=len(own_files),
        file_edges=file_pairs(
            [e for e in edges if e.src_path in own_files and e.dst_path in own_files]
        ),
        boxes=len(boxes),
        arrows=len(arrows),
        drawn=sum(a.drawn for a in arrows),
        test_files=0 if tests else sum(1 for f in code if is_test_path(f.path)),
    )
    opened = tuple(p for p in openable(root) if p == top.path or p.startswith(f"{top.path}/"))
    return SystemMap(
        repo=repo,
        focus=top.path,
        boxes=boxes,
        arrows=tuple(arrows),
        stats=stats,
        openable=opened if top.path else tuple(openable(root)),
        edge_kinds=tuple(kinds),
    )
