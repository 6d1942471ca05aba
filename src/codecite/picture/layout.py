"""A layered (Sugiyama) layout in plain Python: boxes in rows, arrows pointing down
(a part above depends on the parts below it).

    break cycles (greedy feedback arc set, heavy arrows keep their direction)
    ─► rows: each box below everything it is used by, at most ``max_row`` per row
    ─► long arrows get a bend point per row they cross
    ─► order in rows: barycentre sweeps, then swaps of neighbours (``reduce=False``
        keeps the first order: the measured baseline)
    ─► x: each box pulled towards its neighbours, rows kept apart; y by row

Boxes with no arrow at all go in rows of their own at the bottom. ``grid_layout`` is
the other candidate measured (bench/map_bench.py): boxes in a square grid, straight
arrows."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from .ordering import Arc, assign_rows, crossings_between, order_for_cycles, order_rows

#: Space between boxes in a row, and between rows (pixels).
GAP_X = 28.0
GAP_Y = 64.0
MARGIN = 16.0
#: Room a long arrow's bend takes in a row it crosses, and the gap beside one.
BEND_WIDTH = 10.0
BEND_GAP = 6.0
#: Passes pulling boxes towards their neighbours' x.
PULL_PASSES = 8


@dataclass(frozen=True)
class Size:
    """A box to place: its id and size."""

    id: str
    width: float
    height: float


@dataclass(frozen=True)
class Placed:
    """A placed box: its top-left corner and size."""

    id: str
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Route:
    """An arrow's path from its source box to its target box, as points."""

    src: str
    dst: str
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Layout:
    width: float
    height: float
    boxes: tuple[Placed, ...]
    routes: tuple[Route, ...]

    def crossings(self) -> int:
        """Arrows crossing each other, counted on the drawn paths."""
        return count_crossings(self.routes)


#: Width a picture of several unjoined parts fills before it puts the next one below.
PACK_WIDTH = 1400.0
#: Boxes a row holds at most, by default (a layout that stays readable on a phone
#: scrolls down, not sideways).
MAX_ROW = 6


@dataclass(frozen=True)
class _Rows:
    """The rows of a layered layout, before coordinates."""

    rows: list[list[str]]
    between: list[list[tuple[str, str]]]
    chains: dict[tuple[str, str], list[str]]
    rank: dict[str, int]
    lone: list[str]


def _layered_rows(sizes: Sequence[Size], arcs: Sequence[Arc], reduce: bool, max_row: int) -> _Rows:
    linked = {n for s, d, _ in arcs for n in (s, d) if s != d}
    nodes = [s.id for s in sizes if s.id in linked]
    rank = order_for_cycles(nodes, [a for a in arcs if a[0] != a[1]])
    down: dict[str, list[str]] = defaultdict(list)
    for s, d, _ in arcs:
        if s != d:
            a, b = (s, d) if rank[s] < rank[d] else (d, s)
            if b not in down[a]:
                down[a].append(b)
    row = assign_rows(nodes, down, max_row)
    rows, between, chains = _with_bends(nodes, down, row)
    if reduce:
        rows = order_rows(rows, between)
    lone = [s.id for s in sizes if s.id not in linked]
    return _Rows(rows, between, chains, rank, lone)


def layered_crossings(
    sizes: Sequence[Size], arcs: Sequence[Arc], *, reduce: bool = True, max_row: int = MAX_ROW
) -> int:
    """Crossings of the layered layout, counted between adjacent rows (bends included),
    without placing anything: fast enough for a graph of thousands of files."""
    r = _layered_rows(sizes, arcs, reduce, max_row)
    return sum(
        crossings_between(r.rows[i], r.rows[i + 1], r.between[i]) for i in range(len(r.rows) - 1)
    )


def layered_layout(
    sizes: Sequence[Size], arcs: Sequence[Arc], *, reduce: bool = True, max_row: int = MAX_ROW
) -> Layout:
    """Boxes in rows, each arc pointing down (see the module's docstring). Parts that no
    arc joins are laid out each on its own, largest first, side by side up to
    ``PACK_WIDTH`` and then below (boxes with no arc at all last): no empty band between
    them, and a picture that stays about as wide as a screen."""
    groups = _components(sizes, arcs)
    if len(groups) <= 1:
        return _layered_one(sizes, arcs, reduce, max_row)
    parts = []
    for ids in groups:
        sub = [s for s in sizes if s.id in ids]
        parts.append(_layered_one(sub, [a for a in arcs if a[0] in ids], reduce, max_row))
    return _pack(parts, [s.id for s in sizes])


