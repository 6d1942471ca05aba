"""HTTP helpers shared by the clients of OpenAI-compatible servers
(``embed/openai.py``, ``answer/llm.py``): settings from the environment, which
hosts need no API key, the message a server put in an error body, and one
retry loop with exponential backoff that honours ``Retry-After``.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

log = logging.getLogger(__name__)

#: Statuses worth another try: rate limits and server failures. Other 4xx never are.
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


def is_local_url(url: str) -> bool:
    """True for loopback, private-network and single-label hosts (no key needed)."""
    host = (httpx.URL(url).host or "").strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost") or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return bool(host) and "." not in host
    return address.is_loopback or address.is_private or address.is_unspecified


def is_html(response: httpx.Response) -> bool:
    """True when the server sent a web page (a proxy, a login page, a wrong URL)."""
    return "html" in response.headers.get("content-type", "").lower()


def body_text(response: httpx.Response, limit: int = 300) -> str:
    """A short, one-line description of a body that is not JSON: an HTML page by its
    title, other text with its whitespace collapsed; "" when there is none."""
    try:
        text = response.text
    except httpx.ResponseNotRead:  # reading it failed part-way
        return ""
    if is_html(response) or text.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
        title = _TITLE.search(text)
        name = " ".join(title.group(1).split())[:limit] if title else ""
        return f"an HTML page titled {name!r}" if name else "an HTML page"
    return " ".join(text.split())[:limit]


_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)


def server_message(response: httpx.Response) -> str:
    """The error message a server put in its body (OpenAI, Ollama, vLLM,
    llama.cpp shapes; an HTML page by its title); reads a streamed response first."""
    try:
        response.read()
        body = response.json()
    except (ValueError, httpx.HTTPError):
        return body_text(response) or response.reason_phrase
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error:
            return str(error)[:300]
    return str(body)[:300]


def json_client(api_key: str, timeout: httpx.Timeout | float) -> httpx.Client:
    """A client for an OpenAI-compatible JSON API, with the bearer key when there is one."""
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return httpx.Client(timeout=timeout, headers=headers)


def get_json(url: str, headers: Mapping[str, str] | None = None, timeout: float = 0.3) -> Any:
    """The JSON body of ``GET url`` when it answers 200 with JSON, else None (a probe)."""
    # Plain-http probes (Ollama on loopback) skip loading the CA bundle: ~0.2 s each.
    verify = httpx.URL(url).scheme == "https"
    try:
        response = httpx.get(url, headers=dict(headers or {}), timeout=timeout, verify=verify)
        return response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


def list_models(base_url: str, api_key: str = "", timeout: float = 0.3) -> list[str] | None:
    """Model ids from ``GET {base_url}/models`` (OpenAI shape); None when it does not answer."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    body = get_json(f"{base_url.rstrip('/')}/models", headers, timeout)
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return None
    return [str(m["id"]) for m in body["data"] if isinstance(m, dict) and m.get("id")]


def retry_after(response: httpx.Response) -> float | None:
    """Seconds from a ``Retry-After`` header (the seconds form), if any."""
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


@dataclass(frozen=True)
class RetryPolicy:
    """Retry ``max_retries`` times, waiting ``backoff * 2**attempt`` seconds (at
    most ``max_backoff``, at least the server's ``Retry-After`` up to that cap)."""

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 20.0
    retry_status: frozenset[int] = RETRY_STATUS
    #: Transport errors worth another try (all of them unless narrowed).
    retry_errors: tuple[type[httpx.TransportError], ...] = (httpx.TransportError,)

    def delay(self, attempt: int, server_wait: float | None = None) -> float:
        wait = min(self.max_backoff, self.backoff * 2.0**attempt)
        if server_wait is not None:
            wait = min(self.max_backoff, max(wait, server_wait))
        return wait


@dataclass(frozen=True)
class Outcome:
    """How a request ended: a ``response`` (any status) or a transport ``error``,
    after ``attempts`` tries."""

    response: httpx.Response | None
    error: httpx.TransportError | None
    attempts: int


def send_with_retries(
    send: Callable[[], httpx.Response], policy: RetryPolicy, *, what: str = "request"
) -> Outcome:
    """Call ``send`` until it gives a response that is not worth retrying, raises
    a transport error that is not, or the retries run out. A response that is
    retried is read and closed; the one returned is left as ``send`` made it."""
    attempt = 0
    while True:
        server_wait: float | None = None
        try:
            response = send()
        except httpx.TransportError as exc:
            if not isinstance(exc, policy.retry_errors) or attempt >= policy.max_retries:
                return Outcome(None, exc, attempt + 1)
            problem = f"{what}: {type(exc).__name__}: {exc}"
        else:
            status = response.status_code
            if status < 300 or status not in policy.retry_status or attempt >= policy.max_retries:
                return Outcome(response, None, attempt + 1)
            problem = f"{what}: HTTP {status}: {server_message(response)}"
            server_wait = retry_after(response)
            response.close()
        wait = policy.delay(attempt, server_wait)
        attempt += 1
        log.warning("%s; retry %d/%d in %.1fs", problem, attempt, policy.max_retries, wait)
        time.sleep(wait)
