"""What the SQLite store's modules share: file names, the chunk columns, helpers."""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ...types import Chunk

DB_NAME = "index.db"
VECTORS_NAME = "vectors.npy"
VECTOR_IDS_NAME = "vectors.ids.json"
STATIC_VECTORS_NAME = "static.npy"
STATIC_VECTOR_IDS_NAME = "static.ids.json"
LOCK_NAME = "index.lock"
#: What codecite itself keeps in an index folder (any other file means the folder is
#: someone else's, e.g. ``--index src``).
OWN_FILES = frozenset(
    {
        ".gitignore",
        DB_NAME,
        DB_NAME + "-wal",
        DB_NAME + "-shm",
        VECTORS_NAME,
        VECTOR_IDS_NAME,
        STATIC_VECTORS_NAME,
        STATIC_VECTOR_IDS_NAME,
        LOCK_NAME,
        "queries.jsonl",
        "hooks.log",  # codecite.index.hooks: the background runs' output, lock, request counter
        "hooks.lock",
        "hooks.requests",
        "server-job.json",  # codecite.server.jobs: a re-index job running (resumed on start)
        "embed.lock",  # codecite.index.background: the model tier's worker: lock, state, log
        "embed.json",
        "embed.log",
    }
)
#: sqlite3 messages that mean the file is not a usable database (not a busy/locked one).
_DAMAGE_WORDS = (
    "not a database",
    "malformed",
    "disk image",
    "file is encrypted",
    "no such table",
    "no such column",
)


READONLY_WORDS = re.compile(r"readonly|read-only|unable to open")


def is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Is this error a damaged/foreign database (rather than a busy or full one)?"""
    return any(word in str(exc) for word in _DAMAGE_WORDS)


def damaged_message(db_path: Path, exc: BaseException) -> str:
    return f"the index at {db_path} is damaged ({exc}); rebuild it with `codecite index --full`"


CHUNK_COLS = (
    "id, repo, path, language, kind, name, qualname, start_line, end_line, content, "
    "context, content_hash, signature, docstring, parent, part"
)


def row_to_chunk(row: Sequence[object]) -> Chunk:
    return Chunk(*row)  # type: ignore[arg-type]


@contextmanager
def atomic_write(path: Path) -> Iterator[Path]:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


class Tables:
    """Base of the SQLite store's parts: the connection and folder they share."""

    conn: sqlite3.Connection
    dir: Path

    def get_meta(self, key: str, default: str = "") -> str:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else default
