"""``codecite explain`` and ``codecite docs`` on the shop fixture (Python, TypeScript,
Go), through the library, the CLI in a real process, the HTTP endpoint under a real
uvicorn server and the MCP tool through the SDK's in-process client. Every citation an
explanation writes must verify against the chunks it was built from and point at the
lines it quotes."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from llm_server import Reply, running_chat_server
from repos import copy_index, run_cli

import codecite
from codecite.answer.citations import check_citations
from codecite.errors import AmbiguousSymbolError, UserError
from codecite.explain import Explanation, parse_doc, parse_signature
from codecite.explain.docs import GENERATED, write_docs

FIXTURES = Path(__file__).parent / "fixtures"
LINK = re.compile(r"\]\(([^)\s]+)\)")


@contextmanager
def _cache_env(base: Path) -> Iterator[None]:
    """The session's shared embedding cache (conftest sets it per test, not per module)."""
    cache = base / "embed-cache"
    cache.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CODECITE_CACHE_DIR", str(cache))
        yield


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory, indexed_shop: Path) -> Path:
    """An indexed copy of the shop fixture, shared by the tests that only read it."""
    return copy_index(indexed_shop, tmp_path_factory.mktemp("explain") / "shop")


@pytest.fixture
def index(shop: Path) -> Iterator[codecite.Index]:
    with codecite.open_index(shop, create=False) as opened:
        yield opened


def assert_grounded(expl: Explanation, root: Path) -> None:
    """Every citation of the markdown verifies against the explanation's chunks, lies
    inside its file, and every quoted line is the file's line."""
    markdown = expl.markdown
    found = check_citations(re.sub(r"`[^`\n]*`", "", markdown), expl.blocks)
    assert found, markdown
    assert all(c.verified for c in found), [c.text for c in found if not c.verified]
    assert expl.citations and all(c.verified for c in expl.citations)
    assert not expl.flags, expl.flags
    for c in found:
        assert c.end_line <= len((root / c.path).read_text().splitlines()), c.text
    data = expl.to_json()
    quoted = [u["call"] for u in data["usages"]] + [a for t in data["tests"] for a in t["asserts"]]
    for item in quoted:
        lines = (root / item["path"]).read_text().splitlines()
        shown = [line.strip() for line in lines[item["start_line"] - 1 : item["end_line"]]]
        assert [line.strip() for line in item["code"].splitlines()] == shown, item


# --- explain: the library -----------------------------------------------------------


def test_a_method_with_callers_and_tests(index: codecite.Index, shop: Path) -> None:
    expl = index.explain("CommissionService.calculate_payout")
    assert (expl.symbol.path, expl.symbol.kind) == ("shop/commissions.py", "method")
    assert expl.summary.text == "Commission owed on one deal: only CLOSED_WON deals pay out."
    assert expl.summary.citation == "shop/commissions.py:30"
    assert [(p.name, p.type) for p in expl.params] == [("deal", "Deal")]
    assert expl.returns is not None and expl.returns.type == "float"
    early = expl.early_returns[0]
    assert (early.what, early.condition) == ("0.0", "deal.status is not DealStatus.CLOSED_WON")
    assert early.where.citation == "shop/commissions.py:31-32"
    assert [c.qualname for c in expl.calls] == ["CommissionService.rate_for"]
    # usage examples: the real call sites, source before tests
    assert [u.caller for u in expl.usages] == [
        "CommissionService.payouts_by_rep",
        "test_calculate_payout_only_for_won_deals",
        "test_enterprise_deals_earn_more",
    ]
    assert not expl.usages[0].is_test and expl.usages[1].is_test
    assert "self.calculate_payout(deal)" in expl.usages[0].call.code  # type: ignore[union-attr]
    tests = {t.name: [a.code for a in t.asserts] for t in expl.tests}
    assert tests["test_calculate_payout_only_for_won_deals"] == [
        "assert service.calculate_payout(won) == 50.0",
        "assert service.calculate_payout(lost) == 0.0",
    ]
    markdown = expl.markdown
    for section in ("Parameters", "Returns", "Raises and returns early", "Calls", "Tests"):
        assert f"### {section}" in markdown
    assert "Called from 3 places (2 of them tests)." in markdown
    assert_grounded(expl, shop)


