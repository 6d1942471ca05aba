"""What the two state databases share (DESIGN.md §11): token and user checks, the
token hash, the audit log's scrubbing, the records, and :class:`BaseStateStore`, which
holds every query and rule; :class:`codecite.server.state.StateStore` (SQLite) and
:class:`codecite.server.state_postgres.PostgresStateStore` add only their dialect: how
to connect, migrate and run one statement. Nothing is cached, so a token made or
revoked by another process counts at the next request.

A token reads ``cc_<id>_<secret>``: ``id`` is a short random lookup key (stored as
is), ``secret`` 256 random bits (only a salted hash is stored). The plaintext is
returned once, by :meth:`BaseStateStore.create_token`.

Standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from ..errors import ConfigError, UserError
from ..scrub import scrub_text
from ..scrub import token as redacted
from .auth import Principal

#: Why a token was refused (:meth:`BaseStateStore.check_token`); "ok" when it was not.
REASONS = ("ok", "missing", "malformed", "unknown", "revoked", "expired")
#: ``cc_`` + 12 hex characters + ``_`` + the url-safe secret.
TOKEN_RE = re.compile(r"cc_(?P<id>[0-9a-f]{12})_(?P<secret>[A-Za-z0-9_-]{32,128})")
#: Our own tokens, wherever they appear in text written to the audit log.
_TOKEN_IN_TEXT = re.compile(r"\bcc_[0-9a-f]{12}_[A-Za-z0-9_-]{32,128}")
USER_RE = re.compile(r"(?!-)[A-Za-z0-9._@-]{1,128}")
GLOB_RE = re.compile(r"[A-Za-z0-9._*?\[\]!-]{1,128}")
ID_BYTES = 6
ID_ATTEMPTS = 5
SECRET_BYTES = 32
#: PBKDF2-HMAC-SHA256 rounds for new tokens (kept per row, so it can change later).
KDF_ROUNDS = 1_000
KDF = f"pbkdf2_sha256:{KDF_ROUNDS}"
DAY_S = 86_400.0
#: ``meta``'s ``kind`` in either backend: what tells our database from another one.
KIND = "codecite-state"


def parse_token(token: str) -> tuple[str, str] | None:
    """``(id, secret)`` of a well-formed token, else None."""
    m = TOKEN_RE.fullmatch(token)
    return (m.group("id"), m.group("secret")) if m else None


def _hash(secret: str, salt: bytes, kdf: str) -> bytes:
    """The stored form of a secret: PBKDF2-HMAC-SHA256 with a per-token 16-byte salt.

    The cost is deliberately low (1,000 rounds, well under a millisecond). Stretching
    protects *guessable* secrets (passwords) against offline guessing; these secrets
    are 256 bits from :func:`secrets.token_urlsafe`, so a stolen database still needs
    ~2**255 guesses per token whatever the cost, while every API request pays it. The
    salt keeps equal secrets from having equal hashes. ``kdf`` ("pbkdf2_sha256:N") is
    stored with each row, so the cost can change without invalidating tokens.
    """
    name, _, rounds = kdf.partition(":")
    if name != "pbkdf2_sha256" or not rounds.isdigit():
        raise ConfigError(f"token hash {kdf!r} is unknown to this codecite; upgrade codecite")
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, int(rounds))


#: Hashed for an unknown id, so "no such id" takes as long as "wrong secret".
_DUMMY_SALT = secrets.token_bytes(16)


def _principal_of(
    user: str, repos: str, admin: int, expires_at: float | None, revoked_at: float | None
) -> tuple[Principal | None, str]:
    """A token row's principal and "ok", or None and "revoked" / "expired"."""
    if revoked_at is not None:
        return None, "revoked"
    if expires_at is not None and expires_at <= time.time():
        return None, "expired"
    return Principal(user, tuple(json.loads(repos)), bool(admin)), "ok"


#: A web session id: ``cs_`` + 256 random bits, url-safe.
SESSION_PREFIX = "cs_"
SESSION_RE = re.compile(r"cs_[A-Za-z0-9_-]{32,128}")


def _session_hash(session: str) -> str:
    """The stored form of a session id (256 random bits: a plain hash is enough)."""
    return hashlib.sha256(session.encode()).hexdigest()


def check_user(user: str) -> str:
    if not USER_RE.fullmatch(user):
        raise UserError(f"user name {user!r}: use letters, digits, . _ - @ (not starting with -)")
    return user