def _components(sizes: Sequence[Size], arcs: Sequence[Arc]) -> list[set[str]]:
    """The boxes joined by arcs, in groups (largest first), then the boxes with none."""
    parent = {s.id: s.id for s in sizes}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    linked: set[str] = set()
    for a, b, _ in arcs:
        if a != b:
            linked |= {a, b}
            parent[root(a)] = root(b)
    groups: dict[str, set[str]] = defaultdict(set)
    for s in sizes:
        if s.id in linked:
            groups[root(s.id)].add(s.id)
    ordered = sorted(groups.values(), key=lambda g: (-len(g), min(g)))
    lone = {s.id for s in sizes if s.id not in linked}
    return ordered + ([lone] if lone else [])


def _pack(parts: list[Layout], order: list[str]) -> Layout:
    """Layouts side by side in shelves at most ``PACK_WIDTH`` wide (or the widest one)."""
    limit = max([PACK_WIDTH, *(p.width for p in parts)])
    x = y = shelf = 0.0
    placed: dict[str, Placed] = {}
    routes: list[Route] = []
    for part in parts:
        if x > 0 and x + part.width > limit:
            x, y, shelf = 0.0, y + shelf, 0.0
        for b in part.boxes:
            placed[b.id] = Placed(b.id, b.x + x, b.y + y, b.width, b.height)
        for r in part.routes:
            routes.append(Route(r.src, r.dst, tuple((px + x, py + y) for px, py in r.points)))
        x, shelf = x + part.width, max(shelf, part.height)
    width = max((p.width + x0 for p, x0 in _extents(parts, placed)), default=0.0)
    return Layout(width, y + shelf, tuple(placed[i] for i in order), tuple(routes))


def _extents(parts: list[Layout], placed: dict[str, Placed]) -> list[tuple[Layout, float]]:
    """Each part with the x it was moved by (from one of its boxes)."""
    out = []
    for part in parts:
        if part.boxes:
            first = part.boxes[0]
            out.append((part, placed[first.id].x - first.x))
    return out


def _layered_one(sizes: Sequence[Size], arcs: Sequence[Arc], reduce: bool, max_row: int) -> Layout:
    """One layered layout of all the boxes (those with no arc in rows at the bottom)."""
    by_id = {s.id: s for s in sizes}
    r = _layered_rows(sizes, arcs, reduce, max_row)
    rows = r.rows + [r.lone[i : i + max_row] for i in range(0, len(r.lone), max_row)]
    placed = _place(rows, r.between, by_id)
    routes = []
    for s, d, _ in arcs:
        if s == d:
            continue
        a, b = (s, d) if r.rank[s] < r.rank[d] else (d, s)
        points = [
            _bottom(placed[a]),
            *(_centre(placed[p]) for p in r.chains[a, b]),
            _top(placed[b]),
        ]
        routes.append(Route(s, d, tuple(points if (a, b) == (s, d) else points[::-1])))
    real = tuple(placed[s.id] for s in sizes)
    width = max((p.x + p.width for p in placed.values()), default=0.0) + MARGIN
    height = max((p.y + p.height for p in real), default=0.0) + MARGIN
    return Layout(width, height, real, tuple(routes))


def _with_bends(
    nodes: list[str], down: dict[str, list[str]], row: dict[str, int]
) -> tuple[list[list[str]], list[list[tuple[str, str]]], dict[tuple[str, str], list[str]]]:
    """Rows of nodes with a bend node on each row a long arc crosses; the arcs between
    each pair of adjacent rows; each arc's bend nodes."""
    depth = max(row.values(), default=-1) + 1
    rows: list[list[str]] = [[] for _ in range(depth)]
    for n in nodes:
        rows[row[n]].append(n)
    between: list[list[tuple[str, str]]] = [[] for _ in range(max(depth - 1, 0))]
    chains: dict[tuple[str, str], list[str]] = {}
    for a in nodes:
        for b in down.get(a, ()):
            path, prev = [], a
            for r in range(row[a] + 1, row[b]):
                bend = f"\0{a}\0{b}\0{r}"
                rows[r].append(bend)
                path.append(bend)
                between[r - 1].append((prev, bend))
                prev = bend
            between[row[b] - 1].append((prev, b))
            chains[a, b] = path
    return rows, between, chains


