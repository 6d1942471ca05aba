"""What every request passes before any endpoint, authentication included: the Host
allow-list (DNS rebinding), the body size limit counted as the bytes arrive (chunked
bodies too), and the throttle on failed authentications per client address.

:class:`RequestGate` is an ASGI middleware, outermost in the app: it checks the
``Host`` header and reads the request body, at most ``max_body_bytes`` of it, before
the app sees the request, and notes in the scope what it found (:data:`VERDICT`); the
server's request guard (:mod:`.app`) answers a refused request with a JSON error and an
audit row before it authenticates anyone. A body under the limit is handed to the app
as it arrived; a larger one is never held in memory (reading stops at the limit). An
API body that is JSON sent with curl's default form content type is read as JSON.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The scope key of the gate's verdict: "" (let through), "host" or "too_large".
VERDICT = "codecite.gate"
#: Paths answered whatever the Host header says (load balancers probe by address).
HOST_EXEMPT = frozenset({"/healthz"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def split_host(header: str) -> tuple[str, str]:
    """The host name and port of a ``Host`` header or a URL's netloc: the name
    lower-cased (host names are case-insensitive), without brackets or a trailing dot
    (``[::1]:8765`` → ``::1``, ``8765``; ``LOCALHOST.`` → ``localhost``, "")."""
    value = header.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        name, _, port = value.partition(":")
    else:
        name, port = value, ""
    return name.rstrip("."), port


def host_name(header: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8765`` → ``::1``), lower-cased."""
    return split_host(header)[0]


def canonical_host(header: str) -> str:
    """A ``Host`` header (or netloc) as every check compares it: ``LOCALHOST:8765`` →
    ``localhost:8765``, ``[::1]:8765`` stays."""
    name, port = split_host(header)
    shown = f"[{name}]" if ":" in name else name
    return f"{shown}:{port}" if port else shown


def same_host(netloc: str, host_header: str) -> bool:
    """Whether a URL's netloc (an ``Origin``, a ``Referer``) names this request's host."""
    return canonical_host(netloc) == canonical_host(host_header)


def canonical_host_headers(scope: Scope) -> None:
    """``Host`` and ``Origin`` in the scope rewritten in canonical form (lower case), so
    that every later check, the MCP SDK's DNS-rebinding check included, compares host
    names case-insensitively as :func:`is_host_allowed` does."""
    headers = []
    for key, value in scope["headers"]:
        if key.lower() == b"host":
            value = canonical_host(value.decode("latin-1")).encode("latin-1")
        elif key.lower() == b"origin":
            scheme, sep, netloc = value.decode("latin-1").lower().partition("://")
            value = (scheme + sep + canonical_host(netloc) if sep else scheme).encode("latin-1")
        headers.append((key, value))
    scope["headers"] = headers


def default_hosts(listen_host: str) -> tuple[str, ...]:
    """The host names a server listening on ``listen_host`` answers by default: that
    address and the loopback names; on a wildcard address also this machine's names."""
    names = [*LOOPBACK_NAMES]
    if listen_host in WILDCARD_HOSTS:
        for name in (socket.gethostname(), socket.getfqdn()):
            if name:
                names.append(name)
    else:
        names.append(listen_host)
    return tuple(dict.fromkeys(n.lower().strip("[]") for n in names))


def is_host_allowed(header: str, allowed: Iterable[str]) -> bool:
    """Whether the ``Host`` header names one of ``allowed`` (``*`` allows any; a
    ``*.example.com`` entry allows its subdomains)."""
    name = host_name(header)
    if not name:
        return False
    for entry in allowed:
        if entry == "*" or entry == name:
            return True
        if entry.startswith("*.") and name.endswith(entry[1:]):
            return True
    return False


