"""``POST /slack/commands``: the ``/codecite <question>`` slash command.

Slack signs each request: ``X-Slack-Signature`` is ``v0=`` + HMAC-SHA256 of
``v0:{timestamp}:{body}`` under the app's signing secret (``[slack]`` in the server
config). A request is refused (401) unless the signature matches, its timestamp is
within :data:`MAX_AGE_S` of now, and its signature has not been seen before (a replay).
The Slack user must be mapped to a codecite user (``[slack.users]``), whose active tokens
decide what they may read, exactly as for the API.

Slack wants an answer within 3 seconds: the command is acknowledged at once (only the
asker sees it) and the cited answer is posted to the request's ``response_url`` when it
is ready, ephemeral unless ``response_type = "in_channel"``: a channel's members may not
all be allowed to read the code an answer quotes. ``/codecite shop: question`` asks only
the repository ``shop``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs, urlencode

import httpx
from fastapi import FastAPI, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from .. import parse_citations
from . import routes
from .audit import write_audit
from .auth import Principal
from .config import SlackConfig
from .context import ServerState, client_address
from .errors import error_body, error_response
from .state import BaseStateStore
from .web.render import abstained

log = logging.getLogger(__name__)

#: Oldest request timestamp accepted, in seconds either way (Slack's own advice).
MAX_AGE_S = 300
#: Answers being prepared at once; more wait their turn.
WORKERS = 4
#: Characters of an answer posted to Slack (its messages are cut near 4,000).
MAX_ANSWER_CHARS = 3_000
POST_TIMEOUT_S = 10.0
MARKS = {"verified": "✓", "outside": "✗"}
USAGE = (
    "Ask about the code: `/codecite how is the loyalty discount computed?` "
    "(or `/codecite REPO: question` to ask one repository). Answers cite path:lines; "
    "✓ verified (the cited code was retrieved for the answer), ✗ outside the retrieved context."
)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's request signature (``v0=…``) of ``body`` sent at ``timestamp``."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


class ReplayGuard:
    """Signatures seen in the last :data:`MAX_AGE_S` seconds, kept in the state
    database: a replay is refused after a restart and by every server process that
    shares it (:meth:`BaseStateStore.first_seen`)."""

    def __init__(self, state: BaseStateStore) -> None:
        self.state = state

    def first_time(self, sig: str, now: float) -> bool:
        return self.state.first_seen(sig, now, MAX_AGE_S)


def check_request(
    slack: SlackConfig, headers: Any, body: bytes, guard: ReplayGuard, now: float
) -> str:
    """Why a request is refused ("" when it is Slack's, fresh and new)."""
    timestamp = headers.get("x-slack-request-timestamp", "")
    sent = headers.get("x-slack-signature", "")
    if not timestamp or not sent:
        return "missing Slack signature headers"
    if not timestamp.isdigit() or abs(now - int(timestamp)) > MAX_AGE_S:
        return "stale request: its timestamp is more than 5 minutes from now"
    if not hmac.compare_digest(signature(slack.signing_secret, timestamp, body), sent):
        return "bad Slack signature"
    if not guard.first_time(sent, now):
        return "replayed request"
    return ""


#: Characters of the question repeated back to Slack (a pasted report is not echoed whole).
QUESTION_ECHO_CHARS = 200


def short_question(text: str) -> str:
    """The question as repeated back: its first line, at most
    :data:`QUESTION_ECHO_CHARS` characters, saying how much was left out."""
    stripped = text.strip()
    first = next((line.strip() for line in stripped.splitlines() if line.strip()), "")
    kept = first[:QUESTION_ECHO_CHARS]
    left = len(stripped) - len(kept)
    shown = kept + ("…" if len(first) > len(kept) else "")
    return f"{shown} (+{left:,} more characters)" if left > 0 else shown


def _escape(text: str) -> str:
    """Text for Slack's mrkdwn: ``&``, ``<`` and ``>`` are its control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _status(citation: dict[str, Any]) -> str:
    return "verified" if citation.get("verified") else "outside"


def _link(slack: SlackConfig, repo: str, path: str, start: int, end: int, text: str) -> str:
    if not slack.base_url:
        return f"`{text}`"
    query = urlencode({"repo": repo, "path": path, "start": start, "end": end})
    return f"<{slack.base_url}/web/code?{query}|{text}>"


#: How Slack shows an answer's confidence (``Answer.confidence``).
CONFIDENCE = {
    "high": ":large_green_circle: *Confidence: high*",
    "medium": ":large_yellow_circle: *Confidence: medium*: check the code below",
    "low": ":red_circle: *Confidence: low*: related code, it may not answer this",
}
#: Lines of code shown per evidence block (the link opens the rest).
BLOCK_LINES = 8


def _marked(slack: SlackConfig, answer: dict[str, Any], text: str) -> str:
    """``text`` with each citation it writes marked once ✓ or ✗ (and linked)."""
    repo = str(answer.get("repo", ""))
    by_place = {
        (str(c["path"]), int(c["start_line"]), int(c["end_line"])): c
        for c in answer.get("citations", [])
    }
    marked, rest = "", text
    for path, start, end, as_written in parse_citations(text):
        cited = by_place.get((path, start, end)) or next(
            (c for (p, s, e), c in by_place.items()
             if p.endswith("/" + path) and (s, e) == (start, end)),
            None,
        )  # fmt: skip
        at = rest.find(as_written)
        if cited is None or at < 0:
            continue
        link = _link(slack, repo, str(cited["path"]), start, end, as_written)
        marked += rest[:at] + f"{MARKS[_status(cited)]} {link}"
        rest = rest[at + len(as_written) :]
    return marked + rest


def slack_message(slack: SlackConfig, answer: dict[str, Any]) -> str:
    """The answer as Slack mrkdwn: the confidence, the lead (an extractive answer's) or
    the generated text, its citations marked once each ✓/✗ (and linked to the web
    page's code view when ``base_url`` is set), each evidence block with a few of its
    lines, then the model and the repository."""
    repo = str(answer.get("repo", ""))
    blocks = list(answer.get("blocks") or [])
    lines = [f"*{_escape(short_question(str(answer.get('question', ''))))}*"]
    if answer.get("insufficient"):
        lines.append(":warning: *Not enough information* in the indexed code to answer this.")
    elif answer.get("confidence") in CONFIDENCE:
        lines.append(CONFIDENCE[str(answer["confidence"])])
    body = str(answer.get("lead") if blocks else answer.get("answer", "")).strip()
    text = _escape(body)
    if len(text) > MAX_ANSWER_CHARS:
        text = text[:MAX_ANSWER_CHARS].rstrip() + " …"
    lines.append(_marked(slack, answer, text))
    for b in blocks:
        path, start, end = str(b["path"]), int(b["start_line"]), int(b["end_line"])
        where = _link(slack, repo, path, start, end, f"{path}:{start}-{end}")
        mark = MARKS["verified" if b.get("verified") else "outside"]
        lines.append(f"\n{mark} {where} `{_escape(str(b.get('qualname', '')))}`")
        code = [str(x) for x in b.get("lines", [])]
        first = int(b.get("shown_start_line") or start)
        shown = "\n".join(
            f"{n:>4}  {line}"
            for n, line in zip(range(first, first + BLOCK_LINES), code, strict=False)
        )
        more = "\n      …" if len(code) > BLOCK_LINES else ""
        lines.append(f"```{_escape(shown)}{more}```")
    if not blocks and answer.get("insufficient"):
        lines += ["", "*Closest code*"]
        for s in answer.get("sources", [])[:3]:
            path, start, end = str(s["path"]), int(s["start_line"]), int(s["end_line"])
            lines.append(f"· {_link(slack, repo, path, start, end, f'{path}:{start}-{end}')}")
    if any(not c.get("verified") for c in answer.get("citations", [])):
        lines.append("_✗: cited, but not in the retrieved code: unverified_")
    model = _escape(str(answer.get("llm", "")))
    by = "no model was asked" if abstained(answer) else f"answered by {model}"
    lines.append(f"_{_escape(repo)} · {by}_")
    return "\n".join(lines)


def _question(text: str, principal: Principal, names: list[str]) -> tuple[str, list[str] | None]:
    """(the question, the repositories named by a ``REPO:`` prefix, else None: all)."""
    first, _, rest = text.strip().partition(" ")
    if first.endswith(":") and rest.strip():
        repo = first[:-1]
        if repo in names and principal.can_read(repo):
            return rest.strip(), [repo]
    return text.strip(), None


class SlackCommands:
    """The endpoint's state: replay guard and the pool of answering threads."""

    def __init__(self, state: BaseStateStore) -> None:
        self.guard = ReplayGuard(state)
        self.workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="codecite-slack")

    def answer(
        self,
        request: Request,
        principal: Principal,
        question: str,
        repos: list[str] | None,
        response_url: str,
        started: float,
    ) -> None:
        """Answer, post to ``response_url``, write the audit row (runs on a worker)."""
        server: ServerState = request.app.state.codecite
        slack = server.config.slack
        assert slack is not None
        status = 200
        try:
            data = routes.ask(request, routes.AskBody(question=question, repos=repos))
            assert isinstance(data, dict)
            payload = {"response_type": slack.response_type, "text": slack_message(slack, data)}
        except Exception as exc:
            response = error_response(exc)
            status = response.status_code
            message = json.loads(bytes(response.body))["error"]["message"]
            payload = {
                "response_type": "ephemeral",
                "text": f"codecite could not answer: {message}",
            }
        try:
            httpx.post(response_url, json=payload, timeout=POST_TIMEOUT_S).raise_for_status()
        except httpx.HTTPError as exc:
            log.warning("could not post the Slack answer to its response_url: %s", exc)
            request.state.note.detail = f"slack: the answer could not be posted ({exc})"
        write_audit(server, request, principal.user, status, started, request.state.note)


def _reply(text: str) -> JSONResponse:
    return JSONResponse({"response_type": "ephemeral", "text": text})


def install_slack(app: FastAPI) -> None:
    """Add ``POST /slack/commands`` (404 unless ``[slack]`` is configured)."""
    server: ServerState = app.state.codecite
    commands = SlackCommands(server.state)

    @app.post("/slack/commands", tags=["slack"])
    async def slack_command(request: Request) -> Response:
        """A Slack slash command (form-encoded, signed by Slack)."""
        started = time.perf_counter()
        server: ServerState = request.app.state.codecite
        slack = server.config.slack
        note = request.state.note

        def refuse(status: int, code: str, message: str, user: str = "-") -> JSONResponse:
            note.detail = f"slack: {message}"
            write_audit(server, request, user, status, started, note)
            return JSONResponse(error_body(code, message), status)

        if slack is None:
            return refuse(404, "not_found", "the Slack command is not configured ([slack])")
        client = client_address(request)
        body = await request.body()
        problem = await run_in_threadpool(
            check_request, slack, request.headers, body, commands.guard, time.time()
        )
        if problem and server.failures.blocked(client):  # a flood of forgeries: no row each
            server.metrics.denied.labels("throttled").inc()
            return JSONResponse(
                error_body("rate_limited", "too many refused requests from this address"), 429
            )
        if problem:
            server.metrics.denied.labels("slack").inc()
            server.failures.failed(client)
            return refuse(401, "unauthorized", problem)
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        slack_user, text = form.get("user_id", ""), form.get("text", "")
        response_url = form.get("response_url", "")
        if not response_url.startswith(slack.response_url_prefix):
            return refuse(400, "bad_request", "response_url is not Slack's")
        user = slack.users.get(slack_user)
        principal = server.state.principal_for_user(user) if user else None
        if principal is None:
            why = (
                f"your Slack user {slack_user} is not linked to a codecite user"
                if user is None
                else f"codecite user {user} has no active token"
            )
            refuse(403, "forbidden", why, user or "-")
            return _reply(f"Sorry, {why}; ask a codecite admin to add you under [slack.users].")
        if not text.strip() or text.strip().lower() == "help":
            return _reply(USAGE)
        if not server.rate.allow(principal.user):
            refuse(429, "rate_limited", "too many requests", principal.user)
            return _reply("Too many questions; wait a minute.")
        question, repos = _question(text, principal, server.pool.names())
        request.state.principal = principal
        note.detail = f"slack user {slack_user}"
        commands.workers.submit(
            commands.answer, request, principal, question, repos, response_url, started
        )
        return _reply(
            f"Looking into it: _{_escape(short_question(question))}_ (the answer follows here)."
        )
