"""``codecite serve`` as a team uses it: a real uvicorn server in its own process on a
free loopback port, real tokens made by ``codecite token``, a real HTTP client, and a
scripted OpenAI-compatible server standing in for the LLM (it records every prompt).

Two repositories: ``shop`` (the fixture) and ``vault``, whose code holds a marker that
must never reach a caller who may read only ``shop``: not in a response, an error, a
prompt sent to the LLM, or an audit row's result list.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from llm_server import ChatServer, Reply, running_chat_server
from repos import copy_index, free_port, make_git_repo, run_cli, start_server

import codecite
from codecite.server.config import load_server_config
from codecite.server.state import open_state

FIXTURES = Path(__file__).parent / "fixtures"
MARKER = "zebra"  # appears only in the vault repository's code and names
VAULT = {
    "vault/launch.py": (
        '"""Zebra launch codes: the vault of the zebra programme."""\n\n\n'
        "def zebra_launch_code(station: str) -> str:\n"
        '    """The zebra launch code of a station."""\n'
        '    return "zebra-" + station.upper()\n\n\n'
        "def rotate_zebra_codes(stations: list[str]) -> list[str]:\n"
        "    return [zebra_launch_code(s) for s in stations]\n"
    ),
}


@dataclass
class Server:
    url: str
    config: Path
    root: Path
    chat: ChatServer
    tokens: dict[str, str]
    process: subprocess.Popen[bytes]

    def client(self, who: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def audit(self) -> list[dict[str, object]]:
        """The rows ``codecite audit --json`` prints (read here: test_server_state runs
        that command), newest first."""
        with open_state(load_server_config(self.config).state) as state:
            rows = state.audit_rows(limit=10000)
        return [json.loads(json.dumps(dataclasses.asdict(row))) for row in rows]


def make_token(config: Path, user: str, *args: str) -> str:
    proc = run_cli("token", "create", user, "--config", str(config), *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, indexed_shop: Path) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("serve")
    shop = copy_index(indexed_shop, root / "shop")
    vault = make_git_repo(root / "vault", VAULT)
    with codecite.open_index(vault) as index:
        index.update()
    with running_chat_server() as chat:
        config = root / "codecite-server.toml"
        config.write_text(
            'listen = "127.0.0.1:0"\nauth = "token"\nstate = "state.db"\n'
            f'[codecite]\nllm = "openai:test-model"\nllm_base_url = "{chat.base_url}"\n'
            "llm_max_retries = 0\n"
            f'[repos.shop]\npath = "{shop}"\n[repos.vault]\npath = "{vault}"\n'
        )
        tokens = {
            "alice": make_token(config, "alice", "--repos", "shop"),
            "admin": make_token(config, "admin", "--repos", "*", "--admin"),
            "revoked": make_token(config, "mallory", "--repos", "*"),
            "expired": make_token(config, "eve", "--repos", "*", "--expires", "1s"),
        }
        assert run_cli("token", "revoke", "mallory", "--config", str(config)).returncode == 0
        port = free_port()
        process = start_server(config, port, root / "server.log")
        time.sleep(1.1)  # eve's token expires
        try:
            yield Server(f"http://127.0.0.1:{port}", config, root, chat, tokens, process)
        finally:
            process.terminate()
            process.wait(30)


def error_of(response: httpx.Response) -> dict[str, str]:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    return dict(body["error"])


# --- operations ---------------------------------------------------------------------
def test_health_and_openapi_need_no_token_metrics_an_admin_one(server: Server) -> None:
    with server.client() as http:
        assert http.get("/healthz").json()["status"] == "ok"
        http.get("/api/v1/repos")
        assert http.get("/metrics").status_code == 401
        paths = http.get("/openapi.json").json()["paths"]
        assert {
            "/api/v1/search",
            "/api/v1/ask",
            "/api/v1/repos",
            "/api/v1/repos/{repo}/code",
        } <= set(paths)
    with server.client("alice") as http:
        assert http.get("/metrics").status_code == 403
    with server.client("admin") as http:
        metrics = http.get("/metrics")
    assert metrics.status_code == 200 and "codecite_requests_total" in metrics.text
    assert 'endpoint="/api/v1/repos"' in metrics.text


# --- authentication -------------------------------------------------------------------
@pytest.mark.parametrize(
    "who,header",
    [
        (None, None),
        (None, "Bearer"),
        (None, "Bearer cc_nope_nope"),
        (None, "Basic abc"),
        ("revoked", None),
        ("expired", None),
    ],
)
def test_bad_tokens_get_401_and_an_audit_row(
    server: Server, who: str | None, header: str | None
) -> None:
    headers = {"Authorization": header} if header else {}
    with server.client(who) as http:
        before = len(server.audit())
        response = http.post("/api/v1/search", json={"query": "discount"}, headers=headers)
    assert response.status_code == 401, response.text
    assert error_of(response)["code"] == "unauthorized"
    assert response.headers.get("www-authenticate", "").startswith("Bearer")
    rows = server.audit()
    assert len(rows) == before + 1
    assert rows[0]["status"] == 401 and rows[0]["endpoint"] == "/api/v1/search"


# --- access control ---------------------------------------------------------------------
def test_a_token_sees_only_its_repositories(server: Server) -> None:
    with server.client("alice") as http:
        repos = http.get("/api/v1/repos").json()["repos"]
        assert [r["name"] for r in repos] == ["shop"] and repos[0]["indexed"]
        found = http.post("/api/v1/search", json={"query": "launch code of a station", "k": 20})
    assert found.status_code == 200
    results = found.json()["results"]
    assert results and {r["repo"] for r in results} == {"shop"}
    assert MARKER not in found.text.lower()
    with server.client("admin") as http:
        names = [r["name"] for r in http.get("/api/v1/repos").json()["repos"]]
    assert names == ["shop", "vault"]


@pytest.mark.parametrize(
    "endpoint,body",
    [
        ("/api/v1/search", {"query": "launch code of a station", "repos": ["vault"]}),
        ("/api/v1/search", {"query": "launch code of a station", "repos": ["shop", "vault"]}),
        ("/api/v1/ask", {"question": "how is the launch code of a station made?", "repo": "vault"}),
        (
            "/api/v1/ask",
            {"question": "how is the launch code of a station made?", "repos": ["vault"]},
        ),
    ],
)
def test_another_repository_is_403_and_leaks_nothing(
    server: Server, endpoint: str, body: dict[str, object]
) -> None:
    prompts = len(server.chat.requests)
    with server.client("alice") as http:
        response = http.post(endpoint, json=body)
        unknown = http.post(
            endpoint,
            json={
                **body,
                **({"repos": ["nosuchrepo"]} if "repos" in body else {"repo": "nosuchrepo"}),
            },
        )
    assert response.status_code == 403 and unknown.status_code == 403
    assert MARKER not in response.text.lower()
    assert error_of(response)["message"].replace("vault", "X") == (
        error_of(unknown)["message"].replace("nosuchrepo", "X")
    )
    assert len(server.chat.requests) == prompts  # no prompt was sent at all
    row = server.audit()[0]
    assert row["status"] == 403 and row["user"] == "alice" and row["results"] == []


def test_asking_everything_never_puts_another_repository_in_the_prompt(server: Server) -> None:
    server.chat.script = [Reply(text="It is computed in shop/pricing.py:25-34.")]
    with server.client("alice") as http:
        answer = http.post(
            "/api/v1/ask",
            json={"question": "how is the station launch code or the loyalty discount computed"},
        )
    assert answer.status_code == 200, answer.text
    assert answer.json()["repo"] == "shop"
    prompt = json.dumps(server.chat.requests[-1])
    assert "loyalty" in prompt.lower() and MARKER not in prompt.lower()


# --- search and answers -------------------------------------------------------------------
def test_search_files_ranks_files_over_the_readable_repositories(server: Server) -> None:
    with server.client("alice") as http:
        data = http.post(
            "/api/v1/search",
            json={"query": "where is the loyalty discount computed", "k": 3, "files": True},
        ).json()
    files = data["files"]
    assert len(files) == 3 and files[0]["path"] == "shop/pricing.py"
    assert {f["repo"] for f in files} == {"shop"}
    assert all(1 <= len(f["chunks"]) <= 3 and f["chunks"][0]["repo"] == "shop" for f in files)
    assert MARKER not in json.dumps(data).lower()
    row = server.audit()[0]
    assert row["results"][0] == "shop:shop/pricing.py"


def test_search_contract_with_filters(server: Server) -> None:
    with server.client("alice") as http:
        data = http.post(
            "/api/v1/search",
            json={
                "query": "where is the loyalty discount computed",
                "k": 5,
                "filters": {"languages": ["py"], "path": "shop/**"},
            },
        ).json()
    results = data["results"]
    assert len(results) == 5 and "shop/pricing.py" in [r["path"] for r in results[:3]]
    required = {
        "path",
        "start_line",
        "end_line",
        "name",
        "qualname",
        "kind",
        "language",
        "score",
        "source",
        "content",
        "repo",
    }
    assert all(required <= set(r) and r["language"] == "python" for r in results)
    row = server.audit()[0]
    assert row["question"] == "where is the loyalty discount computed"
    assert len(row["results"]) == 5 and all(r.startswith("shop:shop/") for r in row["results"])
    assert all("def " not in str(x) for x in row["results"])  # locations, never code


def test_ask_json_extractive(server: Server) -> None:
    with server.client("alice") as http:
        data = http.post(
            "/api/v1/ask",
            json={"question": "How is the loyalty discount computed?", "llm": "extractive"},
        ).json()
    assert data["llm"] == "extractive" and data["repo"] == "shop"
    assert data["citations"] and all(c["verified"] for c in data["citations"])
    assert all(s["repo"] == "shop" for s in data["sources"])
    assert server.audit()[0]["citations"]


def test_asking_several_repositories_answers_from_the_one_defining_the_name_written(
    server: Server,
) -> None:
    """Asked of both repositories, a question naming a definition of one of them is
    answered from that one, though its other words are the other's (``RepoPool.answering``)."""
    question = (
        "What would break if I changed how calculate_payout rotates the zebra launch codes"
        " of every station in the vault programme?"
    )
    with server.client("admin") as http:
        named = http.post(
            "/api/v1/ask",
            json={"question": question, "repos": ["shop", "vault"], "llm": "extractive"},
        )
        plain = http.post(
            "/api/v1/ask",
            json={
                "question": "How is the zebra launch code of a station made?",
                "repos": ["shop", "vault"],
                "llm": "extractive",
            },
        )
    assert named.status_code == 200, named.text
    assert named.json()["repo"] == "shop"
    assert all(s["repo"] == "shop" for s in named.json()["sources"])
    assert plain.status_code == 200, plain.text
    assert plain.json()["repo"] == "vault"
    assert server.audit()[0]["repos"] == ["vault"]


