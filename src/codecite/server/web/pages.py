"""The page's routes: ``/`` (ask; the answer streams from :mod:`.ask`), ``/web/search``,
sign-in and sign-out, and what every page shares (templates, the signed-in gate; the
code view is :mod:`.code`). Every read goes through the API's own functions
(:mod:`..routes`) with the visitor's principal, so the API's access checks apply
unchanged."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from ... import CHUNK_KINDS, LANGUAGES
from ...errors import CodeciteError
from .. import routes
from ..auth import Principal
from ..context import client_address
from ..errors import ApiError, error_response
from ..guards import same_host
from .data import Freshness, audit, freshness_cache, recent_questions
from .mapview import landing_map
from .render import code_url, highlight_css, highlight_lines, share_url
from .session import (
    CSRF_FIELD,
    Visitor,
    check_csrf,
    local_path,
    page_csrf,
    server_of,
    set_csrf_cookie,
    sign_in,
    sign_out,
    visitor,
)

router = APIRouter(include_in_schema=False)

TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(default=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
#: Results of a search page, and lines of each result's snippet.
SEARCH_K = 20
SNIPPET_LINES = 12


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A rendered template (with the CSRF token, and its cookie when new)."""
    principal: Principal | None = getattr(request.state, "principal", None)
    how = getattr(request.state, "visitor_how", "")
    html = TEMPLATES.get_template(template).render(
        csrf=page_csrf(request),
        user=principal.user if principal else "",
        can_sign_out=how == "cookie",
        **context,
    )
    response = HTMLResponse(html, status)
    set_csrf_cookie(request, response)
    return response


def signed_in(request: Request) -> Visitor:
    """The visitor, noted on the request when signed in."""
    v = visitor(request)
    request.state.visitor_how = v.how
    request.state.principal = v.principal
    return v


def gate(request: Request) -> tuple[Principal | None, Response | None]:
    """The signed-in principal (rate-limited as the API is), or the page to show instead."""
    v = signed_in(request)
    if v.principal is None:
        return None, _not_signed_in(request, v)
    if not server_of(request).rate.allow(v.principal.user):
        message = "Too many requests; wait a minute."
        return None, page(request, "error.html", 429, heading="Slow down", message=message)
    return v.principal, None


def _not_signed_in(request: Request, v: Visitor) -> HTMLResponse:
    """The sign-in form, which comes back here afterwards. A link followed from another
    site arrives without the SameSite=Strict cookie: a same-site reload brings it."""
    if v.how == "missing" and request.headers.get("sec-fetch-site") == "cross-site":
        # The reload comes from this site, so it must not ask by itself: ?q= becomes
        # ?draft= (the box is filled, the visitor presses Ask).
        target = request.url.path + _as_draft(request.url.query)
        return HTMLResponse(TEMPLATES.get_template("bounce.html").render(target=target))
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    error = ""
    if v.how in ("expired", "revoked"):
        error = f"Your token has been {v.how}; sign in with a new one."
    return page(
        request, "signin.html", 401 if v.how != "missing" else 200, next=target, error=error
    )


#: The query parameter that says a ``draft`` came from a link on another site.
FROM_LINK = ("via", "link")


def _as_draft(query: str) -> str:
    """A page's query string with ``q`` renamed ``draft`` (shown, not asked), marked
    as coming from a link (:data:`FROM_LINK`: the page says to check it first)."""
    pairs = [("draft" if k == "q" else k, v) for k, v in parse_qsl(query, keep_blank_values=True)]
    if any(k == "draft" for k, _ in pairs):
        pairs.append(FROM_LINK)
    return f"?{urlencode(pairs)}" if pairs else ""


