"""A symbol's neighbourhood in the web page (issue 40): the code view of a function
draws its callers, callees and tests as an SVG laid out on the server, each box a link
to its code view; an impact answer ("what breaks if I change X") draws the same picture
of what a change reaches. A real headless Chromium against a real ``codecite serve``
answering offline (extractive) over test_web.py's indexed shop. Screenshots go where
test_web.py's go."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from repos import free_port, start_server
from test_web import DESKTOP, PHONE, Server, ask, no_horizontal_scroll

#: test_web.py's fixtures: the server (a new one for this module, its shop indexed), the browser
pytest_plugins = ["test_web"]
pytestmark = pytest.mark.slow

IMPACT = "What breaks if I change apply_loyalty_discount?"


@pytest.fixture(scope="module")
def offline(server: Server) -> Iterator[str]:
    """A second server over the same indexed shop, answering offline (no sign-in)."""
    port = free_port()
    config = server.root / "hood.toml"
    config.write_text(
        f'listen = "127.0.0.1:{port}"\nauth = "none"\nstate = "hood-state.db"\n'
        f'[codecite]\nllm = "extractive"\n[repos.shop]\npath = "{server.root / "shop"}"\n'
    )
    process = start_server(config, port, server.root / "hood.log")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def page(browser: Any, offline: str) -> Iterator[Any]:
    context = browser.new_context(viewport=DESKTOP, base_url=offline)
    context.set_default_timeout(30_000)
    try:
        yield context.new_page()
    finally:
        context.close()


def _code_view(path: str, start: int, end: int) -> str:
    return f"/web/code?{urlencode({'repo': 'shop', 'path': path, 'start': start, 'end': end})}"


def _nodes(frame: Any) -> dict[str, str]:
    """Each box of the picture: its label → its role."""
    found = frame.locator("svg g.node").evaluate_all(
        "gs => gs.map(g => [g.dataset.label, g.dataset.role])"
    )
    return {label: role for label, role in found}


def test_a_functions_code_view_draws_its_callers_and_tests_as_links(
    page: Any, server: Server
) -> None:
    from playwright.sync_api import expect

    page.goto(_code_view("shop/pricing.py", 25, 34))  # apply_loyalty_discount
    frame = page.locator("#neighbourhood .hood-frame")
    expect(frame.locator("svg g.node.self")).to_have_attribute(
        "data-label", "apply_loyalty_discount"
    )
    roles = _nodes(frame)
    assert roles["checkout"] == "caller"
    assert roles["discount_rate_for_tier"] == "callee"
    assert "test_gold_saves_ten_percent" in roles and set(roles.values()) >= {"test"}
    links = frame.locator("svg g.node a")
    assert links.count() == len(roles)  # every box opens its code
    test_link = frame.locator("g.node[data-label='test_gold_saves_ten_percent'] a")
    query = parse_qs(urlsplit(test_link.get_attribute("href") or "").query)
    assert query["path"] == ["tests/test_pricing.py"]
    assert query["symbol"] == ["test_gold_saves_ten_percent"]
    assert page.locator(".graph .hood-jump a").get_attribute("href") == "#neighbourhood"
    frame.scroll_into_view_if_needed()
    page.screenshot(path=server.shots / "hood-code-1280x800.png")
    page.screenshot(path=server.shots / "hood-code-1280-full.png", full_page=True)
    frame.locator("g.node[data-label='checkout'] a").click()  # the caller's code view
    page.wait_for_url(re.compile(r"/web/code\?.*symbol=checkout"))
    expect(page.locator("h1.path")).to_contain_text("shop/orders.py")
    expect(page.locator("tr.hl").first).to_contain_text("def checkout")
    expect(page.locator("#neighbourhood svg g.node.self")).to_have_attribute(
        "data-label", "checkout"
    )


def test_the_picture_reads_at_phone_width(page: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page.set_viewport_size(PHONE)
    page.goto(_code_view("shop/orders.py", 48, 88))  # class Order: a wide picture
    frame = page.locator("#neighbourhood .hood-frame")
    expect(frame.locator("svg g.node.self")).to_have_attribute("data-label", "Order")
    assert _nodes(frame)["BaseModel"] == "base"
    assert no_horizontal_scroll(page)  # the picture scrolls in its frame, never the page
    box = frame.bounding_box()
    assert box is not None and box["width"] <= PHONE["width"]
    frame.scroll_into_view_if_needed()
    page.screenshot(path=server.shots / "hood-code-390x844.png")
    page.screenshot(path=server.shots / "hood-code-390-full.png", full_page=True)


def test_a_markdown_section_has_no_picture(page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(_code_view("README.md", 7, 18))
    expect(page.locator("h1.path")).to_contain_text("README.md")
    expect(page.locator("#neighbourhood")).to_have_count(0)


def test_an_impact_answer_shows_what_a_change_reaches(page: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page.goto("/")
    ask(page, IMPACT)
    answer = page.locator("#answer-rendered .answer[data-state=done]")
    frame = answer.locator(".hood.impact .hood-frame")
    expect(frame.locator("svg g.node.self")).to_have_attribute(
        "data-label", "apply_loyalty_discount"
    )
    roles = _nodes(frame)
    assert roles["checkout"] == "caller" and "test" in roles.values()
    assert "discount_rate_for_tier" not in roles  # what it calls is not what breaks
    frame.scroll_into_view_if_needed()
    page.screenshot(path=server.shots / "hood-answer-1280x800.png")
    frame.locator("g.node[data-label='checkout'] a").click()
    page.wait_for_url(re.compile(r"/web/code\?.*symbol=checkout"))
    expect(page.locator("h1.path")).to_contain_text("shop/orders.py")


def test_an_impact_answer_on_a_phone_opens_its_picture_at_the_symbol(
    page: Any, server: Server
) -> None:
    from playwright.sync_api import expect

    page.set_viewport_size(PHONE)
    page.goto("/")
    ask(page, IMPACT)
    frame = page.locator("#answer-rendered .hood.impact .hood-frame")
    symbol = frame.locator("svg g.node.self")
    expect(symbol).to_have_attribute("data-label", "apply_loyalty_discount")
    assert no_horizontal_scroll(page)  # the picture scrolls in its frame, never the page
    symbol.scroll_into_view_if_needed()
    shown, inside = symbol.bounding_box(), frame.bounding_box()
    assert shown is not None and inside is not None
    assert inside["x"] <= shown["x"] and shown["x"] + shown["width"] <= inside["x"] + 390
    page.screenshot(path=server.shots / "hood-answer-390x844.png")
