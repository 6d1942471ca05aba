"""Who is using the web page, and CSRF protection for what they change.

The session cookie holds a random session id (HttpOnly, SameSite=Strict, Secure over
HTTPS), never the token: the state database keeps its hash and the token it was made
from (:meth:`BaseStateStore.create_session`). Every request checks it there, so a
sign-out ends it for good (a copied cookie stops working), a revoked or expired token
signs its sessions out at once, and every server process sharing the state database
sees the same sessions. In ``auth = "none"`` mode the visitor is the local user; behind a trusted
proxy, the proxy's user header names them (as for the API).

CSRF: a random ``codecite_csrf`` cookie, and a token the page embeds that is the HMAC of
that cookie keyed by the session (:func:`csrf_token`). Sign-in, sign-out and ask must
send the token back (a form field or the ``X-CSRF-Token`` header); a request another
site makes cannot read it. Requests another site sends are refused as well by
``Sec-Fetch-Site``/``Origin`` (:func:`check_same_origin`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import Request, Response

from ..auth import LOCAL_USER, Principal
from ..context import ServerState, authenticate
from ..errors import ApiError
from ..guards import same_host

SESSION_COOKIE = "codecite_session"
CSRF_COOKIE = "codecite_csrf"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf"
#: How long a session lasts at most (the token's own expiry still applies).
SESSION_MAX_AGE_S = 7 * 24 * 3600


@dataclass(frozen=True)
class Visitor:
    """The principal using the page (None: not signed in), and how they were recognised
    ("cookie", "none", "header") or why not ("missing", "expired", "revoked", ...)."""

    principal: Principal | None
    how: str

    @property
    def signed_in(self) -> bool:
        return self.principal is not None


def server_of(request: Request) -> ServerState:
    server: ServerState = request.app.state.codecite
    return server


def visitor(request: Request) -> Visitor:
    """The page's visitor: from the session cookie, ``auth = "none"``, or the headers
    the API accepts (a bearer token, a trusted proxy's user header)."""
    server = server_of(request)
    config = server.config
    if config.auth == "none":
        return Visitor(LOCAL_USER, "none")
    session = request.cookies.get(SESSION_COOKIE, "")
    if session:
        principal, reason = server.state.check_session(session)
        if principal is None:
            server.metrics.denied.labels(reason).inc()
        return Visitor(principal, "cookie" if principal else reason)
    proxied = bool(config.user_header and request.headers.get(config.user_header))
    if proxied or request.headers.get("authorization"):
        try:
            return Visitor(authenticate(request, server), "header")
        except ApiError:
            return Visitor(None, "invalid")
    return Visitor(None, "missing")


def is_https(request: Request) -> bool:
    return request.url.scheme == "https"


def csrf_seed(request: Request) -> str:
    """The browser's CSRF cookie, or a new value (which :func:`set_csrf_cookie` sets)."""
    seed = request.cookies.get(CSRF_COOKIE, "")
    if not seed or len(seed) > 128:
        seed = secrets.token_urlsafe(32)
        request.state.new_csrf_seed = seed
    return seed


def csrf_token(seed: str, session: str) -> str:
    """The token a page embeds: bound to the browser's CSRF cookie and its session."""
    key = ("codecite-web-csrf:" + session).encode()
    return hmac.new(key, seed.encode(), hashlib.sha256).hexdigest()


def page_csrf(request: Request) -> str:
    return csrf_token(csrf_seed(request), request.cookies.get(SESSION_COOKIE, ""))


def set_csrf_cookie(request: Request, response: Response) -> None:
    """Send a CSRF cookie made for this request (:func:`csrf_seed`), if any."""
    seed = getattr(request.state, "new_csrf_seed", "")
    if seed:
        response.set_cookie(
            CSRF_COOKIE,
            seed,
            httponly=True,
            samesite="strict",
            secure=is_https(request),
            path="/",
        )


def check_same_origin(request: Request) -> None:
    """403 for a request another site's page made (browsers say so in
    ``Sec-Fetch-Site`` and ``Origin``)."""
    site = request.headers.get("sec-fetch-site", "")
    if site and site not in ("same-origin", "none"):
        raise ApiError(403, "csrf", "refused: this request came from another site")
    origin = request.headers.get("origin", "")
    if origin and not same_host(urlsplit(origin).netloc, request.headers.get("host", "")):
        raise ApiError(403, "csrf", "refused: this request came from another site")


def check_csrf(request: Request, sent: str) -> None:
    """403 unless ``sent`` is this browser's CSRF token (and the request is same-origin)."""
    check_same_origin(request)
    seed = request.cookies.get(CSRF_COOKIE, "")
    expected = csrf_token(seed, request.cookies.get(SESSION_COOKIE, "")) if seed else ""
    if not expected or not hmac.compare_digest(expected, sent.strip()):
        raise ApiError(
            403, "csrf", "the page's security token is missing or old; reload the page and retry"
        )


def sign_in(request: Request, response: Response, token: str) -> None:
    """A new server-side session for ``token`` (already checked), its id in the session
    cookie; a fresh CSRF cookie."""
    secure = is_https(request)
    session = server_of(request).state.create_session(token, SESSION_MAX_AGE_S)
    response.set_cookie(
        SESSION_COOKIE,
        session,
        max_age=SESSION_MAX_AGE_S,
        httponly=True,
        samesite="strict",
        secure=secure,
        path="/",
    )
    response.set_cookie(
        CSRF_COOKIE,
        secrets.token_urlsafe(32),
        httponly=True,
        samesite="strict",
        secure=secure,
        path="/",
    )


def sign_out(request: Request, response: Response) -> None:
    """End the session in the state database (its id never works again) and drop the
    cookies."""
    session = request.cookies.get(SESSION_COOKIE, "")
    if session:
        server_of(request).state.revoke_session(session)
    for name in (SESSION_COOKIE, CSRF_COOKIE):
        response.delete_cookie(name, path="/", httponly=True, samesite="strict")


def local_path(target: str) -> str:
    """``target`` when it is a path on this site (``/?q=...``), else ``/``: a sign-in
    never redirects to another site."""
    parts = urlsplit(target)
    if (
        not target.startswith("/")
        or target.startswith("//")
        or parts.scheme
        or parts.netloc
        or "\\" in target
    ):
        return "/"
    return target
