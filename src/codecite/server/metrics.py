"""The server's Prometheus metrics (:class:`Metrics`), labelled by route template only
(:func:`route_name`): a made-up path or a refused request never becomes a label of its own,
so the metrics stay small and do not show what people asked for."""

from __future__ import annotations

import re
from typing import Any

from fastapi import Request
from prometheus_client import CollectorRegistry, Counter, Histogram


class Metrics:
    """Prometheus metrics of one app (its own registry: several apps in one process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "codecite_requests_total",
            "HTTP requests",
            ["endpoint", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "codecite_request_seconds", "Request latency", ["endpoint"], registry=self.registry
        )
        self.denied = Counter(
            "codecite_denied_total",
            "Requests refused by auth or ACL",
            ["reason"],
            registry=self.registry,
        )


#: The metrics label of a request no route matches (its path is never a label: made-up
#: paths must not grow the metrics, nor show what people asked for).
UNMATCHED = "unmatched"


def route_name(request: Request) -> str:
    """The endpoint's path template (``/api/v1/repos/{repo}/code``), for metrics; also
    for a request refused before routing (401, 413), and :data:`UNMATCHED` for a path
    no route serves."""
    route = request.scope.get("route")
    path = getattr(route, "path", None)
    if path:
        return str(path)
    templates: list[tuple[re.Pattern[str], str]] = request.app.state.codecite_templates
    here = request.url.path
    return next((name for regex, name in templates if regex.match(here)), UNMATCHED)


def route_templates(routes: list[Any], prefix: str = "") -> list[tuple[re.Pattern[str], str]]:
    """(regex, template) of every route and mount, routers included by FastAPI too."""
    found: list[tuple[re.Pattern[str], str]] = []
    for route in routes:
        regex, path = getattr(route, "path_regex", None), getattr(route, "path", None)
        if regex is not None and path:
            if prefix:
                regex = re.compile("^" + re.escape(prefix) + regex.pattern.lstrip("^"))
            found.append((regex, prefix + path))
            continue
        router = getattr(route, "original_router", None)  # an included APIRouter
        context = getattr(route, "include_context", None)
        if router is not None:
            found += route_templates(router.routes, prefix + getattr(context, "prefix", ""))
    return found