def same_site_navigation(request: Request) -> bool:
    """Whether this page load came from this site (its own links, a reload) or from the
    visitor (a typed address, a bookmark): what browsers say in ``Sec-Fetch-Site``, or
    without it a Referer of this site. Only then may a ``?q=`` ask by itself: a link on
    another site must not make a signed-in browser ask."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    referer = urlsplit(request.headers.get("referer", ""))
    return bool(referer.netloc) and same_host(referer.netloc, request.headers.get("host", ""))


def _wanted_repos(request: Request) -> list[str]:
    """``repos=a,b`` or ``repos=a&repos=b``."""
    names = [n.strip() for v in request.query_params.getlist("repos") for n in v.split(",")]
    return list(dict.fromkeys(n for n in names if n))


@dataclass(frozen=True)
class RepoChoice:
    name: str
    fresh: Freshness
    checked: bool


def _repo_choices(
    request: Request, principal: Principal
) -> tuple[list[RepoChoice], list[str], list[str]]:
    """(the picker's repositories, the selected names, the asked-for names that are
    unknown or unreadable — one message for both, as the API does)."""
    server = server_of(request)
    readable = principal.readable(server.pool.names())
    wanted = _wanted_repos(request)
    denied = [w for w in wanted if w not in readable]
    selected = [w for w in wanted if w in readable] if wanted else readable
    cache = freshness_cache(request)
    choices = [RepoChoice(n, cache.get(server, n), n in selected) for n in readable]
    return choices, selected, denied


def _carry(q: str, repos: list[str], key: str = "q") -> str:
    """The query string that carries the question to the other mode's page."""
    if not q.strip():
        return ""
    query = share_url(q, repos).split("?", 1)[1]
    return query.replace("q=", f"{key}=", 1) if query.startswith("q=") else query


@router.get("/")
def home(request: Request) -> Response:
    """Ask: the repository picker, the question box, the streamed answer."""
    principal, instead = gate(request)
    if principal is None:
        return instead or Response(status_code=500)
    server = server_of(request)
    params = request.query_params
    limit = server.config.limits.max_question_chars
    # ?draft= (from Search, or a link from another site) fills the box without asking
    # a form sends the box's line breaks as CRLF: count them as the box does, one each
    q, draft = (params.get(key, "").replace("\r\n", "\n") for key in ("q", "draft"))
    text = q or draft
    choices, selected, denied = _repo_choices(request, principal)
    wanted = bool(q.strip() and selected and not denied)
    autoask = wanted and len(q) <= limit and same_site_navigation(request)
    notice = ""
    if len(text) > limit:  # shown whole, never cut: the visitor decides what to drop
        notice = (
            f"This question is {len(text):,} characters; the server takes at most "
            f"{limit:,}. Shorten it (keep the error message and the last lines of the "
            "traceback), then press Ask."
        )
    elif (wanted and not autoask) or (draft.strip() and params.get(FROM_LINK[0]) == FROM_LINK[1]):
        notice = "This question came from a link on another site: read it, then press Ask."
    recent = recent_questions(server, principal)
    landing = None
    if not text.strip() and not recent and selected:  # nothing asked yet: the map first
        landing = landing_map(request, selected[0])
    return page(
        request,
        "ask.html",
        mode="ask",
        landing=landing,
        q=text,
        repos=choices,
        denied=denied,
        autoask=autoask,
        notice=notice,
        recent=recent,
        to_ask=_carry(text, selected, "draft"),
        to_search=_carry(text, selected),
        max_chars=limit,
    )


@dataclass(frozen=True)
class HitView:
    repo: str
    location: str
    kind: str
    qualname: str
    url: str
    lines: list[tuple[int, str]]
    stale: bool


def _hit_view(hit: dict[str, Any], back: str) -> HitView:
    content = str(hit.get("content", "")).split("\n")[:SNIPPET_LINES]
    start, end = int(hit["start_line"]), int(hit["end_line"])
    shown = highlight_lines(content, str(hit["path"]), str(hit.get("language", "")))
    qualname = str(hit.get("qualname") or "")
    return HitView(
        str(hit["repo"]),
        f"{hit['path']}:{start}-{end}",
        str(hit.get("kind", "")),
        qualname,
        code_url(str(hit["repo"]), str(hit["path"]), start, end, symbol=qualname, back=back),
        list(enumerate(shown, start)),
        bool(hit.get("stale")),
    )


