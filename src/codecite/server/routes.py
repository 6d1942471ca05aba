"""The ``/api/v1`` endpoints. Each checks access first (:func:`readable_repos`), then
calls the public API through the :class:`RepoPool`, and notes what it showed for the
audit row. JSON follows DESIGN.md §8, plus ``repo`` on every result."""

from __future__ import annotations

import json
import time
from collections.abc import Generator, Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import AliasChoices, BaseModel, Field

from .. import EXTRACTIVE, RELATIONS, Answer, Filters, LLMChoice, detect_intent
from ..errors import AmbiguousSymbolError, UserError
from .audit import AuditNote, write_audit
from .auth import Principal
from .context import ServerState
from .errors import ApiError, error_body, error_response
from .refresh import commits_between, verify_signature

router = APIRouter(prefix="/api/v1")


class FilterBody(BaseModel):
    languages: list[str] = Field(default_factory=list, max_length=20)
    path: str = Field("", max_length=500)
    kinds: list[str] = Field(default_factory=list, max_length=10)


class SearchBody(BaseModel):
    #: ``question`` is accepted too (the name /ask takes).
    query: str = Field(min_length=1, validation_alias=AliasChoices("query", "question"))
    repos: list[str] | None = Field(None, max_length=100)
    k: int = Field(10, ge=1)
    filters: FilterBody | None = None
    #: Rank files (each with its best chunks) instead of chunks.
    files: bool = False


class AskBody(BaseModel):
    #: ``query`` is accepted too (the name /search takes).
    question: str = Field(min_length=1, validation_alias=AliasChoices("question", "query"))
    #: One repository, or several (the most relevant one answers), or none: all readable.
    repos: list[str] | None = Field(None, max_length=100)
    repo: str | None = None
    #: "default" (the server's configured answer mode) or "extractive".
    llm: Literal["default", "extractive"] = "default"
    filters: FilterBody | None = None


def _server(request: Request) -> ServerState:
    server: ServerState = request.app.state.codecite
    return server


def _principal(request: Request) -> Principal:
    principal: Principal = request.state.principal
    return principal


def _note(request: Request) -> AuditNote:
    note: AuditNote = request.state.note
    return note


def readable_repos(request: Request, wanted: list[str] | None) -> list[str]:
    """The repositories this request may use: ``wanted`` (each must be readable) or all
    the caller's. An unknown and an unreadable name get the same 403, so names of
    hidden repositories cannot be probed."""
    server, principal = _server(request), _principal(request)
    allowed = principal.readable(server.pool.names())
    if wanted is None:
        if not allowed:
            raise ApiError(403, "forbidden", "this token may read no repository")
        return allowed
    names = list(dict.fromkeys(wanted))
    _note(request).repos = names
    if not names:
        raise ApiError(
            422,
            "invalid_request",
            "repos is an empty list: name at least one repository, or leave repos out to "
            "use every repository you can read",
        )
    for name in names:
        if name not in allowed:
            raise ApiError(403, "forbidden", f"no such repository, or no access: {name}")
    return names


def _filters(body: FilterBody | None) -> Filters | None:
    if body is None:
        return None
    return Filters.parse(body.languages, body.path, body.kinds)


def _check_question(request: Request, text: str) -> None:
    """The limits every surface applies (:meth:`Limits.check_question`): 413 over."""
    _note(request).question = text
    if not text.strip():
        raise ApiError(422, "invalid_request", "the question is empty")
    _server(request).config.limits.check_question(text)


def _location(repo: str, path: str, start: int, end: int) -> str:
    return f"{repo}:{path}:{start}-{end}"


