"""The system map's layout, measured (issue 40 part 5): run by hand on indexed
repositories.

    python bench/map_bench.py REPO [REPO ...] [--index] [--out DIR] [--png] [--json]

For each repository (already indexed: ``codecite index REPO``; ``--index`` builds a
keyword + graph index first, no vectors):

- time to draw: open the index, ``Index.map()``, lay it out and write the SVG (the
  median of ``--runs``), and the map alone from an open index;
- before clustering: every code file a box (tests left out, as the map does), every
  pair of files with an import or call an arrow; the crossings of the layered layout of
  that graph (counted between adjacent rows, bends included: too many to draw);
- after clustering (the map, at most 25 boxes): boxes, arrows, and the crossings of the
  drawn arrows for each layout candidate (``layered-all``: ours with every arrow, not
  only the drawn ones): ``layered`` (ours, with crossing reduction),
  ``layered-plain`` (the same rows, first order kept), ``grid`` (a square grid, straight
  arrows) and ``grandalf`` (the PyPI Sugiyama layout, when importable: bench only, not a
  dependency; ``pip install --target DIR grandalf`` and ``PYTHONPATH=DIR``).

``--png`` renders each SVG to PNG with headless Chromium when one is installed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import codecite
from codecite.graph.testmap import is_test_path
from codecite.picture.layout import (
    MAX_ROW,
    Layout,
    Placed,
    Route,
    Size,
    grid_layout,
    layered_crossings,
    layered_layout,
)
from codecite.picture.parts import NOT_CODE
from codecite.picture.svg import box_sizes, render_svg

Arcs = list[tuple[str, str, int]]


def _timed(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def grandalf_layout(sizes: list[Size], arcs: Arcs) -> Layout | None:
    """The same graph laid out by grandalf's SugiyamaLayout (None without grandalf)."""
    try:
        from grandalf.graphs import Edge, Graph, Vertex
        from grandalf.layouts import SugiyamaLayout
    except ImportError:
        return None

    class View:
        def __init__(self, w: float, h: float) -> None:
            self.w, self.h, self.xy = w, h, (0.0, 0.0)

    class Path_:
        def __init__(self) -> None:
            self.pts: list[tuple[float, float]] = []

        def setpath(self, pts: list[tuple[float, float]]) -> None:
            self.pts = pts

    vertices = {s.id: Vertex(s.id) for s in sizes}
    for s in sizes:
        vertices[s.id].view = View(s.width, s.height)
    edges = []
    for src, dst, _ in arcs:
        if src != dst:
            e = Edge(vertices[src], vertices[dst])
            e.view = Path_()
            edges.append((src, dst, e))
    graph = Graph(list(vertices.values()), [e for _, _, e in edges])
    offset = 0.0
    for component in graph.C:
        layout = SugiyamaLayout(component)
        layout.xspace, layout.yspace = 28, 64
        layout.init_all()
        layout.draw(3)
        xs = [v.view.xy[0] - v.view.w / 2 for v in component.sV]
        shift = offset - min(xs)
        for v in component.sV:
            v.view.xy = (v.view.xy[0] + shift, v.view.xy[1])
        for _, _, e in edges:
            if e.v[0] in component.sV:
                e.view.pts = [(x + shift, y) for x, y in e.view.pts]
        offset = max(v.view.xy[0] + v.view.w / 2 for v in component.sV) + 28
    placed = tuple(
        Placed(
            s.id,
            vertices[s.id].view.xy[0] - s.width / 2,
            vertices[s.id].view.xy[1] - s.height / 2,
            s.width,
            s.height,
        )
        for s in sizes
    )
    routes = tuple(Route(src, dst, tuple(e.view.pts)) for src, dst, e in edges)
    width = max((p.x + p.width for p in placed), default=0.0)
    height = max((p.y + p.height for p in placed), default=0.0)
    return Layout(width, height, placed, routes)


