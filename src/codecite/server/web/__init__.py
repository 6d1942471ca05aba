"""The web page for people who do not run a CLI (PMs, QA): ``/`` asks, ``/web/search``
searches, ``/web/code`` shows a citation in its file. Server-rendered HTML (Jinja2), one
small script and a stylesheet shipped in this package: no build step, no CDN.

Security: the session cookie holds a server-side session id, never the token
(HttpOnly, SameSite=Strict; revoked at sign-out), every
state-changing request carries a CSRF token (:mod:`.session`), the Content-Security-Policy
allows only this site's own script and styles (no inline code), and every read goes
through the API's functions with the visitor's principal (:mod:`.pages`, :mod:`.ask`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from fastapi import FastAPI, Request, Response
from fastapi.staticfiles import StaticFiles

from .data import FreshnessCache

STATIC = Path(__file__).parent / "static"
#: No inline script or style, nothing from another site, no framing.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def is_page_path(path: str) -> bool:
    return path == "/" or path.startswith("/web/")


def install_web(app: FastAPI) -> None:
    """Add the page's routes, its static files and its security headers to ``app``."""
    from .ask import router as ask_router
    from .code import router as code_router
    from .map import router as map_router
    from .pages import router as pages_router

    app.state.codecite_freshness = FreshnessCache()
    app.include_router(pages_router)
    app.include_router(ask_router)
    app.include_router(code_router)
    app.include_router(map_router)
    app.mount("/web/static", StaticFiles(directory=STATIC), name="web-static")

    @app.middleware("http")
    async def page_headers(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        if is_page_path(request.url.path):
            for name, value in SECURITY_HEADERS.items():
                response.headers.setdefault(name, value)
            if not request.url.path.startswith("/web/static/") and request.url.path != (
                "/web/highlight.css"
            ):
                response.headers["Cache-Control"] = "no-store"
        return response


__all__ = ["install_web", "is_page_path"]
