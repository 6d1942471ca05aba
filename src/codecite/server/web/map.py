"""``/web/map``: one repository's map (:mod:`.mapview`), ``focus`` a folder of it."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request, Response

from ... import CodeciteError
from ...errors import UserError
from ..auth import Principal
from ..errors import ApiError, error_response
from ..pictures import load_map
from .data import audit
from .mapview import map_view
from .pages import error_message, gate, page
from .session import server_of

router = APIRouter(include_in_schema=False)


@router.get("/web/map")
def map_page(request: Request) -> Response:
    """One repository's map: ``repo`` (default: the first readable), ``focus`` a folder,
    ``tests=1`` draws test files too."""
    started = time.perf_counter()
    principal, instead = gate(request)
    if principal is None:
        return instead or Response(status_code=500)
    params = request.query_params
    readable = _readable(request, principal)
    repo = params.get("repo", "") or (readable[0] if readable else "")
    focus, tests = params.get("focus", "")[:1000], params.get("tests", "") == "1"
    view, error = None, ""
    try:
        if not repo:
            raise UserError("no repository you may read is served here")
        view = map_view(load_map(request, repo, focus, tests), repo, tests)
        audit(request, 200, started, "web map")
    except (ApiError, CodeciteError) as exc:
        response = error_response(exc)
        error = error_message(response)
        audit(request, response.status_code, started, "web map")
    return page(
        request,
        "map.html",
        404 if error and repo else 200,
        mode="map",
        view=view,
        error=error,
        repo=repo,
        readable=readable,
        focus=focus,
    )


def _readable(request: Request, principal: Principal) -> list[str]:
    server = server_of(request)
    return list(principal.readable(server.pool.names()))