@router.get("/repos", tags=["repositories"])
def list_repos(request: Request) -> dict[str, Any]:
    """The caller's repositories with their index status and staleness."""
    server = _server(request)
    out = []
    for name in _principal(request).readable(server.pool.names()):
        entry: dict[str, Any] = {"name": name}
        try:
            with server.pool.using(name) as index:
                st = index.status()
            entry |= {
                "indexed": True,
                "files": st.files,
                "chunks": st.chunks,
                "embedded_fraction": round(st.embedded_fraction, 4),
                "embedder": st.embedder,
                "indexed_commit": st.indexed_commit,
                "head_commit": st.head_commit,
                # commits on HEAD that the index does not have yet
                "lag_commits": commits_between(
                    server.config.repos[name].path, st.indexed_commit, st.head_commit
                ),
                "stale_files": st.stale_files,
                "branch": server.config.repos[name].branch,
            }
        except UserError as exc:
            entry |= {"indexed": False, "message": str(exc)}
        out.append(entry)
    return {"repos": out}


def _search_files(request: Request, body: SearchBody, names: list[str]) -> dict[str, Any]:
    """``/search`` with ``files``: the best files, each with its best chunks."""
    server = _server(request)
    files = server.pool.search_files(names, body.query, k=body.k, filters=_filters(body.filters))
    note = _note(request)
    note.repos = names
    note.results = [f"{f.repo}:{f.path}" for f in files]
    return {
        "query": body.query,
        "intent": detect_intent(body.query),
        "repos": names,
        "files": [f.to_json() for f in files],
    }


@router.post("/search", tags=["search"])
def search(request: Request, body: SearchBody) -> dict[str, Any]:
    """Ranked code for a query over the caller's repositories (or ``repos``)."""
    server = _server(request)
    _check_question(request, body.query)
    if body.k > server.config.limits.max_k:
        raise ApiError(422, "invalid_request", f"k must be at most {server.config.limits.max_k}")
    names = readable_repos(request, body.repos)
    if body.files:
        return _search_files(request, body, names)
    hits = server.pool.search(names, body.query, k=body.k, filters=_filters(body.filters))
    note = _note(request)
    note.repos = names
    note.results = [
        _location(h.repo, h.hit.chunk.path, h.hit.chunk.start_line, h.hit.chunk.end_line)
        for h in hits
    ]
    intent = detect_intent(body.query)
    return {
        "query": body.query,
        "intent": intent,
        "repos": names,
        "results": [h.to_json() for h in hits],
    }


def _answer_json(repo: str, answer: Answer) -> dict[str, Any]:
    data = answer.to_json()
    data["repo"] = repo
    for source in data["sources"]:
        source["repo"] = repo
    return data


def _choice(server: ServerState, repo: str, mode: str) -> LLMChoice:
    """The server decides which model answers: a request may only ask for less
    (extractive), never name an endpoint (no requests to URLs a caller picks)."""
    if mode == EXTRACTIVE:
        return LLMChoice(None, EXTRACTIVE, "asked for (extractive)")
    with server.pool.using(repo) as index:
        return index.choose_llm(index.config.answer.llm)


def _pick_repo(request: Request, body: AskBody) -> str:
    server = _server(request)
    wanted = [body.repo] if body.repo else body.repos
    names = readable_repos(request, wanted)
    return server.pool.answering(names, body.question, _filters(body.filters))


def _note_answer(note: AuditNote, repo: str, answer: Answer) -> None:
    note.repos = [repo]
    note.results = [
        _location(repo, h.chunk.path, h.chunk.start_line, h.chunk.end_line) for h in answer.sources
    ]
    note.citations = [
        _location(repo, c.path, c.start_line, c.end_line) + ("" if c.verified else " (unverified)")
        for c in answer.citations
    ]


def _sse(event: str, data: object) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