def _place(
    rows: list[list[str]], between: list[list[tuple[str, str]]], by_id: dict[str, Size]
) -> dict[str, Placed]:
    """Coordinates: rows stacked; boxes pulled towards the mean x of their neighbours in
    the row above (sweeping down) and below (sweeping up), then both, in order and never
    overlapping: a long arrow's bends line up under the box it leaves."""
    width = {n: (by_id[n].width if n in by_id else BEND_WIDTH) for r in rows for n in r}
    above: dict[str, list[str]] = defaultdict(list)
    below: dict[str, list[str]] = defaultdict(list)
    for arcs in between:
        for a, b in arcs:
            below[a].append(b)
            above[b].append(a)
    both = {n: above[n] + below[n] for r in rows for n in r}
    centre: dict[str, float] = {}
    for r in rows:
        x = MARGIN
        for n in r:
            centre[n] = x + width[n] / 2
            x += width[n] + GAP_X
    for k in range(PULL_PASSES):
        down = k % 2 == 0
        for r in rows if down else rows[::-1]:
            _pull(r, above if down else below, width, centre)
    for r in rows:
        _pull(r, both, width, centre)
    low = min((centre[n] - width[n] / 2 for r in rows for n in r), default=MARGIN)
    placed: dict[str, Placed] = {}
    y = MARGIN
    for r in rows:
        tall = max((by_id[n].height for n in r if n in by_id), default=0.0)
        for n in r:
            h = by_id[n].height if n in by_id else 0.0
            x = centre[n] - width[n] / 2 - low + MARGIN
            placed[n] = Placed(n, x, y + (tall - h) / 2, width[n], h)
        y += tall + GAP_Y
    return placed


def _pull(
    row: list[str], near: dict[str, list[str]], width: dict[str, float], centre: dict[str, float]
) -> None:
    want = [sum(centre[m] for m in near[n]) / len(near[n]) if near[n] else centre[n] for n in row]
    _fit(row, want, width, centre)


def _fit(
    row: list[str], want: list[float], width: dict[str, float], centre: dict[str, float]
) -> None:
    """Centres as close to ``want`` as the order and the gaps allow: a left-to-right
    pass pushing right, a right-to-left pass pushing left, averaged."""
    n = len(row)
    if not n:
        return
    gap = [
        (width[row[i]] + width[row[i + 1]]) / 2
        + (GAP_X if min(width[row[i]], width[row[i + 1]]) > BEND_WIDTH else BEND_GAP)
        for i in range(n - 1)
    ]
    right = list(want)
    for i in range(1, n):
        right[i] = max(right[i], right[i - 1] + gap[i - 1])
    left = list(want)
    for i in range(n - 2, -1, -1):
        left[i] = min(left[i], left[i + 1] - gap[i])
    for i, node in enumerate(row):
        centre[node] = (right[i] + left[i]) / 2
    for i in range(1, n):  # the average of two valid placements keeps the gaps
        centre[row[i]] = max(centre[row[i]], centre[row[i - 1]] + gap[i - 1])


def _centre(p: Placed) -> tuple[float, float]:
    return (p.x + p.width / 2, p.y + p.height / 2)


def _top(p: Placed) -> tuple[float, float]:
    return (p.x + p.width / 2, p.y)


def _bottom(p: Placed) -> tuple[float, float]:
    return (p.x + p.width / 2, p.y + p.height)


def grid_layout(sizes: Sequence[Size], arcs: Sequence[Arc]) -> Layout:
    """The simple candidate: boxes in a square grid in the given order, straight arcs."""
    per_row = max(1, math.ceil(math.sqrt(len(sizes))))
    cell_w = max((s.width for s in sizes), default=0.0) + GAP_X
    cell_h = max((s.height for s in sizes), default=0.0) + GAP_Y
    placed = {
        s.id: Placed(
            s.id,
            MARGIN + (i % per_row) * cell_w,
            MARGIN + (i // per_row) * cell_h,
            s.width,
            s.height,
        )
        for i, s in enumerate(sizes)
    }
    routes = tuple(
        Route(s, d, (_centre(placed[s]), _centre(placed[d]))) for s, d, _ in arcs if s != d
    )
    rows = math.ceil(len(sizes) / per_row)
    return Layout(per_row * cell_w + MARGIN, rows * cell_h + MARGIN, tuple(placed.values()), routes)


def _segments_cross(
    p1: tuple[float, float],
    p2: tuple[float, float],
    q1: tuple[float, float],
    q2: tuple[float, float],
) -> bool:
    def side(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    d1, d2 = side(q1, q2, p1), side(q1, q2, p2)
    d3, d4 = side(p1, p2, q1), side(p1, p2, q2)
    return d1 * d2 < 0 and d3 * d4 < 0


def count_crossings(routes: Sequence[Route]) -> int:
    """Pairs of drawn arcs that cross (arcs sharing a box are not counted), each pair
    once however many of their segments cross."""
    count = 0
    for i, r in enumerate(routes):
        segs = list(zip(r.points, r.points[1:], strict=False))
        for other in routes[i + 1 :]:
            if {r.src, r.dst} & {other.src, other.dst}:
                continue
            others = list(zip(other.points, other.points[1:], strict=False))
            if any(_segments_cross(*a, *b) for a in segs for b in others):
                count += 1
    return count
