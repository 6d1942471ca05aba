"""MCP for coding agents (docs/DESIGN.md §11): the eight tools over a real index of the shop
fixture, through the SDK's own clients — stdio against ``python -m codecite mcp ROOT``
in a subprocess, and streamable HTTP against the ``/mcp`` app under a real uvicorn
server — with per-repository access control that does not leak hidden names."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="MCP needs the server extra")

import httpx2  # the MCP SDK's HTTP client
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult
from repos import make_git_repo, run_cli

import codecite
from codecite.errors import UserError
from codecite.server.auth import LOCAL_USER, Principal
from codecite.server.config import Limits, RepoConfig
from codecite.server.mcp import (
    CURRENT_PRINCIPAL,
    TOOL_NAMES,
    CodeTools,
    NoPrincipalError,
    build_mcp,
    mcp_http_app,
    mcp_lifespan,
    principal_from_context,
    safe_relative_path,
)
from codecite.server.repos import RepoPool

FIXTURES = Path(__file__).parent / "fixtures"
#: A token the scrubber redacts (GitHub personal access token shape).
SECRET = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
SETTINGS = f'"""Deployment settings."""\n\nGITHUB_TOKEN = "{SECRET}"\nRETRIES = 3\n'


def _text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


@contextmanager
def _cache_env(base: Path) -> Iterator[None]:
    """The session's shared embedding cache (as conftest sets it for each test)."""
    cache = base / "embed-cache"
    cache.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CODECITE_CACHE_DIR", str(cache))
        yield


def _indexed_repo(dest: Path, files: dict[str, str]) -> Path:
    make_git_repo(dest, files)
    with codecite.open_index(dest) as index:
        index.update()
    return dest


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An indexed git copy of the shop fixture, with a settings file holding a secret
    and ``llm = "extractive"`` configured."""
    dest = tmp_path_factory.mktemp("mcp") / "shop"
    shutil.copytree(FIXTURES / "shop", dest)
    files = {p.relative_to(dest).as_posix(): p.read_text() for p in dest.rglob("*") if p.is_file()}
    files["shop/settings.py"] = SETTINGS
    files["codecite.toml"] = 'llm = "extractive"\n'
    with _cache_env(tmp_path_factory.getbasetemp()):
        yield _indexed_repo(dest, files)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A second, small indexed repository (the one a restricted user must not see)."""
    dest = tmp_path_factory.mktemp("mcp") / "vault"
    files = {
        "vault/locks.py": (
            "def open_vault(code: str) -> bool:\n"
            '    """Open the bank vault when the combination code is right."""\n'
            '    return code == "1234"\n'
        ),
        "codecite.toml": 'llm = "extractive"\n',
    }
    with _cache_env(tmp_path_factory.getbasetemp()):
        yield _indexed_repo(dest, files)


# --- stdio: the SDK's client against a real `codecite mcp` process -------------------------


def _stdio_params(root: Path, cwd: Path | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "codecite", "mcp", str(root)],
        env={"CODECITE_CACHE_DIR": os.environ["CODECITE_CACHE_DIR"]},
        cwd=str(cwd or root),
    )


