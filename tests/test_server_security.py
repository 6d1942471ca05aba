"""Security round 3 (issue 21): each attack of the hostile test, sent as a client sends
it, against a real ``codecite serve`` (uvicorn in its own process on a loopback port),
real tokens in a real state database, the MCP SDK's own client, a local stand-in for
Slack's ``response_url`` and a scripted OpenAI-compatible server.

The repository ``secrets`` is the scrubber's fixture (tests/fixtures/secrets: fake
secrets of every kind the scrubber knows, an AWS credentials file among them);
``vault`` is another repository the restricted tokens may not read.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import html
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, urlencode

import httpx
import psutil
import pytest
from llm_server import ChatServer, Reply, running_chat_server
from repos import free_port, make_git_repo, run_cli, start_server
from test_scrub import BARE_SECRET_VALUES, SECRETS
from test_scrub_pasted import ORDINARY, PASTED
from test_slack import Hook

import codecite
from codecite.server.state import StateStore

FIXTURES = Path(__file__).parent / "fixtures"
SECRET_VALUES = sorted({value for values in SECRETS.values() for value in values})
SLACK_SECRET = "c0ffee" * 6
VAULT = {
    "vault/launch.py": (
        '"""Zebra launch codes."""\n\n\n'
        "def zebra_launch_code(station: str) -> str:\n"
        '    """The zebra launch code of a station."""\n'
        '    return "zebra-" + station.upper()\n'
    ),
}


@dataclass
class Served:
    url: str
    port: int
    root: Path
    config: Path
    state: Path
    tokens: dict[str, str]
    process: subprocess.Popen[bytes]
    hook: Hook
    chat: ChatServer

    def client(self, who: str | None = None, source: str = "127.0.0.1") -> httpx.Client:
        """An HTTP client (``source``: the loopback address it connects from)."""
        headers = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        transport = httpx.HTTPTransport(local_address=source)
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, transport=transport)

    def audit(self) -> list[Any]:
        with StateStore(self.state) as store:
            return store.audit_rows(limit=100_000)


def _slack_command(
    served: Served, text: str, user: str = "U_ALICE"
) -> tuple[bytes, dict[str, str]]:
    """A slash command signed as Slack signs it: (body, headers)."""
    body = urlencode(
        {
            "user_id": user,
            "command": "/codecite",
            "text": text,
            "response_url": served.hook.url,
            "trigger_id": str(time.time()),
        }
    ).encode()
    ts = str(int(time.time()))
    digest = hmac.new(SLACK_SECRET.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256)
    return body, {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": "v0=" + digest.hexdigest(),
    }


def _write_config(root: Path, port: int, hook: Hook, chat: ChatServer) -> Path:
    config = root / "codecite-server.toml"
    config.write_text(
        'listen = "127.0.0.1:0"\nauth = "token"\nstate = "state.db"\nshutdown_seconds = 3\n'
        'trusted_proxies = ["127.0.0.77"]\n'
        f'[codecite]\nllm = "openai:test-model"\nllm_base_url = "{chat.base_url}"\n'
        "llm_max_retries = 0\n"
        "[limits]\nfailed_auth_per_minute = 10\n"
        f'[slack]\nsigning_secret = "{SLACK_SECRET}"\n'
        f'base_url = "http://127.0.0.1:{port}"\n'
        f'response_url_prefix = "http://127.0.0.1:{hook.server_address[1]}/"\n'
        '[slack.users]\nU_ALICE = "alice"\n'
        f'[repos.secrets]\npath = "{root / "secrets"}"\n'
        f'[repos.vault]\npath = "{root / "vault"}"\n'
    )
    return config


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("security")
    source = FIXTURES / "secrets"
    make_git_repo(root / "secrets", {p.name: p.read_text() for p in source.iterdir()})
    make_git_repo(root / "vault", VAULT)
    for name in ("secrets", "vault"):
        with codecite.open_index(root / name) as index:
            index.update(embed=False)
    hook = Hook()
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    with running_chat_server() as chat:
        chat.default = Reply(text="The settings live in config.yaml:1-5.")
        port = free_port()
        config = _write_config(root, port, hook, chat)
        with StateStore(root / "state.db") as store:
            tokens = {
                "alice": store.create_token("alice", ["secrets"]),
                "admin": store.create_token("root", ["*"], admin=True),
                "secrets_admin": store.create_token("sam", ["secrets"], admin=True),
                "vault_admin": store.create_token("val", ["vault"], admin=True),
            }
        # serve's default log level: the access log is written (issue 39)
        process = start_server(config, port, root / "server.log", log_level="info")
        try:
            yield Served(
                f"http://127.0.0.1:{port}", port, root, config, root / "state.db", tokens,
                process, hook, chat,
            )  # fmt: skip
        finally:
            process.terminate()
            process.wait(30)
            hook.shutdown()
            hook.server_close()


def _mcp(served: Served, who: str, tool: str, args: dict[str, Any]) -> tuple[bool, str, Any]:
    """One MCP tool call through the SDK's client: (is_error, text, structured)."""
    import asyncio

    import httpx2  # the MCP SDK's HTTP client
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> tuple[bool, str, Any]:
        headers = {"Authorization": f"Bearer {served.tokens[who]}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            Client(streamable_http_client(f"{served.url}/mcp", http_client=http)) as client,
        ):
            result = await client.call_tool(tool, args)
            text = "\n".join(getattr(part, "text", "") for part in result.content)
            return bool(result.is_error), text, result.structured_content

    return asyncio.run(main())