def test_raises_with_their_condition_and_the_rest_of_the_doc_comment(
    index: codecite.Index, shop: Path
) -> None:
    expl = index.explain("cancel")
    raised = expl.raises[0]
    assert (raised.what, raised.condition) == ("OrderError", "not order.can_cancel()")
    assert raised.where.citation == "shop/orders.py:113-114"
    assert expl.details is not None and "Race with payment capture" in expl.details.text
    assert expl.details.citation == "shop/orders.py:108-110"
    assert [p.default for p in expl.params] == ["", '""']
    assert_grounded(expl, shop)


def test_an_ambiguous_name_lists_the_candidates_like_git(index: codecite.Index) -> None:
    with pytest.raises(AmbiguousSymbolError) as caught:
        index.explain("_round_cents")
    message = str(caught.value)
    assert "'_round_cents' is ambiguous: 2 definitions match" in message
    assert re.search(r"shop/pricing\.py:45 +function _round_cents", message)
    assert re.search(r"shop/tax\.py:35 +function _round_cents", message)
    assert [(p, s, q) for p, s, _, q, _ in caught.value.candidates] == [
        ("shop/pricing.py", 45, "_round_cents"),
        ("shop/tax.py", 35, "_round_cents"),
    ]
    assert isinstance(caught.value, UserError)
    # either candidate can then be named
    assert index.explain("shop/tax.py::_round_cents").symbol.path == "shop/tax.py"
    assert index.explain("shop/pricing.py:46").symbol.path == "shop/pricing.py"
    with pytest.raises(
        UserError, match="no function, method, class or documented constant named 'nosuch'"
    ):
        index.explain("nosuch")


def test_a_symbol_with_no_callers(index: codecite.Index, shop: Path) -> None:
    expl = index.explain("Order.summary")
    assert expl.callers_total == 0 and expl.usages == [] and expl.tests == []
    markdown = expl.markdown
    assert "No callers in the index" in markdown
    assert "No test in the index exercises it directly" in markdown
    assert "Takes no parameters (shop/orders.py:86)." in markdown
    assert_grounded(expl, shop)


def test_a_documented_constant_its_value_and_the_code_that_reads_it(
    index: codecite.Index, shop: Path
) -> None:
    """A documented constant is explained by its doc, its value and the lines that read
    it (reading a value is no graph edge: the code writing its name)."""
    expl = index.explain("LOYALTY_DISCOUNTS")
    assert expl.symbol.kind == "constant"
    assert expl.summary.text == "Discount rate per loyalty tier."
    assert expl.signature is not None and expl.signature.code.startswith("LOYALTY_DISCOUNTS")
    assert [(u.caller, u.call.start_line if u.call else 0) for u in expl.callers] == [
        ("discount_rate_for_tier", 22)
    ]
    markdown = expl.markdown
    assert "Value (shop/pricing.py:10-14):" in markdown
    assert "Read in 1 place." in markdown and "Parameters" not in markdown
    assert index.explain("shop/pricing.py:11").symbol.qualname == "LOYALTY_DISCOUNTS"
    assert_grounded(expl, shop)


def test_a_path_line_location(index: codecite.Index, shop: Path) -> None:
    expl = index.explain("shop/orders.py:113")  # inside cancel's body
    assert expl.symbol.qualname == "cancel"
    inner = index.explain("shop/orders.py:80")  # a method inside a class: the method
    assert inner.symbol.qualname == "Order.mark_paid"
    assert inner.raises[0].what == "OrderError"
    with pytest.raises(
        UserError,
        match=r"no function, method, class or documented constant at shop/orders\.py:10; ",
    ):
        index.explain("shop/orders.py:10")
    with pytest.raises(UserError, match="not an indexed file"):
        index.explain("shop/nowhere.py:3")
    assert_grounded(expl, shop)
    assert_grounded(inner, shop)


