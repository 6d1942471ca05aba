"""The LangChain retriever (``codecite.integrations.langchain``) over a real index of the
shop fixture, locally and through a small real HTTP server that speaks the server's
search contract (``POST /api/v1/search``, bearer tokens, ``{"error": {...}}`` bodies)
and answers from a real read-only index of the same repository."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from repos import copy_index, free_port

pytest.importorskip("langchain_core")

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

import codecite
from codecite.errors import IndexMissingError, UserError
from codecite.integrations.langchain import (
    CodeciteRetriever,
    ServerAuthError,
    ServerError,
    ServerForbiddenError,
    ServerRequestError,
    ServerUnavailableError,
)
from codecite.types import LINE_EXACT_KINDS

FIXTURES = Path(__file__).parent / "fixtures"
QUERY = "how is the loyalty discount computed"
META_KEYS = {
    "path",
    "start_line",
    "end_line",
    "citation",
    "qualname",
    "name",
    "kind",
    "language",
    "score",
    "source",
    "repo",
}
#: The fields of a result object ``R`` in the server's search answer.
R_FIELDS = (
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
)
#: Tokens of the test server and the repositories each may read ("billing" is not on it).
TOKENS = {"cc_reader": {"shop"}, "cc_billing": {"billing"}}
#: A query the test server answers only after this many seconds (for the timeout).
SLOW_QUERY, SLOW_SECONDS = "answer slowly", 1.0
#: The most results the test server gives one query (a server's ``limits.max_k``).
SERVER_MAX_K = 50


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory, indexed_shop: Path) -> Path:
    return copy_index(indexed_shop, tmp_path_factory.mktemp("langchain") / "shop")


@pytest.fixture(scope="module")
def local(shop: Path) -> Iterator[CodeciteRetriever]:
    retriever = CodeciteRetriever.from_path(shop, k=5)
    yield retriever
    retriever.close()


# --- a real HTTP server speaking the search contract ------------------------------------
class SearchServer:
    """``POST /api/v1/search`` over one repository ("shop"), on a free loopback port."""

    def __init__(self, root: Path) -> None:
        self.index = codecite.open_index(root, create=False)
        self.repos = {"shop": self.index}
        self.lock = threading.Lock()
        #: Every request received: its path, Authorization header and JSON body.
        self.received: list[dict[str, Any]] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        # handler threads are joined by server_close(): a request still running (the slow
        # query, whose client gave up) must end before the index is closed under it
        self.httpd.daemon_threads = False
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()
        self.index.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    status, payload = server.answer(
                        self.path, self.headers.get("Authorization"), raw
                    )
                except Exception as exc:
                    status, payload = error(500, "internal", f"{type(exc).__name__}: {exc}")
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def answer(self, path: str, authorization: str | None, raw: bytes) -> tuple[int, Any]:
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        self.received.append({"path": path, "authorization": authorization, "body": body})
        if path != "/api/v1/search":
            return error(404, "not_found", "Not Found")
        scheme, _, token = (authorization or "").partition(" ")
        if scheme != "Bearer" or token not in TOKENS:
            return error(401, "unauthorized", "missing or unknown token")
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return error(400, "bad_request", "the body must be a JSON object with a query")
        k = body.get("k", 10)
        if not isinstance(k, int) or k < 1:
            return error(422, "invalid_request", "k: must be an integer of at least 1")
        if k > SERVER_MAX_K:
            return error(422, "invalid_request", f"k must be at most {SERVER_MAX_K}")
        readable = TOKENS[token]
        names = body.get("repos") or sorted(readable & set(self.repos))
        if not names:
            return error(403, "forbidden", "this token may read no repository")
        for name in names:  # an unknown and an unreadable name get the same 403
            if name not in readable or name not in self.repos:
                return error(403, "forbidden", f"no such repository, or no access: {name}")
        given = body.get("filters") or {}
        try:
            filters = codecite.Filters.parse(
                given.get("languages"), given.get("path"), given.get("kinds")
            )
            if body["query"] == SLOW_QUERY:
                time.sleep(SLOW_SECONDS)
            results = []
            for name in names:
                with self.lock:
                    found = self.repos[name].search(body["query"], k=k, filters=filters or None)
                results += [
                    {key: h.to_json()[key] for key in R_FIELDS} | {"repo": name} for h in found.hits
                ]
        except UserError as exc:
            return error(422, "invalid_request", str(exc))
        return 200, {"query": body["query"], "intent": found.intent, "results": results}


def error(status: int, code: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"code": code, "message": message}}


@pytest.fixture(scope="module")
def server(shop: Path) -> Iterator[SearchServer]:
    srv = SearchServer(shop)
    yield srv
    srv.close()


def citations(docs: list[Document]) -> list[str]:
    return [d.metadata["citation"] for d in docs]


# --- local index ------------------------------------------------------------------------
def test_local_retriever_returns_cited_documents(local: CodeciteRetriever, shop: Path) -> None:
    assert isinstance(local, BaseRetriever)
    docs = local.invoke(QUERY)
    assert 1 <= len(docs) <= 5
    assert all(isinstance(d, Document) for d in docs)
    first = docs[0]
    assert first.metadata["path"] == "shop/pricing.py"
    for doc in docs:
        meta = doc.metadata
        assert set(meta) == META_KEYS
        assert meta["citation"] == f"{meta['path']}:{meta['start_line']}-{meta['end_line']}"
        assert 1 <= meta["start_line"] <= meta["end_line"]
        assert meta["repo"] == "shop"
        assert isinstance(meta["score"], float)
        assert doc.page_content.strip()
        if meta["kind"] in LINE_EXACT_KINDS:  # the cited lines are the content
            lines = (shop / meta["path"]).read_text().splitlines()
            cited = "\n".join(lines[meta["start_line"] - 1 : meta["end_line"]])
            assert doc.page_content.strip() == cited.strip()
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)


def test_local_index_opened_once_and_reused(local: CodeciteRetriever) -> None:
    index = local.local_index()
    local.invoke("tax for a region")
    assert local.local_index() is index
    assert index.store.readonly


def test_local_filters_apply(shop: Path) -> None:
    ts = CodeciteRetriever.from_path(shop, k=5, languages=["ts"])
    funcs = CodeciteRetriever.from_path(shop, k=5, path_glob="shop/**", kinds="function")
    try:
        docs = ts.invoke("format a price in the cart")
        assert docs and {d.metadata["language"] for d in docs} == {"typescript"}
        docs = funcs.invoke(QUERY)
        assert docs and {d.metadata["kind"] for d in docs} == {"function"}
        assert all(d.metadata["path"].startswith("shop/") for d in docs)
    finally:
        ts.close()
        funcs.close()


def test_local_async_runs_the_same_search(local: CodeciteRetriever) -> None:
    docs = asyncio.run(local.ainvoke(QUERY))
    assert citations(docs) == citations(local.invoke(QUERY))


def test_local_errors_are_clear(tmp_path: Path, local: CodeciteRetriever) -> None:
    with pytest.raises(IndexMissingError, match="codecite index"):
        CodeciteRetriever.from_path(tmp_path)
    with pytest.raises(UserError, match="unknown language 'tss'"):
        CodeciteRetriever.from_path(tmp_path, languages=["tss"])
    with pytest.raises(UserError, match="query is empty"):
        local.invoke("   ")
    with pytest.raises(ValueError, match="exactly one of repo_path"):
        CodeciteRetriever(k=3)
    with pytest.raises(ValueError, match="repos= picks repositories"):
        CodeciteRetriever(repo_path=str(tmp_path), repos=["shop"])


# --- server ---------------------------------------------------------------------------
def test_server_retriever_matches_local_and_sends_the_token(
    server: SearchServer, local: CodeciteRetriever
) -> None:
    retriever = CodeciteRetriever.from_server(server.url, token="cc_reader", repos=["shop"], k=5)
    try:
        docs = retriever.invoke(QUERY)
    finally:
        retriever.close()
    request = server.received[-1]
    assert request["path"] == "/api/v1/search"
    assert request["authorization"] == "Bearer cc_reader"
    assert request["body"] == {"query": QUERY, "k": 5, "repos": ["shop"]}
    assert docs[0].metadata["path"] == "shop/pricing.py"
    assert all(set(d.metadata) == META_KEYS for d in docs)
    assert citations(docs) == citations(local.invoke(QUERY))
    assert [d.page_content for d in docs] == [d.page_content for d in local.invoke(QUERY)]
    assert "cc_reader" not in repr(retriever)


def test_server_filters_are_sent(server: SearchServer) -> None:
    retriever = CodeciteRetriever.from_server(server.url, token="cc_reader", languages="ts", k=3)
    try:
        docs = retriever.invoke("format a price in the cart")
    finally:
        retriever.close()
    body = server.received[-1]["body"]
    assert body["filters"] == {"languages": ["typescript"], "path": "", "kinds": []}
    assert "repos" not in body
    assert docs and {d.metadata["language"] for d in docs} == {"typescript"}


def test_server_401_says_the_token_is_wrong(server: SearchServer) -> None:
    wrong = CodeciteRetriever.from_server(server.url, token="cc_nope")
    missing = CodeciteRetriever.from_server(server.url)
    try:
        with pytest.raises(ServerAuthError, match="refused the token") as info:
            wrong.invoke(QUERY)
        assert info.value.status == 401 and info.value.code == "unauthorized"
        assert "wrong, expired or revoked" in str(info.value)
        assert isinstance(info.value, UserError)
        assert server.received[-1]["authorization"] == "Bearer cc_nope"
        with pytest.raises(ServerAuthError, match="no token was sent"):
            missing.invoke(QUERY)
        assert server.received[-1]["authorization"] is None
    finally:
        wrong.close()
        missing.close()


def test_server_403_names_the_repository(server: SearchServer) -> None:
    retriever = CodeciteRetriever.from_server(server.url, token="cc_billing", repos=["shop"])
    try:
        with pytest.raises(ServerForbiddenError, match="may not search shop") as info:
            retriever.invoke(QUERY)
    finally:
        retriever.close()
    assert info.value.status == 403 and info.value.code == "forbidden"
    assert "ask the server's admin" in str(info.value)
    assert isinstance(info.value, ServerAuthError)


def test_server_other_errors_are_clear(server: SearchServer) -> None:
    unknown = CodeciteRetriever.from_server(server.url, token="cc_reader", repos=["nope"])
    wrong_url = CodeciteRetriever.from_server(server.url + "/wrong", token="cc_reader")
    down = CodeciteRetriever.from_server(f"http://127.0.0.1:{free_port()}", token="cc_reader")
    slow = CodeciteRetriever.from_server(server.url, token="cc_reader", timeout=0.2)
    many = CodeciteRetriever.from_server(server.url, token="cc_reader", k=SERVER_MAX_K + 1)
    try:
        with pytest.raises(ServerForbiddenError, match="no access: nope") as forbidden:
            unknown.invoke(QUERY)
        assert "check the names in repos" in str(forbidden.value)
        with pytest.raises(ServerRequestError, match="base URL of a codecite server") as info:
            wrong_url.invoke(QUERY)
        assert info.value.status == 404 and info.value.code == "not_found"
        with pytest.raises(ServerRequestError, match="k must be at most 50") as info:
            many.invoke(QUERY)
        assert info.value.status == 422 and info.value.code == "invalid_request"
        with pytest.raises(ServerUnavailableError, match="cannot reach"):
            down.invoke(QUERY)
        with pytest.raises(ServerUnavailableError, match=r"did not answer within 0\.2s"):
            slow.invoke(SLOW_QUERY)
    finally:
        for retriever in (unknown, wrong_url, down, slow, many):
            retriever.close()


def test_server_async(server: SearchServer) -> None:
    retriever = CodeciteRetriever.from_server(server.url, token="cc_reader", repos=["shop"], k=5)
    forbidden = CodeciteRetriever.from_server(server.url, token="cc_billing", repos=["shop"])

    async def both() -> tuple[list[Document], list[Document]]:
        return await asyncio.gather(retriever.ainvoke(QUERY), retriever.ainvoke("tax rates"))

    try:
        before = len(server.received)
        docs, tax = asyncio.run(both())
        assert len(server.received) == before + 2
        assert {r["authorization"] for r in server.received[before:]} == {"Bearer cc_reader"}
        assert docs[0].metadata["path"] == "shop/pricing.py"
        assert citations(docs) == citations(retriever.invoke(QUERY))
        assert tax and all(set(d.metadata) == META_KEYS for d in tax)
        with pytest.raises(ServerForbiddenError):
            asyncio.run(forbidden.ainvoke(QUERY))
    finally:
        retriever.close()
        forbidden.close()


def test_server_errors_share_a_base() -> None:
    for cls in (ServerAuthError, ServerForbiddenError, ServerRequestError, ServerUnavailableError):
        assert issubclass(cls, ServerError)
    assert issubclass(ServerError, codecite.errors.CodeciteError)


# --- the extra ------------------------------------------------------------------------
def test_import_without_langchain_core_says_how_to_install() -> None:
    code = (
        "import sys\n"
        "sys.modules['langchain_core'] = None  # as if not installed\n"
        "import codecite.integrations\n"
        "try:\n"
        "    import codecite.integrations.langchain\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
        "else:\n"
        "    print('imported')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "pip install 'codecite[langchain]'" in out
