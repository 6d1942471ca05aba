"""The server's state (DESIGN.md §11): bearer tokens, stored as salted hashes, web
sessions, Slack replay protection and the audit log, an append-only table. ``state`` in
codecite-server.toml names the database: a SQLite file, or a ``postgresql://`` URL
(serve processes on several machines share its tokens and audit log). The store opens
either and holds every query; :class:`StateStore` (:mod:`.store`) holds the rules,
:mod:`.tokens` the token checks and :mod:`.audit` the audit records.

Standard library only (a URL loads psycopg when opened): the ``token`` and ``audit``
commands work without the server extras, and with a state file without the PostgreSQL
extra.
"""

from __future__ import annotations

from .audit import AuditRecord
from .store import BaseStateStore, StateStore, open_state
from .tokens import REASONS, TOKEN_RE, TokenInfo, parse_token

__all__ = [
    "REASONS", "TOKEN_RE", "AuditRecord", "BaseStateStore", "StateStore", "TokenInfo",
    "open_state", "parse_token",
]  # fmt: skip
