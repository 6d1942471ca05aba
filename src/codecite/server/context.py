"""What the endpoints share (:class:`ServerState`, ``request.app.state.codecite``) and
who is asking: the peer, the client behind trusted proxies, the authenticated
:class:`Principal`."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from .auth import LOCAL_USER, Principal
from .config import ServerConfig
from .errors import ApiError
from .guards import FailureThrottle, RateLimiter
from .jobs import Jobs, QueueJobs
from .metrics import Metrics
from .repos import RepoPool
from .state import BaseStateStore


@dataclass
class ServerState:
    """Everything the endpoints share (``request.app.state.codecite``)."""

    config: ServerConfig
    state: BaseStateStore
    pool: RepoPool
    jobs: Jobs | QueueJobs
    metrics: Metrics
    rate: RateLimiter
    failures: FailureThrottle


def peer_address(request: Request) -> str:
    """The address the connection comes from (a proxy's, behind one)."""
    return request.client.host if request.client else ""


def client_address(request: Request) -> str:
    """Who is asking, for the audit log and the failed-authentication throttle: the peer,
    or behind a trusted proxy the nearest address in ``X-Forwarded-For`` that is not one
    of the trusted proxies (a client cannot push its way past them by sending one)."""
    peer = peer_address(request)
    server: ServerState | None = getattr(request.app.state, "codecite", None)
    proxies = server.config.trusted_proxies if server is not None else ()
    if peer not in proxies:
        return peer
    hops = [h.strip() for h in request.headers.get("x-forwarded-for", "").split(",")]
    return next((h for h in reversed(hops) if h and h not in proxies), peer)


def authenticate(request: Request, server: ServerState) -> Principal:
    """The caller, or :class:`ApiError` 401. A trusted proxy's user header counts only
    from the configured proxy addresses (and the user needs an active token, whose
    repositories apply)."""
    config = server.config
    if config.auth == "none":
        return LOCAL_USER
    if config.user_header and peer_address(request) in config.trusted_proxies:
        user = request.headers.get(config.user_header, "").strip()
        if user:
            principal = server.state.principal_for_user(user)
            if principal is None:
                raise ApiError(401, "unauthorized", f"user {user!r} has no active token")
            return principal
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        server.metrics.denied.labels("missing").inc()
        raise ApiError(
            401,
            "unauthorized",
            "missing token: send Authorization: Bearer TOKEN "
            "(an admin creates one with `codecite token create`)",
            {"WWW-Authenticate": "Bearer"},
        )
    principal, reason = server.state.check_token(token.strip())
    if principal is None:
        server.metrics.denied.labels(reason).inc()
        raise ApiError(
            401,
            "unauthorized",
            f"invalid token ({reason})",
            {"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    return principal
