"""The server's state tables in a SQLite file (``state = "codecite-state.db"`` in
codecite-server.toml, the default): the queries are :class:`~codecite.store.state.StateTables`';
this module adds the file, its numbered migrations (:data:`MIGRATIONS`, the format
version and kind in ``meta``) and the connection.

The file is in WAL mode so ``codecite token ...`` can run beside a live server. One
connection is shared by the server's threads: every use of it holds an internal lock.
Standard library only.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import ConfigError, PathError
from ..state import KIND, StateTables, check_format
from .base import READONLY_WORDS, is_damage
from .migrations import run_script

BUSY_TIMEOUT_S = 10.0


def m001_create_tables(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE tokens (
            id TEXT PRIMARY KEY,
            user TEXT NOT NULL,
            kdf TEXT NOT NULL,
            salt BLOB NOT NULL,
            hash BLOB NOT NULL,
            repos TEXT NOT NULL,
            admin INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            expires_at REAL,
            revoked_at REAL
        );
        CREATE INDEX tokens_user ON tokens(user);
        CREATE TABLE audit (
            id INTEGER PRIMARY KEY,
            time REAL NOT NULL,
            user TEXT NOT NULL,
            client TEXT NOT NULL,
            method TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            status INTEGER NOT NULL,
            latency_ms REAL NOT NULL,
            repos TEXT NOT NULL,
            question TEXT NOT NULL,
            results TEXT NOT NULL,
            citations TEXT NOT NULL,
            detail TEXT NOT NULL
        );
        CREATE INDEX audit_time ON audit(time);
        CREATE INDEX audit_user_time ON audit(user, time);
        -- append-only: no update, and no delete of a row younger than a day
        CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
        CREATE TRIGGER audit_no_recent_delete BEFORE DELETE ON audit
        WHEN old.time > CAST(strftime('%s', 'now') AS REAL) - 86400
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only (prune by age only)'); END;
        """,
    )


def m002_sessions_and_slack(conn: sqlite3.Connection) -> None:
    """Web sessions (a random id, stored hashed, tied to the token that signed in) and
    the Slack signatures seen within their replay window."""
    run_script(
        conn,
        """
        CREATE TABLE sessions (
            id_hash TEXT PRIMARY KEY,
            token_id TEXT NOT NULL,
            user TEXT NOT NULL,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            revoked_at REAL
        );
        CREATE INDEX sessions_expiry ON sessions(expires_at);
        CREATE TABLE slack_seen (signature TEXT PRIMARY KEY, seen_at REAL NOT NULL);
        CREATE INDEX slack_seen_time ON slack_seen(seen_at);
        """,
    )


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    m001_create_tables,
    m002_sessions_and_slack,
]
FORMAT_VERSION = len(MIGRATIONS)


class SQLiteStateTables(StateTables):
    """The state tables in one SQLite file, created (mode 0600) if missing; one
    connection, every use of it under an internal lock.

    Raises :class:`ConfigError` when the file is not a codecite state database, and
    :class:`PathError` when it cannot be written.
    """

    _duplicate = (sqlite3.IntegrityError,)

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():  # secrets' hashes and questions: owner only
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError as exc:
            raise PathError(f"cannot create the state database {self.path} ({exc})") from exc
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._migrate(conn)
            return conn
        except sqlite3.DatabaseError as exc:
            conn.close()
            if READONLY_WORDS.search(str(exc)):
                raise PathError(
                    f"cannot write the state database {self.path} ({exc}); make it writable "
                    "or point `state` in codecite-server.toml at a folder you can write"
                ) from exc
            if not is_damage(exc):
                raise
            raise ConfigError(
                f"{self.path} is not a codecite state database ({exc}); restore it from a "
                "backup, or move it aside to start a new one (tokens must then be re-issued)"
            ) from exc
        except BaseException:
            conn.close()
            raise

    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")  # two processes opening a new file at once
        try:
            version = self._version(conn)
            for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
                migration(conn)
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('format_version', ?), "
                    "('kind', ?)",
                    (str(number), KIND),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _version(self, conn: sqlite3.Connection) -> int:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        if not tables:
            return 0
        meta: dict[str, str] = {}
        if "meta" in tables:
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        return check_format(
            str(self.path),
            meta.get("kind"),
            int(meta.get("format_version", 0)),
            FORMAT_VERSION,
            f"a SQLite database but not a codecite state database (it holds "
            f"{', '.join(sorted(tables)[:5])}); point `state` at another file",
        )

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        return self._execute_many(sql, [params])

    def _execute_many(self, sql: str, rows: list[tuple[Any, ...]]) -> int:
        """One write transaction, holding the lock (and SQLite's write lock) throughout."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                rowcount = self._conn.executemany(sql, rows).rowcount
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return rowcount