@pytest.mark.slow
def test_stdio_tools_answer_with_citations_from_a_real_subprocess(
    shop: Path, tmp_path: Path
) -> None:
    async def main() -> dict[str, CallToolResult]:
        results: dict[str, CallToolResult] = {}
        with (tmp_path / "server-stderr.log").open("w") as errlog:
            async with Client(stdio_client(_stdio_params(shop), errlog=errlog)) as client:
                listed = (await client.list_tools()).tools
                results["tools"] = CallToolResult(
                    content=[], structured_content={"tools": [t.model_dump() for t in listed]}
                )
                calls: dict[str, tuple[str, dict[str, Any]]] = {
                    "search": ("search_code", {"query": "loyalty discount by customer tier"}),
                    "search_go": ("search_code", {"query": "invoice total", "language": "go"}),
                    "search_files": (
                        "search_code",
                        {"query": "loyalty discount by customer tier", "files": True, "k": 2},
                    ),
                    "ask": ("ask_codebase", {"question": "How is the loyalty discount applied?"}),
                    "read": (
                        "read_code",
                        {"path": "shop/pricing.py", "start_line": 25, "end_line": 34},
                    ),
                    "read_secret": ("read_code", {"path": "shop/settings.py"}),
                    "traversal": ("read_code", {"path": "../../etc/passwd"}),
                    "absolute": ("read_code", {"path": "/etc/passwd"}),
                    "unindexed": ("read_code", {"path": ".git/config"}),
                    "index_db": ("read_code", {"path": ".codecite/index.db"}),
                    "callers": ("find_callers", {"symbol": "apply_loyalty_discount"}),
                    "callees": ("find_callees", {"symbol": "checkout"}),
                    "tests": ("find_tests", {"symbol": "apply_loyalty_discount"}),
                    "class_tests": ("find_tests", {"symbol": "CommissionService"}),
                    "ambiguous": ("find_callers", {"symbol": "_round_cents"}),
                    "picked": ("find_callers", {"symbol": "shop/tax.py::_round_cents"}),
                    "unknown_symbol": ("find_callers", {"symbol": "no_such_function"}),
                    "repos": ("list_repos", {}),
                    "status": ("index_status", {}),
                    "bad_language": ("search_code", {"query": "x", "language": "klingon"}),
                    "hidden_repo": ("index_status", {"repo": "payments"}),
                }
                for key, (tool, args) in calls.items():
                    results[key] = await client.call_tool(tool, args)
        return results

    r = anyio.run(main)
    tools = r["tools"].structured_content["tools"]  # type: ignore[index]
    assert sorted(t["name"] for t in tools) == sorted(TOOL_NAMES)
    for tool in tools:
        assert len(tool["description"]) > 80, tool["name"]
        assert tool["annotations"]["read_only_hint"] is True
    search = next(t for t in tools if t["name"] == "search_code")
    assert "FIRST" in search["description"]
    assert set(search["input_schema"]["properties"]) == {
        "query", "repos", "k", "language", "path", "kind", "files"
    }  # fmt: skip

    errors = {k for k, v in r.items() if v.is_error}
    assert errors == {
        "traversal", "absolute", "unindexed", "index_db", "unknown_symbol", "bad_language",
        "hidden_repo",
    }  # fmt: skip

    # search_code: ranked chunks with citations and code
    text = _text(r["search"])
    assert "shop/pricing.py:25-34 function apply_loyalty_discount" in text
    first = r["search"].structured_content["results"][0]  # type: ignore[index]
    assert first["citation"] == "shop/pricing.py:25-34"
    assert "def apply_loyalty_discount" in first["content"]
    files = r["search_files"].structured_content["files"]  # type: ignore[index]
    assert len(files) == 2 and files[0]["path"] == "shop/pricing.py"
    assert files[0]["chunks"][0]["name"] == "apply_loyalty_discount"
    assert "1. shop/pricing.py" in _text(r["search_files"])
    go = r["search_go"].structured_content["results"]  # type: ignore[index]
    assert go and {hit["language"] for hit in go} == {"go"}
    assert "Traceback" not in _text(r["bad_language"])
    assert "unknown language 'klingon'" in _text(r["bad_language"])

    # ask_codebase: the configured (extractive) answer, with citations
    ask = r["ask"].structured_content
    assert ask["llm"] == "extractive"  # type: ignore[index]
    assert "shop/pricing.py:25-34" in ask["answer"]  # type: ignore[index]
    assert "Confidence: " in _text(r["ask"]) and "(verified)" in _text(r["ask"])
    assert ask["blocks"] and ask["confidence"] in ("high", "medium", "low")  # type: ignore[index]

    # read_code: exact numbered lines; secrets redacted as in the index; refusals
    read = _text(r["read"])
    assert read.startswith("shop/pricing.py:25-34 (47 lines in the file)")
    assert "25  def apply_loyalty_discount(amount: float, tier: str) -> float:" in read
    assert "34      return _round_cents(amount * (1 - rate))" in read
    assert SECRET not in _text(r["read_secret"])
    assert "«redacted:" in _text(r["read_secret"])
    for key in ("traversal", "absolute", "unindexed", "index_db"):
        assert _text(r[key]).startswith("refused:"), key
        assert "root:" not in _text(r[key])

    # the code graph
    callers = _text(r["callers"])
    assert "Callers of apply_loyalty_discount (shop/pricing.py:25-34)" in callers
    assert "- shop/orders.py:91-102 function checkout — calls it at line 98" in callers
    assert "tests/test_pricing.py:8-9 function test_gold_saves_ten_percent, test" in callers
    callees = r["callees"].structured_content["callees"]  # type: ignore[index]
    assert {c["citation"] for c in callees} >= {"shop/pricing.py:25-34", "shop/tax.py:30-32"}
    tests = r["tests"].structured_content["tests"]  # type: ignore[index]
    assert {t["qualname"] for t in tests} == {
        "test_gold_saves_ten_percent",
        "test_silver_saves_five_percent",
        "test_apply_loyalty_discount_rejects_negative_amounts",
    }
    assert all(t["path"] == "tests/test_pricing.py" for t in tests)
    class_tests = _text(r["class_tests"])  # a class's tests include its methods' tests
    assert "Tests of CommissionService (shop/commissions.py:" in class_tests
    assert "tests/test_commissions.py:16-19 function test_enterprise_deals_earn_more" in class_tests
    ambiguous = r["ambiguous"].structured_content
    assert ambiguous["ambiguous"] is True  # type: ignore[index]
    assert {c["symbol"] for c in ambiguous["candidates"]} == {  # type: ignore[index]
        "shop/tax.py::_round_cents",
        "shop/pricing.py::_round_cents",
    }
    assert "shop/tax.py:30-32 function calculate_tax" in _text(r["picked"])
    assert "pricing" not in _text(r["picked"])

    # repositories
    assert r["repos"].structured_content == {"repos": [{"name": "shop", "indexed": True}]}
    status = r["status"].structured_content
    assert status["repo"] == "shop" and status["chunks"] > 100  # type: ignore[index]
    assert status["embedded_fraction"] == 1.0  # type: ignore[index]
    assert status["indexed_commit"] == status["head_commit"] != ""  # type: ignore[index]
    assert _text(r["hidden_repo"]) == "no such repository: payments"