@router.post("/ask", tags=["answers"], response_model=None)
def ask(request: Request, body: AskBody) -> dict[str, Any] | StreamingResponse:
    """A cited answer. With ``Accept: text/event-stream``: events ``token`` (pieces of a
    generated answer), ``citations`` (each with ``verified``), ``sources``, ``done``."""
    server = _server(request)
    _check_question(request, body.question)
    repo = _pick_repo(request, body)
    choice = _choice(server, repo, body.llm)
    filters = _filters(body.filters)
    note = _note(request)
    if "text/event-stream" not in request.headers.get("accept", ""):
        answer = server.pool.ask(repo, body.question, choice, filters=filters)
        _note_answer(note, repo, answer)
        return _answer_json(repo, answer)
    note.deferred = True
    started = time.perf_counter()

    def events() -> Iterator[str]:
        status = 200
        try:
            answer = yield from _stream(server, repo, body.question, choice, filters)
            _note_answer(note, repo, answer)
            data = _answer_json(repo, answer)
            yield _sse("citations", data["citations"])
            yield _sse("sources", data["sources"])
            yield _sse("done", data)
        except Exception as exc:
            response = error_response(exc)
            status = response.status_code
            yield _sse("error", json.loads(bytes(response.body)))
        finally:
            write_audit(server, request, _principal(request).user, status, started, note)

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _stream(
    server: ServerState, repo: str, question: str, choice: LLMChoice, filters: Filters | None
) -> Generator[str, None, Answer]:
    """SSE ``token`` events while the answer is generated; returns the Answer."""
    for item in server.pool.ask_stream(repo, question, choice, filters=filters):
        if isinstance(item, str):
            yield _sse("token", {"text": item})
        else:
            return item
    raise AssertionError("an answer stream ends with its Answer")


@router.get("/repos/{repo}/code", tags=["repositories"])
def code(
    request: Request,
    repo: str,
    path: Annotated[str, Query(max_length=1000)],
    start: Annotated[int, Query(ge=1)] = 1,
    end: Annotated[int | None, Query(ge=1)] = None,
) -> dict[str, Any]:
    """Lines ``start``-``end`` of an indexed file (as it is on disk now, secrets
    redacted as the index redacted them), for showing a citation: at most
    ``max_code_lines`` lines and ``max_code_chars`` characters (``truncated`` says it
    was cut). Only indexed paths (404 otherwise: no path traversal); a range that does
    not fit the file is a 422."""
    server = _server(request)
    readable_repos(request, [repo])
    limits = server.config.limits
    with server.pool.using(repo) as index:
        shown = index.read_lines(
            path, start, end, max_lines=limits.max_code_lines, max_chars=limits.max_code_chars
        )
    _note(request).results = [_location(repo, shown.path, shown.start_line, shown.end_line)]
    return {"repo": repo, **shown.to_json()}


@router.get("/repos/{repo}/symbols/{qualname}/explain", tags=["graph"])
def symbol_explain(
    request: Request,
    repo: str,
    qualname: str,
    path: Annotated[str | None, Query(max_length=1000)] = None,
    llm: Literal["extractive", "default"] = "extractive",
) -> dict[str, Any]:
    """A symbol's documentation, every statement cited (``codecite explain``): by
    qualname or name, ``path`` picking one of several definitions (an ambiguous name
    is a 409 that lists them). ``llm=default``: the server's model writes the prose
    from the facts, outside the repository's lock; its citations are checked."""
    server = _server(request)
    readable_repos(request, [repo])
    note = _note(request)
    note.question = qualname
    choice = _choice(server, repo, llm)
    target = f"{path.strip().strip('/')}::{qualname}" if path else qualname
    try:
        with server.pool.using(repo) as index:
            explanation = index.explain(target)
    except AmbiguousSymbolError as exc:
        listed = "; ".join(f"{p}:{s} {q} ({k})" for p, s, _, q, k in exc.candidates)
        message = f"{qualname!r} names {len(exc.candidates)} definitions in {repo}: {listed}"
        raise ApiError(409, "ambiguous", f"{message}; pass ?path=FILE to pick one") from None
    except UserError as exc:  # no such symbol (nothing here calls a model)
        raise ApiError(404, "not_found", str(exc)) from None
    if choice.llm is not None:  # outside the lock: writing the prose reads no index
        index.write_prose(explanation, choice.llm)
    s = explanation.symbol
    note.results = [_location(repo, s.path, s.start_line, explanation.end_line)]
    note.citations = [
        _location(repo, c.path, c.start_line, c.end_line) + ("" if c.verified else " (unverified)")
        for c in explanation.citations
    ]
    return {"repo": repo, **explanation.to_json()}