def _visible(page: str) -> str:
    """What a browser shows of an HTML page: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _leaked(text: str) -> list[str]:
    return [value for value in SECRET_VALUES if value in text]


# --- 1. one reader of file text, scrubbed as the index was ---------------------------------
def test_no_surface_shows_a_secret_of_the_fixture(served: Served) -> None:
    files = sorted(SECRETS)
    shown: dict[str, str] = {}
    with served.client("alice") as http:
        for name in files:
            rest = http.get("/api/v1/repos/secrets/code", params={"path": name})
            assert rest.status_code == 200, rest.text
            data = rest.json()
            assert data["lines"] and data["total_lines"] == len(data["lines"])
            shown[f"api {name}"] = "\n".join(data["lines"])
            assert "«redacted:" in shown[f"api {name}"], name
            page = http.get("/web/code", params={"repo": "secrets", "path": name, "whole": 1})
            assert page.status_code == 200, page.text
            shown[f"page {name}"] = _visible(page.text)
        found = http.post(
            "/api/v1/search", json={"query": "password secret key token aws stripe", "k": 50}
        )
        shown["search"] = found.text
        asked = http.post(
            "/api/v1/ask",
            json={"question": "What is the database password?", "llm": "extractive"},
        )
        shown["ask"] = asked.text
    for name in files:
        error, text, data = _mcp(served, "alice", "read_code", {"path": name})
        assert not error, text
        shown[f"mcp {name}"] = text + json.dumps(data)
    prompts = len(served.chat.requests)
    posted = len(served.hook.posts)
    body, headers = _slack_command(served, "secrets: what is the stripe key in .env?")
    reply = httpx.post(f"{served.url}/slack/commands", content=body, headers=headers)
    assert reply.status_code == 200, reply.text
    shown["slack"] = json.dumps(served.hook.wait(posted + 1)[-1])
    shown["prompts"] = json.dumps(served.chat.requests[prompts:])
    assert served.chat.requests[prompts:], "the model was asked (its prompt is a surface too)"
    leaks = {where: _leaked(text) for where, text in shown.items() if _leaked(text)}
    assert leaks == {}


def test_code_ranges_are_validated_not_answered_backwards(served: Served) -> None:
    with served.client("alice") as http:
        far = http.get(
            "/api/v1/repos/secrets/code", params={"path": "config.yaml", "start": 10**12}
        )
        backwards = http.get(
            "/api/v1/repos/secrets/code", params={"path": "config.yaml", "start": 5, "end": 2}
        )
        clamped = http.get(
            "/api/v1/repos/secrets/code", params={"path": "config.yaml", "start": 2, "end": 10**9}
        )
        outside = http.get(
            "/api/v1/repos/secrets/code", params={"path": "../vault/vault/launch.py"}
        )
    assert far.status_code == 422 and "past the end" in far.json()["error"]["message"]
    assert backwards.status_code == 422 and "before" in backwards.json()["error"]["message"]
    data = clamped.json()
    assert clamped.status_code == 200 and data["end_line"] == data["total_lines"] >= 2
    assert outside.status_code == 404 and "zebra" not in outside.text


# --- 2. a chunked body is counted as it arrives ----------------------------------------------
def _send_chunked(port: int, path: str, total: int) -> tuple[int, int]:
    """POST ``total`` bytes to ``path`` as a chunked body (no Content-Length), as
    ``curl -T - -H 'Transfer-Encoding: chunked'`` does; (status, bytes sent)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nTransfer-Encoding: chunked\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n\r\n"
    )
    sock.sendall(head.encode())
    piece = 1 << 16
    chunk = b"%x\r\n" % piece + b"0" * piece + b"\r\n"
    sent = 0
    done = threading.Event()

    def pump() -> None:
        nonlocal sent
        try:
            while sent < total and not done.is_set():
                sock.sendall(chunk)
                sent += piece
            if not done.is_set():
                sock.sendall(b"0\r\n\r\n")
        except OSError:  # the server closed the connection: what it should do
            pass

    sender = threading.Thread(target=pump, daemon=True)
    sender.start()
    reply = b""
    while b"\r\n" not in reply:
        data = sock.recv(4096)
        if not data:
            break
        reply += data
    done.set()
    sock.close()
    sender.join(30)
    return int(reply.split(b" ", 2)[1]), sent


