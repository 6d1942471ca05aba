"""``POST /web/ask``: the page's streamed answer. It runs the API's own ``/ask``
(:func:`..routes.ask`, server-sent events) with the visitor's principal, passes its
events through, and adds a ``result`` event: the finished answer as HTML (Markdown
rendered, citations linked, sources marked, which model answered, index freshness)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field, ValidationError

from ... import EXTRACTIVE
from .. import routes
from ..errors import ApiError, error_response
from .data import audit, freshness_cache
from .hood import answer_hood
from .pages import TEMPLATES, signed_in
from .render import (
    CONFIDENCE,
    MARKS,
    abstained,
    answer_html,
    block_views,
    looked_at,
    share_url,
    source_lines,
)
from .session import CSRF_HEADER, check_csrf, server_of

router = APIRouter(include_in_schema=False)


class PageAsk(BaseModel):
    question: str = Field(min_length=1)
    repos: list[str] = Field(default_factory=list, max_length=100)


def _sse(event: str, data: object) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _event(chunk: str) -> tuple[str, str]:
    """(event name, data) of one event as :mod:`..routes` writes it."""
    name, data = "", []
    for line in chunk.split("\n"):
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
    return name, "\n".join(data)


def llm_reason(reason: str, llm: str) -> str:
    """Why this model answered, in a reader's words: the CLI's reasons name ``--llm``,
    endpoints and Ollama, which a reader of the page does not need."""
    if llm == EXTRACTIVE:  # "From the code itself (quoted lines, no AI model)" says it
        return ""
    if reason.startswith("asked for (--llm"):
        return "set in the server's configuration"
    return reason


def result_html(request: Request, answer: dict[str, Any], back: str) -> str:
    """The finished answer as the page shows it."""
    server = server_of(request)
    repo = str(answer.get("repo", ""))
    blocks = block_views(answer, back)
    lead = str(answer.get("lead", ""))
    sources = source_lines(answer, back)
    return TEMPLATES.get_template("_answer.html").render(
        body=answer_html(answer, back, lead if blocks else None),
        blocks=blocks,
        notes=answer_html(answer, back, "See also: " + " ".join(notes))
        if blocks and (notes := [str(n) for n in answer.get("notes") or []])
        else "",
        confidence=str(answer.get("confidence", "")),
        confidence_meaning=CONFIDENCE.get(str(answer.get("confidence", "")), ""),
        cited=[s for s in sources if s.status != "uncited"],
        looked=looked_at(answer, back),
        insufficient=bool(answer.get("insufficient")),
        abstained=abstained(answer),
        flags=[str(f) for f in answer.get("flags", [])],
        llm=str(answer.get("llm", "")),
        llm_reason=llm_reason(str(answer.get("llm_reason", "")), str(answer.get("llm", ""))),
        repo=repo,
        fresh=freshness_cache(request).get(server, repo),
        marks=MARKS,
        share=back,
        hood=answer_hood(answer, back),
    )


async def _with_result(
    request: Request, events: AsyncIterable[str | bytes | memoryview], back: str
) -> AsyncIterator[str]:
    async for chunk in events:
        text = chunk if isinstance(chunk, str) else bytes(chunk).decode("utf-8")
        yield text
        name, data = _event(text)
        if name == "done":
            html = await run_in_threadpool(result_html, request, json.loads(data), back)
            yield _sse("result", {"html": html})


@router.post("/web/ask")
async def page_ask(request: Request) -> Response:
    """Server-sent events ``token``…, ``citations``, ``sources``, ``done`` (as the API),
    then ``result`` (the answer as HTML); or ``error``."""
    started = time.perf_counter()
    try:
        v = signed_in(request)
        if v.principal is None:
            raise ApiError(401, "unauthorized", "you are signed out; reload the page to sign in")
        check_csrf(request, request.headers.get(CSRF_HEADER, ""))
        if not server_of(request).rate.allow(v.principal.user):
            raise ApiError(429, "rate_limited", "too many requests; wait a minute")
        try:
            asked = PageAsk.model_validate_json(await request.body())
        except ValidationError as exc:
            raise ApiError(422, "invalid_request", "send {question, repos}") from exc
        body = routes.AskBody(question=asked.question, repos=asked.repos or None)
        result = await run_in_threadpool(routes.ask, request, body)
    except Exception as exc:
        response = error_response(exc)
        audit(request, response.status_code, started, "web ask")
        return response
    if not isinstance(result, StreamingResponse):  # the browser did not ask for a stream
        audit(request, 200, started, "web ask")
        return JSONResponse(result)
    back = share_url(asked.question, asked.repos)
    return StreamingResponse(
        _with_result(request, result.body_iterator, back),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
