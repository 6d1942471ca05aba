"""The audit log's records (DESIGN.md §11): one per request, its question and detail
scrubbed of secrets (codecite tokens included) before they reach the database; results
and citations are locations (``repo:path:start-end``), never code. A question over
:data:`MAX_STORED_QUESTION` characters (refused or not) is stored as its scrubbed
prefix, its length and the sha256 of its scrubbed text (:func:`stored_question`): the
log is append-only, and 100 refused 64,000-character questions must not add 6.4 M
characters to it."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from codecite import scrub_text

#: Our own tokens, wherever they appear in text written to the audit log.
TOKEN_IN_TEXT = re.compile(r"\bcc_[0-9a-f]{12}_[A-Za-z0-9_-]{32,128}")
#: What replaces one (as the scrubber marks a secret of the kind ``codecite-token``).
TOKEN_MARK = "«redacted:codecite-token»"
DAY_S = 86_400.0
#: Longest question stored whole in the audit log (more than any limit refuses: a
#: refused question is shown by its start).
MAX_STORED_QUESTION = 500


def clean(text: str) -> str:
    """Text with secrets (and codecite tokens) redacted, for the audit log."""
    return scrub_text(TOKEN_IN_TEXT.sub(TOKEN_MARK, text)) if text else text


def stored_question(text: str) -> str:
    """The question as the audit log stores it: scrubbed, and past
    :data:`MAX_STORED_QUESTION` characters cut, with its length and the sha256 of the
    scrubbed text (the same long question twice has the same hash): ``"checkout fails:
    ...… [64,000 characters, sha256 9f86d0...]"``. Scrubbed before it is cut, so a
    secret across the cut is redacted whole."""
    cleaned = clean(text)
    if len(cleaned) <= MAX_STORED_QUESTION:
        return cleaned
    digest = hashlib.sha256(cleaned.encode("utf-8")).hexdigest()
    return f"{cleaned[:MAX_STORED_QUESTION]}… [{len(text):,} characters, sha256 {digest}]"


@dataclass(frozen=True)
class AuditRecord:
    """One request. ``results`` and ``citations`` are locations (``repo:path:start-end``),
    never code; ``question`` is scrubbed of secrets, and cut when long, before it is
    stored (:func:`stored_question`)."""

    time: float
    user: str
    client: str
    method: str
    endpoint: str
    status: int
    latency_ms: float
    repos: list[str] = field(default_factory=list)
    question: str = ""
    results: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    detail: str = ""

    def row(self) -> tuple[Any, ...]:
        """The stored row: the question, client and detail scrubbed (the question cut
        when long), lists as JSON."""
        for location in (*self.results, *self.citations):
            if "\n" in location:
                raise ValueError("audit results hold locations (repo:path:start-end), not code")
        return (self.time, self.user, clean(self.client), self.method, self.endpoint,
                int(self.status), float(self.latency_ms), json.dumps(self.repos),
                stored_question(self.question), json.dumps(self.results),
                json.dumps(self.citations), clean(self.detail))  # fmt: skip

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> AuditRecord:
        """A record from a stored row (:meth:`row`'s order)."""
        t, u, c, m, e, s, ms, r, q, res, ci, d = row
        return cls(t, u, c, m, e, s, ms, json.loads(r), q, json.loads(res), json.loads(ci), d)
