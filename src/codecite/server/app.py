"""The HTTP server: ``create_app(config)`` builds the FastAPI application.

Layers (DESIGN.md §11): HTTP → auth (token → :class:`Principal` → readable repos) →
the public API per allowed repository (:class:`RepoPool`) → fusion across repositories.
The access check runs before retrieval; every request to ``/api``, and every MCP tool
call, allowed or denied, leaves one audit row (user, client, endpoint, repos, question,
result and citation locations — never code — status, latency); an ``/mcp`` request
refused before any tool ran (401, 413, 421, 429) leaves one too. Errors are JSON
``{"error": {"code", "message"}}``; nothing returns a traceback.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from prometheus_client import generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..errors import CodeciteError, ConfigError
from .access import log_request
from .audit import AuditNote, write_audit
from .auth import Principal
from .config import ServerConfig
from .context import ServerState, authenticate, client_address
from .errors import ApiError, error_body, error_response
from .guards import VERDICT, FailureThrottle, RateLimiter, RequestGate
from .jobs import Jobs, QueueJobs
from .jobs.poll import Poller
from .mcp import CURRENT_CLIENT, CURRENT_PRINCIPAL
from .metrics import Metrics, route_name, route_templates
from .repos import RepoPool
from .state import BaseStateStore, open_state

log = logging.getLogger(__name__)

#: Paths that need no token. The web page ("/" and "/web/...") signs its visitors in with
#: its own session cookie (server/web/session.py); /slack/commands checks Slack's signature.
PUBLIC_PATHS = frozenset(
    {"/healthz", "/docs", "/openapi.json", "/docs/oauth2-redirect"} | {"/", "/slack/commands"}
)


WEBHOOK_PATH = re.compile(r"^/api/v1/repos/[A-Za-z0-9][A-Za-z0-9._-]*/refresh$")


def is_public(path: str) -> bool:
    """Paths that need no token: operations, API docs, and signed webhooks (their
    signature is checked by the endpoint)."""
    return (
        path in PUBLIC_PATHS
        or path.startswith(("/docs", "/web/"))
        or WEBHOOK_PATH.match(path) is not None
    )


def _refusal(request: Request, server: ServerState) -> ApiError | None:
    """Why :class:`RequestGate` refused this request before the app saw it, if it did."""
    verdict = request.scope.get(VERDICT, "")
    if verdict == "host":
        server.metrics.denied.labels("host").inc()
        return ApiError(
            421,
            "host_not_allowed",
            "this server does not answer for that host name; if it is yours, an admin "
            "adds it to allowed_hosts in codecite-server.toml",
        )
    if verdict == "too_large":
        limit = server.config.limits.max_body_bytes
        return ApiError(413, "too_large", f"request body over {limit} bytes; send less")
    return None


def _checked_principal(request: Request, server: ServerState) -> Principal:
    """:func:`authenticate`, with failures counted per client address. Only failures are
    throttled: past the limit a further failure from the address gets 429 (and no audit
    row each), while a valid token passes whatever else its address sent (behind a NAT
    or a proxy, one client's bad tokens must not lock out everyone else)."""
    client = client_address(request)
    note: AuditNote = request.state.note
    try:
        return authenticate(request, server)
    except ApiError as exc:
        if exc.status != 401:
            raise
        if server.failures.blocked(client):
            server.metrics.denied.labels("throttled").inc()
            note.unaudited = True
            wait = str(server.failures.retry_after(client))
            raise ApiError(
                429,
                "rate_limited",
                f"too many failed authentications from this address; wait {wait} s and "
                "check the token (`codecite token list` shows which are active)",
                {"Retry-After": wait},
            ) from None
        if server.failures.failed(client):
            note.detail = (
                f"{server.config.limits.failed_auth_per_minute} failed authentications in a "
                "minute from this address: further failed attempts are refused for a minute"
            )
        raise


def _install_middleware(app: FastAPI, server: ServerState) -> None:
    @app.middleware("http")
    async def guard(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        started = time.perf_counter()
        path = request.url.path
        request.state.note = AuditNote()
        request.state.principal = None
        audited = path.startswith(("/api/", "/mcp"))
        response: Response
        try:
            refused = _refusal(request, server)
            if refused is not None:
                raise refused
            if not is_public(path):
                principal = _checked_principal(request, server)
                request.state.principal = principal
                if not server.rate.allow(principal.user):
                    raise ApiError(
                        429,
                        "rate_limited",
                        "too many requests; wait a minute",
                        {"Retry-After": "60"},
                    )
            # MCP tools read the caller from a context variable (the SDK carries it over).
            token = CURRENT_PRINCIPAL.set(request.state.principal)
            client = CURRENT_CLIENT.set(client_address(request))
            try:
                response = await call_next(request)
            finally:
                CURRENT_CLIENT.reset(client)
                CURRENT_PRINCIPAL.reset(token)
        except Exception as exc:
            response = error_response(exc)
        name = route_name(request)
        elapsed = time.perf_counter() - started
        server.metrics.requests.labels(name, str(response.status_code)).inc()
        server.metrics.latency.labels(name).observe(elapsed)
        log_request(request, name, response.status_code, elapsed)  # no query string
        note: AuditNote = request.state.note
        if path == "/mcp" and response.status_code < 400:
            audited = False  # each tool call writes its own row (mcp/server.py)
        if audited and not note.deferred and not note.unaudited:
            principal = request.state.principal
            write_audit(
                server,
                request,
                principal.user if principal else "-",
                response.status_code,
                started,
                note,
            )
        return response


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(CodeciteError)
    async def codecite_error(_: Request, exc: CodeciteError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'body'}: {e.get('msg', '')}"
            for e in errors
        )
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        not_json = kind not in ("application/json", "") and not kind.endswith("+json")
        if not_json and any(tuple(e.get("loc", ())) == ("body",) for e in errors):
            problems += (
                f"; the body was sent as {kind}: send a JSON object with the header "
                "Content-Type: application/json (curl: -H 'Content-Type: application/json')"
            )
        return JSONResponse(error_body("invalid_request", problems or "invalid request"), 422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {404: "not_found", 405: "method_not_allowed"}
        return JSONResponse(
            error_body(codes.get(exc.status_code, "http_error"), str(exc.detail)), exc.status_code
        )

    @app.exception_handler(Exception)
    async def internal(_: Request, exc: Exception) -> JSONResponse:
        return error_response(exc)


def create_app(
    config: ServerConfig, *, state: BaseStateStore | None = None, pool: RepoPool | None = None
) -> FastAPI:
    """The server for ``config`` (the state database and the repositories are opened
    here unless given)."""
    from .mcp import build_mcp, mcp_http_app, mcp_lifespan, principal_from_context
    from .mcp.http_app import transport_security
    from .pictures import router as pictures_router
    from .routes import router
    from .slack import install_slack
    from .web import install_web

    if config.auth == "none" and "*" in config.hosts:
        raise ConfigError(
            'allowed_hosts = ["*"] turns off the DNS-rebinding check, which is what keeps '
            'web pages from reading a server with auth = "none": list the host names instead'
        )
    store = state or open_state(config.state)
    if config.store_replicas:  # queries read from the replicas, writes go to the primary
        from .. import register_replicas

        register_replicas(config.store, config.store_replicas)
    repos = pool or RepoPool(config.repos, config.overrides)
    server = ServerState(
        config,
        store,
        repos,
        # A shared PostgreSQL store: jobs go to its queue, run by `codecite worker`.
        QueueJobs(config.store, config.overrides) if config.store else Jobs(config.overrides),
        Metrics(),
        RateLimiter(config.limits.requests_per_minute),
        FailureThrottle(config.limits.failed_auth_per_minute),
    )
    mcp_server = build_mcp(repos, principal_from_context, limits=config.limits, audit=store.audit)
    mcp_app = mcp_http_app(
        mcp_server, limits=config.limits, security=transport_security(config.hosts)
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        pruned = store.prune_audit(config.audit_retention_days)
        if pruned:
            log.info("pruned %d audit rows older than %d days", pruned, config.audit_retention_days)
        if isinstance(server.jobs, QueueJobs):
            server.jobs.app  # noqa: B018 - the job queue's schema, before the first request
        else:  # jobs a killed server left unfinished
            server.jobs.resume(config.repos.values())
        poller = Poller(list(config.repos.values()), server.jobs.start, repos.indexed_commit)
        poller.start()
        try:
            async with mcp_lifespan(mcp_app):
                yield
        finally:
            poller.stop()
            repos.close()
            if isinstance(server.jobs, QueueJobs):
                server.jobs.close()

    app = FastAPI(
        title="codecite",
        version=__version__,
        lifespan=lifespan,
        description="Ask questions about your code; answers cite path:start-end.",
    )
    app.state.codecite = server
    _install_errors(app)
    _install_middleware(app, server)
    app.include_router(router)
    app.include_router(pictures_router)
    install_web(app)
    install_slack(app)

    @app.get("/healthz", tags=["ops"])
    def healthz() -> dict[str, Any]:
        return {"status": "ok", "version": __version__, "repos": len(config.repos)}

    @app.get("/metrics", tags=["ops"])
    def metrics(request: Request) -> Response:
        """Prometheus metrics, labelled by route template; an admin token reads them
        (``Authorization: Bearer``, as Prometheus' ``authorization`` setting sends it)."""
        principal: Principal | None = request.state.principal
        if principal is None or not principal.admin:
            raise ApiError(403, "forbidden", "metrics need an admin token")
        return Response(generate_latest(server.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    # A plain route, not a mount: a mount answers POST /mcp with a redirect to /mcp/.
    # Starlette runs a non-function endpoint as an ASGI app; its type hint knows only functions.
    app.add_route("/mcp", mcp_app, methods=["GET", "POST", "DELETE"])  # type: ignore[arg-type]
    app.state.codecite_templates = route_templates(app.routes)
    # Outermost: the Host check and the body limit run before anything else reads.
    app.add_middleware(
        RequestGate, max_body_bytes=config.limits.max_body_bytes, allowed_hosts=config.hosts
    )
    return app