@router.get("/web/search")
def search_page(request: Request) -> Response:
    """Search: ranked code with path:lines, kind and a highlighted snippet; filters."""
    started = time.perf_counter()
    principal, instead = gate(request)
    if principal is None:
        return instead or Response(status_code=500)
    server = server_of(request)
    params = request.query_params
    q = params.get("q", "")  # never cut: a question over the limit gets the API's message
    lang, kind, path = params.get("lang", ""), params.get("kind", ""), params.get("path", "")[:500]
    choices, selected, denied = _repo_choices(request, principal)
    hits: list[HitView] = []
    error = ""
    if q.strip() and not denied:
        back = request.url.path + "?" + request.url.query
        body = routes.SearchBody(
            query=q,
            repos=selected,
            k=min(SEARCH_K, server.config.limits.max_k),
            filters=routes.FilterBody(
                languages=[lang] if lang else [], path=path, kinds=[kind] if kind else []
            ),
        )
        try:
            found = routes.search(request, body)
            hits = [_hit_view(h, back) for h in found["results"]]
            audit(request, 200, started, "web search")
        except (ApiError, CodeciteError) as exc:
            response = error_response(exc)
            error = error_message(response)
            audit(request, response.status_code, started, "web search")
    return page(
        request,
        "search.html",
        mode="search",
        q=q,
        lang=lang,
        kind=kind,
        path=path,
        languages=sorted(LANGUAGES),
        kinds=list(CHUNK_KINDS),
        repos=choices,
        denied=denied,
        hits=hits,
        show_repo=len(selected) > 1,
        error=error,
        recent=recent_questions(server, principal),
        to_ask=_carry(q, selected, "draft"),
        to_search=_carry(q, selected),
        max_chars=server.config.limits.max_question_chars,
    )


def error_message(response: Response) -> str:
    import json

    body = json.loads(bytes(response.body))
    return str(body["error"]["message"])


@router.get("/web/highlight.css")
def highlight_stylesheet() -> Response:
    return Response(
        highlight_css(), media_type="text/css", headers={"Cache-Control": "public, max-age=3600"}
    )


async def _form(request: Request) -> dict[str, str]:
    raw = (await request.body()).decode("utf-8", "replace")
    return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}


def _csrf_refused(request: Request, form: dict[str, str]) -> Response | None:
    """The error page for a form without this browser's CSRF token (or from another
    site); None when the token is right."""
    try:
        check_csrf(request, form.get(CSRF_FIELD, ""))
    except ApiError as exc:
        signed_in(request)
        audit(request, exc.status, time.perf_counter(), f"web form refused ({exc.message})")
        return page(request, "error.html", exc.status, heading="Refused", message=exc.message)
    return None


@router.post("/web/signin")
async def signin(request: Request) -> Response:
    """Check the token, keep it in the session cookie, go back where the user was."""
    started = time.perf_counter()
    form = await _form(request)
    refused = _csrf_refused(request, form)
    if refused is not None:
        return refused
    target = local_path(form.get("next", "/") or "/")
    server = server_of(request)
    if server.config.auth == "none":
        return RedirectResponse(target, 303)
    token = form.get("token", "").strip()
    client = client_address(request)
    principal, reason = await run_in_threadpool(server.state.check_token, token)
    if principal is None and server.failures.blocked(client):  # guessing: no row each
        server.metrics.denied.labels("throttled").inc()
        message = "Too many failed sign-ins from this address; wait a minute."
        return page(request, "signin.html", 429, next=target, error=message)
    if principal is None:
        server.metrics.denied.labels(reason).inc()
        request.state.note.detail = f"web sign-in refused ({reason})"
        if server.failures.failed(client):
            request.state.note.detail += "; further attempts from this address wait a minute"
        audit(request, 401, started)
        request.state.visitor_how = "missing"
        message = {
            "expired": "This token has expired; ask an administrator for a new one.",
            "revoked": "This token was revoked; ask an administrator for a new one.",
        }.get(reason, "This token is not valid. Check that you copied all of it.")
        return page(request, "signin.html", 401, next=target, error=message)
    request.state.principal = principal
    audit(request, 200, started, "web sign-in")
    response = RedirectResponse(target, 303)
    await run_in_threadpool(sign_in, request, response, token)
    return response


@router.post("/web/signout")
async def signout(request: Request) -> Response:
    """End the session (in the state database: its id never works again) and drop
    both cookies."""
    started = time.perf_counter()
    form = await _form(request)
    refused = _csrf_refused(request, form)
    if refused is not None:
        return refused
    v = visitor(request)
    request.state.principal = v.principal
    audit(request, 200, started, "web sign-out")
    response = RedirectResponse("/", 303)
    await run_in_threadpool(sign_out, request, response)
    return response