@pytest.mark.slow
def test_stdio_stdout_carries_only_the_protocol(shop: Path) -> None:
    """Raw JSON-RPC over the pipes: every stdout line is a protocol message, even while
    the query model loads; the process ends cleanly when stdin closes."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "search_code", "arguments": {"query": "tax rate for a region"}},
        },
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "codecite", "mcp", str(shop)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=shop,
    )
    assert proc.stdin is not None and proc.stdout is not None
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        lines: list[str] = []
        while not any('"id":2' in line.replace(" ", "") for line in lines):
            line = proc.stdout.readline()
            assert line, f"the server ended early: {proc.stderr.read() if proc.stderr else ''}"
            lines.append(line)
        rest, _ = proc.communicate(timeout=60)  # closes stdin: the server stops
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0
    replies = [json.loads(line) for line in [*lines, *rest.split("\n")] if line.strip()]
    assert all(m["jsonrpc"] == "2.0" for m in replies)
    by_id = {m.get("id"): m for m in replies}
    assert by_id[1]["result"]["serverInfo"]["name"] == "codecite"
    content = by_id[2]["result"]["content"][0]["text"]
    assert "shop/tax.py:" in content


@pytest.mark.slow
def test_mcp_without_an_index_fails_before_serving(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    given = run_cli("mcp", str(tmp_path), stdin=b"")
    assert given.returncode == 1
    assert given.stdout == ""
    assert "no index at" in given.stderr and "codecite index" in given.stderr
    nearest = run_cli("mcp", cwd=tmp_path, stdin=b"")
    assert nearest.returncode == 1 and nearest.stdout == ""
    assert "no codecite index in" in nearest.stderr


def test_mcp_help_shows_an_agent_config_snippet() -> None:
    result = run_cli("mcp", "--help")
    assert result.returncode == 0
    assert '"mcpServers"' in result.stdout
    assert '"args": ["mcp", "/path/to/repo"]' in result.stdout


# --- streamable HTTP under a real uvicorn server --------------------------------------------

PRINCIPALS = {
    "alice": Principal("alice", ("a",)),
    "root": Principal("root", ("*",), admin=True),
}


class PrincipalFromHeader:
    """Test stand-in for the server's token check: the ``X-Test-User`` header names the
    principal, which is set in :data:`CURRENT_PRINCIPAL` for the request."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        user = dict(scope.get("headers", [])).get(b"x-test-user", b"").decode()
        principal = PRINCIPALS.get(user)
        if principal is None:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        token = CURRENT_PRINCIPAL.set(principal)
        try:
            await self.app(scope, receive, send)
        finally:
            CURRENT_PRINCIPAL.reset(token)


