"""``GET /api/v1/repos/{repo}/map``: the system map of a repository (``codecite map``) as
JSON, SVG or Mermaid, after the same access check as every endpoint; :func:`load_map`
is what the web page's Map view reads through."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response

from .. import SystemMap, UserError, draw_map
from .errors import ApiError
from .routes import _note, _server, readable_repos

router = APIRouter(prefix="/api/v1")

#: Boxes a map may be asked for at most.
MAX_BOXES = 60


def load_map(
    request: Request, repo: str, focus: str = "", tests: bool = False, max_boxes: int = 25
) -> SystemMap:
    """The map of ``repo`` (a 404 naming its parts when ``focus`` names none), for a
    visitor who may read it."""
    server = _server(request)
    readable_repos(request, [repo])
    note = _note(request)
    note.question = f"map {focus}".strip()
    try:
        with server.pool.using(repo) as index:
            system = index.map(focus=focus, max_boxes=max_boxes, tests=tests)
    except UserError as exc:
        raise ApiError(404, "not_found", str(exc)) from None
    note.results = [f"{repo}:{b.id}" for b in system.boxes]
    return system


@router.get("/repos/{repo}/map", tags=["graph"], response_model=None)
def repo_map(
    request: Request,
    repo: str,
    focus: Annotated[str, Query(max_length=1000)] = "",
    tests: bool = False,
    max_boxes: Annotated[int, Query(ge=2, le=MAX_BOXES)] = 25,
    format: Literal["json", "svg", "mermaid"] = "json",
) -> dict[str, Any] | Response:
    """The repository's parts as boxes sized by their code and the imports and calls
    between them as weighted arrows, every box and arrow cited (``codecite map``):
    ``focus`` opens one folder, ``tests`` draws test files too. ``format=svg``: the
    picture laid out on the server; ``mermaid``: flowchart text."""
    system = load_map(request, repo, focus, tests, max_boxes)
    if format == "json":
        return {"repo": repo, **system.to_json()}
    media = "image/svg+xml" if format == "svg" else "text/plain; charset=utf-8"
    return Response(draw_map(system, format), media_type=media)
