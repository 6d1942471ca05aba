"""The web page (``/``) in a real headless Chromium, against a real ``codecite serve``
process on a free loopback port, real tokens and a scripted LLM server (as in
test_server.py).

Two repositories: ``shop`` (the fixture) and ``vault``, whose code holds a marker. Alice
may read only ``shop``, Bob only ``vault``: neither may ever see the other's code.

The browser is Debian's Chromium (``apt-get install chromium``), driven by Playwright
pointed at it; Playwright never downloads a browser. Without Chromium or Playwright the
browser tests are skipped with a loud reason; the unit tests at the end still run.
Screenshots (1280×800 and 390×844) go to ``$CODECITE_SCREENSHOTS`` (default: a temporary
folder), never into the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from llm_server import ChatServer, Reply, running_chat_server
from repos import free_port, make_git_repo, start_server

import codecite
from codecite.server.state import StateStore

#: a real browser (run by .ci/run)
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures"
MARKER = "zebra"  # only in the vault repository
VAULT = {
    "vault/launch.py": (
        '"""Zebra launch codes."""\n\n\n'
        "def zebra_launch_code(station: str) -> str:\n"
        '    """The zebra launch code of a station."""\n'
        '    return "zebra-" + station.upper()\n'
    ),
}
QUESTION = "How is the loyalty discount computed?"
ANSWER = (
    "Loyal customers get a discount by tier: `apply_loyalty_discount` "
    "(shop/pricing.py:25-34) looks up the rate with `discount_rate_for_tier` "
    "(shop/pricing.py:20-22) and rounds to cents. <script>alert(1)</script> "
    "An old note in evil.py:1-900 says otherwise."
)
UNANSWERABLE = "where is the GraphQL schema defined"
#: Debian's Chromium in a closed network: no sandbox (root in CI), no background traffic.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def chromium_path() -> str | None:
    """The system's Chromium (``$CODECITE_CHROMIUM`` first)."""
    for candidate in (
        os.environ.get("CODECITE_CHROMIUM"),
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
        "/usr/bin/chromium",
    ):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass
