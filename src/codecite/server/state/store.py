"""Tokens, web sessions, Slack replay protection and the audit log (DESIGN.md §11) over
the server's state tables: a SQLite file or a ``postgresql://`` URL (serve processes
on several machines then share its tokens and audit log); the store decides which
(:func:`codecite.open_state_tables`), and holds every query. Here are the rules: token
hashes and checks (:mod:`.tokens`), the audit log's scrubbing (:mod:`.audit`).
Nothing is cached, so a token made or revoked by another process counts at the next
request."""

from __future__ import annotations

import hmac
import json
import secrets
import time
from pathlib import Path
from typing import Self

from codecite import open_state_tables
from codecite.errors import UserError

from ..auth import Principal
from . import tokens
from .audit import DAY_S, AuditRecord
from .tokens import (
    ID_ATTEMPTS,
    ID_BYTES,
    KDF,
    SECRET_BYTES,
    SESSION_PREFIX,
    SESSION_RE,
    TokenInfo,
    check_globs,
    check_user,
    parse_token,
    principal_of,
    session_hash,
)


def open_state(location: str | Path) -> StateStore:
    """The state database at ``location``: a ``postgresql://`` URL, else a SQLite file."""
    return StateStore(location)


class StateStore:
    """The server's state at ``location`` (a SQLite file, created mode 0600 if missing,
    or a ``postgresql://`` URL), its schema created or upgraded on open. Shared by the
    server's threads.

    Raises :class:`~codecite.errors.ConfigError` when the database is not a codecite
    state database (or cannot be reached), and :class:`~codecite.errors.PathError` when
    a file cannot be written.
    """

    def __init__(self, location: str | Path) -> None:
        self.tables = open_state_tables(location)

    def close(self) -> None:
        self.tables.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- tokens ----------------------------------------------------------------
    def create_token(
        self, user: str, repos: list[str], *, admin: bool = False, expires_at: float | None = None
    ) -> str:
        """A new token for ``user`` (who may hold several), readable repositories
        ``repos`` (globs: ``shop``, ``shop*``, ``*``). Returns the plaintext, the only
        time it is available."""
        check_user(user)
        globs = check_globs(repos)
        secret = secrets.token_urlsafe(SECRET_BYTES)
        salt = secrets.token_bytes(16)
        digest = tokens.hash_secret(secret, salt, KDF)
        for _ in range(ID_ATTEMPTS):
            token_id = secrets.token_hex(ID_BYTES)
            row = (user, KDF, salt, digest, json.dumps(globs), int(admin), time.time(), expires_at)
            if self.tables.insert_token(token_id, row):
                return f"cc_{token_id}_{secret}"
            # the 48-bit id is taken: draw another
        raise RuntimeError(f"no free token id after {ID_ATTEMPTS} draws")

    def check_token(self, token: str | None) -> tuple[Principal | None, str]:
        """The token's principal and "ok", or None and why (:data:`.tokens.REASONS`). A
        wrong secret reads "unknown", like an unknown id, and takes as long: one hash,
        one constant-time comparison on either path. "revoked" and "expired" are told
        only to a caller who knows the secret."""
        if not token or not token.strip():
            return None, "missing"
        parsed = parse_token(token.strip())
        if parsed is None:
            return None, "malformed"
        token_id, secret = parsed
        row = self.tables.token_row(token_id)
        if row is None:
            hmac.compare_digest(tokens.hash_secret(secret, tokens.DUMMY_SALT, KDF), bytes(32))
            return None, "unknown"
        user, kdf, salt, digest, repos, admin, expires_at, revoked_at = row
        if not hmac.compare_digest(tokens.hash_secret(secret, bytes(salt), kdf), bytes(digest)):
            return None, "unknown"
        return principal_of(user, repos, admin, expires_at, revoked_at)

    # --- web sessions ----------------------------------------------------------
    def create_session(self, token: str, max_age_s: float) -> str:
        """A new web session for ``token`` (already checked): a random id, returned
        once and stored only as its hash. The session lasts ``max_age_s`` seconds at
        most, ends when it is revoked (sign-out) and whenever its token stops being
        active (revoked, expired)."""
        parsed = parse_token(token.strip())
        if parsed is None:
            raise UserError(
                "not a codecite token; sign in with a token from `codecite token create`"
            )
        principal, reason = self.check_token(token)
        if principal is None:
            raise UserError(f"the token is {reason}; ask an administrator for a new one")
        session = SESSION_PREFIX + secrets.token_urlsafe(SECRET_BYTES)
        now = time.time()
        self.tables.insert_session(
            session_hash(session), parsed[0], principal.user, now, now + max_age_s
        )
        return session

    def check_session(self, session: str | None) -> tuple[Principal | None, str]:
        """The principal of a web session and "ok", or None and why: "missing",
        "malformed", "unknown" (never made, or signed out), "expired", or why its token
        no longer counts ("revoked", "expired")."""
        if not session or not session.strip():
            return None, "missing"
        if not SESSION_RE.fullmatch(session.strip()):
            return None, "malformed"
        found = self.tables.session_row(session_hash(session.strip()))
        if found is None or found[2] is not None:
            return None, "unknown"
        token_id, expires_at, _ = found
        if expires_at <= time.time():
            return None, "expired"
        row = self.tables.token_row(str(token_id))
        if row is None:
            return None, "unknown"
        user, _, _, _, repos, admin, token_expires, revoked_at = row
        return principal_of(user, repos, admin, token_expires, revoked_at)

    def revoke_session(self, session: str) -> bool:
        """End a web session (sign-out): its id never works again. False when it was
        not an active session."""
        if not SESSION_RE.fullmatch(session.strip()):
            return False
        return self.tables.revoke_session(session_hash(session.strip()), time.time()) > 0

    # --- Slack replay protection --------------------------------------------------
    def first_seen(self, signature: str, now: float, window_s: float) -> bool:
        """Remember a signed request's signature; False when it was already seen (a
        replay), by this process or any other sharing this database. Signatures older
        than twice ``window_s`` are forgotten (their timestamps are refused anyway)."""
        return self.tables.remember_signature(signature, now, now - 2 * window_s)

    def authenticate(self, token: str | None) -> Principal | None:
        """The principal of a valid token; None for any other (see :meth:`check_token`)."""
        return self.check_token(token)[0]

    def principal_for_user(self, user: str) -> Principal | None:
        """A user named by a trusted proxy's header: the repository globs of all their
        active tokens together (admin if any of them is); None without an active one."""
        rows = self.tables.active_grants(user, time.time())
        if not rows:
            return None
        globs = dict.fromkeys(g for repos, _ in rows for g in json.loads(repos))
        return Principal(user, tuple(globs), any(admin for _, admin in rows))

    def list_tokens(self, user: str | None = None) -> list[TokenInfo]:
        """Every token (of ``user``), oldest first, without secrets or hashes."""
        return [
            TokenInfo(tid, u, tuple(json.loads(r)), bool(a), c, e, v)
            for tid, u, r, a, c, e, v in self.tables.token_rows(user)
        ]

    def revoke(self, user: str) -> int:
        """Revoke every active token of ``user``; how many were revoked."""
        return self.tables.revoke_user(user, time.time())

    def revoke_id(self, token_id: str) -> bool:
        """Revoke one token by its id (``cc_<id>_...``); False if none was active."""
        return self.tables.revoke_token(token_id, time.time()) > 0

    # --- audit -----------------------------------------------------------------
    def audit(self, record: AuditRecord) -> None:
        """Append one row. The question and detail are scrubbed of secrets (our own
        tokens included); results and citations must be locations, not code."""
        self.tables.insert_audit(record.row())  # scrubbed before the database is involved

    def audit_rows(
        self, since: float | None = None, user: str | None = None, limit: int = 1000
    ) -> list[AuditRecord]:
        """Rows at or after ``since`` (epoch seconds), of ``user``, newest first."""
        if limit < 1:
            raise UserError(f"limit must be at least 1, got {limit}")
        return [AuditRecord.from_row(row) for row in self.tables.audit_rows(since, user, limit)]

    def prune_audit(self, retention_days: int) -> int:
        """Delete rows older than ``retention_days`` (0 keeps every row); how many."""
        if retention_days < 0:
            raise UserError(f"audit retention must be >= 0 days, got {retention_days}")
        if retention_days == 0:
            return 0
        return self.tables.delete_audit_before(time.time() - retention_days * DAY_S)

    # --- moving to another database ---------------------------------------------
    def copy_into(self, target: StateStore) -> dict[str, int]:
        """Copy this database's tokens and audit log into ``target`` (e.g. a SQLite
        file into PostgreSQL): every token keeps working; the audit rows go only into an
        empty audit log. Returns the counts (:meth:`codecite.store.state.StateTables.copy_into`)."""
        return self.tables.copy_into(target.tables)


#: The name the server's modules and the CLI type a state store with.
BaseStateStore = StateStore