@router.get("/repos/{repo}/symbols/{qualname}/{relation}", tags=["graph"])
def symbol_relation(
    request: Request, repo: str, qualname: str, relation: Literal["callers", "callees", "tests"]
) -> dict[str, Any]:
    """Callers, callees or tests of a symbol (qualname, or a name: all matches)."""
    server = _server(request)
    readable_repos(request, [repo])
    assert relation in RELATIONS
    with server.pool.using(repo) as index:
        symbols = index.find_symbol(qualname)
        found: list[dict[str, Any]] = [
            {
                "symbol": {
                    "qualname": s.qualname,
                    "path": s.path,
                    "start_line": s.start_line,
                    "end_line": s.end_line,
                    "kind": s.kind,
                },
                relation: [
                    {
                        "qualname": c.qualname,
                        "path": c.path,
                        "start_line": c.start_line,
                        "end_line": c.end_line,
                        "kind": c.kind,
                        "line": line,
                        "citation": f"{c.path}:{c.start_line}-{c.end_line}",
                    }
                    for c, line in index.related(s, relation)
                ],
            }
            for s in symbols
        ]
    if not found:
        raise ApiError(404, "not_found", f"no symbol named {qualname!r} in {repo}")
    _note(request).results = [_location(repo, s.path, s.start_line, s.end_line) for s in symbols]
    return {"repo": repo, "query": qualname, "relation": relation, "matches": found}


@router.post("/repos/{repo}/reindex", tags=["admin"], status_code=202)
def reindex(
    request: Request, repo: str, full: Annotated[bool, Body(embed=True)] = False
) -> dict[str, Any]:
    """Start an incremental (or ``full``) re-index in the background (admin only)."""
    server = _server(request)
    if not _principal(request).admin:
        raise ApiError(403, "forbidden", "re-indexing needs an admin token")
    readable_repos(request, [repo])
    job = server.jobs.start(server.config.repos[repo], full=full)
    return {"job": job.to_json(), "status_url": f"/api/v1/jobs/{job.id}"}


@router.post("/repos/{repo}/refresh", tags=["admin"], status_code=202)
async def refresh_webhook(request: Request, repo: str) -> dict[str, Any]:
    """A push webhook (GitHub ``X-Hub-Signature-256``, Gitea ``X-Gitea-Signature``,
    GitLab ``X-Gitlab-Token``) signed with the repository's ``webhook_secret``: the
    server-owned clone is fast-forwarded to its branch, then indexed incrementally. No
    token: the signature is the authentication. An unknown repository, one without a
    secret and a bad signature all answer 404 alike."""
    server = _server(request)
    config = server.config.repos.get(repo)
    body = await request.body()
    _note(request).repos = [repo]
    if config is None or not verify_signature(config.webhook_secret, body, request.headers):
        raise ApiError(404, "not_found", "no such webhook")
    job = server.jobs.start(config, pull=bool(config.branch))
    return {"job": job.to_json()}


@router.get("/jobs/{job_id}", tags=["admin"])
def job_status(request: Request, job_id: str) -> dict[str, Any]:
    """A re-index job's status (an admin of its repository only)."""
    server = _server(request)
    principal = _principal(request)
    if not principal.admin:
        raise ApiError(403, "forbidden", "job status needs an admin token")
    job = server.jobs.get(job_id)
    # A job of a repository this admin may not read is "no such job", as an unknown one.
    if job is None or not principal.can_read(job.repo):
        raise ApiError(404, "not_found", f"no such job: {job_id}")
    _note(request).repos = [job.repo]
    return {"job": job.to_json()}


__all__ = ["error_body", "router"]