class Server:
    url: str
    root: Path
    chat: ChatServer
    tokens: dict[str, str]
    state: Path
    process: subprocess.Popen[bytes]
    shots: Path
    #: Messages the browser's console printed (CSP violations would show here).
    console: list[str] = field(default_factory=list)

    def audit(self, user: str | None = None) -> list[Any]:
        with StateStore(self.state) as store:
            return store.audit_rows(user=user)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("web")
    source = FIXTURES / "shop"
    files = {
        p.relative_to(source).as_posix(): p.read_text() for p in source.rglob("*") if p.is_file()
    }
    shop = make_git_repo(root / "shop", files)
    vault = make_git_repo(root / "vault", VAULT)
    for repo in (shop, vault):
        with codecite.open_index(repo) as index:
            index.update()
    shots = Path(os.environ.get("CODECITE_SCREENSHOTS") or tmp_path_factory.mktemp("shots"))
    shots.mkdir(parents=True, exist_ok=True)
    with running_chat_server() as chat:
        chat.default = Reply(text=ANSWER)
        config = root / "codecite-server.toml"
        config.write_text(
            'listen = "127.0.0.1:0"\nauth = "token"\nstate = "state.db"\n'
            f'[codecite]\nllm = "openai:test-model"\nllm_base_url = "{chat.base_url}"\n'
            "llm_max_retries = 0\n"
            f'[repos.shop]\npath = "{shop}"\n[repos.vault]\npath = "{vault}"\n'
        )
        with StateStore(root / "state.db") as store:
            tokens = {
                "alice": store.create_token("alice", ["shop"]),
                "bob": store.create_token("bob", ["vault"]),
            }
        port = free_port()
        process = start_server(config, port, root / "server.log")
        try:
            yield Server(
                f"http://127.0.0.1:{port}", root, chat, tokens, root / "state.db", process, shots
            )
        finally:
            process.terminate()
            process.wait(30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    if path is None:
        pytest.skip(
            "BROWSER TESTS SKIPPED: no Chromium found; install it with "
            "`apt-get install chromium chromium-driver` (or set CODECITE_CHROMIUM)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("BROWSER TESTS SKIPPED: playwright is missing; pip install -e '.[dev]'")
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)  # a loaded 2-core CI machine: wait, do not flake
    with sync_playwright() as pw:
        try:  # headless, in a new empty profile (Playwright makes one per launch)
            chromium = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        except Exception as exc:  # a broken install: say so, do not fail the suite
            pytest.skip(f"BROWSER TESTS SKIPPED: Chromium at {path} did not start: {exc}")
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def context(browser: Any, server: Server) -> Iterator[Any]:
    ctx = browser.new_context(viewport=DESKTOP, base_url=server.url)
    ctx.set_default_timeout(30_000)
    try:
        yield ctx
    finally:
        ctx.close()


def new_page(context: Any, server: Server) -> Any:
    page = context.new_page()
    page.on("console", lambda message: server.console.append(f"{message.type}: {message.text}"))
    return page


def sign_in(page: Any, token: str) -> None:
    from playwright.sync_api import expect

    page.goto("/")
    page.get_by_label("Access token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".who .user")).to_contain_text("Signed in as")


def ask(page: Any, question: str) -> None:
    """Type the question, press Enter, wait for the finished answer."""
    from playwright.sync_api import expect

    box = page.get_by_label("Your question")
    box.fill(question)
    box.press("Enter")
    expect(page.locator("#answer-rendered .answer[data-state=done]")).to_be_visible()


def no_horizontal_scroll(page: Any) -> bool:
    return bool(
        page.evaluate(
            "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
    )


def in_viewport(page: Any, selector: str) -> bool:
    return bool(
        page.evaluate(
            """(s) => { const r = document.querySelector(s).getBoundingClientRect();
                        return r.top >= 0 && r.bottom <= window.innerHeight; }""",
            selector,
        )
    )


# --- the browser --------------------------------------------------------------------------
def test_sign_in_ask_stream_and_open_a_verified_citation(context: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["alice"])
    cookie = {c["name"]: c for c in context.cookies()}["codecite_session"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    pickers = page.locator("input[name=repos]")
    assert pickers.evaluate_all("boxes => boxes.map(b => b.value)") == ["shop"]
    expect(page.locator("label.repo .fresh")).to_contain_text("indexed at commit")

    server.chat.script = [Reply(text=ANSWER, piece_delay=0.08)]  # streams for ~3 s
    box = page.get_by_label("Your question")
    box.fill(QUESTION)
    box.press("Enter")
    page.wait_for_url(re.compile(r"[?&]q="))
    streamed = page.wait_for_function(  # checked at every frame: tokens before the answer
        """() => { const s = document.getElementById("answer-stream");
                   const done = document.querySelector("#answer-rendered .answer");
                   return !s.hidden && !done && s.textContent.startsWith("Loyal customers")
                          && s.textContent; }""",
        polling="raf",
    )
    assert ANSWER.startswith(str(streamed.json_value()))
    answer = page.locator("#answer-rendered .answer[data-state=done]")
    expect(answer).to_be_visible()
    query = parse_qs(urlsplit(page.url).query)
    assert query["q"] == [QUESTION] and query["repos"] == ["shop"]  # shareable

    verified = answer.locator("a.cite.verified", has_text="shop/pricing.py:25-34")
    expect(verified).to_have_count(1)
    expect(verified.locator(".mark")).to_have_text("✓")
    outside = answer.locator("a.cite.outside", has_text="evil.py:1-900")
    expect(outside.locator(".mark")).to_have_text("✗")
    expect(answer.locator(".answer-body")).to_contain_text("<script>alert(1)</script>")
    expect(answer.locator("script")).to_have_count(0)
    expect(answer.locator(".meta")).to_contain_text("openai:test-model")
    expect(answer.locator(".meta")).to_contain_text("0 files changed since")
    sources = answer.locator("ul.sources li")
    expect(sources.filter(has_text="shop/pricing.py:25-34").first).to_have_attribute(
        "data-status", "verified"
    )
    # code read but not cited is listed apart, without a mark
    looked = answer.locator("details.looked li[data-status=uncited]")
    expect(looked.first).to_be_attached()
    expect(looked.locator(".mark")).to_have_count(0)
    expect(answer.locator("ul.sources li[data-status=outside]")).to_contain_text("evil.py")
    # one mark per citation: as many as the citations the model wrote
    expect(answer.locator("ul.sources li[data-status=verified] .mark")).to_have_count(
        len({"shop/pricing.py:25-34", "shop/pricing.py:20-22"})
    )
    page.screenshot(path=server.shots / "answer-1280x800.png")
    page.screenshot(path=server.shots / "answer-1280-full.png", full_page=True)

    verified.click()
    page.wait_for_url(re.compile(r"/web/code\?"))
    rows = page.locator("tr.hl")
    assert rows.evaluate_all("rs => rs.map(r => Number(r.dataset.line))") == list(range(25, 35))
    expect(page.locator("#L25 td.src")).to_contain_text("def apply_loyalty_discount")
    assert in_viewport(page, "#L25")
    expect(page.locator("#L25 td.src .k, #L25 td.src .kd, #L25 td.src .kn").first).to_be_visible()
    graph = page.locator(".graph")
    expect(graph.locator("h2")).to_contain_text("apply_loyalty_discount")
    expect(graph.locator("section", has_text="Called by").locator("a")).to_contain_text(
        ["checkout"]
    )
    expect(graph.locator("section", has_text="Calls").first.locator("a").first).to_be_visible()
    permalink = page.get_by_label("Permalink").input_value()
    assert permalink == f"{server.url}/web/code?repo=shop&path=shop%2Fpricing.py&start=25&end=34"
    page.screenshot(path=server.shots / "code-1280x800.png")

    callers = graph.locator("section", has_text="Called by").locator("a", has_text="checkout")
    callers.click()
    expect(page.locator("h1.path")).to_contain_text("shop/orders.py")
    page.go_back()
    page.get_by_role("link", name="← Back to the answer").click()
    expect(page.locator("#answer-rendered .answer[data-state=done]")).to_be_visible()
    page.goto(permalink)  # the permalink opens the same lines
    assert page.locator("tr.hl").count() == 10
    rows = server.audit("alice")
    assert any(r.endpoint == "/web/ask" and r.question == QUESTION for r in rows)
    code_rows = [r for r in rows if r.endpoint == "/web/code"]
    assert code_rows and all(":" in r.results[0] and "\n" not in r.results[0] for r in code_rows)
    refused = [m for m in server.console if "Content Security Policy" in m or "Refused" in m]
    assert not refused, refused


def test_phone_layout_has_no_horizontal_scroll(context: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["alice"])
    page.set_viewport_size(PHONE)
    page.goto("/?q=" + QUESTION.replace(" ", "+").replace("?", "%3F") + "&repos=shop")
    answer = page.locator("#answer-rendered .answer[data-state=done]")
    expect(answer).to_be_visible()  # a shared link asks by itself
    assert no_horizontal_scroll(page)
    for name in ("Your question", "Ask"):  # reachable and labelled on a phone
        target = page.get_by_label(name) if name != "Ask" else page.get_by_role("button", name=name)
        box = target.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    # the answer near the top of the screen, not below the form (issue 39)
    top = answer.bounding_box()
    assert top and -2 <= top["y"] < PHONE["height"] / 3, top
    page.screenshot(path=server.shots / "answer-390x844.png")
    answer.scroll_into_view_if_needed()
    page.screenshot(path=server.shots / "answer-390x844-answer.png")
    page.screenshot(path=server.shots / "answer-390-full.png", full_page=True)
    answer.locator("a.cite.verified").first.click()
    page.wait_for_url(re.compile(r"/web/code\?"))
    expect(page.locator("tr.hl").first).to_be_visible()
    assert no_horizontal_scroll(page)
    # long lines wrap: nothing is cut at the screen's edge, not even inside the box
    assert page.evaluate(
        "() => { const b = document.querySelector('.codebox');"
        " return b.scrollWidth <= b.clientWidth; }"
    )
    assert in_viewport(page, "tr.hl")
    page.screenshot(path=server.shots / "code-390x844.png")


def test_not_enough_information_state(context: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["alice"])
    prompts = len(server.chat.requests)
    ask(page, UNANSWERABLE)
    answer = page.locator("#answer-rendered .answer")
    expect(answer).to_have_attribute("data-insufficient", "true")
    expect(answer.locator(".callout.insufficient")).to_contain_text("Not enough information")
    expect(answer.locator("a.cite.verified")).to_have_count(0)
    expect(answer.locator(".meta")).to_contain_text(
        "No answer: the code does not seem to cover this, so no AI model was asked"
    )
    assert len(server.chat.requests) == prompts  # no model was asked to guess
    page.screenshot(path=server.shots / "no-answer-1280x800.png")


def test_a_token_for_another_repository_sees_none_of_it(context: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["bob"])
    boxes = page.locator("input[name=repos]").evaluate_all("bs => bs.map(b => b.value)")
    assert boxes == ["vault"]
    recent = page.locator(".recent").inner_text()
    assert "loyalty" not in recent.lower()  # not Alice's questions

    def shows_nothing_of_shop() -> None:
        text = page.content().lower()
        assert "pricing" not in text and "loyalty_discount" not in text
        assert "shop" not in page.locator("label.repo").all_inner_texts()

    page.goto("/?q=" + QUESTION.replace(" ", "+").replace("?", "%3F") + "&repos=shop")
    expect(page.locator("fieldset.repos .error")).to_contain_text("no access: shop")
    page.wait_for_timeout(300)
    expect(page.locator("#answer-rendered .answer")).to_have_count(0)  # nothing was asked
    shows_nothing_of_shop()

    page.goto("/web/code?repo=shop&path=shop/pricing.py&start=25&end=34")
    expect(page.locator(".error")).to_contain_text("no such repository, or no access: shop")
    assert "apply_loyalty_discount" not in page.content()
    missing = page.goto("/web/code?repo=nosuchrepo&path=shop/pricing.py&start=25&end=34")
    assert missing is not None and missing.status == 403

    page.goto("/web/search?q=loyalty+discount+tier")
    expect(page.locator("#hits-title")).to_be_visible()
    locations = page.locator(".hit .loc").all_inner_texts()
    assert all(loc.startswith("vault/") for loc in locations)
    shows_nothing_of_shop()

    server.chat.script = [Reply(text="zebra_launch_code makes it (vault/launch.py:4-6).")]
    page.goto("/")
    ask(page, "how is the launch code of a station made")
    expect(page.locator(".answer .meta")).to_contain_text("vault")
    assert MARKER in page.locator(".answer").inner_text().lower()
    with StateStore(server.state) as store:  # and the other way round: Alice's session
        session = store.create_session(server.tokens["alice"], 3600)
    with httpx.Client(base_url=server.url) as http:
        http.cookies.set("codecite_session", session)
        vault = http.get("/web/code", params={"repo": "vault", "path": "vault/launch.py"})
    assert vault.status_code == 403 and MARKER not in vault.text.lower()


def test_search_mode_with_filters(context: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["alice"])
    page.get_by_role("link", name="Search").click()
    page.get_by_label("Search for").fill("loyalty discount")
    page.get_by_label("Language").select_option("python")
    page.get_by_label("Kind").select_option("function")
    page.get_by_label("Path").fill("shop/**")
    page.get_by_label("Search for").press("Enter")
    hits = page.locator(".hit")
    expect(hits.first).to_be_visible()
    assert "lang=python" in page.url and "kind=function" in page.url
    locations = page.locator(".hit .loc").all_inner_texts()
    assert "shop/pricing.py:25-34" in locations[:3]
    assert all(loc.startswith("shop/") for loc in locations)
    assert set(page.locator(".hit .kind").all_inner_texts()) == {"function"}
    expect(hits.first.locator("td.src span").first).to_be_visible()  # highlighted
    page.screenshot(path=server.shots / "search-1280x800.png")
    page.locator(".hit .loc", has_text="shop/pricing.py:25-34").click()
    rows = page.locator("tr.hl").evaluate_all("rs => rs.map(r => Number(r.dataset.line))")
    assert rows == list(range(25, 35))
    page.go_back()
    prompts = len(server.chat.requests)
    page.get_by_role("link", name="Ask", exact=True).click()  # takes the words along
    expect(page.get_by_label("Your question")).to_have_value("loyalty discount")
    page.wait_for_timeout(300)
    assert len(server.chat.requests) == prompts  # but does not ask by itself


def test_keyboard_recent_questions_and_sign_out(context: Any, server: Server) -> None:
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["alice"])
    recent = page.locator(".recent a", has_text=QUESTION)
    expect(recent.first).to_be_visible()  # from the audit log
    box = page.get_by_label("Your question")
    box.fill("something to clear")
    box.press("Escape")
    expect(box).to_have_value("")
    box.fill("first line")
    box.press("Shift+Enter")  # a new line, not a question
    box.press_sequentially("second line")
    expect(box).to_have_value("first line\nsecond line")
    assert "q=" not in page.url
    recent.first.click()
    expect(page.locator("#answer-rendered .answer[data-state=done]")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Access token")).to_be_visible()
    assert "codecite_session" not in {c["name"] for c in context.cookies()}


def test_a_link_from_another_site_opens_signed_in_but_does_not_ask(
    context: Any, server: Server
) -> None:
    """A SameSite=Strict cookie is not sent when a link on another site (Slack, a
    mail) is followed: the page reloads itself once, same-site, and then has it. The
    question is put in the box, never asked by itself (issue 21): another site must
    not make a signed-in browser ask; the visitor presses Ask."""
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["alice"])
    prompts = len(server.chat.requests)
    target = f"{server.url}/?q=loyalty+discount&repos=shop"
    # another site: localhost is not the same site as 127.0.0.1 (set_content alone keeps
    # the page's own origin, and its link would be same-origin)
    page.goto(server.url.replace("127.0.0.1", "localhost") + "/healthz")
    page.set_content(f'<a href="{target}">shared question</a>')
    page.get_by_role("link", name="shared question").click()
    expect(page.locator(".who .user")).to_contain_text("alice")
    expect(page.get_by_label("Your question")).to_have_value("loyalty discount")
    expect(page.locator("#q-count")).to_contain_text("press Ask")
    page.wait_for_timeout(1500)  # an auto-ask would have started by now
    assert page.locator("#answer-rendered .answer").count() == 0
    assert len(server.chat.requests) == prompts
    page.get_by_role("button", name="Ask").click()
    expect(page.locator("#answer-rendered .answer[data-state=done]")).to_be_visible()


def test_a_long_paste_is_kept_whole_and_the_limit_is_said(context: Any, server: Server) -> None:
    """The box takes what the API takes and never cuts a paste silently: a report over
    the limit stays whole in the box, the page says the limit, nothing is sent."""
    from playwright.sync_api import expect

    page = new_page(context, server)
    sign_in(page, server.tokens["alice"])
    tail = "\nKeyError: 'tier'"
    body = "Checkout fails\n" + "x = compute(order)  # step\n" * 220
    report = body[: 5_851 - len(tail)] + tail  # the length of the report that lost its end
    assert len(report) == 5_851
    box = page.get_by_label("Your question")
    box.fill(report)
    expect(box).to_have_value(report)  # all of it, the exception line included
    expect(page.locator("#q-count")).to_contain_text("5,851 / 4,000 characters")
    expect(page.locator("#q-hint")).to_contain_text("up to 4,000 characters")
    prompts = len(server.chat.requests)
    page.get_by_role("button", name="Ask").click()  # the page comes back with it, unasked
    expect(page.locator("#q-count")).to_contain_text("5,851 characters")
    expect(page.locator("#q-count")).to_contain_text("at most 4,000")
    expect(page.get_by_label("Your question")).to_have_value(report)
    page.wait_for_timeout(500)
    assert len(server.chat.requests) == prompts
    assert page.locator("#answer-rendered .answer").count() == 0


# --- HTTP: security headers, CSRF, sign-in ----------------------------------------------------
def _csrf(html: str) -> str:
    found = re.search(r'name="csrf-token" content="([0-9a-zA-Z_-]+)"', html)
    assert found
    return found.group(1)


def test_security_headers_csrf_and_sign_in_errors(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        first = http.get("/")
        csp = first.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "style-src 'self'" in csp
        assert "unsafe-inline" not in csp and "default-src 'none'" in csp
        assert first.headers["x-frame-options"] == "DENY"
        assert not re.search(r"<script(?![^>]*\bsrc=)", first.text)  # no inline script
        assert " style=" not in first.text
        csrf = _csrf(first.text)
        wrong = http.post("/web/signin", data={"token": "cc_nope_nope", "csrf": csrf})
        assert wrong.status_code == 401 and "not valid" in wrong.text
        forged = http.post("/web/signin", data={"token": server.tokens["alice"], "csrf": "x"})
        assert forged.status_code == 403 and "codecite_session" not in http.cookies
        other_site = http.post(
            "/web/signin",
            data={"token": server.tokens["alice"], "csrf": csrf},
            headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
        )
        assert other_site.status_code == 403
        signed = http.post(
            "/web/signin", data={"token": server.tokens["alice"], "csrf": csrf, "next": "//evil"}
        )
        assert signed.status_code == 303 and signed.headers["location"] == "/"
        set_cookie = signed.headers.get_list("set-cookie")
        session = next(c for c in set_cookie if c.startswith("codecite_session="))
        assert "HttpOnly" in session and "SameSite=strict" in session
        page = http.get("/")
        csrf = _csrf(page.text)
        body = {"question": QUESTION, "repos": ["shop"]}
        stream = {"Accept": "text/event-stream"}
        assert http.post("/web/ask", json=body, headers=stream).status_code == 403
        bad = http.post("/web/ask", json=body, headers={**stream, "X-CSRF-Token": "0" * 64})
        assert bad.status_code == 403
        cross = http.post(
            "/web/ask",
            json=body,
            headers={**stream, "X-CSRF-Token": csrf, "Origin": "http://localhost:1"},
        )
        assert cross.status_code == 403
        vault = http.post(
            "/web/ask",
            json={"question": "launch code", "repos": ["vault"]},
            headers={**stream, "X-CSRF-Token": csrf},
        )
        assert vault.status_code == 403 and MARKER not in vault.text.lower()
        escaped = http.get("/web/code", params={"repo": "shop", "path": "../../etc/passwd"})
        assert escaped.status_code == 404 and "root:" not in escaped.text
        assert http.post("/web/signout", data={"csrf": "nope"}).status_code == 403
        assert http.post("/web/signout", data={"csrf": csrf}).status_code == 303
    with httpx.Client(base_url=server.url) as http:  # a cross-site link without cookies
        bounce = http.get("/?q=x", headers={"Sec-Fetch-Site": "cross-site"})
        assert bounce.status_code == 200 and 'http-equiv="refresh"' in bounce.text
    rows = server.audit()
    assert any(r.endpoint == "/web/signin" and r.status == 401 for r in rows)
    assert any(r.endpoint == "/web/ask" and r.status == 403 and r.user == "alice" for r in rows)


def test_local_mode_without_tokens_needs_no_sign_in(server: Server) -> None:
    from fastapi.testclient import TestClient

    from codecite.server.app import create_app
    from codecite.server.config import load_server_config

    config = server.root / "local.toml"
    config.write_text(
        'listen = "127.0.0.1:8765"\nauth = "none"\nstate = "local-state.db"\n'
        f'[codecite]\nllm = "extractive"\n[repos.shop]\npath = "{server.root / "shop"}"\n'
    )
    with TestClient(create_app(load_server_config(config)), base_url="http://localhost") as http:
        page = http.get("/")
        assert page.status_code == 200 and "Signed in as <strong>local</strong>" in page.text
        assert "Sign out" not in page.text and 'value="shop"' in page.text
        answer = http.post(
            "/web/ask",
            json={"question": QUESTION, "repos": ["shop"]},
            headers={"Accept": "text/event-stream", "X-CSRF-Token": _csrf(page.text)},
        )
        assert answer.status_code == 200 and "event: result" in answer.text
        assert "From the code itself (quoted lines, no AI model)" in answer.text
        assert 'class=\\"evidence\\"' in answer.text  # the page's HTML, inside the JSON
        assert 'class=\\"confidence ' in answer.text
        # the sentences after the blocks (further places, each cited) are on the page
        raised = http.post(
            "/web/ask",
            json={"question": "What is UnknownRegionError?", "repos": ["shop"]},
            headers={"Accept": "text/event-stream", "X-CSRF-Token": _csrf(page.text)},
        )
        assert 'class=\\"answer-body see-also\\"' in raised.text
        assert "is raised by <code>get_rate_for_region</code>" in raised.text
        forged = http.post("/web/ask", json={"question": QUESTION}, headers={"X-CSRF-Token": "x"})
        assert forged.status_code == 403


def test_an_extractive_answer_leads_and_shows_numbered_code_blocks(
    browser: Any, server: Server
) -> None:
    """The offline answer in the page: a confidence badge, the lead sentence, then at
    most five code blocks (one per evidence place), each with one mark, its citation,
    its lines numbered and the evidence lines highlighted — not a run-on paragraph."""
    from playwright.sync_api import expect

    port = free_port()
    config = server.root / "extractive.toml"
    config.write_text(
        f'listen = "127.0.0.1:{port}"\nauth = "none"\nstate = "extractive-state.db"\n'
        f'[codecite]\nllm = "extractive"\n[repos.shop]\npath = "{server.root / "shop"}"\n'
    )
    process = start_server(config, port, server.root / "extractive.log")
    context = browser.new_context(viewport=DESKTOP, base_url=f"http://127.0.0.1:{port}")
    try:
        page = context.new_page()
        page.goto("/")
        ask(page, "What error do we raise when a region has no tax rate set up?")
        answer = page.locator("#answer-rendered .answer[data-state=done]")
        expect(answer.locator(".confidence")).to_have_attribute("data-confidence", re.compile("."))
        # the function that raises it, with what it does
        expect(answer.locator(".answer-body.lead")).to_contain_text("get_rate_for_region")
        blocks = answer.locator("figure.block")
        count = blocks.count()
        assert 1 <= count <= 5
        for i in range(count):
            block = blocks.nth(i)
            expect(block.locator("figcaption .mark")).to_have_count(1)
            expect(block.locator("figcaption a.cite")).to_have_count(1)
            numbers = [int(n) for n in block.locator(".ln").all_inner_texts()]
            assert numbers and numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        first = blocks.first
        expect(first).to_have_attribute("data-status", "verified")
        expect(first.locator(".line.focus").last).to_contain_text("raise")
        # no mark per quoted line: the page's marks are the blocks' and the lead's links
        marks = answer.locator(".mark:visible").count()
        assert marks <= count + answer.locator(".answer-body a.cite").count()
        page.screenshot(path=server.shots / "extractive-answer-full.png", full_page=True)
    finally:
        context.close()
        process.terminate()
        process.wait(timeout=30)


# --- units: rendering -----------------------------------------------------------------------------
def test_answer_markdown_is_escaped_and_citations_are_linked() -> None:
    from codecite.server.web.render import answer_html, source_lines

    text = (
        "# Title\n\nSee `shop/pricing.py:25-34` and shop/x.py:3. <img src=x onerror=alert(1)>"
        " [click](javascript:alert(1)) ![pic](http://example.com/p.png) [docs](https://x.io)"
        " [fake](shop/pricing.py:20-22)\n\n```\nshop/pricing.py:25-34\n```\n"
    )
    answer = {
        "repo": "shop",
        "answer": text,
        "citations": [
            {"path": "shop/pricing.py", "start_line": 25, "end_line": 34, "verified": True},
            {"path": "shop/x.py", "start_line": 3, "end_line": 3, "verified": False},
            {"path": "shop/pricing.py", "start_line": 20, "end_line": 22, "verified": True},
        ],
        "sources": [
            {"path": "shop/pricing.py", "start_line": 20, "end_line": 34, "qualname": "m"},
            {"path": "shop/tax.py", "start_line": 1, "end_line": 9, "qualname": "t"},
        ],
    }
    html = answer_html(answer)
    assert "<img" not in html and 'href="javascript' not in html and "<h1>Title</h1>" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'class="cite verified"' in html and 'class="cite outside"' in html
    assert html.count('class="cite ') == 2  # not inside a code block or another link
    assert 'rel="nofollow noopener noreferrer"' in html
    assert "/web/code?repo=shop&amp;path=shop%2Fpricing.py&amp;start=25&amp;end=34" in html
    marks = [(s.status, s.location) for s in source_lines(answer)]
    assert marks == [
        ("verified", "shop/pricing.py:20-34"),
        ("uncited", "shop/tax.py:1-9"),
        ("outside", "shop/x.py:3-3"),
    ]


def test_a_cited_path_with_underscores_is_written_as_it_is_and_linked() -> None:
    """Markdown reads ``__tests__`` and ``__init__`` as bold: a citation's path is kept
    literal and linked whole (code spans and fenced blocks untouched)."""
    from codecite.server.web.render import answer_html

    text = (
        "`app.respond > when HEAD is used` (__tests__/application/respond.test.js:96-110); "
        "see pkg/__init__.py:1-3 and **this**.\n\n```\n__x__/a.py:3\n```\n"
    )
    answer = {
        "repo": "koa",
        "answer": text,
        "citations": [
            {"path": "__tests__/application/respond.test.js", "start_line": 96,
             "end_line": 110, "verified": True},
            {"path": "pkg/__init__.py", "start_line": 1, "end_line": 3, "verified": True},
        ],
        "sources": [],
    }  # fmt: skip
    html = answer_html(answer)
    assert "<strong>tests</strong>" not in html and "<strong>init</strong>" not in html
    assert ">__tests__/application/respond.test.js:96-110</a>" in html
    assert ">pkg/__init__.py:1-3</a>" in html
    assert "<strong>this</strong>" in html and "__x__/a.py:3" in html  # the rest is Markdown
    assert "\\_" not in html  # no escape shown


def test_highlighted_code_keeps_one_line_per_source_line() -> None:
    from codecite.server.web.render import highlight_lines

    lines = ["", "", "def f():", '    """A', "    docstring.", '    """', "    return 1 < 2", ""]
    shown = highlight_lines(lines, "x.py", "python")
    assert len(shown) == len(lines) and shown[0] == "" and shown[1] == ""
    assert "def" in shown[2] and "docstring." in shown[4] and "&lt;" in shown[6]
    assert all(line.count("<span") == line.count("</span>") for line in shown)
    assert highlight_lines(["plain"], "notes.unknownext", "nosuchlanguage") == ["plain"]


def test_code_colours_keep_aa_contrast() -> None:
    from pygments.styles import get_style_by_name

    from codecite.server.web.render import HIGHLIGHT_BACKGROUND, PYGMENTS_STYLE

    def luminance(colour: str) -> float:
        value = colour.lstrip("#")
        value = "".join(c * 2 for c in value) if len(value) == 3 else value
        rgb = [int(value[i : i + 2], 16) / 255 for i in (0, 2, 4)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    def contrast(a: str, b: str) -> float:
        hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
        return (hi + 0.05) / (lo + 0.05)

    css = (Path(codecite.__file__).parent / "server/web/static/app.css").read_text()
    assert f"--hl: {HIGHLIGHT_BACKGROUND};" in css
    style = get_style_by_name(PYGMENTS_STYLE)
    colours = {s["color"] for _, s in style if s["color"]}
    for background in ("#ffffff", HIGHLIGHT_BACKGROUND):
        worst = min(contrast("#" + c, background) for c in colours)
        assert worst >= 4.5, (background, worst)
