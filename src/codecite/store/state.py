"""The server's state tables (DESIGN.md §11): bearer tokens (salted hashes only), web
sessions (hashed ids), the Slack signatures seen within their replay window, and the
append-only audit log, in a SQLite file or a schema of a PostgreSQL database (the
location names which: :func:`open_state_tables`).

:class:`StateTables` holds every query, written once for both (``?`` placeholders, the
column ``"user"`` quoted); a backend (:mod:`.sqlite.state`, :mod:`.postgres.state`)
adds its tables' names, how to connect, migrate and run one statement. The rules
(token hashes, checks, scrubbing the audit log) are the server's:
:mod:`codecite.server.state`. Each write is a transaction of its own and nothing is
cached, so a token made or revoked by another process counts at the next request.

Standard library only (a URL loads psycopg when opened): the ``token`` and ``audit``
commands work without the server extras.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Self

from ..errors import ConfigError

#: ``meta``'s ``kind`` in either backend: what tells our database from another one.
KIND = "codecite-state"
#: A stored token's columns after its id, in the order :meth:`StateTables.insert_token`
#: takes them.
TOKEN_COLS = '"user", kdf, salt, hash, repos, admin, created_at, expires_at, revoked_at'
#: An audit row's columns, in the order :meth:`StateTables.insert_audit` takes them.
AUDIT_COLS = (
    'time, "user", client, method, endpoint, status, latency_ms, repos, question, '
    "results, citations, detail"
)


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


class StateTables(ABC):
    """The state database's rows, whatever the database. A backend names its tables
    (:attr:`TOKENS`, ...), the exceptions of a duplicate key (:attr:`_duplicate`) and
    runs one statement with :meth:`_read`, :meth:`_execute` or :meth:`_execute_many`."""

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
    def insert_token(self, token_id: str, row: tuple[Any, ...]) -> bool:
        """Store a token: ``row`` holds its :data:`TOKEN_COLS` but ``revoked_at``. False
        when ``token_id`` is taken (nothing stored)."""
        try:
            self._execute(
                f'INSERT INTO {self.TOKENS}(id, "user", kdf, salt, hash, repos, admin, '
                "created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (token_id, *row),
            )
        except self._duplicate:
            return False
        return True

    def token_row(self, token_id: str) -> tuple[Any, ...] | None:
        """``(user, kdf, salt, hash, repos, admin, expires_at, revoked_at)`` of a token."""
        rows = self._read(
            f'SELECT "user", kdf, salt, hash, repos, admin, expires_at, revoked_at '
            f"FROM {self.TOKENS} WHERE id = ?",
            (token_id,),
        )
        return tuple(rows[0]) if rows else None

    def active_grants(self, user: str, now: float) -> list[tuple[str, int]]:
        """``(repos, admin)`` of every token of ``user`` active at ``now``, oldest first."""
        return [
            (repos, admin)
            for repos, admin in self._read(
                f'SELECT repos, admin FROM {self.TOKENS} WHERE "user" = ? AND revoked_at IS '
                "NULL AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at, id",
                (user, now),
            )
        ]

    def token_rows(self, user: str | None = None) -> list[tuple[Any, ...]]:
        """``(id, user, repos, admin, created_at, expires_at, revoked_at)`` of every
        token (of ``user``), oldest first."""
        sql = (
            'SELECT id, "user", repos, admin, created_at, expires_at, revoked_at '
            f"FROM {self.TOKENS}"
        )
        if user is None:
            return [tuple(r) for r in self._read(sql + " ORDER BY created_at, id")]
        return [
            tuple(r) for r in self._read(sql + ' WHERE "user" = ? ORDER BY created_at, id', (user,))
        ]

    def revoke_user(self, user: str, now: float) -> int:
        """Revoke every token of ``user`` active at ``now``; how many."""
        return self._execute(
            f'UPDATE {self.TOKENS} SET revoked_at = ? WHERE "user" = ? AND revoked_at IS NULL '
            "AND (expires_at IS NULL OR expires_at > ?)",
            (now, user, now),
        )

    def revoke_token(self, token_id: str, now: float) -> int:
        """Revoke one token unless it is revoked already; 1 or 0."""
        return self._execute(
            f"UPDATE {self.TOKENS} SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
            (now, token_id),
        )

    # --- web sessions ----------------------------------------------------------
    def insert_session(
        self, id_hash: str, token_id: str, user: str, now: float, expires_at: float
    ) -> None:
        """Forget the sessions ended before ``now``, then store a new one."""
        self._execute(f"DELETE FROM {self.SESSIONS} WHERE expires_at < ?", (now,))
        self._execute(
            f'INSERT INTO {self.SESSIONS}(id_hash, token_id, "user", created_at, expires_at) '
            "VALUES (?, ?, ?, ?, ?)",
            (id_hash, token_id, user, now, expires_at),
        )

    def session_row(self, id_hash: str) -> tuple[Any, ...] | None:
        """``(token_id, expires_at, revoked_at)`` of a session."""
        rows = self._read(
            f"SELECT token_id, expires_at, revoked_at FROM {self.SESSIONS} WHERE id_hash = ?",
            (id_hash,),
        )
        return tuple(rows[0]) if rows else None

    def revoke_session(self, id_hash: str, now: float) -> int:
        """End a session unless it ended already; 1 or 0."""
        return self._execute(
            f"UPDATE {self.SESSIONS} SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL",
            (now, id_hash),
        )

    # --- Slack replay protection --------------------------------------------------
    def remember_signature(self, signature: str, now: float, forget_before: float) -> bool:
        """Forget the signatures seen before ``forget_before``, then remember this one;
        False when it was remembered already (by any process sharing this database)."""
        self._execute(f"DELETE FROM {self.SLACK_SEEN} WHERE seen_at < ?", (forget_before,))
        inserted = self._execute(
            f"INSERT INTO {self.SLACK_SEEN}(signature, seen_at) VALUES (?, ?) "
            "ON CONFLICT (signature) DO NOTHING",
            (signature, now),
        )
        return inserted > 0

    # --- audit -----------------------------------------------------------------
    def insert_audit(self, row: tuple[Any, ...]) -> None:
        """Append one row (:data:`AUDIT_COLS`)."""
        self._execute(
            f"INSERT INTO {self.AUDIT}({AUDIT_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )

    def audit_rows(
        self, since: float | None, user: str | None, limit: int
    ) -> list[tuple[Any, ...]]:
        """Rows (:data:`AUDIT_COLS`) at or after ``since``, of ``user``, newest first."""
        where: list[str] = []
        params: list[Any] = []
        if since is not None:
            where.append("time >= ?")
            params.append(since)
        if user is not None:
            where.append('"user" = ?')
            params.append(user)
        rows = self._read(
            f"SELECT {AUDIT_COLS} FROM {self.AUDIT} "
            + (f"WHERE {' AND '.join(where)} " if where else "")
            + "ORDER BY time DESC, id DESC LIMIT ?",
            (*params, limit),
        )
        return [tuple(r) for r in rows]

    def delete_audit_before(self, cutoff: float) -> int:
        """Delete the audit rows older than ``cutoff`` (epoch seconds); how many."""
        return self._execute(f"DELETE FROM {self.AUDIT} WHERE time < ?", (cutoff,))

    # --- moving to another database ---------------------------------------------
    def copy_into(self, target: StateTables) -> dict[str, int]:
        """Copy these tokens and this audit log into ``target`` (e.g. a SQLite file into
        PostgreSQL): tokens as stored (salted hashes, expiry, revocation), so every
        token keeps working; an id the target already holds is left as it is there. The
        audit rows are copied, in one transaction, only into an empty audit log (a
        second run copies none twice). Returns the counts."""
        tokens = [
            (row[0], row[1], row[2], bytes(row[3]), bytes(row[4]), *row[5:])
            for row in self._read(
                f"SELECT id, {TOKEN_COLS} FROM {self.TOKENS} ORDER BY created_at, id"
            )
        ]
        before = len(target._read(f"SELECT id FROM {target.TOKENS}"))
        if tokens:
            target._execute_many(
                f"INSERT INTO {target.TOKENS}(id, {TOKEN_COLS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                tokens,
            )
        copied = len(target._read(f"SELECT id FROM {target.TOKENS}")) - before
        rows = self._read(f"SELECT {AUDIT_COLS} FROM {self.AUDIT} ORDER BY id")
        empty = not target._read(f"SELECT id FROM {target.AUDIT} LIMIT 1")
        if rows and empty:
            target._execute_many(
                f"INSERT INTO {target.AUDIT}({AUDIT_COLS}) VALUES ({', '.join('?' * 12)})",
                [tuple(row) for row in rows],
            )
        return {
            "tokens": len(tokens),
            "tokens_copied": copied,
            "audit_rows": len(rows),
            "audit_rows_copied": len(rows) if empty else 0,
        }
