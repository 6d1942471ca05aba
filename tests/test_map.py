"""The system map (issue 40): the shop fixture's parts and the imports and calls between
them, from a real index (tree-sitter, SQLite), cited; its layout, SVG, Mermaid and CLI."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from repos import copy_index, run_cli

import codecite
from codecite.errors import UserError
from codecite.picture.layout import Size, count_crossings, grid_layout, layered_layout
from codecite.picture.model import Arrow
from codecite.picture.ordering import crossings_between
from codecite.picture.system import choose_drawn

CITATION = re.compile(r"^(?P<path>[^:]+):(?P<start>\d+)(?:-(?P<end>\d+))?$")
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory, indexed_shop: Path) -> Path:
    return copy_index(indexed_shop, tmp_path_factory.mktemp("map") / "shop")


@pytest.fixture(scope="module")
def index(shop: Path):
    with codecite.open_index(shop, create=False) as idx:
        yield idx


def _lines(root: Path, citation: str) -> list[str]:
    """The lines a citation names, checked to lie in its file."""
    m = CITATION.match(citation)
    assert m, citation
    text = (root / m["path"]).read_text().splitlines()
    start, end = int(m["start"]), int(m["end"] or m["start"])
    assert 1 <= start <= end <= len(text), citation
    return text[start - 1 : end]


def test_the_map_covers_every_code_file_once_in_at_most_25_boxes(index) -> None:
    system = index.map(tests=True)
    assert 2 <= len(system.boxes) <= 25
    files = [b.files for b in system.boxes]
    assert sum(files) == system.stats.files == 21  # 14 Python, 4 TypeScript, 3 Go files
    ids = [b.id for b in system.boxes]
    assert len(ids) == len(set(ids))
    assert not any(b.id.endswith((".md", ".yaml", ".json")) for b in system.boxes)


def test_arrows_are_weighted_and_cited_where_the_imports_and_calls_are(index) -> None:
    system = index.map(tests=True)
    arrow = next(
        a for a in system.arrows if a.src == "tests/test_orders.py" and a.dst == "shop/orders.py"
    )
    kinds = dict(arrow.kinds)
    assert kinds["imports"] >= 1 and kinds["calls"] >= 5
    assert arrow.weight == sum(kinds.values())
    for e in arrow.evidence:
        (line,) = _lines(index.root, e.citation)
        assert e.path == "tests/test_orders.py"
        if e.kind == "imports":
            assert "import" in line
        else:  # the call site names the function it calls
            assert e.target.rsplit(".", 1)[-1] in line, (e.citation, line)
    assert system.arrows == tuple(sorted(system.arrows, key=lambda a: (-a.weight, a.src, a.dst)))
    for box in system.boxes:
        for citation in box.evidence:
            _lines(index.root, citation)


def test_tests_are_left_out_unless_asked_for_and_light_arrows_only_listed(index) -> None:
    system = index.map()
    assert system.stats.files == 15 and system.stats.test_files == 6
    assert not any("test" in b.id or b.id == "conftest.py" for b in system.boxes)
    with_tests = index.map(tests=True)
    drawn = [a for a in with_tests.arrows if a.drawn]
    assert with_tests.stats.drawn == len(drawn) <= 1.5 * len(with_tests.boxes)
    for box in with_tests.boxes:  # each box keeps its heaviest arrow out and in
        out = [a for a in with_tests.arrows if a.src == box.id]
        into = [a for a in with_tests.arrows if a.dst == box.id]
        assert not out or out[0].drawn
        assert not into or into[0].drawn
    # a tangle of 12 arrows among 4 boxes: 6 drawn, each box's heaviest in and out first
    arrows = [
        Arrow(src, dst, w, (("calls", w),), ())
        for w, (src, dst) in enumerate([(a, b) for a in "abcd" for b in "abcd" if a != b], start=1)
    ][::-1]
    chosen = choose_drawn(arrows, boxes=4)
    assert sum(a.drawn for a in chosen) == 6
    assert [a.weight for a in chosen if a.drawn][:3] == [12, 11, 10]
    assert all(any(a.drawn and a.dst == box for a in chosen) for box in "abcd")


def test_few_boxes_collapse_folders_and_lump_the_rest(index) -> None:
    system = index.map(max_boxes=4, tests=True)
    assert len(system.boxes) <= 4
    assert sum(b.files for b in system.boxes) == 21
    shop_box = system.box("shop")
    assert shop_box.kind == "folder" and shop_box.files == 10 and shop_box.parts == 10
    lumped = [b for b in system.boxes if b.kind == "other"]
    assert lumped and lumped[0].label.endswith("smaller parts")
    # the tests use the shop package: one arrow, all their edges into it summed
    into_shop = [a for a in system.arrows if a.dst == "shop"]
    assert into_shop and all(a.weight >= 1 for a in into_shop)


def test_focus_opens_one_folder_and_keeps_what_it_uses_and_is_used_by(index) -> None:
    system = index.map(focus="shop", tests=True)
    assert system.focus == "shop"
    inside = [b for b in system.boxes if not b.outside]
    outside = [b for b in system.boxes if b.outside]
    assert {b.id for b in inside} >= {"shop/orders.py", "shop/payments.py", "shop/models.py"}
    assert "tests" in {b.id for b in outside}  # the tests call into the shop package
    assert all(b.kind != "other" for b in outside)
    ids = {b.id for b in inside}
    assert all(a.src in ids or a.dst in ids for a in system.arrows)
    assert index.map(focus="./shop/").focus == "shop"


def test_an_unknown_focus_names_the_parts_there_are(index) -> None:
    with pytest.raises(UserError, match=r"--focus billing: no part .*parts: shop, web/src"):
        index.map(focus="billing")
    with pytest.raises(UserError, match="is a file; give a folder"):
        index.map(focus="shop/orders.py")


def test_an_index_without_code_says_there_is_nothing_to_draw(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Notes\n\nNo code here.\n")
    (tmp_path / "test_only.py").write_text("def test_x():\n    assert True\n")
    done = run_cli("index", str(tmp_path), "--no-embed")
    assert done.returncode == 0, done.stderr
    done = run_cli("map", str(tmp_path))
    assert done.returncode == 1
    assert "no code in the index" in done.stderr and "--tests" in done.stderr


def test_svg_has_a_box_per_part_and_an_arrow_per_dependency_each_cited(index) -> None:
    system = index.map()
    links: list[str] = []
    doc = ET.fromstring(
        codecite.draw_map(system, box_link=lambda b: links.append(b.id) or f"#{b.id}")
    )
    assert doc.get("viewBox")
    boxes = doc.findall(f".//{SVG}g[@class='box']")
    arrows = doc.findall(f".//{SVG}g[@class='arrow']")
    assert [b.get("data-id") for b in boxes] == [b.id for b in system.boxes] == links
    assert len(arrows) == len(system.arrows)
    for g in arrows:
        assert g.get("data-citations"), g.attrib
        title = g.find(f".//{SVG}title")
        assert title is not None and "→" in (title.text or "")
    orders = next(b for b in boxes if b.get("data-id") == "shop/orders.py")
    assert orders.find(f"{SVG}a") is not None  # the box links where the caller said


def test_mermaid_is_a_flowchart_with_each_arrow_cited(index) -> None:
    system = index.map(tests=True, max_boxes=6)
    text = codecite.draw_map(system, "mermaid", box_link=lambda b: f"https://example.test/{b.id}")
    lines = text.splitlines()
    assert lines[0] == "flowchart TB"
    assert sum(1 for ln in lines if re.match(r"\s+p\d+\[\"", ln)) == len(system.boxes)
    edges = [ln for ln in lines if re.match(r"\s+p\d+ (-->|==>)\|", ln)]
    assert len(edges) == system.stats.drawn == sum(a.drawn for a in system.arrows)
    comments = [ln.strip() for ln in lines if ln.strip().startswith("%% ") and ":" in ln]
    assert any(re.search(r"tests/test_\w+\.py:\d+", c) for c in comments)
    assert "<small>" in text  # a box's second line: how much code it holds
    assert sum(ln.strip().startswith("click ") for ln in lines) == len(system.boxes)


def test_the_cli_writes_each_format_and_explains_a_bad_focus(shop: Path, tmp_path: Path) -> None:
    out = tmp_path / "map.svg"
    done = run_cli("map", str(shop), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("<svg") and "15 parts" in done.stderr
    assert "6 test files left out, --tests draws them" in done.stderr
    done = run_cli("map", str(shop), "--format", "json", "--focus", "web/src")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["focus"] == "web/src" and {"nodes", "edges", "stats"} <= set(data)
    assert all(e["citations"] and e["weight"] >= 1 for e in data["edges"])
    done = run_cli("map", str(shop), "-f", "mermaid", "--max-boxes", "3")
    assert done.returncode == 0 and done.stdout.startswith("flowchart TB")
    done = run_cli("map", str(shop), "--links", "https://forge.test/shop/blob/main/", "-f", "svg")
    assert done.returncode == 0, done.stderr
    assert 'href="https://forge.test/shop/blob/main/shop/orders.py"' in done.stdout
    assert re.search(
        r'href="https://forge.test/shop/blob/main/shop/\w+\.py#L\d+-L\d+"', done.stdout
    )
    done = run_cli("map", str(shop), "--focus", "nowhere")
    assert done.returncode == 1
    assert "no part of the indexed code; parts: shop" in done.stderr
    assert "Traceback" not in done.stderr


def test_crossing_reduction_untangles_what_the_first_order_crosses() -> None:
    # top above a1 a2 a3 above b3 b2 b1, each ai → bi: 3 crossings in the given order
    sizes = [Size(n, 80, 40) for n in ("top", "a1", "a2", "a3", "b3", "b2", "b1")]
    arcs = [("top", "a1", 1), ("top", "a2", 1), ("top", "a3", 1)]
    arcs += [("a1", "b1", 1), ("a2", "b2", 1), ("a3", "b3", 1)]
    assert crossings_between(["a1", "a2", "a3"], ["b3", "b2", "b1"], [(s, d) for s, d, _ in arcs])
    plain = layered_layout(sizes, arcs, reduce=False)
    ordered = layered_layout(sizes, arcs)
    assert plain.crossings() == 3
    assert ordered.crossings() == 0
    assert grid_layout(sizes, arcs).crossings() >= 0
    # parts no arc joins are laid out apart, side by side: none crosses another
    apart = layered_layout(sizes[1:], arcs[3:], reduce=False)
    assert apart.crossings() == 0
    xs = {p.id: p.x for p in apart.boxes}
    assert xs["a1"] < xs["a2"] < xs["a3"]


def test_layout_survives_cycles_and_points_arrows_down() -> None:
    sizes = [Size(n, 60, 30) for n in "abcd"]
    arcs = [("a", "b", 5), ("b", "c", 5), ("c", "a", 1), ("c", "d", 1), ("a", "a", 2)]
    layout = layered_layout(sizes, arcs)
    ys = {p.id: p.y for p in layout.boxes}
    assert ys["a"] < ys["b"] < ys["c"] < ys["d"]  # the light arc c → a is the one turned
    assert len(layout.routes) == 4
    back = next(r for r in layout.routes if (r.src, r.dst) == ("c", "a"))
    assert back.points[0][1] > back.points[-1][1]  # drawn from c (below) up to a
    assert count_crossings(layout.routes) == 0


def test_postgresql_draws_the_same_map(shop: Path, pg_url: str) -> None:
    """The GraphOverview of the PostgreSQL store (a migrated copy of the same index)
    gives the same files, edges and map as SQLite's."""
    from codecite.api import migrate_index

    migrate_index(shop / ".codecite", pg_url)
    with codecite.open_index(shop, create=False) as lite:
        sizes, edges = lite.store.file_sizes(), lite.store.path_edges(("imports", "calls"))
        expected = lite.map(tests=True).to_json()
    with codecite.open_index(shop, create=False, overrides={"store": pg_url}) as pg:
        assert pg.store.file_sizes() == sizes
        assert pg.store.path_edges(("imports", "calls")) == edges
        assert pg.map(tests=True).to_json() == expected
