"""``/web/code``: a citation in its file. The lines around it with line numbers (the
cited range highlighted by Pygments' classes), the symbol's callers, callees and tests
from the code graph as links and as a picture (:mod:`.hood`), the index's freshness
and a permalink. The file is read by :meth:`codecite.Index.read_lines` (as ``/code``
and MCP ``read_code`` read it): only indexed files of readable repositories, secrets
redacted as the index redacted them."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Request, Response
from markupsafe import Markup

from ... import FileLines
from ...errors import CodeciteError, LineRangeError
from .. import routes
from ..errors import ApiError, error_response
from .data import audit, freshness_cache
from .hood import hood_svg
from .pages import error_message, gate, page
from .render import code_url, highlight_lines
from .session import local_path, server_of

router = APIRouter(include_in_schema=False)

#: Lines shown before and after a citation (few before: the cited lines stay in sight
#: below the page's header, on a phone too).
CONTEXT_BEFORE = 8
CONTEXT_AFTER = 20


@dataclass(frozen=True)
class Related:
    qualname: str
    location: str
    url: str


@dataclass(frozen=True)
class Relation:
    key: str
    title: str
    empty: str
    items: list[Related]


RelationName = Literal["callers", "callees", "tests"]
RELATION_TITLES: dict[RelationName, tuple[str, str]] = {
    "callers": ("Called by", "Nothing in the index calls it."),
    "callees": ("Calls", "It calls nothing the index knows."),
    "tests": ("Tests", "No test in the index exercises it."),
}


#: Chunk kinds whose lines have a place in the code graph (not markdown sections,
#: text files or line windows).
GRAPH_KINDS = frozenset({"function", "method", "class"})
#: A file this short is shown whole at once (nothing folded away).
WHOLE_FILE_LINES = 60


def _symbol_at(request: Request, repo: str, path: str, start: int, end: int) -> str:
    """The narrowest function, method or class chunk holding the lines ("" when none:
    a markdown section, a text file, top-level code)."""
    with server_of(request).pool.using(repo) as index:
        chunks = [
            c
            for c in index.chunks(path)
            if c.path == path
            and c.start_line <= start
            and end <= c.end_line
            and c.qualname
            and c.kind in GRAPH_KINDS
        ]
    chunks.sort(key=lambda c: c.end_line - c.start_line)
    return chunks[0].qualname if chunks else ""


def _graph(
    request: Request, repo: str, path: str, symbol: str, back: str
) -> tuple[list[Relation], Markup | None]:
    """The symbol's callers, callees and tests, as :meth:`codecite.Index.definition_related`
    counts them (a class: its construction sites, its methods' callers and tests), and
    its neighbourhood drawn (:meth:`codecite.Index.neighbourhood`; None when alone)."""
    with server_of(request).pool.using(repo) as index:
        found = [c for c in index.find_symbol(symbol) if c.kind in GRAPH_KINDS]
        heads = [c for c in found if c.path == path] or found[:1]
        if not heads:  # not a definition in the graph (a section, a window): no panel
            return [], None
        related = {
            relation: index.definition_related(heads[0], relation) for relation in RELATION_TITLES
        }
        hood = index.neighbourhood(heads[0])
    return [
        Relation(
            relation,
            title,
            empty,
            [
                Related(
                    c.qualname,
                    f"{c.path}:{c.start_line}-{c.end_line}",
                    code_url(repo, c.path, c.start_line, c.end_line, symbol=c.qualname, back=back),
                )
                for c, _line in related[relation]
            ],
        )
        for relation, (title, empty) in RELATION_TITLES.items()
    ], hood_svg(hood, repo, back)


def _read(request: Request, repo: str, path: str, first: int, last: int | None) -> FileLines:
    """Lines ``first``-``last`` of the file, read as every surface reads file text."""
    limits = server_of(request).config.limits
    with server_of(request).pool.using(repo) as index:
        return index.read_lines(
            path, first, last, max_lines=limits.max_code_lines, max_chars=limits.max_code_chars
        )


@router.get("/web/code")
def code_page(
    request: Request,
    repo: str,
    path: str,
    start: int = 1,
    end: int | None = None,
    symbol: str = "",
    back: str = "",
    whole: bool = False,
) -> Response:
    """The cited lines in their file: line numbers, the cited range highlighted, the
    symbol's callers/callees/tests, a permalink."""
    started = time.perf_counter()
    principal, instead = gate(request)
    if principal is None:
        return instead or Response(status_code=500)
    server = server_of(request)
    back = local_path(back) if back else ""
    start = max(1, start)
    end = max(start, end or start)
    try:
        routes.readable_repos(request, [repo])
        limits = server.config.limits
        last = end + CONTEXT_AFTER
        first = 1 if (whole or last <= limits.max_code_lines) else max(1, start - CONTEXT_BEFORE)
        try:
            shown = _read(request, repo, path, first, None if whole else last)
            if shown.truncated and shown.end_line < end and first < start - CONTEXT_BEFORE:
                first = max(1, start - CONTEXT_BEFORE)  # long lines: start near the citation
                shown = _read(request, repo, path, first, None if whole else last)
        except LineRangeError as exc:  # the file got shorter since it was cited
            raise ApiError(404, "not_found", str(exc)) from None
        total = shown.total_lines
        if total <= WHOLE_FILE_LINES and not whole:  # a small file: all of it at once
            whole = True
            if first > 1 or shown.end_line < total:
                first, shown = 1, _read(request, repo, path, 1, None)
        if start > total:
            raise ApiError(404, "not_found", f"{path} has {total} lines now; line {start} is gone")
        end = min(end, total)
        numbered = list(enumerate(highlight_lines(shown.lines, path, shown.language), first))
        if not whole:
            numbered = [(n, line) for n, line in numbered if n >= start - CONTEXT_BEFORE]
        symbol = symbol or _symbol_at(request, repo, path, start, end)
        graph, hood = _graph(request, repo, path, symbol, back) if symbol else ([], None)
    except (ApiError, CodeciteError) as exc:
        response = error_response(exc)
        audit(request, response.status_code, started, "web code view")
        heading = "Not found" if response.status_code in (403, 404) else "Could not show the code"
        return page(
            request,
            "error.html",
            response.status_code,
            heading=heading,
            message=error_message(response),
            back=back,
        )
    fresh = freshness_cache(request).get(server, repo)
    note = request.state.note
    note.repos = [repo]
    note.results = [f"{repo}:{path}:{numbered[0][0]}-{numbered[-1][0]}"] if numbered else []
    audit(request, 200, started, "web code view")
    here = {"repo": repo, "path": path, "start": start, "end": end}
    permalink = f"{request.base_url}web/code?{urlencode(here)}"
    whole_url = (
        f"/web/code?{urlencode({**here, 'symbol': symbol, 'back': back, 'whole': 1})}#L{start}"
    )
    return page(
        request,
        "code.html",
        mode="",
        repo=repo,
        path=path,
        start=start,
        end=end,
        first=numbered[0][0] if numbered else start,
        last=numbered[-1][0] if numbered else end,
        total=total,
        language=shown.language,
        truncated=shown.truncated,
        lines=numbered,
        symbol=symbol,
        graph=graph,
        hood=hood,
        back=back,
        fresh=fresh,
        file_changed=path in fresh.changed_paths,
        permalink=permalink,
        whole_url=whole_url,
    )