def test_typescript(index: codecite.Index, shop: Path) -> None:
    expl = index.explain("calculatePriceWithTax")
    assert (expl.symbol.path, expl.symbol.language) == ("web/src/cart.ts", "typescript")
    assert [(p.name, p.type) for p in expl.params] == [
        ("items", "CartItem[]"),
        ("taxRate", "number"),
    ]
    assert expl.returns is not None and expl.returns.type == "number"
    assert (expl.raises[0].what, expl.raises[0].condition) == ("RangeError", "taxRate < 0")
    assert [c.qualname for c in expl.calls] == ["subtotal", "roundCents"]
    assert expl.usages[0].caller == "Cart.total" and not expl.usages[0].is_test
    names = {t.name: [a.code for a in t.asserts] for t in expl.tests}
    assert names == {
        "calculatePriceWithTax › adds tax to the subtotal": [
            "expect(calculatePriceWithTax(items, 0.1)).toBe(27.5);"
        ],
        "calculatePriceWithTax › rejects negative rates": [
            "expect(() => calculatePriceWithTax(items, -0.1)).toThrow(RangeError);"
        ],
    }
    assert_grounded(expl, shop)


def test_go_and_a_class(index: codecite.Index, shop: Path) -> None:
    total = index.explain("Invoice.Total")
    assert total.returns is not None and total.returns.type == "float64"
    assert total.tests[0].name == "TestInvoice_Total"
    assert "got != 29.75" in total.tests[0].asserts[0].code
    deal = index.explain("Deal")
    assert [p.name for p in deal.params] == ["deal_id", "rep", "amount", "enterprise"]
    assert "Deal.close" in [m.qualname for m in deal.members]
    for expl in (total, deal):
        assert_grounded(expl, shop)


def test_json_is_complete(index: codecite.Index) -> None:
    data = index.explain("apply_loyalty_discount").to_json()
    json.dumps(data)
    assert data["symbol"]["citation"] == "shop/pricing.py:25-34"
    assert data["raises"][0]["what"] == "ValueError"
    assert data["llm"] == "extractive" and data["prose"] == ""
    assert data["markdown"].startswith("## `apply_loyalty_discount`")
    assert all(c["verified"] for c in data["citations"])


def test_an_llm_writes_the_prose_and_its_citations_are_checked(index: codecite.Index) -> None:
    prose = (
        "Applies the tier's discount (shop/pricing.py:25-34) and is used by checkout "
        "(shop/orders.py:91-102); it also writes the ledger (shop/ledger.py:1-9)."
    )
    with running_chat_server() as chat:
        chat.default = Reply(text=prose)
        expl = index.explain("apply_loyalty_discount", llm=f"openai:test-model@{chat.base_url}")
        prompt = chat.requests[0]["messages"]
    assert expl.prose == prose and expl.llm == "openai:test-model"
    verified = {c.text: c.verified for c in expl.citations}
    assert verified == {
        "shop/pricing.py:25-34": True,
        "shop/orders.py:91-102": True,
        "shop/ledger.py:1-9": False,
    }
    assert any("shop/ledger.py:1-9" in flag for flag in expl.flags)
    assert "shop/ledger.py:1-9" in expl.markdown and "**Warning:**" in expl.markdown
    system, user = prompt[0]["content"], prompt[1]["content"]
    assert "never instructions" in system
    context = user[user.index("<context>") : user.index("</context>")]
    assert "Facts:" in context and "if amount < 0:" in context  # the facts and the code
    assert "[1] shop/pricing.py:25-34 — apply_loyalty_discount" in context
    assert "\n[2] " in context  # graph neighbours as blocks of their own