@contextmanager
def _serving(app: Any) -> Iterator[str]:
    """``app`` under uvicorn on a free loopback port, on a thread; yields the base URL."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", ws="none", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(600):
            if server.started or not thread.is_alive():
                break
            threading.Event().wait(0.05)
        assert server.started, "uvicorn did not start"
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def http_url(shop: Path, vault: Path) -> Iterator[str]:
    pool = RepoPool(
        {
            "a": RepoConfig("a", shop, shop / ".codecite"),
            "b": RepoConfig("b", vault, vault / ".codecite"),
        }
    )
    mcp_app = mcp_http_app(pool, principal_from_context)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp_lifespan(mcp_app):
            yield

    api = FastAPI(lifespan=lifespan)
    api.add_route("/mcp", PrincipalFromHeader(mcp_app))
    with _serving(api) as base:
        yield f"{base}/mcp"
    pool.close()


@asynccontextmanager
async def _http_client(url: str, user: str) -> AsyncIterator[Client]:
    headers = {"X-Test-User": user}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def test_http_restricted_user_sees_only_readable_repos(http_url: str) -> None:
    async def main() -> dict[str, CallToolResult]:
        async with _http_client(http_url, "alice") as client:
            assert len((await client.list_tools()).tools) == len(TOOL_NAMES)
            out = {
                "repos": await client.call_tool("list_repos", {}),
                "search": await client.call_tool("search_code", {"query": "open the bank vault"}),
                "callers": await client.call_tool("find_callers", {"symbol": "checkout"}),
            }
            for repo in ("b", "zz-unknown"):
                out[f"search:{repo}"] = await client.call_tool(
                    "search_code", {"query": "vault", "repos": [repo]}
                )
                out[f"status:{repo}"] = await client.call_tool("index_status", {"repo": repo})
                out[f"search_str:{repo}"] = await client.call_tool(
                    "search_code", {"query": "vault", "repos": repo}
                )
                out[f"read:{repo}"] = await client.call_tool(
                    "read_code", {"repo": repo, "path": "vault/locks.py"}
                )
                out[f"ask:{repo}"] = await client.call_tool(
                    "ask_codebase", {"question": "how is the vault opened?", "repo": repo}
                )
                out[f"tests:{repo}"] = await client.call_tool(
                    "find_tests", {"repo": repo, "symbol": "open_vault"}
                )
            return out

    r = anyio.run(main)
    assert r["repos"].structured_content == {"repos": [{"name": "a", "indexed": True}]}
    assert "vault" not in _text(r["repos"])
    hits = r["search"].structured_content["results"]  # type: ignore[index]
    assert hits and {h["repo"] for h in hits} == {"a"}
    assert "vault/locks.py" not in _text(r["search"])
    assert "shop/orders.py:91-102" in _text(r["callers"])
    for tool in ("search", "search_str", "status", "read", "ask", "tests"):
        hidden, unknown = r[f"{tool}:b"], r[f"{tool}:zz-unknown"]
        assert hidden.is_error and unknown.is_error, tool
        assert _text(hidden) == "no such repository: b", tool
        assert _text(unknown) == "no such repository: zz-unknown", tool
        assert hidden.structured_content == unknown.structured_content


def test_http_admin_searches_across_repos_with_repo_labels(http_url: str) -> None:
    async def main() -> dict[str, CallToolResult]:
        async with _http_client(http_url, "root") as client:
            return {
                "repos": await client.call_tool("list_repos", {}),
                "search": await client.call_tool(
                    "search_code", {"query": "open the bank vault with the combination code"}
                ),
                "read": await client.call_tool(
                    "read_code", {"repo": "b", "path": "vault/locks.py", "end_line": 2}
                ),
                "no_repo": await client.call_tool("read_code", {"path": "vault/locks.py"}),
            }

    r = anyio.run(main)
    names = [repo["name"] for repo in r["repos"].structured_content["repos"]]  # type: ignore[index]
    assert names == ["a", "b"]
    best = r["search"].structured_content["results"][0]  # type: ignore[index]
    assert (best["repo"], best["citation"]) == ("b", "vault/locks.py:1-3")
    assert "1. vault/locks.py:1-3 [b] function open_vault" in _text(r["search"])
    assert _text(r["read"]).startswith("vault/locks.py:1-2 [b] (3 lines in the file)")
    assert r["no_repo"].is_error
    assert "several repositories are available (a, b); pass repo=NAME" in _text(r["no_repo"])


def test_http_principals_stay_apart_under_concurrent_requests(http_url: str) -> None:
    """Each request's tools run as that request's caller, however requests interleave."""
    seen: dict[str, list[list[str]]] = {"alice": [], "root": []}

    async def user(name: str) -> None:
        async with _http_client(http_url, name) as client:
            for _ in range(5):
                result = await client.call_tool("list_repos", {})
                repos = result.structured_content["repos"]  # type: ignore[index]
                seen[name].append([repo["name"] for repo in repos])

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for name in ("alice", "root", "alice", "root"):
                tg.start_soon(user, name)

    anyio.run(main)
    assert seen["alice"] == [["a"]] * 10
    assert seen["root"] == [["a", "b"]] * 10


def test_http_mounted_behind_a_middleware_with_a_lifespan_that_runs_twice(
    shop: Path, vault: Path
) -> None:
    """The server's way: build_mcp, then mcp_http_app(server) mounted at /mcp, a token
    middleware setting CURRENT_PRINCIPAL, mcp_lifespan(server) in the app's lifespan —
    run twice on the same app (a second test client, a restart)."""
    pool = RepoPool(
        {
            "a": RepoConfig("a", shop, shop / ".codecite"),
            "b": RepoConfig("b", vault, vault / ".codecite"),
        }
    )
    server = build_mcp(pool, principal_from_context)
    mcp_app = mcp_http_app(server)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp_lifespan(server):
            yield

    api = FastAPI(lifespan=lifespan)

    @api.middleware("http")
    async def token_check(request: Request, call_next: Any) -> Any:
        principal = PRINCIPALS.get(request.headers.get("x-test-user", ""))
        if principal is None:
            return JSONResponse({"error": {"code": 401, "message": "no token"}}, 401)
        token = CURRENT_PRINCIPAL.set(principal)
        try:
            return await call_next(request)
        finally:
            CURRENT_PRINCIPAL.reset(token)

    api.mount("/mcp", mcp_app)

    async def views(url: str) -> list[list[str]]:
        seen = []
        for user in ("alice", "root"):
            async with _http_client(url, user) as client:
                result = await client.call_tool("list_repos", {})
                seen.append([r["name"] for r in result.structured_content["repos"]])  # type: ignore[index]
        return seen

    for _ in range(2):
        with _serving(api) as base:
            assert anyio.run(views, f"{base}/mcp") == [["a"], ["a", "b"]]
    assert not mcp_app.running
    pool.close()


def test_http_without_the_lifespan_answers_503(shop: Path) -> None:
    pool = RepoPool({"a": RepoConfig("a", shop, shop / ".codecite")})
    app = mcp_http_app(pool)

    async def main() -> int:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://t") as http:
            response = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "x"})
            assert "mcp_lifespan" in response.json()["error"]["message"]
            return response.status_code

    assert anyio.run(main) == 503


# --- in process --------------------------------------------------------------------------


def test_a_request_without_a_principal_is_refused(shop: Path) -> None:
    with pytest.raises(NoPrincipalError, match="not authenticated"):
        principal_from_context()
    pool = RepoPool({"a": RepoConfig("a", shop, shop / ".codecite")})
    server = build_mcp(pool, principal_from_context)

    async def main() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool("list_repos", {})

    result = anyio.run(main)
    pool.close()
    assert result.is_error
    assert _text(result).startswith("not authenticated")


def test_ask_codebase_uses_the_configured_llm(shop: Path) -> None:
    from llm_server import Reply, running_chat_server

    with running_chat_server() as chat:
        text = "checkout applies the tier discount first (shop/orders.py:91-102)."
        chat.default = Reply(text=text)
        pool = RepoPool(
            {"shop": RepoConfig("shop", shop, shop / ".codecite")},
            overrides={"llm": f"openai:test-model@{chat.base_url}"},
        )
        out = CodeTools(pool).ask_codebase(LOCAL_USER, "Where is the loyalty discount applied?")
        pool.close()
    assert "test-model" in out.data["llm"]
    assert out.data["answer"] == text
    assert out.data["citations"][0]["citation"] == "shop/orders.py:91-102"
    assert out.data["citations"][0]["verified"] is True
    assert "- shop/orders.py:91-102 (verified)" in out.text
    assert chat.requests, "the configured model was asked"


def test_read_code_limits_and_path_checks(shop: Path) -> None:
    pool = RepoPool({"shop": RepoConfig("shop", shop, shop / ".codecite")})
    tools = CodeTools(pool, Limits(max_code_lines=5))
    cut = tools.read_code(LOCAL_USER, "shop/pricing.py", start_line=10)
    assert cut.data["citation"] == "shop/pricing.py:10-14" and cut.data["truncated"]
    assert "read on with start_line=15" in cut.text
    for bad_start, bad_end in ((0, None), (9999, None), (20, 10)):
        with pytest.raises(UserError):
            tools.read_code(LOCAL_USER, "shop/pricing.py", bad_start, bad_end)
    with pytest.raises(UserError, match="refused"):
        tools.read_code(LOCAL_USER, "shop")  # a folder is not a file
    pool.close()
    assert safe_relative_path("./shop//pricing.py") == "shop/pricing.py"
    for bad in ("", "/etc/passwd", "../x", "shop/../../x", "C:/x", "a\\b", "a\0b"):
        assert safe_relative_path(bad) is None, bad