def check_globs(repos: list[str]) -> tuple[str, ...]:
    globs = tuple(dict.fromkeys(g.strip() for g in repos))
    if not globs or not all(globs):
        raise UserError("give at least one repository glob (e.g. --repos shop,payments or '*')")
    for glob in globs:
        if not GLOB_RE.fullmatch(glob):
            raise UserError(
                f"repository glob {glob!r}: use repository names with * ? [...] "
                "(e.g. shop, shop*, '*')"
            )
    return globs


def _clean(text: str) -> str:
    """Text with secrets (and codecite tokens) redacted, for the audit log."""
    return scrub_text(_TOKEN_IN_TEXT.sub(redacted("codecite-token"), text)) if text else text


def check_format(where: str, kind: str | None, version: int, latest: int, foreign: str) -> int:
    """``version`` when a database of ``kind`` at ``where`` is ours and not newer than
    ``latest``; else a :class:`ConfigError` (``foreign`` says what it is and holds)."""
    if kind != KIND:
        raise ConfigError(f"{where} is {foreign}")
    if version > latest:
        raise ConfigError(
            f"{where} was written by a newer codecite (state format {version}, this "
            f"one reads up to {latest}); upgrade codecite"
        )
    return version


@dataclass(frozen=True)
class TokenInfo:
    """A stored token, without its secret."""

    id: str
    user: str
    repos: tuple[str, ...]
    admin: bool
    created_at: float
    expires_at: float | None
    revoked_at: float | None

    def status(self, now: float | None = None) -> str:
        """``active``, ``revoked`` or ``expired``."""
        if self.revoked_at is not None:
            return "revoked"
        now = time.time() if now is None else now
        return "expired" if self.expires_at is not None and self.expires_at <= now else "active"


@dataclass(frozen=True)
class AuditRecord:
    """One request. ``results`` and ``citations`` are locations (``repo:path:start-end``),
    never code; ``question`` is scrubbed of secrets before it is stored."""

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


