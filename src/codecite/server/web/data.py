"""What the page shows besides answers: how fresh each index is (cached briefly: it
walks the repository), the user's recent questions (from the audit log), and the audit
rows of the page's own requests."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from fastapi import Request

from ...errors import CodeciteError
from ..audit import write_audit
from ..auth import Principal
from ..context import ServerState
from .render import share_url

#: Seconds an index's freshness is reused before the repository is walked again.
FRESHNESS_TTL_S = 30.0
#: Audit rows read to find a user's recent questions, and how many are shown.
RECENT_ROWS = 300
RECENT_SHOWN = 8
#: Endpoints whose audit rows are questions (ask) or queries (search).
ASK_ENDPOINTS = ("/api/v1/ask", "/web/ask", "/slack/commands")
SEARCH_ENDPOINTS = ("/api/v1/search", "/web/search")


@dataclass(frozen=True)
class Freshness:
    """An index against the repository on disk now."""

    repo: str
    indexed: bool
    indexed_commit: str = ""
    head_commit: str = ""
    changed: int = 0
    changed_paths: frozenset[str] = field(default_factory=frozenset)
    message: str = ""

    @property
    def short_commit(self) -> str:
        return self.indexed_commit[:7]

    @property
    def head_moved(self) -> bool:
        return bool(self.head_commit and self.indexed_commit != self.head_commit)

    @property
    def summary(self) -> str:
        """``indexed at commit abc1234 · 2 files changed since``; out of git: ``indexed ·
        2 files changed since indexing``."""
        if not self.indexed:
            return self.message or "not indexed yet"
        files = "file" if self.changed == 1 else "files"
        if self.indexed_commit:
            text = f"indexed at commit {self.short_commit} · {self.changed} {files} changed since"
        else:
            text = f"indexed · {self.changed} {files} changed since indexing"
        if self.head_moved:
            text += f" · the branch is now at {self.head_commit[:7]}"
        return text


class FreshnessCache:
    """Each repository's :class:`Freshness`, reused for :data:`FRESHNESS_TTL_S`."""

    def __init__(self, ttl: float = FRESHNESS_TTL_S) -> None:
        self.ttl = ttl
        self._cache: dict[str, tuple[float, Freshness]] = {}
        self._lock = threading.Lock()

    def get(self, server: ServerState, repo: str) -> Freshness:
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(repo)
        if cached and now - cached[0] < self.ttl:
            return cached[1]
        fresh = _freshness(server, repo)
        with self._lock:
            self._cache[repo] = (now, fresh)
        return fresh


def _freshness(server: ServerState, repo: str) -> Freshness:
    try:
        with server.pool.using(repo) as index:
            st = index.status()
    except CodeciteError as exc:  # no index yet, or a damaged one: said on the page
        return Freshness(repo, False, message=str(exc))
    changed = frozenset([*st.added, *st.modified, *st.deleted])
    return Freshness(
        repo, True, st.indexed_commit, st.head_commit, len(changed), changed_paths=changed
    )


def freshness_cache(request: Request) -> FreshnessCache:
    cache: FreshnessCache = request.app.state.codecite_freshness
    return cache


@dataclass(frozen=True)
class Recent:
    """A question (or search) the user asked before, as a link that asks it again."""

    question: str
    repos: tuple[str, ...]
    mode: str  # ask, search
    when: float

    @property
    def url(self) -> str:
        return share_url(self.question, self.repos, "/web/search" if self.mode == "search" else "/")


def recent_questions(server: ServerState, principal: Principal) -> list[Recent]:
    """The user's latest distinct questions and searches that were answered, newest
    first; only those about repositories they may still read."""
    out: list[Recent] = []
    seen: set[tuple[str, str]] = set()
    for row in server.state.audit_rows(user=principal.user, limit=RECENT_ROWS):
        if not row.question or row.status != 200:
            continue
        if row.endpoint in ASK_ENDPOINTS:
            mode = "ask"
        elif row.endpoint in SEARCH_ENDPOINTS:
            mode = "search"
        else:
            continue
        if not all(principal.can_read(r) and r in server.pool.repos for r in row.repos):
            continue
        key = (mode, row.question.strip())
        if key in seen:
            continue
        seen.add(key)
        out.append(Recent(row.question.strip(), tuple(row.repos), mode, row.time))
        if len(out) >= RECENT_SHOWN:
            break
    return out


def audit(request: Request, status: int, started: float, detail: str = "") -> None:
    """One audit row for a page request (the API's rows are written by the middleware;
    the page's paths are not under /api). A streamed answer writes its own row."""
    server: ServerState = request.app.state.codecite
    note = request.state.note
    if note.deferred:
        return
    if detail:
        note.detail = detail
    principal: Principal | None = request.state.principal
    write_audit(server, request, principal.user if principal else "-", status, started, note)
