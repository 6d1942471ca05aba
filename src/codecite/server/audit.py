"""The audit row of a request (docs/DESIGN.md §11): what an endpoint notes
(:class:`AuditNote`) and writing it (:func:`write_audit`). Every request to ``/api``,
and every MCP tool call, allowed or denied, leaves one row (locations, never code)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from fastapi import Request

from .context import ServerState, client_address
from .state import AuditRecord

log = logging.getLogger(__name__)


@dataclass
class AuditNote:
    """What an endpoint adds to its request's audit row."""

    repos: list[str] = field(default_factory=list)
    question: str = ""
    results: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    detail: str = ""
    #: Set by a streaming endpoint that writes its own row when the stream ends.
    deferred: bool = False
    #: A refusal of a throttled client: counted in the metrics, no row (a flood of
    #: bad tokens must not fill the log; the row that started the throttle says so).
    unaudited: bool = False


def write_audit(
    server: ServerState, request: Request, user: str, status: int, started: float, note: AuditNote
) -> None:
    try:
        server.state.audit(
            AuditRecord(
                time=time.time(),
                user=user,
                client=client_address(request),
                method=request.method,
                endpoint=request.url.path,
                status=status,
                latency_ms=round((time.perf_counter() - started) * 1000, 3),
                repos=note.repos,
                question=note.question,
                results=note.results,
                citations=note.citations,
                detail=note.detail,
            )
        )
    except Exception:  # an audit failure is logged loudly but does not hide the answer
        log.exception("could not write the audit row")