class BaseStateStore(ABC):
    """Tokens and the audit log, whatever the database. A subclass names its tables
    (:attr:`TOKENS`, :attr:`AUDIT`), the exceptions of a duplicate key
    (:attr:`_duplicate`) and runs one statement (``?`` placeholders, the column
    ``"user"`` quoted) with :meth:`_read` or :meth:`_execute`; the rest is here."""

    TOKENS: ClassVar[str] = "tokens"
    AUDIT: ClassVar[str] = "audit"
    SESSIONS: ClassVar[str] = "sessions"
    SLACK_SEEN: ClassVar[str] = "slack_seen"
    _duplicate: tuple[type[BaseException], ...] = ()

    @abstractmethod
    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """The rows of one query."""

    @abstractmethod
    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """Run one statement in a transaction of its own; the rows it changed."""

    @abstractmethod
    def _execute_many(self, sql: str, rows: list[tuple[Any, ...]]) -> int:
        """Run one statement for each parameter tuple, all in one transaction."""

    @abstractmethod
    def close(self) -> None: ...

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
        digest = _hash(secret, salt, KDF)
        for _ in range(ID_ATTEMPTS):
            token_id = secrets.token_hex(ID_BYTES)
            try:
                self._execute(
                    f'INSERT INTO {self.TOKENS}(id, "user", kdf, salt, hash, repos, admin, '
                    "created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (token_id, user, KDF, salt, digest, json.dumps(globs), int(admin),
                     time.time(), expires_at),
                )  # fmt: skip
                return f"cc_{token_id}_{secret}"
            except self._duplicate:  # the 48-bit id is taken: draw another
                continue
        raise RuntimeError(f"no free token id after {ID_ATTEMPTS} draws")

    def check_token(self, token: str | None) -> tuple[Principal | None, str]:
        """The token's principal and "ok", or None and why (:data:`REASONS`). A wrong
        secret reads "unknown", like an unknown id, and takes as long: one hash, one
        constant-time comparison on either path. "revoked" and "expired" are told only
        to a caller who knows the secret."""
        if not token or not token.strip():
            return None, "missing"
        parsed = parse_token(token.strip())
        if parsed is None:
            return None, "malformed"
        token_id, secret = parsed
        row = self._token_row(token_id)
        if row is None:
            hmac.compare_digest(_hash(secret, _DUMMY_SALT, KDF), bytes(32))
            return None, "unknown"
        user, kdf, salt, digest, repos, admin, expires_at, revoked_at = row
        if not hmac.compare_digest(_hash(secret, bytes(salt), kdf), bytes(digest)):
            return None, "unknown"
        return _principal_of(user, repos, admin, expires_at, revoked_at)

    def _token_row(self, token_id: str) -> tuple[Any, ...] | None:
        rows = self._read(
            f'SELECT "user", kdf, salt, hash, repos, admin, expires_at, revoked_at '
            f"FROM {self.TOKENS} WHERE id = ?",
            (token_id,),
        )
        return tuple(rows[0]) if rows else None

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
        self._execute(f"DELETE FROM {self.SESSIONS} WHERE expires_at < ?", (now,))  # ended ones
        self._execute(
            f'INSERT INTO {self.SESSIONS}(id_hash, token_id, "user", created_at, expires_at) '
            "VALUES (?, ?, ?, ?, ?)",
            (_session_hash(session), parsed[0], principal.user, now, now + max_age_s),
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
        rows = self._read(
            f"SELECT token_id, expires_at, revoked_at FROM {self.SESSIONS} WHERE id_hash = ?",
            (_session_hash(session.strip()),),
        )
        if not rows or rows[0][2] is not None:
            return None, "unknown"
        token_id, expires_at, _ = rows[0]
        if expires_at <= time.time():
            return None, "expired"
        row = self._token_row(str(token_id))
        if row is None:
            return None, "unknown"
        user, _, _, _, repos, admin, token_expires, revoked_at = row
        return _principal_of(user, repos, admin, token_expires, revoked_at)

    def revoke_session(self, session: str) -> bool:
        """End a web session (sign-out): its id never works again. False when it was
        not an active session."""
        if not SESSION_RE.fullmatch(session.strip()):
            return False
        changed = self._execute(
            f"UPDATE {self.SESSIONS} SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL",
            (time.time(), _session_hash(session.strip())),
        )
        return changed > 0

    # --- Slack replay protection --------------------------------------------------
    def first_seen(self, signature: str, now: float, window_s: float) -> bool:
        """Remember a signed request's signature; False when it was already seen (a
        replay), by this process or any other sharing this database. Signatures older
        than twice ``window_s`` are forgotten (their timestamps are refused anyway)."""
        self._execute(f"DELETE FROM {self.SLACK_SEEN} WHERE seen_at < ?", (now - 2 * window_s,))
        inserted = self._execute(
            f"INSERT INTO {self.SLACK_SEEN}(signature, seen_at) VALUES (?, ?) "
            "ON CONFLICT (signature) DO NOTHING",
            (signature, now),
        )
        return inserted > 0

    def authenticate(self, token: str | None) -> Principal | None:
        """The principal of a valid token; None for any other (see :meth:`check_token`)."""
        return self.check_token(token)[0]

    def principal_for_user(self, user: str) -> Principal | None:
        """A user named by a trusted proxy's header: the repository globs of all their
        active tokens together (admin if any of them is); None without an active one."""
        rows = self._read(
            f'SELECT repos, admin FROM {self.TOKENS} WHERE "user" = ? AND revoked_at IS NULL '
            "AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at, id",
            (user, time.time()),
        )
        if not rows:
            return None
        globs = dict.fromkeys(g for repos, _ in rows for g in json.loads(repos))
        return Principal(user, tuple(globs), any(admin for _, admin in rows))

    def list_tokens(self, user: str | None = None) -> list[TokenInfo]:
        """Every token (of ``user``), oldest first, without secrets or hashes."""
        sql = (
            'SELECT id, "user", repos, admin, created_at, expires_at, revoked_at '
            f"FROM {self.TOKENS}"
        )
        if user is None:
            rows = self._read(sql + " ORDER BY created_at, id")
        else:
            rows = self._read(sql + ' WHERE "user" = ? ORDER BY created_at, id', (user,))
        return [
            TokenInfo(tid, u, tuple(json.loads(r)), bool(a), c, e, v)
            for tid, u, r, a, c, e, v in rows
        ]

    def revoke(self, user: str) -> int:
        """Revoke every active token of ``user``; how many were revoked."""
        now = time.time()
        return self._execute(
            f'UPDATE {self.TOKENS} SET revoked_at = ? WHERE "user" = ? AND revoked_at IS NULL '
            "AND (expires_at IS NULL OR expires_at > ?)",
            (now, user, now),
        )

    def revoke_id(self, token_id: str) -> bool:
        """Revoke one token by its id (``cc_<id>_...``); False if none was active."""
        return (
            self._execute(
                f"UPDATE {self.TOKENS} SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (time.time(), token_id),
            )
            > 0
        )

    # --- audit -----------------------------------------------------------------
    def audit(self, record: AuditRecord) -> None:
        """Append one row. The question and detail are scrubbed of secrets (our own
        tokens included); results and citations must be locations, not code."""
        for location in (*record.results, *record.citations):
            if "\n" in location:
                raise ValueError("audit results hold locations (repo:path:start-end), not code")
        row = (record.time, record.user, _clean(record.client), record.method,
               record.endpoint, int(record.status), float(record.latency_ms),
               json.dumps(record.repos), _clean(record.question), json.dumps(record.results),
               json.dumps(record.citations), _clean(record.detail))  # fmt: skip
        self._execute(  # scrubbed before the database is involved
            f'INSERT INTO {self.AUDIT}(time, "user", client, method, endpoint, status, '
            "latency_ms, repos, question, results, citations, detail) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )

    def audit_rows(
        self, since: float | None = None, user: str | None = None, limit: int = 1000
    ) -> list[AuditRecord]:
        """Rows at or after ``since`` (epoch seconds), of ``user``, newest first."""
        if limit < 1:
            raise UserError(f"limit must be at least 1, got {limit}")
        where: list[str] = []
        params: list[Any] = []
        if since is not None:
            where.append("time >= ?")
            params.append(since)
        if user is not None:
            where.append('"user" = ?')
            params.append(user)
        rows = self._read(
            'SELECT time, "user", client, method, endpoint, status, latency_ms, repos, '
            f"question, results, citations, detail FROM {self.AUDIT} "
            + (f"WHERE {' AND '.join(where)} " if where else "")
            + "ORDER BY time DESC, id DESC LIMIT ?",
            (*params, limit),
        )
        return [
            AuditRecord(t, u, c, m, e, s, ms, json.loads(r), q, json.loads(res), json.loads(ci), d)
            for t, u, c, m, e, s, ms, r, q, res, ci, d in rows
        ]

    def prune_audit(self, retention_days: int) -> int:
        """Delete rows older than ``retention_days`` (0 keeps every row); how many."""
        if retention_days < 0:
            raise UserError(f"audit retention must be >= 0 days, got {retention_days}")
        if retention_days == 0:
            return 0
        cutoff = time.time() - retention_days * DAY_S
        return self._execute(f"DELETE FROM {self.AUDIT} WHERE time < ?", (cutoff,))

    # --- moving to another database ---------------------------------------------
    def copy_into(self, target: BaseStateStore) -> dict[str, int]:
        """Copy this database's tokens and audit log into ``target`` (e.g. a SQLite
        file into PostgreSQL): tokens as stored (salted hashes, expiry, revocation), so
        every token keeps working; an id the target already holds is left as it is
        there. The audit rows are copied, in one transaction, only into an empty audit
        log (a second run copies none twice). Returns the counts."""
        token_cols = '"user", kdf, salt, hash, repos, admin, created_at, expires_at, revoked_at'
        tokens = [
            (row[0], row[1], row[2], bytes(row[3]), bytes(row[4]), *row[5:])
            for row in self._read(
                f"SELECT id, {token_cols} FROM {self.TOKENS} ORDER BY created_at, id"
            )
        ]
        before = len(target._read(f"SELECT id FROM {target.TOKENS}"))
        if tokens:
            target._execute_many(
                f"INSERT INTO {target.TOKENS}(id, {token_cols}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                tokens,
            )
        copied = len(target._read(f"SELECT id FROM {target.TOKENS}")) - before
        audit_cols = (
            'time, "user", client, method, endpoint, status, latency_ms, repos, question, '
            "results, citations, detail"
        )
        rows = self._read(f"SELECT {audit_cols} FROM {self.AUDIT} ORDER BY id")
        empty = not target._read(f"SELECT id FROM {target.AUDIT} LIMIT 1")
        if rows and empty:
            target._execute_many(
                f"INSERT INTO {target.AUDIT}({audit_cols}) VALUES ({', '.join('?' * 12)})",
                [tuple(row) for row in rows],
            )
        return {
            "tokens": len(tokens),
            "tokens_copied": copied,
            "audit_rows": len(rows),
            "audit_rows_copied": len(rows) if empty else 0,
        }
