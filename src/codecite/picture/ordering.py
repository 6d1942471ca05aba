"""Ordering for the layered layout: which arcs to turn round (cycles), which row each
box goes in, and the order within rows that crosses few arcs."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

#: Barycentre sweeps (down and up count one each) and neighbour-swap passes.
SWEEPS = 12
SWAP_PASSES = 4
#: Boxes above which neighbour swaps are skipped (a file-level picture of a large
#: repository: each swap recounts its rows' crossings).
SWAP_LIMIT = 300

Arc = tuple[str, str, int]  # (source, target, weight)


def order_for_cycles(nodes: Sequence[str], arcs: Sequence[Arc]) -> dict[str, int]:
    """A node order with few (weighted) arcs pointing back (Eades-Lin-Smyth)."""
    out_w: dict[str, dict[str, int]] = {n: {} for n in nodes}
    in_w: dict[str, dict[str, int]] = {n: {} for n in nodes}
    for s, d, w in arcs:
        out_w[s][d] = out_w[s].get(d, 0) + w
        in_w[d][s] = in_w[d].get(s, 0) + w
    left, head, tail = set(nodes), list[str](), list[str]()

    def drop(n: str) -> None:
        left.discard(n)
        for d in out_w[n]:
            in_w[d].pop(n, None)
        for s in in_w[n]:
            out_w[s].pop(n, None)

    while left:
        sinks = sorted(n for n in left if not out_w[n])
        sources = sorted(n for n in left if not in_w[n] and out_w[n])
        if sinks:
            for n in sinks:
                tail.append(n)
                drop(n)
        elif sources:
            for n in sources:
                head.append(n)
                drop(n)
        else:
            n = max(sorted(left), key=lambda v: sum(out_w[v].values()) - sum(in_w[v].values()))
            head.append(n)
            drop(n)
    return {n: i for i, n in enumerate(head + tail[::-1])}


def assign_rows(nodes: Sequence[str], down: dict[str, list[str]], max_row: int) -> dict[str, int]:
    """Row of each node: below all its predecessors, rows at most ``max_row`` wide
    (nodes taken in order of their longest path from the top)."""
    up: dict[str, list[str]] = defaultdict(list)
    for s, ds in down.items():
        for d in ds:
            up[d].append(s)
    depth: dict[str, int] = {}
    for n in _topological(nodes, down):
        depth[n] = max((depth[p] + 1 for p in up[n]), default=0)
    row: dict[str, int] = {}
    filled: dict[int, int] = defaultdict(int)
    for n in sorted(nodes, key=lambda v: (depth[v], v)):
        r = max((row[p] + 1 for p in up[n]), default=0)
        while filled[r] >= max_row:
            r += 1
        row[n] = r
        filled[r] += 1
    return row


def _topological(nodes: Sequence[str], down: dict[str, list[str]]) -> list[str]:
    indegree = {n: 0 for n in nodes}
    for ds in down.values():
        for d in ds:
            indegree[d] += 1
    ready = sorted(n for n in nodes if not indegree[n])
    out: list[str] = []
    while ready:
        n = ready.pop(0)
        out.append(n)
        for d in down.get(n, ()):
            indegree[d] -= 1
            if not indegree[d]:
                ready.append(d)
    return out


def crossings_between(upper: list[str], lower: list[str], arcs: list[tuple[str, str]]) -> int:
    """Crossings of the arcs between two adjacent rows: pairs whose ends are in
    opposite orders (counted with a Fenwick tree, O(E log E))."""
    pos_u = {n: i for i, n in enumerate(upper)}
    pos_l = {n: i for i, n in enumerate(lower)}
    pairs = sorted((pos_u[a], pos_l[b]) for a, b in arcs if a in pos_u and b in pos_l)
    size = len(lower) + 1
    tree = [0] * (size + 1)
    count = 0
    for seen, (_, b) in enumerate(pairs):
        i, at_most = b + 1, 0  # arcs seen so far ending at or left of b
        while i > 0:
            at_most += tree[i]
            i -= i & -i
        count += seen - at_most
        i = b + 1
        while i <= size:
            tree[i] += 1
            i += i & -i
    return count


def _total_crossings(rows: list[list[str]], between: list[list[tuple[str, str]]]) -> int:
    return sum(crossings_between(rows[i], rows[i + 1], between[i]) for i in range(len(rows) - 1))


def _sweep(rows: list[list[str]], between: list[list[tuple[str, str]]], downward: bool) -> None:
    """Reorder each row by the mean position of its neighbours in the row before."""
    span = range(1, len(rows)) if downward else range(len(rows) - 2, -1, -1)
    for i in span:
        fixed = rows[i - 1] if downward else rows[i + 1]
        pos = {n: k for k, n in enumerate(fixed)}
        arcs = between[i - 1] if downward else between[i]
        near: dict[str, list[int]] = defaultdict(list)
        for a, b in arcs:
            mine, other = (b, a) if downward else (a, b)
            near[mine].append(pos[other])
        old = {n: k for k, n in enumerate(rows[i])}
        rows[i].sort(key=lambda n: (sum(near[n]) / len(near[n]) if near[n] else old[n], old[n]))


def _swap(rows: list[list[str]], between: list[list[tuple[str, str]]]) -> None:
    """Swap neighbours in a row while that lowers the crossings around it."""
    for _ in range(SWAP_PASSES):
        better = False
        for i, row in enumerate(rows):
            for k in range(len(row) - 1):
                before = _local(rows, between, i)
                row[k], row[k + 1] = row[k + 1], row[k]
                if _local(rows, between, i) < before:
                    better = True
                else:
                    row[k], row[k + 1] = row[k + 1], row[k]
        if not better:
            return


def _local(rows: list[list[str]], between: list[list[tuple[str, str]]], i: int) -> int:
    up = crossings_between(rows[i - 1], rows[i], between[i - 1]) if i > 0 else 0
    down = crossings_between(rows[i], rows[i + 1], between[i]) if i < len(rows) - 1 else 0
    return up + down


def order_rows(rows: list[list[str]], between: list[list[tuple[str, str]]]) -> list[list[str]]:
    """Rows reordered to cross few arcs: the best of the barycentre sweeps, then swaps."""
    best = [list(r) for r in rows]
    best_count = _total_crossings(best, between)
    current = [list(r) for r in rows]
    for k in range(SWEEPS):
        _sweep(current, between, downward=k % 2 == 0)
        count = _total_crossings(current, between)
        if count < best_count:
            best, best_count = [list(r) for r in current], count
    if sum(len(r) for r in best) <= SWAP_LIMIT:
        _swap(best, between)
    return best