def test_doc_comment_conventions() -> None:
    google = parse_doc(
        "Do it.\n\nArgs:\n    a (int): The first.\n    b: The second,\n        continued.\n\n"
        "Returns:\n    list[int]: The values.\n\nRaises:\n    KeyError: If missing."
    )
    assert google.summary == "Do it."
    assert {k: (v.type, v.description) for k, v in google.params.items()} == {
        "a": ("int", "The first."),
        "b": ("", "The second, continued."),
    }
    assert (google.returns.type, google.returns.description) == ("list[int]", "The values.")  # type: ignore[union-attr]
    assert [(r.name, r.description) for r in google.raises] == [("KeyError", "If missing.")]
    numpy = parse_doc(
        "Compute.\n\nParameters\n----------\nx : float\n    The x.\n\nReturns\n-------\n"
        "float\n    The result.\n\nRaises\n------\nValueError\n    When bad."
    )
    assert (numpy.params["x"].type, numpy.params["x"].description) == ("float", "The x.")
    assert (numpy.returns.type, numpy.returns.description) == ("float", "The result.")  # type: ignore[union-attr]
    assert numpy.raises[0].name == "ValueError"
    sphinx = parse_doc(
        ":param path: where\n:type path: str\n:returns: a handle\n:rtype: Handle\n"
        ":raises OSError: when it cannot"
    )
    assert (sphinx.params["path"].type, sphinx.params["path"].description) == ("str", "where")
    assert (sphinx.returns.type, sphinx.raises[0].name) == ("Handle", "OSError")  # type: ignore[union-attr]
    jsdoc = parse_doc(
        "Distance.\n@param {Point} a - the first\n@param [unit=km] The unit.\n"
        "@returns {number} the distance\n@throws {RangeError} when out of range"
    )
    assert (jsdoc.params["a"].type, jsdoc.params["a"].description) == ("Point", "the first")
    assert "default km" in jsdoc.params["unit"].description
    assert (jsdoc.returns.type, jsdoc.raises[0].name) == ("number", "RangeError")  # type: ignore[union-attr]
    javadoc = parse_doc("Area.\n\n@param width the width\n@throws IllegalArgumentException if bad")
    assert javadoc.params["width"].description == "the width"
    assert (javadoc.raises[0].name, javadoc.raises[0].description) == (
        "IllegalArgumentException",
        "if bad",
    )


SIGNATURES = [
    (
        "python",
        "f",
        "def f(self, a: int, *args, b: str = 'x', **kw) -> list[int]:",
        [("a", "int", ""), ("*args", "", ""), ("b", "str", "'x'"), ("**kw", "", "")],
        "list[int]",
    ),
    (
        "typescript",
        "g",
        'async function g<T>(p?: T, unit: string = "km"): Promise<T>',
        [("p", "T", ""), ("unit", "string", '"km"')],
        "Promise<T>",
    ),
    (
        "typescript",
        "constructor",
        "constructor(public readonly status: number, message: string)",
        [("status", "number", ""), ("message", "string", "")],
        "",
    ),
    (
        "go",
        "Div",
        "func (inv *Invoice) Div(a, b float64, xs ...string) (float64, error)",
        [("a", "float64", ""), ("b", "float64", ""), ("xs", "...string", "")],
        "(float64, error)",
    ),
    (
        "java",
        "area",
        "public static <T> List<T> area(final double w, Map<String, Integer> m) throws X",
        [("w", "double", ""), ("m", "Map<String, Integer>", "")],
        "List<T>",
    ),
]


@pytest.mark.parametrize(("language", "name", "signature", "params", "returns"), SIGNATURES)
def test_signatures(
    language: str, name: str, signature: str, params: list[tuple[str, str, str]], returns: str
) -> None:
    found, kind = parse_signature(signature, name, language)
    assert [(p.name, p.type, p.default) for p in found] == params
    assert kind == returns


# --- docs ---------------------------------------------------------------------------------


def _links_resolve(out: Path, root: Path) -> int:
    """Check every relative link of every page: to a page (and its anchor) or to lines of
    a source file; returns how many were checked."""
    checked = 0
    for page in out.rglob("*.md"):
        for target in LINK.findall(page.read_text()):
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            assert file.is_file(), f"{page}: {target}"
            if file.suffix == ".md" and anchor:
                assert f'<a id="{anchor}"></a>' in file.read_text(), f"{page}: {target}"
            elif anchor:
                m = re.fullmatch(r"L(\d+)-L(\d+)", anchor)
                assert m, f"{page}: {target}"
                assert file.is_relative_to(root)
                assert 1 <= int(m[1]) <= int(m[2]) <= len(file.read_text().splitlines()), target
            checked += 1
    return checked