def test_ask_streams_server_sent_events(server: Server) -> None:
    text = "The discount is applied in shop/pricing.py:25-34 and mentioned in evil.py:1-900."
    server.chat.script = [Reply(text=text)]
    events: list[tuple[str, object]] = []
    with (
        server.client("alice") as http,
        http.stream(
            "POST",
            "/api/v1/ask",
            json={"question": "How is the loyalty discount computed?"},
            headers={"Accept": "text/event-stream"},
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        event = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                events.append((event, json.loads(line[6:])))
    kinds = [k for k, _ in events]
    assert kinds.count("token") > 1 and kinds[-3:] == ["citations", "sources", "done"]
    assert (
        "".join(str(d["text"]) for k, d in events if k == "token" and isinstance(d, dict)) == text
    )
    citations = dict(events)["citations"]
    assert isinstance(citations, list)
    assert [c["verified"] for c in citations] == [True, False]
    assert server.audit()[0]["endpoint"] == "/api/v1/ask"


# --- code and graph ------------------------------------------------------------------------
def test_code_shows_indexed_lines_only(server: Server) -> None:
    with server.client("alice") as http:
        ok = http.get(
            "/api/v1/repos/shop/code", params={"path": "shop/pricing.py", "start": 25, "end": 34}
        )
        assert ok.status_code == 200
        data = ok.json()
        assert data["lines"][0].startswith("def apply_loyalty_discount")
        assert (data["start_line"], data["end_line"]) == (25, 34)
        for bad in (
            "../../../etc/passwd",
            "/etc/passwd",
            "shop/../../vault/launch.py",
            "shop/../shop/pricing.py",
            "shop",
            ".git/config",
            "shop\\pricing.py",
            "shop/pricing.py\x00.txt",
        ):
            response = http.get("/api/v1/repos/shop/code", params={"path": bad})
            assert response.status_code == 404, (bad, response.text)
            assert "root:" not in response.text
        other = http.get("/api/v1/repos/vault/code", params={"path": "vault/launch.py"})
    assert other.status_code == 403 and MARKER not in other.text.lower()


def test_graph_lookups(server: Server) -> None:
    with server.client("alice") as http:
        callers = http.get("/api/v1/repos/shop/symbols/apply_loyalty_discount/callers").json()
        callees = http.get("/api/v1/repos/shop/symbols/apply_loyalty_discount/callees").json()
        tests = http.get("/api/v1/repos/shop/symbols/Order.cancel/tests")
        missing = http.get("/api/v1/repos/shop/symbols/no_such_thing/callers")
    assert "checkout" in {c["qualname"] for c in callers["matches"][0]["callers"]}
    assert "discount_rate_for_tier" in {c["qualname"] for c in callees["matches"][0]["callees"]}
    assert tests.status_code in (200, 404)
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"


# --- limits and errors ---------------------------------------------------------------------
def test_limits_and_bad_requests(server: Server) -> None:
    with server.client("alice") as http:
        big = http.post(
            "/api/v1/search",
            content=b"{" + b" " * 70_000 + b"}",
            headers={"Content-Type": "application/json"},
        )
        assert big.status_code == 413 and error_of(big)["code"] == "too_large"
        too_many = http.post("/api/v1/search", json={"query": "x", "k": 51})
        assert too_many.status_code == 422
        long = http.post("/api/v1/search", json={"query": "word " * 1000})
        assert long.status_code == 413
        broken = http.post(
            "/api/v1/search", content=b"{not json", headers={"Content-Type": "application/json"}
        )
        assert broken.status_code == 422 and error_of(broken)["code"] == "invalid_request"
        bad_lang = http.post(
            "/api/v1/search", json={"query": "x", "filters": {"languages": ["klingon"]}}
        )
        assert bad_lang.status_code == 400 and "klingon" in error_of(bad_lang)["message"]
        llm = http.post("/api/v1/ask", json={"question": "x", "llm": "openai:gpt@http://evil"})
        assert llm.status_code == 422
        nowhere = http.get("/api/v1/nowhere")
        assert nowhere.status_code == 404 and error_of(nowhere)["code"] == "not_found"
        for response in (big, too_many, long, broken, bad_lang, llm, nowhere):
            assert "Traceback" not in response.text


def test_llm_failure_is_a_502_with_a_message(server: Server) -> None:
    server.chat.script = [Reply(status=500, error="model crashed")]
    with server.client("alice") as http:
        response = http.post(
            "/api/v1/ask", json={"question": "How is the loyalty discount computed?"}
        )
    assert response.status_code == 502 and "model crashed" in error_of(response)["message"]


# --- re-index beside the server ----------------------------------------------------------------
def test_admin_reindex_is_seen_without_a_restart(server: Server) -> None:
    with server.client("alice") as http:
        refused = http.post("/api/v1/repos/shop/reindex")
    assert refused.status_code == 403
    (server.root / "shop" / "shop" / "gifts.py").write_text(
        "def wrap_gift_in_saffron_paper(order):\n"
        '    """Wrap a gift order in saffron paper."""\n    return order\n'
    )
    with server.client("admin") as http:
        started = http.post("/api/v1/repos/shop/reindex")
        assert started.status_code == 202
        url = started.json()["status_url"]
        deadline = time.time() + 120
        while time.time() < deadline:
            job = http.get(url).json()["job"]
            if job["status"] in ("done", "failed"):
                break
            time.sleep(0.2)
        assert job["status"] == "done", job
        found = http.post("/api/v1/search", json={"query": "saffron paper gift", "k": 3})
    assert found.json()["results"][0]["path"] == "shop/gifts.py"


def test_every_request_above_left_an_audit_row(server: Server) -> None:
    rows = server.audit()
    assert {401, 403, 200, 404, 413, 422} <= {int(str(r["status"])) for r in rows}
    assert all(r["endpoint"] for r in rows)


# --- MCP over HTTP, behind the same tokens --------------------------------------------------
def _mcp_call(server: Server, token: str | None, tool: str, args: dict[str, object]) -> str:
    import asyncio

    import httpx2  # the MCP SDK's HTTP client
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> str:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client,
        ):
            result = await client.call_tool(tool, args)
            return "\n".join(getattr(part, "text", "") for part in result.content)

    return asyncio.run(main())


def test_mcp_over_http_uses_the_tokens_and_the_acl(server: Server) -> None:
    repos = _mcp_call(server, server.tokens["alice"], "list_repos", {})
    assert "shop" in repos and "vault" not in repos
    found = _mcp_call(
        server, server.tokens["alice"], "search_code", {"query": "loyalty discount", "k": 3}
    )
    assert "shop/pricing.py:" in found
    hidden = _mcp_call(
        server,
        server.tokens["alice"],
        "search_code",
        {"query": "launch code of a station", "repos": ["vault"]},
    )
    assert "no such repository: vault" in hidden and MARKER not in hidden.lower()
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the HTTP 401
        _mcp_call(server, None, "list_repos", {})
    rows = server.audit()
    assert any(r["endpoint"] == "/mcp" and r["status"] == 401 for r in rows)
    tools = {r["endpoint"]: r for r in rows if str(r["endpoint"]).startswith("/mcp/tools/")}
    assert tools["/mcp/tools/list_repos"]["user"] == "alice"
    refused = next(r for r in rows if r["endpoint"] == "/mcp/tools/search_code")
    assert refused["status"] == 403 and refused["repos"] == ["vault"]
    assert refused["question"] == "launch code of a station"
