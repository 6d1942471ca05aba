"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests.

It speaks ``POST /v1/chat/completions`` (JSON or SSE streaming), ``GET /v1/models``
and, when ``tags`` is set, Ollama's ``GET /api/tags``. Each request takes the next
:class:`Reply` from ``script`` (then ``default``), so a test can answer 429 then
200, keep failing, answer slowly, cut a stream mid-way (closing the connection, or
ending a chunked body without its last chunk), or answer with a web page::

    with running_chat_server() as server:
        server.script = [Reply(429, headers={"Retry-After": "0"}), Reply(text="hi")]
        OpenAIChat("m", Endpoint(base_url=server.base_url)).complete(messages)
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal


@dataclass
class Reply:
    """One scripted answer. ``status`` != 200 sends ``error`` as an OpenAI error body."""

    status: int = 200
    text: str = "Hello from the test server."
    error: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds to wait before answering at all (a slow server).
    delay: float = 0.0
    #: Seconds between streamed pieces.
    piece_delay: float = 0.0
    #: Streaming only: after ``cut_after`` pieces, "eof" ends the body without
    #: finishing, "reset" aborts the connection, "error" sends an error event.
    cut: Literal["", "eof", "reset", "error"] = ""
    cut_after: int = 2
    #: Streaming only: send the events as an HTTP/1.1 chunked body (a cut "eof" then
    #: closes the connection without the final empty chunk: an incomplete body).
    chunked: bool = False
    #: A raw body sent as is, with ``content_type`` (a server that is not OpenAI-compatible).
    raw: bytes | None = None
    content_type: str = "text/html"


class ChatServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[Reply] = []
        self.default = Reply()
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        self.times: list[float] = []
        self.models: list[str] = ["test-model"]
        #: Ollama model names for ``/api/tags``; None answers 404 there.
        self.tags: list[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a connection cut on purpose is not worth a traceback

    def next_reply(self) -> Reply:
        return self.script.pop(0) if self.script else self.default


def pieces(text: str) -> list[str]:
    """How the server splits ``text`` into streamed deltas: word by word."""
    words = text.split(" ")
    return [word if i == 0 else " " + word for i, word in enumerate(words)]


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer
    #: Whether the current reply's body is sent in HTTP/1.1 chunks.
    chunked = False

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            data = [{"id": m, "object": "model", "owned_by": "test"} for m in self.server.models]
            return self._json(200, {"object": "list", "data": data})
        if self.path == "/api/tags" and self.server.tags is not None:
            return self._json(200, {"models": [{"name": n} for n in self.server.tags]})
        self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        self.server.requests.append(body)
        self.server.headers_seen.append(dict(self.headers))
        self.server.times.append(time.monotonic())
        if self.path != "/v1/chat/completions":
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        reply = self.server.next_reply()
        time.sleep(reply.delay)
        if reply.raw is not None:
            return self._send(reply.status, reply.raw, reply.content_type, reply.headers)
        if reply.status != 200:
            error = {"message": reply.error, "type": "error", "code": reply.status}
            return self._json(reply.status, {"error": error}, reply.headers)
        if body.get("stream"):
            return self._stream(body["model"], reply)
        message = {"role": "assistant", "content": reply.text}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        self._json(
            200,
            {"id": "c1", "object": "chat.completion", "model": body["model"], "choices": [choice]},
        )

    def _stream(self, model: str, reply: Reply) -> None:
        self.chunked = reply.chunked
        if reply.chunked:
            self.protocol_version = "HTTP/1.1"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if reply.chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
        self.end_headers()
        self._event({"role": "assistant", "content": ""}, None, model)
        for i, piece in enumerate(pieces(reply.text)):
            if reply.cut and i == reply.cut_after:
                return self._cut(reply.cut)
            time.sleep(reply.piece_delay)
            self._event({"content": piece}, None, model)
        self._event({}, "stop", model)
        self._write(b"data: [DONE]\n\n")
        if reply.chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _write(self, data: bytes) -> None:
        if self.chunked:
            data = b"%x\r\n%s\r\n" % (len(data), data)
        self.wfile.write(data)
        self.wfile.flush()

    def _event(self, delta: dict[str, str], finish: str | None, model: str) -> None:
        chunk = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        self._write(f"data: {json.dumps(chunk)}\n\n".encode())

    def _cut(self, how: str) -> None:
        if how == "error":
            self._write(b'data: {"error": {"message": "model crashed"}}\n\n')
        elif how == "reset":  # RST instead of FIN: the client sees a broken connection
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", headers or {})

    def _send(self, status: int, raw: bytes, kind: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(raw)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)


@contextmanager
def running_chat_server() -> Iterator[ChatServer]:
    """A :class:`ChatServer` serving on a thread until the block ends."""
    server = ChatServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> int:
    """A loopback port with nothing listening (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