def before_clustering(index: codecite.Index) -> dict[str, Any]:
    """Every code file a box, every pair of files with an import or call an arrow: the
    layered layout's crossings, counted between adjacent rows."""
    files = {
        s.path
        for s in index.store.file_sizes()
        if s.language not in NOT_CODE and not is_test_path(s.path)
    }
    pairs: dict[tuple[str, str], int] = {}
    for e in index.store.path_edges(("imports", "calls")):
        if e.src_path != e.dst_path and e.src_path in files and e.dst_path in files:
            pairs[e.src_path, e.dst_path] = pairs.get((e.src_path, e.dst_path), 0) + 1
    sizes = [Size(f, 120.0, 54.0) for f in sorted(files)]
    arcs = [(s, d, w) for (s, d), w in sorted(pairs.items())]
    start = time.perf_counter()
    wide = max(MAX_ROW, int(len(files) ** 0.5))  # a square-ish picture of every file
    crossings = layered_crossings(sizes, arcs, max_row=wide)
    return {
        "boxes": len(files),
        "arrows": len(arcs),
        "crossings_layered": crossings,
        "layout_seconds": round(time.perf_counter() - start, 2),
    }


def measure(root: Path, out: Path, runs: int, png: bool) -> dict[str, Any]:
    def draw() -> str:
        with codecite.open_index(root, create=False) as idx:
            return codecite.draw_map(idx.map())

    total = _timed(draw, runs)
    with codecite.open_index(root, create=False) as index:
        counts = index.store.counts()
        map_only = _timed(index.map, runs)
        system = index.map()
        sizes = box_sizes(system.boxes)
        arcs = [(a.src, a.dst, a.weight) for a in system.arrows if a.drawn]
        every = [(a.src, a.dst, a.weight) for a in system.arrows]
        candidates: dict[str, Layout | None] = {
            "layered-all": layered_layout(sizes, every),
            "layered": layered_layout(sizes, arcs),
            "layered-plain": layered_layout(sizes, arcs, reduce=False),
            "grid": grid_layout(sizes, arcs),
            "grandalf": grandalf_layout(sizes, arcs),
        }
        after: dict[str, Any] = {
            "boxes": len(system.boxes),
            "arrows": len(system.arrows),
            "drawn": system.stats.drawn,
        }
        for name, layout in candidates.items():
            if layout is None:
                continue
            used = every if name == "layered-all" else arcs
            seconds = _timed(lambda n=name, u=used: _relayout(n, sizes, u), runs)
            after[name] = {
                "crossings": layout.crossings(),
                "width": round(layout.width),
                "height": round(layout.height),
                "seconds": round(seconds, 3),
            }
            svg = out / f"{root.name}-{name}.svg"
            svg.write_text(render_svg(system, layout))
            if png:
                _png(svg, layout)
        before = before_clustering(index)
    return {
        "repo": root.name,
        "files": counts["files"],
        "chunks": counts["chunks"],
        "edges": counts["edges"],
        "draw_seconds": round(total, 3),
        "map_seconds": round(map_only, 3),
        "before": before,
        "after": after,
    }


def _relayout(name: str, sizes: list[Size], arcs: Arcs) -> object:
    if name in ("layered", "layered-all"):
        return layered_layout(sizes, arcs)
    if name == "layered-plain":
        return layered_layout(sizes, arcs, reduce=False)
    if name == "grid":
        return grid_layout(sizes, arcs)
    return grandalf_layout(sizes, arcs)


def _png(svg: Path, layout: Layout) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        return
    width, height = int(max(layout.width, 360)) + 4, int(layout.height) + 50
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            f"--screenshot={svg.with_suffix('.png')}",
            svg.resolve().as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("map-bench"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--png", action="store_true")
    parser.add_argument(
        "--index", action="store_true", help="index each repository first (no vectors)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.index:
        for root in args.repos:
            with codecite.open_index(root, overrides={"static_tier": False}) as idx:
                idx.update(embed=False)
    results = [measure(r.resolve(), args.out, args.runs, args.png) for r in args.repos]
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        print()
        return
    for r in results:
        b, a = r["before"], r["after"]
        print(
            f"{r['repo']}: {r['files']} files, {r['chunks']} chunks, {r['edges']} edges; "
            f"draw {r['draw_seconds']:.2f}s (map {r['map_seconds']:.2f}s)"
        )
        print(
            f"  before: {b['boxes']} boxes, {b['arrows']} arrows, "
            f"{b['crossings_layered']} crossings (layered, {b['layout_seconds']}s)"
        )
        print(f"  after: {a['boxes']} boxes, {a['arrows']} arrows, {a['drawn']} drawn")
        for name in ("layered-all", "layered", "layered-plain", "grid", "grandalf"):
            if name in a:
                c = a[name]
                print(
                    f"    {name:14} {c['crossings']:5} crossings  {c['width']}x{c['height']}px"
                    f"  {c['seconds'] * 1000:.0f} ms"
                )


if __name__ == "__main__":
    main()