class RequestGate:
    """ASGI middleware: the Host check and the body limit, before the app runs."""

    def __init__(self, app: ASGIApp, max_body_bytes: int, allowed_hosts: tuple[str, ...]):
        self.app, self.max_body_bytes, self.allowed_hosts = app, max_body_bytes, allowed_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if scope.get("path", "") not in HOST_EXEMPT and not is_host_allowed(
            headers.get("host", ""), self.allowed_hosts
        ):
            scope[VERDICT] = "host"
            await self.app(scope, _no_body, send)
            return
        canonical_host_headers(scope)
        length = headers.get("content-length", "").strip()
        if length and (not length.isdigit() or int(length) > self.max_body_bytes):
            scope[VERDICT] = "too_large"
            await self.app(scope, _no_body, send)
            return
        messages, verdict = await self._read_body(receive)
        if verdict == "disconnect":
            return  # the client left before its body arrived: nobody to answer
        scope[VERDICT] = verdict
        if verdict:
            await self.app(scope, _no_body, send)
            return
        if _json_sent_as_form(scope, headers, messages):
            scope["headers"] = [
                (k, b"application/json" if k.lower() == b"content-type" else v)
                for k, v in scope["headers"]
            ]
        pending = deque(messages)

        async def replay() -> Message:
            return pending.popleft() if pending else await receive()

        await self.app(scope, replay, send)

    async def _read_body(self, receive: Receive) -> tuple[list[Message], str]:
        """The body's messages, joined (at most ``max_body_bytes``), and "" — or why
        reading stopped: "too_large" at the first byte over the limit, "disconnect"."""
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return [], "disconnect"
            if message["type"] != "http.request":
                return [message], ""
            body += message.get("body", b"")
            if len(body) > self.max_body_bytes:
                return [], "too_large"
            if not message.get("more_body", False):
                return [{"type": "http.request", "body": bytes(body), "more_body": False}], ""


def _json_sent_as_form(scope: Scope, headers: dict[str, str], messages: list[Message]) -> bool:
    """An API request whose body is JSON but labelled as a form: what ``curl -d '{...}'``
    sends (it says ``application/x-www-form-urlencoded`` unless told otherwise)."""
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded" or not str(scope.get("path", "")).startswith(
        "/api/"
    ):
        return False
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
    return body.lstrip()[:1] in (b"{", b"[")


async def _no_body() -> Message:
    """The receive of a refused request: its body is never read."""
    return {"type": "http.request", "body": b"", "more_body": False}


class FailureThrottle:
    """Failed authentications per client address in a sliding minute. Past
    ``per_minute`` failures a further failure from the address is refused with 429
    until its count drops below the limit; a valid token (or Slack signature) still
    passes, so the clients behind one NAT or proxy are not locked out by one of them.
    Refused attempts are not counted again and write no audit row (one row says when
    the throttle started), so a flood cannot fill the log; each costs one token check
    (a short PBKDF2 and one lookup)."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        seen = self._failures.setdefault(client, deque())
        while seen and now - seen[0] >= 60.0:
            seen.popleft()
        return seen

    def blocked(self, client: str) -> bool:
        """Whether ``client`` has failed too often in the last minute."""
        if self.per_minute <= 0:
            return False
        with self._lock:
            return len(self._recent(client, time.monotonic())) >= self.per_minute

    def failed(self, client: str) -> bool:
        """Count one failure of ``client``; True when this one reached the limit (the
        throttle starts: worth one audit row)."""
        if self.per_minute <= 0:
            return False
        now = time.monotonic()
        with self._lock:
            if len(self._failures) > 10_000:  # forget quiet addresses
                self._failures = {c: q for c, q in self._failures.items() if self._recent(c, now)}
            seen = self._recent(client, now)
            seen.append(now)
            return len(seen) == self.per_minute

    def retry_after(self, client: str) -> int:
        """Seconds until ``client`` may try again."""
        with self._lock:
            seen = self._failures.get(client)
            if not seen:
                return 0
            return max(1, int(60.0 - (time.monotonic() - seen[0])) + 1)


class RateLimiter:
    """Requests per user per minute (a sliding window); 0 turns it off."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._seen: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def allow(self, user: str) -> bool:
        if self.per_minute <= 0:
            return True
        now = time.monotonic()
        with self._lock:
            recent = [t for t in self._seen.get(user, []) if now - t < 60.0]
            allowed = len(recent) < self.per_minute
            if allowed:
                recent.append(now)
            self._seen[user] = recent
            return allowed
