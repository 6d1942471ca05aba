"""The server's access log: one line per request with the client, the method, the
endpoint's route template (``/web/search``, ``/api/v1/repos/{repo}/code``), the status
and the milliseconds it took (issue 39). Never the query string nor a path parameter:
questions travel in them (``GET /web/search?q=...``, ``GET /?q=...``) and a question may
hold a pasted secret. A path no route serves is shown scrubbed as questions are.

``codecite serve`` turns uvicorn's own access log off (it writes the request line,
query string included) and prints this one in its place (:func:`uvicorn_log_config`).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from fastapi import Request

from .context import client_address
from .metrics import UNMATCHED
from .state.audit import clean

#: The logger of the access lines (INFO).
ACCESS_LOGGER = "codecite.server.access"
#: Longest unmatched path shown.
MAX_SHOWN_PATH = 200

log = logging.getLogger(ACCESS_LOGGER)


def log_request(request: Request, endpoint: str, status: int, seconds: float) -> None:
    """One access line: ``127.0.0.1 "GET /web/search" 200 12.3 ms``."""
    if not log.isEnabledFor(logging.INFO):
        return
    if endpoint == UNMATCHED:
        endpoint = clean(request.url.path[:MAX_SHOWN_PATH])
    log.info(
        '%s "%s %s" %d %.1f ms',
        client_address(request),
        request.method,
        endpoint,
        status,
        seconds * 1000,
    )


def uvicorn_log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging configuration with the access lines of :func:`log_request`
    (on stdout, where uvicorn's own went) at ``level`` (uvicorn's level names)."""
    from uvicorn.config import LOG_LEVELS, LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["handlers"]["codecite_access"] = {
        "formatter": "default",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stdout",
    }
    config["loggers"][ACCESS_LOGGER] = {
        "handlers": ["codecite_access"],
        "level": LOG_LEVELS.get(level.lower(), logging.INFO),
        "propagate": False,
    }
    return config
