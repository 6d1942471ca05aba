"""The web page's Map view (issue 40 part 3) in a real headless Chromium against a real
``codecite serve`` (the server, browser and sign-in of test_web.py): the landing map
before a first question, a box opening a part's map or its code, an arrow its code,
zoom, phone width, access, the API's map endpoint. Screenshots go where test_web.py's go."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from test_web import PHONE, QUESTION, Server, ask, new_page, no_horizontal_scroll, sign_in

#: test_web.py's fixtures: the server (a new one for this module), the browser, a context
pytest_plugins = ["test_web"]
pytestmark = pytest.mark.slow


def test_the_map_is_the_landing_until_a_first_question(context: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["alice"])
    landing = page.locator("#landing-map")
    expect(landing.locator("#landing-title")).to_have_text("Map of shop")
    boxes = landing.locator("svg g.box")
    expect(boxes.first).to_be_visible()
    ids = boxes.evaluate_all("bs => bs.map(b => b.dataset.id)")
    assert "shop/orders.py" in ids and not any("test" in i for i in ids)
    assert page.get_by_label("Your question").is_visible()  # asking stays first
    page.screenshot(path=server.shots / "map-landing-1280x800.png")
    orders = landing.locator("g.box[data-id='shop/orders.py'] a")
    orders.click()
    page.wait_for_url(re.compile(r"/web/code\?"))
    expect(page.locator("h1.path")).to_contain_text("shop/orders.py")
    page.go_back()
    ask(page, QUESTION)
    expect(landing).to_be_hidden()  # the answer takes its place
    page.goto("/")
    expect(page.locator("#landing-map")).to_have_count(0)  # asked once: no landing map
    refused = [m for m in server.console if "Content Security Policy" in m or "Refused" in m]
    assert not refused, refused


def test_a_box_opens_its_part_and_an_arrow_its_code(context: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["alice"])
    page.goto("/web/map?repo=shop&focus=shop&tests=1")
    expect(page.locator("h1")).to_contain_text("Map of")
    expect(page.locator(".map-crumbs")).to_contain_text("shop")
    outside = page.locator("svg g.box[data-id='tests'] a")  # a folder beyond the focus
    outside.click()
    page.wait_for_url(re.compile(r"focus=tests"))
    expect(page.locator(".map-crumbs [aria-current=page]")).to_have_text("tests")
    ids = page.locator("svg g.box").evaluate_all("bs => bs.map(b => b.dataset.id)")
    assert {"tests/test_orders.py", "tests/test_pricing.py", "tests/test_commissions.py"} <= set(
        ids
    )  # its three test files, and the parts beyond it they use
    arrow = page.locator("svg g.arrow a").first
    href = arrow.get_attribute("href") or ""
    query = parse_qs(urlsplit(href).query)
    assert href.startswith("/web/code?") and query["path"][0].startswith("tests/test_")
    page.goto(href)
    expect(page.locator("tr.hl").first).to_be_visible()  # the import or call it stands on
    page.go_back()
    zoom = page.locator(".map").get_attribute("data-zoom")
    page.get_by_role("button", name="Zoom in").click()
    assert float(page.locator(".map").get_attribute("data-zoom") or 0) > float(zoom or 0)
    page.locator(".map-parts").get_by_role("link", name="test_orders.py").click()  # the list
    page.wait_for_url(re.compile(r"/web/code\?.*test_orders"))
    page.goto("/web/map?repo=shop&focus=billing")
    expect(page.locator(".status.error")).to_contain_text("parts: shop")
    page.set_viewport_size({"width": 1280, "height": 800})


def test_the_map_reads_at_phone_width(context: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["alice"])
    page.set_viewport_size(PHONE)
    page.goto("/web/map?repo=shop")
    expect(page.locator("svg g.box").first).to_be_visible()
    assert no_horizontal_scroll(page)  # the picture scrolls in its frame, never the page
    zoom = float(page.locator(".map").get_attribute("data-zoom") or 0)
    assert zoom >= 0.7  # opened readable, not shrunk to the phone's width
    page.screenshot(path=server.shots / "map-390x844.png")
    page.screenshot(path=server.shots / "map-390-full.png", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto("/web/map?repo=shop")
    page.screenshot(path=server.shots / "map-1280x800.png")


def test_a_map_is_shown_only_to_who_may_read_the_repository(server: Server) -> None:
    bob = {"Authorization": f"Bearer {server.tokens['bob']}"}
    alice = {"Authorization": f"Bearer {server.tokens['alice']}"}
    with httpx.Client(base_url=server.url, timeout=60) as http:
        refused = http.get("/api/v1/repos/shop/map", headers=bob)
        assert refused.status_code in (403, 404)
        assert "orders" not in refused.text
        data = http.get("/api/v1/repos/shop/map", headers=alice).json()
        assert data["repo"] == "shop" and data["nodes"] and data["edges"]
        assert all(e["citations"] for e in data["edges"])
        svg = http.get("/api/v1/repos/shop/map", params={"format": "svg"}, headers=alice)
        assert svg.headers["content-type"].startswith("image/svg+xml")
        assert svg.text.startswith("<svg")
        missing = http.get("/api/v1/repos/shop/map", params={"focus": "nowhere"}, headers=alice)
        assert missing.status_code == 404
        assert "parts: shop" in missing.json()["error"]["message"]
