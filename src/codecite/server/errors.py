"""Errors as the server answers them: ``{"error": {"code", "message"}}`` with a status
(docs/DESIGN.md §11). :func:`error_response` maps every exception to one; nothing returns a
traceback. Shared by the API routes, the web page, Slack and the app's handlers."""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi.responses import JSONResponse

from ..errors import (
    ConfigError,
    IndexCorruptError,
    IndexMissingError,
    LineRangeError,
    LLMError,
    NotIndexedFileError,
    TooLargeError,
    UserError,
)

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An error answered as ``{"error": {"code", "message"}}`` with ``status``."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def error_response(exc: BaseException) -> JSONResponse:
    if isinstance(exc, ApiError):
        return JSONResponse(error_body(exc.code, exc.message), exc.status, headers=exc.headers)
    if isinstance(exc, IndexMissingError):
        return JSONResponse(error_body("not_indexed", str(exc)), 409)
    if isinstance(exc, IndexCorruptError):
        return JSONResponse(error_body("index_damaged", str(exc)), 500)
    if isinstance(exc, LLMError):  # the model endpoint failed: not the caller's fault
        log.warning("the answer model failed: %s", exc)
        return JSONResponse(error_body("llm_unavailable", public_llm_message(exc)), 502)
    if isinstance(exc, NotIndexedFileError):  # one answer for "outside", "skipped", "none"
        return JSONResponse(error_body("not_found", "no such indexed file"), 404)
    if isinstance(exc, TooLargeError):
        return JSONResponse(error_body("too_large", str(exc)), 413)
    if isinstance(exc, LineRangeError):
        return JSONResponse(error_body("invalid_request", str(exc)), 422)
    if isinstance(exc, ConfigError):
        return JSONResponse(error_body("server_config", str(exc)), 500)
    if isinstance(exc, UserError):
        return JSONResponse(error_body("bad_request", str(exc)), 400)
    log.error("internal error", exc_info=exc)
    return JSONResponse(error_body("internal", "internal error; the server log has details"), 500)


#: Where a model endpoint's address shows in its errors: URLs and host:port pairs.
_ENDPOINT = re.compile(
    r"\b[a-z][a-z0-9+.-]*://[^\s)\]'\"]+|\b[\w.-]+\.\w+:\d{2,5}\b|\[[0-9a-f:]+\]:\d+"
)


def public_llm_message(exc: LLMError) -> str:
    """A model failure as a caller may read it: without the endpoint's address (the
    server's log has the whole message)."""
    text = _ENDPOINT.sub("the model endpoint", str(exc))
    return (
        f"the answer model failed: {text} (the server's log names the endpoint; send "
        '"llm": "extractive" for an answer without the model)'
    )
