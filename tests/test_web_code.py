"""The code view and the answer's wording as a PM reads them (issue 39, item 9): a
class's side panel counts its construction sites, its methods' callers and their tests;
one cited line reads "line N"; a small file is shown whole; a markdown section has no
code-graph panel; "Answered" in plain words. The real app (FastAPI's test client, no
browser) in local mode over a copy of the indexed shop fixture; the browser checks of
the same page are in test_web.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from repos import copy_index


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory, indexed_shop: Path) -> Iterator[object]:
    from fastapi.testclient import TestClient

    from codecite.server.app import create_app
    from codecite.server.config import load_server_config

    root = tmp_path_factory.mktemp("webcode")
    shop = copy_index(indexed_shop, root / "shop")
    config = root / "local.toml"
    config.write_text(
        'listen = "127.0.0.1:8765"\nauth = "none"\nstate = "state.db"\n'
        f'[codecite]\nllm = "extractive"\n[repos.shop]\npath = "{shop}"\n'
    )
    with TestClient(create_app(load_server_config(config)), base_url="http://localhost") as client:
        yield client


def _code(http: object, path: str, start: int, end: int) -> str:
    query = urlencode({"repo": "shop", "path": path, "start": start, "end": end})
    response = http.get(f"/web/code?{query}")  # type: ignore[attr-defined]
    assert response.status_code == 200, response.text
    return str(response.text)


def _relation(html: str, title: str) -> list[str]:
    """The names a side-panel section lists (its count checked against them)."""
    section = re.search(
        rf'<h3 id="rel-\w+">{title} <span class="count">\((\d+)\)</span></h3>(.*?)</section>',
        html,
        re.S,
    )
    assert section, title
    names = re.findall(r'<li><a href="[^"]*">([^<]+)</a>', section.group(2))
    assert int(section.group(1)) == len(names)
    return names


def test_a_class_is_called_where_it_is_constructed_and_where_its_methods_are(http: object) -> None:
    html = _code(http, "shop/orders.py", 48, 88)  # class Order
    assert '<h2 id="graph-title"><code>Order</code></h2>' in html
    callers = _relation(html, "Called by")
    # construction (make_order in the tests) and its methods' callers (checkout, cancel)
    assert {"checkout", "cancel", "make_order"} <= set(callers), callers
    assert callers.index("checkout") < callers.index("make_order")  # code before tests
    assert "test_checkout_rejects_empty_order" in _relation(html, "Tests")
    assert "LineItem.total" in _relation(html, "Calls")


def test_a_class_constructed_only_by_tests_lists_them_as_its_tests(http: object) -> None:
    html = _code(http, "shop/commissions.py", 18, 48)  # class CommissionService
    assert set(_relation(html, "Tests")) >= {
        "test_calculate_payout_only_for_won_deals",
        "test_enterprise_deals_earn_more",
    }


def test_one_line_reads_line_n_and_a_small_file_is_shown_whole(http: object) -> None:
    html = _code(http, "shop/pricing.py", 32, 32)  # 47 lines
    assert '<span class="lines">line 32</span>' in html and "lines 32–32" not in html
    assert "Show the whole file" not in html and "hidden)" not in html
    assert 'id="L1"' in html and 'id="L47"' in html
    wide = _code(http, "shop/orders.py", 100, 102)  # 120 lines: folded around the lines
    assert '<span class="lines">lines 100–102</span>' in wide
    assert "Show the whole file" in wide


def test_a_function_draws_its_neighbourhood_and_a_markdown_section_none(http: object) -> None:
    html = _code(http, "shop/pricing.py", 25, 34)  # apply_loyalty_discount
    picture = re.search(r'<div class="hood-frame"[^>]*>(<svg.*?</svg>)', html, re.S)
    assert picture, html[-2000:]
    assert "data-label=\"checkout\" data-role='caller'" in picture.group(1)
    assert "symbol=checkout" in picture.group(1)  # a box opens its code view
    assert "<script" not in picture.group(1)


def test_a_markdown_section_has_no_code_graph_panel(http: object) -> None:
    html = _code(http, "README.md", 7, 18)
    assert 'class="graph"' not in html and "Called by" not in html
    assert "hood-frame" not in html
    assert 'class="code-layout solo"' in html


def test_the_answer_says_how_it_was_answered_in_plain_words(http: object) -> None:
    page = http.get("/")  # type: ignore[attr-defined]
    token = re.search(r'name="csrf-token" content="([0-9a-zA-Z_-]+)"', page.text)
    assert token
    headers = {"Accept": "text/event-stream", "X-CSRF-Token": token.group(1)}

    def answered(question: str) -> str:
        response = http.post(  # type: ignore[attr-defined]
            "/web/ask", json={"question": question, "repos": ["shop"]}, headers=headers
        )
        assert response.status_code == 200 and "event: result" in response.text
        result = response.text.split("event: result\ndata: ", 1)[1].split("\n\n", 1)[0]
        html = json.loads(result)["html"]
        found = re.search(r"<dt>Answered</dt><dd>\s*(.*?)\s*</dd>", html, re.S)
        assert found, html
        return found.group(1)

    said = answered("How is the loyalty discount computed?")
    assert said.startswith("From the code itself (quoted lines, no AI model)")
    assert "LLM" not in said and "Ollama" not in said and "extractive" not in said
    declined = answered("Which Kubernetes namespace runs the opt-out service?")
    assert declined.startswith("No answer: the code does not seem to cover this")
