"""A symbol's neighbourhood (issue 40 part 2): callers, callees, bases and tests one or
two hops out, from the shop fixture's real index, drawn in explain's Markdown as
Mermaid; a class's callers are its construction sites and its methods' callers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from repos import copy_index, run_cli

import codecite


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, indexed_shop: Path):
    root = copy_index(indexed_shop, tmp_path_factory.mktemp("hood") / "shop")
    with codecite.open_index(root, create=False) as idx:
        yield idx


def _mermaid(markdown: str) -> str:
    found = re.search(r"### Neighbourhood\n\n```mermaid\n(.*?)\n```", markdown, re.S)
    assert found, markdown[-800:]
    return found.group(1)


def test_a_class_is_called_where_it_is_built_and_where_its_methods_are_called(index) -> None:
    expl = index.explain("Order")
    callers = {u.caller for u in expl.callers}
    # construction sites (make_order builds one) and its methods' callers (checkout
    # calls order.validate(), cancel calls order.can_cancel())
    assert {"make_order", "checkout", "cancel"} <= callers
    assert expl.callers_total >= 3
    assert not any(c.startswith("Order.") for c in callers)  # its own methods left out
    assert "No callers in the index" not in expl.markdown


def test_explain_draws_callers_callees_bases_and_tests_two_hops_out(index) -> None:
    expl = index.explain("Order")
    hood = expl.neighbourhood
    assert hood is not None
    roles = {n.label: (n.role, n.hops) for n in hood.nodes}
    assert roles["Order"] == ("self", 0)
    assert roles["BaseModel"] == ("base", 1)
    assert roles["checkout"] == ("caller", 1)
    assert any(role == "test" and hops == 2 for role, hops in roles.values())
    text = _mermaid(expl.markdown)
    assert text.startswith("flowchart LR")
    assert '[["Order"]]' in text and '{{"BaseModel"}}' in text
    assert "-.->|inherits|" in text
    assert expl.to_json()["neighbourhood"]["centre"] == "Order"
    assert all(c.verified for c in expl.citations)  # the diagram adds no citation to check


def test_a_function_with_callees_and_tests(index) -> None:
    expl = index.explain("checkout")
    hood = expl.neighbourhood
    assert hood is not None
    by_role: dict[str, set[str]] = {}
    for n in hood.nodes:
        by_role.setdefault(n.role, set()).add(n.label)
    assert "apply_loyalty_discount" in by_role["callee"]
    assert by_role.get("test")
    links = {(lk.src, lk.dst, lk.kind) for lk in hood.links}
    centre = next(n.id for n in hood.nodes if n.role == "self")
    assert any(dst == centre and kind == "tests" for _, dst, kind in links)
    for lk in hood.links:  # each link cited where it stands, in the file of its source
        if lk.citation:
            src = next(n for n in hood.nodes if n.id == lk.src)
            assert lk.citation.startswith(f"{src.path}:")
    assert "```mermaid" in expl.markdown


def test_a_symbol_alone_draws_no_diagram(index) -> None:
    summary = index.explain("Order.summary")  # no caller: what it calls, two hops out
    assert summary.neighbourhood is not None
    assert {n.role for n in summary.neighbourhood.nodes} == {"self", "callee"}
    alone = index.explain("DealStatus")  # an enum nothing in the index uses
    assert alone.neighbourhood is not None and len(alone.neighbourhood.nodes) == 1
    assert "### Neighbourhood" not in alone.markdown


def test_docs_draw_the_map_on_the_index_page_and_each_modules_neighbourhood(
    index, tmp_path: Path
) -> None:
    out = tmp_path / "docs"
    done = run_cli("docs", str(index.root), "--out", str(out))
    assert done.returncode == 0, done.stderr
    home = (out / "index.md").read_text()
    assert home.index("## Map") < home.index("## Modules")
    chart = re.search(r"## Map\n\n.*?\n\n```mermaid\n(.*?)\n```", home, re.S)
    assert chart and chart.group(1).startswith("flowchart TB")
    assert re.search(r'click p\d+ href "shop/orders\.py\.md"', chart.group(1))
    assert re.search(r"%% shop/orders\.py:\d+", chart.group(1))
    page = (out / "shop" / "orders.py.md").read_text()
    hood = re.findall(r"```mermaid\n(.*?)\n```", page, re.S)
    assert len(hood) == 1  # the module's, not one per symbol
    nodes = re.findall(r'^\s+n\d+\S*?"([^"]+)"', hood[0], re.M)
    assert nodes[0] == "shop/orders.py" and len(nodes) == len(set(nodes))
    assert {"shop/payments.py", "tests/test_orders.py"} <= set(nodes)
    assert 'href "payments.py.md"' in hood[0]


def test_what_breaks_answers_carry_the_picture_of_the_impact(index) -> None:
    answer = index.ask("What breaks if I change apply_loyalty_discount?", llm=None)
    assert answer.shape == "impact"
    picture = answer.to_json()["picture"]
    assert picture.startswith("flowchart LR")
    assert '[["apply_loyalty_discount"]]' in picture and '"checkout"' in picture
    assert "-.->|tests|" in picture  # the tests that would notice
    labels = re.findall(r'"([^"]+)"', picture)
    assert "discount_rate_for_tier" not in labels  # what it calls is not what breaks
    other = index.ask("How is the loyalty discount computed?", llm=None)
    assert other.picture == ""


def test_the_neighbourhood_as_svg_links_every_box_and_highlights_the_symbol(index) -> None:
    import xml.etree.ElementTree as ET

    head = index.find_symbol("apply_loyalty_discount")[0]
    hood = index.neighbourhood(head)
    svg = codecite.draw_neighbourhood(hood, lambda n: f"/open?{n.path}:{n.start_line}", "svg")
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    nodes = root.findall(".//s:g[@class]", ns)
    boxes = {g.get("data-label"): g for g in nodes if "node" in (g.get("class") or "")}
    assert set(boxes) == {n.label for n in hood.nodes}
    assert [g.get("data-label") for g in nodes if g.get("class") == "node self"] == [
        "apply_loyalty_discount"
    ]
    assert boxes["checkout"].get("data-role") == "caller"
    assert boxes["checkout"].get("data-citation", "").startswith("shop/orders.py:")
    for g in boxes.values():  # every box opens its code
        link = g.find("s:a", ns)
        assert link is not None and (link.get("href") or "").startswith("/open?")
    arrows = [g for g in nodes if g.get("class") == "arrow"]
    assert len(arrows) == len(hood.links)
    with pytest.raises(codecite.UserError, match="choose from"):
        codecite.draw_neighbourhood(hood, None, "png")


def test_an_impact_answer_keeps_its_neighbourhood_as_data(index) -> None:
    answer = index.ask("What breaks if I change apply_loyalty_discount?", llm=None)
    data = answer.to_json()["neighbourhood"]
    assert data is not None and data["centre"] == "apply_loyalty_discount"
    again = codecite.Neighbourhood.from_json(data)
    assert again == answer.neighbourhood  # what the web page draws is what was found
    assert {n.role for n in again.nodes} <= {"self", "caller", "test"}
    other = index.ask("How is the loyalty discount computed?", llm=None)
    assert other.to_json()["neighbourhood"] is None
    with pytest.raises(codecite.UserError, match="hops"):
        index.neighbourhood(index.find_symbol("checkout")[0], hops=3)
