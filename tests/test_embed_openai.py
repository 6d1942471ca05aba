"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from codecite.config import Config, Endpoint
from codecite.embed import get_embedder
from codecite.embed.openai import OpenAIEmbedder, is_local_url
from codecite.errors import ConfigError, EmbeddingError


def vector_for(text: str) -> list[float]:
    """Deterministic 3-d vector, distinct per text, never normalised."""
    return [float(len(text)), float(sum(map(ord, text)) % 97), 2.0]


class FakeOpenAI(ThreadingHTTPServer):
    """Speaks ``POST /v1/embeddings``; ``script`` holds failures to answer first."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        self.script: list[tuple[int, dict[str, Any]]] = []
        self.always: tuple[int, dict[str, Any]] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        self.server.requests.append(body)
        self.server.headers_seen.append(dict(self.headers))
        if self.path != "/v1/embeddings":
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        if self.server.always is not None:
            return self._send(*self.server.always)
        if self.server.script:
            return self._send(*self.server.script.pop(0))
        data = [
            {"object": "embedding", "index": i, "embedding": vector_for(text)}
            for i, text in enumerate(body["input"])
        ]
        data.reverse()  # servers may answer out of order; "index" is what counts
        self._send(200, {"object": "list", "data": data, "model": body["model"]})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        if status == 429:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.shutdown()
    fake.server_close()


#: Options of the embedder itself; the rest describe its endpoint.
EMBEDDER_OPTIONS = ("dim", "batch_size", "max_tokens")


def client(server: FakeOpenAI, **kwargs: Any) -> OpenAIEmbedder:
    endpoint: dict[str, Any] = {"backoff": 0.001, "max_retries": 2, "base_url": server.base_url}
    own = {k: v for k, v in kwargs.items() if k in EMBEDDER_OPTIONS}
    endpoint.update({k: v for k, v in kwargs.items() if k not in EMBEDDER_OPTIONS})
    return OpenAIEmbedder("test-embed", Endpoint(**endpoint), **own)


def expected(texts: list[str]) -> np.ndarray:
    rows = np.asarray([vector_for(t) for t in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_batches_in_order_and_normalises(server: FakeOpenAI) -> None:
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    embedder = client(server, batch_size=2, api_key="sk-test")
    vectors = embedder.embed(texts, "document")
    assert [r["input"] for r in server.requests] == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    assert all(r["model"] == "test-embed" for r in server.requests)
    assert server.headers_seen[0]["Authorization"] == "Bearer sk-test"
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected(texts), rtol=1e-6)
    assert embedder.dim == 3
    assert embedder.name == "openai:test-embed"


def test_dim_is_probed_when_unknown(server: FakeOpenAI) -> None:
    embedder = client(server)
    assert embedder.dim == 3
    assert len(server.requests) == 1
    assert client(server, dim=3).dim == 3
    assert len(server.requests) == 1


def test_retries_after_429(server: FakeOpenAI) -> None:
    server.script = [(429, {"error": {"message": "rate limited"}})]
    vectors = client(server).embed(["x", "yy"], "query")
    assert len(server.requests) == 2
    np.testing.assert_allclose(vectors, expected(["x", "yy"]), rtol=1e-6)


def test_500_exhausts_retries(server: FakeOpenAI) -> None:
    server.always = (500, {"error": {"message": "model crashed"}})
    with pytest.raises(EmbeddingError) as info:
        client(server, max_retries=2).embed(["x"], "document")
    message = str(info.value)
    assert "HTTP 500" in message and "model crashed" in message and "3 attempts" in message
    assert len(server.requests) == 3


def test_client_error_is_not_retried(server: FakeOpenAI) -> None:
    server.always = (401, {"error": {"message": "bad key"}})
    with pytest.raises(EmbeddingError, match="OPENAI_API_KEY"):
        client(server).embed(["x"], "document")
    assert len(server.requests) == 1


def test_wrong_base_url_says_so(server: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder("m", Endpoint(base_url=server.base_url[:-3], max_retries=0))
    with pytest.raises(EmbeddingError, match="/v1"):
        embedder.embed(["x"], "document")


def test_unreachable_server() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = OpenAIEmbedder(
        "m", Endpoint(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff=0.001)
    )
    with pytest.raises(EmbeddingError, match=r"cannot reach.*2 attempts"):
        embedder.embed(["x"], "document")


def test_missing_key_for_remote_url(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OPENAI_API_KEY",
        "CODECITE_OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "CODECITE_OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match="no API key: set OPENAI_API_KEY"):
        get_embedder("openai:text-embedding-3-small", Config())
    with pytest.raises(ConfigError, match="no API key"):
        OpenAIEmbedder("m", Endpoint(base_url="https://example.com/v1"))
    monkeypatch.setenv("CODECITE_OPENAI_BASE_URL", "http://localhost:11434/v1")
    embedder = get_embedder("openai:nomic-embed-text", Config())
    assert embedder.name == "openai:nomic-embed-text"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.delenv("CODECITE_OPENAI_BASE_URL")
    remote = get_embedder("openai:text-embedding-3-small", Config())
    assert remote.dim == 1536  # known model: no request needed
    with pytest.raises(ConfigError, match="needs a model"):
        get_embedder("openai", Config())


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8000/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://192.168.1.5:8000/v1", True),
        ("http://ollama:11434/v1", True),
        ("https://api.openai.com/v1", False),
        ("https://8.8.8.8/v1", False),
    ],
)
def test_local_urls(url: str, local: bool) -> None:
    assert is_local_url(url) is local
