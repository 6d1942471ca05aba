"""MCP over streamable HTTP, for ``codecite serve``: :func:`mcp_http_app` gives the
``/mcp`` ASGI app, which serves while :func:`mcp_lifespan` runs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any
from weakref import WeakKeyDictionary

from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from ..auth import Principal
from ..config import Limits
from ..guards import LOOPBACK_NAMES, canonical_host_headers
from ..repos import RepoPool
from .principal import principal_from_context
from .server import build_mcp


def transport_security(hosts: tuple[str, ...] | list[str]) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding protection for ``hosts`` (any port; ``Origin`` from
    the same names). A wildcard entry (``*``, ``*.example.com``) is beyond the SDK's
    matching: then the server's own Host check (:mod:`..guards`) is the only one."""
    if any("*" in h for h in hosts):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = [f"[{h}]" if ":" in h else h for h in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[p for n in names for p in (n, f"{n}:*")],
        allowed_origins=[
            p
            for n in names
            for scheme in ("http", "https")
            for p in (f"{scheme}://{n}", f"{scheme}://{n}:*")
        ],
    )


class MCPHttpApp:
    """The ASGI app of MCP over streamable HTTP (stateless, JSON responses).

    Route ``/mcp`` to it behind the token check (``api.add_route("/mcp", app)``; an
    ``api.mount("/mcp", app)`` works too, but answers ``POST /mcp`` with a redirect
    to ``/mcp/``) and run :func:`mcp_lifespan` in the host app's lifespan. Run alone
    (``uvicorn``) it handles the ASGI lifespan itself. Until the lifespan runs,
    requests get 503."""

    def __init__(
        self,
        server: MCPServer[Any],
        security: TransportSecuritySettings | None = None,
        max_body_bytes: int = Limits.max_body_bytes,
    ) -> None:
        self.server = server
        self.security = security or transport_security(LOOPBACK_NAMES)
        self.max_body_bytes = max_body_bytes
        self._manager: StreamableHTTPSessionManager | None = None

    @property
    def running(self) -> bool:
        return self._manager is not None

    def _new_manager(self) -> StreamableHTTPSessionManager:
        """A fresh SDK session manager (one can run only once; an app's lifespan may
        run again, e.g. under a second test client). Its Starlette routing is not used:
        the mounting app routes /mcp here."""
        self.server.streamable_http_app(
            streamable_http_path="/",
            stateless_http=True,
            json_response=True,
            transport_security=self.security,
            max_request_body_size=self.max_body_bytes,
        )
        return self.server.session_manager

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Serve MCP requests for the duration of the block."""
        if self._manager is not None:
            raise RuntimeError("the MCP app is already running (mcp_lifespan entered twice)")
        manager = self._new_manager()
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._serve_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        manager = self._manager
        if manager is None:
            await _json_error(
                send, 503, "MCP is not started: run mcp_lifespan(app) in the lifespan"
            )
            return
        canonical_host_headers(scope)  # the SDK compares Host and Origin as written
        await manager.handle_request(scope, receive, send)

    async def _serve_lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        async with self.lifespan():
            await send({"type": "lifespan.startup.complete"})
            while (await receive())["type"] != "lifespan.shutdown":
                pass
        await send({"type": "lifespan.shutdown.complete"})


async def _json_error(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": {"code": status, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


#: The HTTP app of each server given to :func:`mcp_http_app` (for :func:`mcp_lifespan`).
_APPS: WeakKeyDictionary[MCPServer[Any], MCPHttpApp] = WeakKeyDictionary()


def mcp_http_app(
    target: RepoPool | MCPServer[Any],
    principal_for_request: Callable[[], Principal] = principal_from_context,
    *,
    limits: Limits | None = None,
    security: TransportSecuritySettings | None = None,
) -> MCPHttpApp:
    """The ``/mcp`` ASGI app: the tools of :func:`build_mcp` over streamable HTTP.

    ``target``: a pool (the server is built here, asking ``principal_for_request``
    who calls) or a server from :func:`build_mcp`. Stateless (every request stands
    alone, so several server processes can share the traffic) with plain JSON
    responses. ``limits.max_body_bytes`` caps a request body. ``security``: the SDK's
    Host/Origin checks (DNS-rebinding protection, :func:`transport_security`); by
    default only the loopback names are answered."""
    lim = limits or Limits()
    if isinstance(target, MCPServer):
        server = target
    else:
        server = build_mcp(target, principal_for_request, limits=lim)
    app = MCPHttpApp(server, security, lim.max_body_bytes)
    _APPS[server] = app
    return app


def mcp_lifespan(target: MCPHttpApp | MCPServer[Any]) -> AbstractAsyncContextManager[None]:
    """The async context manager that must wrap the host app's life (FastAPI
    ``lifespan``): MCP requests are served only inside it. ``target``: the app of
    :func:`mcp_http_app`, or the server that was given to it."""
    if isinstance(target, MCPHttpApp):
        return target.lifespan()
    app = _APPS.get(target)
    if app is None:
        raise RuntimeError("mcp_lifespan(server): call mcp_http_app(server) first")
    return app.lifespan()
