"""The machine-wide embedding cache's file: (model name, sha256 of the text) → vector
in one SQLite file shared by every index and process on the machine (WAL mode, busy
timeout). Vectors are stored as raw little-endian float32 bytes with their dimension;
no pickle. Its schema has numbered migrations (the file's ``PRAGMA user_version`` is how
many ran).

The cache is an optimisation only: if the file is corrupt, unwritable, or made by a
newer codecite, a warning is logged and embedding goes on without it. Where the file
is and what is cached is :mod:`codecite.embed.cache`'s.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Self

import numpy as np

#: The name its messages had before the module moved (issue 22): the logs read the same.
log = logging.getLogger("codecite.embed.cache")

#: Seconds a writer waits for another process's transaction.
BUSY_TIMEOUT_S = 30.0
#: Seconds an open is tried again while another process sets the new file up, and the
#: pause between tries.
OPEN_RETRY_S = 10.0
OPEN_RETRY_PAUSE_S = 0.05
_QUERY_CHUNK = 500  # keys per SELECT, well under SQLite's variable limit
_DTYPE = np.dtype("<f4")


def _m001_create_tables(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS embeddings (
               model TEXT NOT NULL,
               key TEXT NOT NULL,
               dim INTEGER NOT NULL,
               vector BLOB NOT NULL,
               PRIMARY KEY (model, key)
           ) WITHOUT ROWID"""
    )


#: Numbered migrations; the file's ``PRAGMA user_version`` is how many ran.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_m001_create_tables,)


class FileEmbeddingCache:
    """Vectors by (model, key) in the SQLite file ``path`` (created if missing). Every
    method degrades to "no cache" on errors."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._writable = True
        try:
            self._conn = self._open_when_free()
        except (sqlite3.Error, OSError) as exc:
            self._disable(f"cannot open it ({exc})")

    def _open_when_free(self) -> sqlite3.Connection:
        """:meth:`_open`, tried again while another process is making the same new file
        (switching a new file to WAL mode is refused at once, not waited for: SQLite's
        busy handler does not cover that lock upgrade)."""
        deadline = time.monotonic() + OPEN_RETRY_S
        while True:
            try:
                return self._open()
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() >= deadline:
                    raise
                time.sleep(OPEN_RETRY_PAUSE_S)

    @property
    def enabled(self) -> bool:
        """False once the cache was given up on; lookups then miss."""
        return self._conn is not None

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > len(MIGRATIONS):
            raise sqlite3.DatabaseError(
                f"format {version} is newer than this codecite understands ({len(MIGRATIONS)})"
            )
        if version == len(MIGRATIONS):
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: another process may have migrated.
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
                migration(conn)
                conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _disable(self, why: str) -> None:
        log.warning(
            "embedding cache %s disabled: %s; embedding continues without it "
            "(delete the file to rebuild it, or set cache_dir)",
            self.path,
            why,
        )
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None

    def get_many(self, model: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """Cached vectors of ``model`` for those ``keys`` that have one."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, np.ndarray] = {}
        with self._lock:
            if self._conn is None:
                return found
            try:
                for start in range(0, len(wanted), _QUERY_CHUNK):
                    part = wanted[start : start + _QUERY_CHUNK]
                    marks = ",".join("?" * len(part))
                    rows = self._conn.execute(
                        f"SELECT key, dim, vector FROM embeddings "
                        f"WHERE model = ? AND key IN ({marks})",
                        (model, *part),
                    )
                    for key, dim, blob in rows:
                        vector = np.frombuffer(blob, dtype=_DTYPE)
                        if vector.shape[0] == dim:
                            found[key] = vector.astype(np.float32)
            except sqlite3.Error as exc:
                self._disable(f"read failed ({exc})")
                return {}
        return found

    def put_many(self, model: str, items: Mapping[str, np.ndarray]) -> None:
        """Store vectors of ``model`` by key (one transaction; existing keys replaced)."""
        if not items:
            return
        rows = []
        for key, vector in items.items():
            flat = np.asarray(vector, dtype=_DTYPE).reshape(-1)
            rows.append((model, key, int(flat.shape[0]), flat.tobytes()))
        with self._lock:
            if self._conn is None or not self._writable:
                return
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO embeddings (model, key, dim, vector) "
                        "VALUES (?, ?, ?, ?)",
                        rows,
                    )
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    log.warning(
                        "embedding cache %s busy; %d vectors not cached", self.path, len(rows)
                    )
                    return
                self._writable = False
                log.warning("embedding cache %s is not writable (%s); reading only", self.path, exc)
            except sqlite3.Error as exc:
                self._disable(f"write failed ({exc})")

    def count(self, model: str | None = None) -> int:
        """Number of vectors stored (for ``model`` only when given)."""
        with self._lock:
            if self._conn is None:
                return 0
            try:
                if model is None:
                    row = self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()
                else:
                    row = self._conn.execute(
                        "SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,)
                    ).fetchone()
            except sqlite3.Error as exc:
                self._disable(f"read failed ({exc})")
                return 0
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