def test_a_chunked_body_is_cut_at_the_limit_before_authentication(served: Served) -> None:
    server = psutil.Process(served.process.pid)
    before = server.memory_info().rss
    started = time.perf_counter()
    for path in ("/api/v1/repos/secrets/refresh", "/slack/commands", "/api/v1/search"):
        status, sent = _send_chunked(served.port, path, total=200_000_000)
        assert status == 413, path
        assert sent < 100_000_000, f"the server kept reading {path}"
    grown = server.memory_info().rss - before
    assert grown < 40 * 2**20, f"the server grew by {grown / 2**20:.0f} MB"
    assert time.perf_counter() - started < 60
    rows = [r for r in served.audit() if r.status == 413 and r.user == "-"]
    assert {r.endpoint for r in rows} >= {"/api/v1/repos/secrets/refresh", "/api/v1/search"}


def test_mcp_refuses_a_large_body_as_json(served: Served) -> None:
    def chunked() -> Iterator[bytes]:  # no Content-Length: the body is counted as it comes
        yield b'{"jsonrpc": "2.0", "padding": "'
        for _ in range(20):
            yield b"x" * 10_000
        yield b'"}'

    with served.client("alice") as http:
        sized = http.post(
            "/mcp",
            content=b'{"jsonrpc": "2.0", "padding": "' + b"x" * 70_000 + b'"}',
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        streamed = http.post(
            "/mcp",
            content=chunked(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
    for big in (sized, streamed):
        assert big.status_code == 413
        assert big.json()["error"]["code"] == "too_large"


# --- 3. the same question limits on every surface, and bounded work --------------------------
def test_every_surface_applies_the_question_limit(served: Served) -> None:
    report = "checkout fails: " + "KeyError at app.py line 1 " * 2400  # within the body limit
    assert len(report) > 60_000
    started = time.perf_counter()
    error, text, _ = _mcp(served, "alice", "search_code", {"query": report, "files": True})
    assert error and "at most 4,000" in text, text
    assert len(text) < 1_000  # the refusal does not echo the report
    error, text, _ = _mcp(served, "alice", "ask_codebase", {"question": report})
    assert error and "at most 4,000" in text
    with served.client("alice") as http:
        rest = http.post("/api/v1/search", json={"query": report})
    assert rest.status_code == 413 and "at most 4,000" in rest.json()["error"]["message"]
    assert time.perf_counter() - started < 30
    rows = [r for r in served.audit() if r.endpoint == "/mcp/tools/search_code" and r.status == 413]
    assert rows and rows[0].user == "alice"


def test_a_long_question_is_stored_as_its_start_length_and_hash(served: Served) -> None:
    """Issue 39: refused 64,000-character questions were stored whole in the append-only
    audit log; a question over 500 characters is stored as its scrubbed start, its
    length and the sha256 of its scrubbed text, refused (413) or answered."""
    token = "ghp_" + "Ab1" * 12  # across the cut at 500: redacted whole, not cut in two
    report = ("checkout fails: KeyError at app.py line 1 " * 1600)[:479] + f" {token} "
    report = (report + "KeyError at app.py line 1 " * 2600)[:64_000]
    answered = ("why does the discount fail " * 40)[:1_000]
    before = len(served.audit())
    with served.client("alice") as http:
        for n in range(20):
            refused = http.post("/api/v1/search", json={"query": report[:-2] + f"{n:02d}"})
            assert refused.status_code == 413, refused.text
        assert http.post("/api/v1/search", json={"query": answered}).status_code == 200
    error, text, _ = _mcp(served, "alice", "search_code", {"query": report})
    assert error and "at most 4,000" in text
    rows = served.audit()[: len(served.audit()) - before]
    stored = [r.question for r in rows]
    assert len(rows) == 22 and sum(map(len, stored)) < 22 * 700
    scrubbed = report.replace(token, "«redacted:github-token»")
    digest = hashlib.sha256(scrubbed.encode()).hexdigest()
    mcp = next(r for r in rows if r.endpoint == "/mcp/tools/search_code")
    assert mcp.question == f"{scrubbed[:500]}… [64,000 characters, sha256 {digest}]"
    assert all(token[:12] not in q for q in stored)
    assert len({q for q in stored if "64,000 characters" in q}) == 21  # a hash each
    short = next(r for r in rows if r.status == 200)
    assert short.question.startswith(answered[:500])
    assert "1,000 characters, sha256 " in short.question


# --- 4. DNS rebinding: only the configured host names -----------------------------------------
def test_a_rebound_host_name_is_refused(served: Served) -> None:
    with served.client("alice") as http:
        for method, path in (("GET", "/api/v1/repos"), ("GET", "/"), ("POST", "/mcp")):
            refused = http.request(method, path, headers={"Host": "evil.example"})
            assert refused.status_code == 421, (path, refused.text)
            assert refused.json()["error"]["code"] == "host_not_allowed"
            assert "secrets" not in refused.text
        assert http.get("/api/v1/repos", headers={"Host": f"localhost:{served.port}"}).is_success
        assert http.get("/healthz", headers={"Host": "10.1.2.3"}).is_success  # load balancers


def test_host_names_are_compared_case_insensitively_everywhere(served: Served) -> None:
    """Issue 39: ``Host: LOCALHOST:port`` got 200 from the API but 421 from MCP (the
    SDK compared it as written); one helper now puts it in canonical form for both."""
    mcp_call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    answers = {}
    with served.client("alice") as http:
        for host in (f"LOCALHOST:{served.port}", f"LocalHost.:{served.port}", "127.0.0.1"):
            origin = {"Host": host, "Origin": f"HTTP://{host}"}
            api = http.get("/api/v1/repos", headers=origin)
            mcp = http.post("/mcp", json=mcp_call, headers={**origin, **accept})
            answers[host] = (api.status_code, mcp.status_code)
            assert "search_code" in mcp.text, mcp.text
        evil = {"Host": "Evil.Example", "Origin": "http://Evil.Example"}
        answers["evil"] = (
            http.get("/api/v1/repos", headers=evil).status_code,
            http.post("/mcp", json=mcp_call, headers={**evil, **accept}).status_code,
        )
    with served.client() as http:  # the web page's same-origin check: the same names
        page = {"Host": f"LOCALHOST:{served.port}", "Origin": f"http://localhost:{served.port}"}
        csrf = _csrf(http.get("/", headers=page).text)
        data = {"token": served.tokens["alice"], "csrf": csrf}
        signin = http.post("/web/signin", data=data, headers=page)
    assert answers == {
        f"LOCALHOST:{served.port}": (200, 200),
        f"LocalHost.:{served.port}": (200, 200),
        "127.0.0.1": (200, 200),
        "evil": (421, 421),
    }
    assert signin.status_code == 303, signin.text


def test_a_local_server_without_tokens_answers_only_its_own_names(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "shop", {"shop/tax.py": "def vat(x):\n    return x * 0.2\n"})
    with codecite.open_index(repo) as index:
        index.update(embed=False)
    config = tmp_path / "local.toml"
    config.write_text(
        f'listen = "127.0.0.1:0"\nauth = "none"\nstate = "state.db"\n'
        f'[codecite]\nllm = "extractive"\n[repos.shop]\npath = "{repo}"\n'
    )
    port = free_port()
    process = start_server(config, port, tmp_path / "server.log")
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            rebound = http.post(
                "/api/v1/search",
                json={"query": "vat"},
                headers={"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"},
            )
            mcp = http.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Host": "evil.example", "Accept": "application/json, text/event-stream"},
            )
            own = http.post("/api/v1/search", json={"query": "vat"})
    finally:
        process.terminate()
        process.wait(30)
    assert rebound.status_code == 421 and "vat" not in rebound.text
    assert mcp.status_code == 421
    assert own.status_code == 200 and own.json()["results"]


def test_the_mcp_sdk_keeps_its_own_rebinding_check() -> None:
    from codecite.server.mcp.http_app import transport_security

    settings = transport_security(("localhost", "127.0.0.1", "::1", "codecite.example.com"))
    assert settings.enable_dns_rebinding_protection
    assert "codecite.example.com:*" in settings.allowed_hosts
    assert "[::1]:*" in settings.allowed_hosts
    assert "evil.example" not in settings.allowed_hosts


# --- 5. MCP tool calls in the audit log -----------------------------------------------------
def test_each_mcp_tool_call_leaves_an_audit_row_like_rest(served: Served) -> None:
    before = len(served.audit())
    error, _, _ = _mcp(served, "alice", "search_code", {"query": "database password", "k": 3})
    assert not error
    error, text, _ = _mcp(
        served, "alice", "read_code", {"path": "vault/launch.py", "repo": "vault"}
    )
    assert error and "no such repository" in text
    error, _, _ = _mcp(served, "alice", "read_code", {"path": "config.yaml", "start_line": 1})
    assert not error
    rows = served.audit()[: len(served.audit()) - before]
    by_tool = {}
    for row in rows:
        by_tool.setdefault(row.endpoint, []).append(row)
    search = by_tool["/mcp/tools/search_code"][0]
    assert search.user == "alice" and search.client == "127.0.0.1" and search.status == 200
    assert search.question == "database password" and search.repos == ["secrets"]
    assert search.results and all(r.startswith("secrets:") for r in search.results)
    reads = sorted(by_tool["/mcp/tools/read_code"], key=lambda r: r.status)
    assert reads[0].status == 200 and reads[0].results[0].startswith("secrets:config.yaml:1-")
    assert reads[1].status == 403 and reads[1].repos == ["vault"]
    assert reads[1].detail.startswith("refused:") and not reads[1].results
    assert not any(r.endpoint == "/mcp" for r in rows)  # no row per HTTP message besides


# --- 6. questions stored scrubbed, bare values included ----------------------------------------
#: Questions with a pasted secret (tests/fixtures/pasted.json, and the scrubber's fixture
#: values pasted bare) and the secrets that must not be stored.
PASTED_QUESTIONS = [f"why does this fail: {v}" for v in BARE_SECRET_VALUES] + [
    question for _, question, _ in PASTED["secrets"]
]
PASTED_VALUES = sorted(set(BARE_SECRET_VALUES) | {value for _, _, value in PASTED["secrets"]})


def test_pasted_secret_values_are_not_stored_in_the_audit_log(served: Served) -> None:
    with served.client("alice") as http:
        for question in PASTED_QUESTIONS + [q for _, q, _ in ORDINARY]:
            response = http.post("/api/v1/search", json={"query": question, "k": 1})
            assert response.status_code == 200, response.text
    with StateStore(served.state) as store:  # what state.db holds
        stored = "\n".join(r.question for r in store.audit_rows(limit=100_000))
    assert "why does this fail:" in stored
    assert [v for v in PASTED_VALUES if v in stored] == []
    assert [v for _, _, v in ORDINARY if v not in stored] == []  # commit ids, UUIDs... kept


def test_pasted_secret_values_are_not_stored_in_the_query_log(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", {"app.py": "def connect(password):\n    pass\n"})
    assert run_cli("index", str(repo), "--no-embed").returncode == 0
    password = "Wint3r!sC0ming#BboSqX"  # issue 39, as a user types it
    typed = run_cli("search", f"why does {password} fail", str(repo))
    assert typed.returncode == 0, typed.stderr
    key = (FIXTURES / "secrets" / "server.pem").read_text()
    questions = [*PASTED_QUESTIONS, f"my key:\n{key}"]
    batch = tmp_path / "questions.jsonl"
    batch.write_text(
        "".join(json.dumps({"id": i, "query": q}) + "\n" for i, q in enumerate(questions))
    )
    proc = run_cli("search", "--batch", str(batch), "--index", str(repo / ".codecite"))
    assert proc.returncode == 0, proc.stderr
    logged = (repo / ".codecite" / "queries.jsonl").read_text()
    assert "why does this fail" in logged and "BEGIN" in logged and "why does " in logged
    assert [v for v in PASTED_VALUES if v in logged] == [] and password not in logged


def test_no_question_reaches_the_server_log(served: Served) -> None:
    """Issue 39: uvicorn's access log wrote ``GET /web/search?q=...`` with the question,
    pasted secrets and all; the server's log has the route template, status and time."""
    questions = [q for q in PASTED_QUESTIONS if "\n" not in q]
    with served.client("alice") as http:
        for question in questions:
            assert http.get("/web/search", params={"q": question, "repos": "secrets"}).is_success
            assert http.get("/", params={"q": question}).is_success
        for value in BARE_SECRET_VALUES[:10]:
            http.get("/api/v1/repos/secrets/code", params={"path": value})
            http.get(f"/api/v1/repos/secrets/symbols/{value}/callers")
            http.get(f"/no/such/page/{value}")
    secrets = [v for v in PASTED_VALUES if any(v in q for q in questions)]
    log = (served.root / "server.log").read_text()
    shown = [v for v in secrets if v in log or quote_plus(v) in log or quote(v) in log]
    assert shown == []
    assert '"GET /web/search" 200' in log and '"GET /" 200' in log
    assert '"GET /api/v1/repos/{repo}/symbols/{qualname}/{relation}"' in log
    assert '"GET /no/such/page/«redacted:' in log  # a made-up path, scrubbed
    assert "?q=" not in log and "?path=" not in log


# --- 7. metrics: route templates only, for admins ------------------------------------------------
def test_metrics_are_bounded_and_need_an_admin_token(served: Served) -> None:
    with served.client("admin") as http:
        for i in range(300):
            http.get(f"/made-up/path-{i}/what-people-asked-for")
        big = http.get("/metrics").text
    with served.client() as http:
        anonymous = http.get("/metrics")
    with served.client("alice") as http:
        user = http.get("/metrics")
    assert anonymous.status_code == 401 and user.status_code == 403
    assert "made-up" not in big and "what-people-asked-for" not in big
    assert 'endpoint="unmatched"' in big
    assert len(big) < 200_000


# --- 8. sessions, replays and cross-site links -----------------------------------------------
def _csrf(page: str) -> str:
    found = re.search(r'name="csrf-token" content="([0-9a-zA-Z_-]+)"', page)
    assert found
    return found.group(1)


def test_the_session_cookie_is_a_server_side_id_revoked_at_sign_out(served: Served) -> None:
    token = served.tokens["alice"]
    with served.client() as http:
        csrf = _csrf(http.get("/").text)
        signed = http.post("/web/signin", data={"token": token, "csrf": csrf})
        assert signed.status_code == 303
        session = http.cookies["codecite_session"]
        assert token not in session and session != token
        assert "Signed in as" in http.get("/").text
        csrf = _csrf(http.get("/").text)
        assert http.post("/web/signout", data={"csrf": csrf}).status_code == 303
    with httpx.Client(base_url=served.url, cookies={"codecite_session": session}) as stolen:
        after = stolen.get("/")
    assert "Signed in as" not in after.text and "Access token" in after.text
    with served.client() as http:  # the cookie is no bearer token either
        bearer = http.get("/api/v1/repos", headers={"Authorization": f"Bearer {session}"})
    assert bearer.status_code == 401


def test_a_slack_request_replayed_to_a_second_server_process_is_refused(served: Served) -> None:
    body, headers = _slack_command(served, "help")
    first = httpx.post(f"{served.url}/slack/commands", content=body, headers=headers)
    assert first.status_code == 200
    again = httpx.post(f"{served.url}/slack/commands", content=body, headers=headers)
    assert again.status_code == 401 and "replayed" in again.json()["error"]["message"]
    port = free_port()
    second = start_server(served.config, port, served.root / "second.log")
    try:
        other = httpx.post(f"http://127.0.0.1:{port}/slack/commands", content=body, headers=headers)
    finally:
        second.terminate()
        second.wait(30)
    assert other.status_code == 401 and "replayed" in other.json()["error"]["message"]


def test_a_cross_site_link_never_asks_by_itself(served: Served) -> None:
    with served.client("alice") as http:
        here = http.get("/?q=database+password", headers={"Sec-Fetch-Site": "same-origin"})
        there = http.get("/?q=database+password", headers={"Sec-Fetch-Site": "cross-site"})
        sibling = http.get("/?q=database+password", headers={"Sec-Fetch-Site": "same-site"})
        old_browser = http.get(
            "/?q=database+password", headers={"Referer": "https://evil.example/"}
        )
    assert 'data-autoask="1"' in here.text
    for page in (there, sibling, old_browser):
        assert 'data-autoask="0"' in page.text and "database password" in page.text
        assert "press Ask" in page.text
    with served.client() as http:  # signed out: the bounce turns ?q= into ?draft=
        bounce = http.get(
            "/?q=database+password&repos=secrets", headers={"Sec-Fetch-Site": "cross-site"}
        )
    assert 'http-equiv="refresh"' in bounce.text and "draft=database+password" in bounce.text
    assert "?q=" not in bounce.text


# --- 9. smaller ones ---------------------------------------------------------------------------
def test_an_empty_repository_list_is_a_client_error(served: Served) -> None:
    with served.client("alice") as http:
        ask = http.post("/api/v1/ask", json={"question": "where is the key?", "repos": []})
        search = http.post("/api/v1/search", json={"query": "key", "repos": []})
    for response in (ask, search):
        assert response.status_code == 422, response.text
        assert "repository" in response.json()["error"]["message"]


def test_a_scoped_admin_cannot_read_another_repositorys_job(served: Served) -> None:
    with served.client("secrets_admin") as http:
        started = http.post("/api/v1/repos/secrets/reindex")
        assert started.status_code == 202
        url = started.json()["status_url"]
        assert http.get(url).status_code == 200
    with served.client("vault_admin") as http:
        other = http.get(url)
        unknown = http.get("/api/v1/jobs/000000000000")
    assert other.status_code == 404 and "secrets" not in other.text
    assert other.json()["error"]["message"].replace(url.rsplit("/", 1)[1], "X") == (
        unknown.json()["error"]["message"].replace("000000000000", "X")
    )


def test_codecite_audit_escapes_control_characters(served: Served) -> None:
    question = "where is \x1b[2J\x1b]0;owned\x07 the \x1b[31mkey\x1b[0m?"
    with served.client("alice") as http:
        assert http.post("/api/v1/search", json={"query": question}).status_code == 200
    proc = run_cli("audit", "--config", str(served.config), "--limit", "20")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "\\x1b[31mkey" in proc.stdout.replace("\n", "")


def test_a_failing_model_is_a_502_that_hides_its_address(served: Served) -> None:
    served.chat.script = [Reply(status=500, error="model crashed")]
    with served.client("alice") as http:
        response = http.post("/api/v1/ask", json={"question": "What is the database password?"})
    assert response.status_code == 502, response.text
    message = response.json()["error"]["message"]
    assert "model crashed" in message
    assert served.chat.url.split("//")[1] not in message and "http://" not in message


def test_readme_curl_example_works_without_a_json_content_type(served: Served) -> None:
    token = served.tokens["alice"]
    proc = subprocess.run(
        ["curl", "-s", "-H", f"Authorization: Bearer {token}", "-d",
         '{"query": "database password", "k": 3}', f"{served.url}/api/v1/search"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert json.loads(proc.stdout)["results"], proc.stdout
    with served.client("alice") as http:
        form = http.post("/api/v1/search", data={"query": "x"})
    assert form.status_code == 422 and "Content-Type: application/json" in form.text


def test_failed_authentication_is_throttled_per_client_address(served: Served) -> None:
    """Past the limit, further bad tokens from an address get 429 (no audit row each);
    a valid token from the same address still passes (issue 39: behind a NAT or a
    proxy, one client's bad tokens locked everyone out for a minute)."""
    source = "127.0.0.23"
    before = len(served.audit())
    with httpx.Client(
        base_url=served.url, transport=httpx.HTTPTransport(local_address=source), timeout=60
    ) as http:
        bad = {"Authorization": "Bearer cc_0123456789ab_" + "x" * 43}
        statuses = [http.get("/api/v1/repos", headers=bad).status_code for _ in range(40)]
        admin = {"Authorization": f"Bearer {served.tokens['admin']}"}
        passed = [http.get("/api/v1/repos", headers=admin), http.get("/metrics", headers=admin)]
        still = http.get("/api/v1/repos", headers=bad)
        csrf = _csrf(http.get("/").text)
        signin = {"token": served.tokens["alice"], "csrf": csrf}
        web_bad = http.post("/web/signin", data={**signin, "token": bad["Authorization"][7:]})
        web = http.post("/web/signin", data=signin)
        body, headers = _slack_command(served, "help")
        slack = http.post("/slack/commands", content=body, headers=headers)
    assert statuses[:10] == [401] * 10 and set(statuses[10:]) == {429}
    assert [r.status_code for r in passed] == [200, 200], passed[0].text
    assert passed[0].json()["repos"]
    assert still.status_code == 429 and int(still.headers["retry-after"]) > 0
    assert web.status_code == 303 and web_bad.status_code == 429
    assert slack.status_code == 200
    rows = [r for r in served.audit()[: len(served.audit()) - before] if r.client == source]
    api = [r for r in rows if r.endpoint == "/api/v1/repos"]
    assert [r.status for r in api] == [200] + [401] * 10  # newest first
    assert api[0].user == "root" and "further failed attempts" in api[1].detail
    with served.client("alice") as http:  # another address is not affected
        assert http.get("/api/v1/repos").status_code == 200


def test_behind_a_trusted_proxy_the_forwarded_client_is_throttled_not_the_proxy(
    served: Served,
) -> None:
    bad = {"Authorization": "Bearer cc_0123456789ab_" + "y" * 43}
    with served.client(source="127.0.0.77") as proxy:
        for _ in range(10):
            assert (
                proxy.get(
                    "/api/v1/repos", headers={**bad, "X-Forwarded-For": "10.9.8.7"}
                ).status_code
                == 401
            )
        blocked = proxy.get("/api/v1/repos", headers={**bad, "X-Forwarded-For": "10.9.8.7"})
        other = proxy.get(
            "/api/v1/repos",
            headers={"Authorization": f"Bearer {served.tokens['alice']}",
                     "X-Forwarded-For": "203.0.113.5, 10.9.8.8"},
        )  # fmt: skip
    with served.client("alice") as direct:  # not a trusted proxy: its header is ignored
        spoofed = direct.get("/api/v1/repos", headers={"X-Forwarded-For": "10.9.8.7"})
    assert blocked.status_code == 429 and other.status_code == 200
    assert spoofed.status_code == 200
    rows = served.audit()[:3]  # newest first; the 429 wrote none
    assert [r.client for r in rows] == ["127.0.0.1", "10.9.8.8", "10.9.8.7"]
    assert [r.status for r in rows] == [200, 200, 401]


# --- 10. nothing cut silently ---------------------------------------------------------------------
def test_mcp_read_code_cuts_a_long_file_and_says_so(served: Served) -> None:
    big = served.root / "secrets" / "generated_table.py"
    big.write_text("".join(f"ROW_{i} = {'x' * 60!r}\n" for i in range(1500)))
    with codecite.open_index(served.root / "secrets") as index:
        index.update(embed=False)
    error, text, data = _mcp(served, "alice", "read_code", {"path": "generated_table.py"})
    assert not error and data["truncated"]
    assert len(data["content"]) <= 50_000 and data["end_line"] < 1500
    assert f"read on with start_line={data['end_line'] + 1}" in text
    assert "50,000 characters" in text


def test_long_reports_are_not_echoed_whole(served: Served) -> None:
    report = "Checkout fails with a KeyError\n" + "  at line 42 of checkout\n" * 120
    assert 2_000 < len(report) < 4_000
    error, text, _ = _mcp(served, "alice", "search_code", {"query": report, "files": True})
    assert not error and report not in text and len(text) < len(report)
    posted = len(served.hook.posts)
    body, headers = _slack_command(served, report)
    ack = httpx.post(f"{served.url}/slack/commands", content=body, headers=headers)
    assert ack.status_code == 200 and len(ack.json()["text"]) < 400
    answer = served.hook.wait(posted + 1)[-1]
    assert report.strip() not in answer["text"]


def test_sigterm_stops_the_server_within_the_bound(served: Served, tmp_path: Path) -> None:
    config = tmp_path / "slow.toml"
    config.write_text(served.config.read_text().replace('"state.db"', f'"{served.state}"'))
    port = free_port()
    process = start_server(config, port, tmp_path / "slow.log")
    served.chat.script = [Reply(text="slow answer", delay=60), Reply(text="slow", delay=60)]
    asked = len(served.chat.requests)

    def ask_slowly() -> None:
        with contextlib.suppress(httpx.HTTPError):  # cut by the shutdown: expected
            httpx.post(
                f"http://127.0.0.1:{port}/api/v1/ask",
                json={"question": "What is the database password?"},
                headers={"Authorization": f"Bearer {served.tokens['alice']}",
                         "Accept": "text/event-stream"},
                timeout=90,
            )  # fmt: skip

    streaming = threading.Thread(target=ask_slowly, daemon=True)
    streaming.start()
    body, headers = _slack_command(served, "secrets: what is the database password?")
    slack = httpx.post(f"http://127.0.0.1:{port}/slack/commands", content=body, headers=headers)
    assert slack.status_code == 200  # acknowledged; its answer is being prepared, slowly
    deadline = time.time() + 60
    while len(served.chat.requests) < asked + 2:  # both answers are being generated
        assert time.time() < deadline, "the model was never asked"
        time.sleep(0.1)
    started = time.perf_counter()
    process.send_signal(signal.SIGTERM)
    process.wait(30)
    took = time.perf_counter() - started
    assert took < 3 + 10, f"SIGTERM took {took:.1f} s"
    with socket.socket() as sock:  # the port is free again (as a restarted server binds it)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen()
    streaming.join(30)
    served.chat.script = []


def test_a_reindex_killed_with_the_server_is_resumed_on_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an empty embedding cache: the full re-index computes its vectors (seconds)
    monkeypatch.setenv("CODECITE_CACHE_DIR", str(tmp_path / "empty-cache"))
    shop = tmp_path / "shop"
    source = FIXTURES / "shop"
    files = {
        p.relative_to(source).as_posix(): p.read_text() for p in source.rglob("*") if p.is_file()
    }
    # enough distinct code that computing its vectors takes seconds on any machine: the kill
    # lands inside the run, not after it
    for n in range(300):
        files[f"shop/generated/part_{n}.py"] = (
            f'def price_rule_{n}(order, rate={n}):\n    """Apply rule {n} to an order."""\n'
            f"    return order.total * rate / {n + 7}\n\n\n"
            f'def stock_check_{n}(item):\n    """Check stock level {n} of an item."""\n'
            f"    return item.count > {n * 3}\n"
        )
    make_git_repo(shop, files)
    with codecite.open_index(shop) as index:
        index.update(embed=False)
    config = tmp_path / "server.toml"
    config.write_text(
        'listen = "127.0.0.1:0"\nauth = "token"\nstate = "state.db"\n'
        f'[codecite]\nllm = "extractive"\n[repos.shop]\npath = "{shop}"\n'
    )
    with StateStore(tmp_path / "state.db") as store:
        admin = store.create_token("root", ["*"], admin=True)
    headers = {"Authorization": f"Bearer {admin}"}
    port = free_port()
    process = start_server(config, port, tmp_path / "first.log")
    url = f"http://127.0.0.1:{port}"
    try:
        job = httpx.post(f"{url}/api/v1/repos/shop/reindex", json={"full": True}, headers=headers)
        assert job.status_code == 202
        job_path = job.json()["status_url"]
        status_url = url + job_path
        deadline = time.time() + 120
        while httpx.get(status_url, headers=headers).json()["job"]["status"] != "running":
            assert time.time() < deadline
            time.sleep(0.05)
        time.sleep(1.0)  # into the run
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(30)
    with codecite.open_index(shop, create=False) as index:
        assert index.status().embedded_fraction < 1.0, "the job finished before the kill"
    port = free_port()
    process = start_server(config, port, tmp_path / "second.log")
    try:
        # issue 39: the status URL the re-index request returned answers after the restart
        resumed = httpx.get(f"http://127.0.0.1:{port}{job_path}", headers=headers)
        assert resumed.status_code == 200, resumed.text
        assert resumed.json()["job"]["resumed"] and resumed.json()["job"]["repo"] == "shop"
        deadline = time.time() + 300
        while True:
            repos = httpx.get(f"http://127.0.0.1:{port}/api/v1/repos", headers=headers).json()
            if repos["repos"][0].get("embedded_fraction") == 1.0:
                break
            assert time.time() < deadline, repos
            time.sleep(0.5)
        while True:  # the job the restarted server ran, under its first id
            done = httpx.get(f"http://127.0.0.1:{port}{job_path}", headers=headers).json()
            if done["job"]["status"] != "running":
                break
            assert time.time() < deadline
            time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(30)
    assert done["job"]["status"] == "done", done
    assert "resum" in (tmp_path / "second.log").read_text().lower()