def test_docs_are_stable_grounded_and_their_links_resolve(shop: Path, tmp_path: Path) -> None:
    out = shop / "docs" / "api"
    with codecite.open_index(shop, create=False) as index:
        first = write_docs(index, shop, out)
        pages = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*.md")}
        second = write_docs(index, "", out)
        elsewhere = write_docs(index, "shop", tmp_path / "docs")  # outside the repository
    assert first.flags == [] and first.modules == 13 and first.symbols > 50
    assert sorted(first.written) == sorted(pages) and "index.md" in pages
    assert second.written == [] and sorted(second.unchanged) == sorted(pages)
    assert {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*.md")} == pages
    assert all(text.startswith(GENERATED) for text in pages.values())
    pricing = pages["shop/pricing.py.md"]
    assert '<a id="apply_loyalty_discount"></a>' in pricing
    assert "[shop/pricing.py:25-34](../../../shop/pricing.py#L25-L34)" in pricing
    assert "[`checkout`](orders.py.md#checkout)" in pricing  # a link to another page
    assert "_round_cents" not in pricing.split("Contents:")[1].split("<a id")[0]  # private
    assert "request" not in pages["web/src/api.ts.md"].split("Contents:")[1].split("<a id")[0]
    assert not any("tests/" in page for page in pages)  # tests are documented as tests
    assert _links_resolve(out, shop) > 300
    assert _links_resolve(tmp_path / "docs", shop) > 50
    assert elsewhere.modules == 9


def test_docs_rewrite_only_changed_pages(tmp_path: Path, indexed_shop: Path) -> None:
    root = copy_index(indexed_shop, tmp_path / "shop")
    out = tmp_path / "out"
    with codecite.open_index(root) as index:
        write_docs(index, root, out, private=True)
        assert "_round_cents" in (out / "shop/pricing.py.md").read_text()
        deals = root / "shop" / "deals.py"
        deals.write_text(deals.read_text().replace("(finance review)", "(legal review)"))
        (root / "shop" / "forecast.py").unlink()
        (out / "notes.md").write_text("my own notes\n")
        index.update()
        again = write_docs(index, root, out, private=True)
    assert again.written == ["index.md", "shop/deals.py.md"]
    assert again.removed == ["shop/forecast.py.md"]
    assert "legal review" in (out / "shop/deals.py.md").read_text()
    assert (out / "notes.md").is_file()  # not ours: kept
    assert _links_resolve(out, root) > 300


# --- the CLI --------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_explain_and_docs(shop: Path, tmp_path: Path) -> None:
    shown = run_cli("explain", "Deal.close", str(shop), env={"COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    assert "shop/deals.py:32-36" in shown.stdout and "tests/test_commissions.py:10" in shown.stdout
    assert "13/13 citations verified" in shown.stdout
    as_json = run_cli("explain", "shop/orders.py:98", "--json", cwd=shop)
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert data["symbol"]["qualname"] == "checkout" and data["flags"] == []
    ambiguous = run_cli("explain", "_round_cents", str(shop))
    assert ambiguous.returncode == 1
    assert "ambiguous" in ambiguous.stderr and "shop/tax.py:35" in ambiguous.stderr
    assert "Traceback" not in ambiguous.stderr
    missing = run_cli("explain", "nosuch", str(shop))
    assert (
        missing.returncode == 1
        and "no function, method, class or documented constant" in missing.stderr
    )
    docs = run_cli("docs", str(shop / "web"), "--out", str(tmp_path / "d"), "--json")
    assert docs.returncode == 0, docs.stderr
    report = json.loads(docs.stdout)
    assert report["modules"] == 3 and "index.md" in report["written"]
    bad = run_cli("docs", str(tmp_path / "nowhere"))
    assert bad.returncode == 1 and "no such file or folder" in bad.stderr


# --- the HTTP endpoint and the MCP tool ----------------------------------------------------------


@contextmanager
def _serving(app: Any) -> Iterator[str]:
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws="none")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(600):
            if server.started or not thread.is_alive():
                break
            threading.Event().wait(0.05)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_http_endpoint_checks_access_and_is_audited(shop: Path, tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from codecite.server.app import create_app
    from codecite.server.config import load_server_config
    from codecite.server.state import StateStore

    other = tmp_path / "other"
    other.mkdir()
    (other / "hidden.py").write_text("def hidden_thing():\n    return 1\n")
    with codecite.open_index(other) as index:
        index.update()
    config = tmp_path / "server.toml"
    config.write_text(
        'auth = "token"\nstate = "state.db"\n[codecite]\nllm = "extractive"\n'
        f'[repos.shop]\npath = "{shop}"\n[repos.other]\npath = "{other}"\n'
    )
    with StateStore(tmp_path / "state.db") as state:
        token = state.create_token("alice", ["shop"])
    app = create_app(load_server_config(config))
    base = "/api/v1/repos/shop/symbols"
    with (
        _serving(app) as url,
        httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        ) as http,
    ):
        ok = http.get(f"{base}/Deal.close/explain")
        ambiguous = http.get(f"{base}/_round_cents/explain")
        picked = http.get(f"{base}/_round_cents/explain", params={"path": "shop/tax.py"})
        missing = http.get(f"{base}/nosuch/explain")
        hidden = http.get("/api/v1/repos/other/symbols/hidden_thing/explain")
        callers = http.get(f"{base}/Deal.close/callers")  # the neighbouring route still works
    assert ok.status_code == 200, ok.text
    data = ok.json()
    assert data["repo"] == "shop" and data["symbol"]["citation"] == "shop/deals.py:32-36"
    assert data["citations"] and all(c["verified"] for c in data["citations"])
    assert ambiguous.status_code == 409 and ambiguous.json()["error"]["code"] == "ambiguous"
    assert "shop/pricing.py:45" in ambiguous.json()["error"]["message"]
    assert picked.status_code == 200 and picked.json()["symbol"]["path"] == "shop/tax.py"
    assert missing.status_code == 404
    assert hidden.status_code == 403 and "hidden_thing" not in hidden.text
    assert callers.status_code == 200
    with StateStore(tmp_path / "state.db") as state:
        rows = [r for r in state.audit_rows() if r.endpoint.endswith("/Deal.close/explain")]
    assert rows[0].results == ["shop:shop/deals.py:32-36"]
    assert rows[0].citations and all("unverified" not in c for c in rows[0].citations)


def test_mcp_tool_through_the_sdk_client(shop: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client
    from mcp.types import CallToolResult

    from codecite.server.auth import Principal
    from codecite.server.config import RepoConfig
    from codecite.server.mcp import build_mcp
    from codecite.server.repos import RepoPool

    pool = RepoPool({"shop": RepoConfig("shop", shop, shop / ".codecite")})
    server = build_mcp(pool, lambda: Principal("bob", ("shop",)))

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            calls: dict[str, CallToolResult] = {
                "ok": await client.call_tool("explain_symbol", {"symbol": "checkout"}),
                "at": await client.call_tool("explain_symbol", {"symbol": "web/src/cart.ts:25"}),
                "ambiguous": await client.call_tool("explain_symbol", {"symbol": "_round_cents"}),
                "hidden": await client.call_tool(
                    "explain_symbol", {"symbol": "checkout", "repo": "vault"}
                ),
            }
            return {"tool": tools["explain_symbol"], **calls}

    r = anyio.run(main)
    pool.close()
    assert r["tool"].annotations.read_only_hint is True
    assert "usage examples" in r["tool"].description
    ok = r["ok"]
    assert not ok.is_error
    text = "\n".join(getattr(part, "text", "") for part in ok.content)
    assert "## `checkout`" in text and "shop/orders.py:91-102" in text
    assert ok.structured_content["repo"] == "shop"
    assert all(c["verified"] for c in ok.structured_content["citations"])
    assert r["at"].structured_content["symbol"]["qualname"] == "calculatePriceWithTax"
    ambiguous = r["ambiguous"]
    assert not ambiguous.is_error and ambiguous.structured_content["ambiguous"] is True
    assert [c["symbol"] for c in ambiguous.structured_content["candidates"]] == [
        "shop/pricing.py::_round_cents",
        "shop/tax.py::_round_cents",
    ]
    assert r["hidden"].is_error
    assert "no such repository: vault" in r["hidden"].content[0].text  # type: ignore[union-attr]
