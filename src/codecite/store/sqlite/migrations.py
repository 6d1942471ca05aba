"""Numbered schema migrations of the SQLite index. Each migration is a function
``mNNN_name(conn)``; the index records the last one applied in ``meta``.
Never edit a released migration: add the next one."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Run statements one by one (``executescript`` would commit the open transaction)."""
    statement = ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""


def m001_create_tables(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE files (
            path TEXT PRIMARY KEY,
            language TEXT NOT NULL,
            hash TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            git_blob TEXT NOT NULL DEFAULT '',
            n_chunks INTEGER NOT NULL DEFAULT 0,
            secrets INTEGER NOT NULL DEFAULT 0,
            indexed_at REAL NOT NULL
        );
        CREATE TABLE chunks (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            repo TEXT NOT NULL,
            path TEXT NOT NULL,
            language TEXT NOT NULL,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            qualname TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            content TEXT NOT NULL,
            context TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            signature TEXT NOT NULL DEFAULT '',
            docstring TEXT NOT NULL DEFAULT '',
            parent TEXT NOT NULL DEFAULT '',
            part INTEGER NOT NULL DEFAULT 0,
            priority REAL NOT NULL DEFAULT 0
        );
        CREATE INDEX chunks_path ON chunks(path, start_line);
        CREATE INDEX chunks_name ON chunks(name);
        CREATE INDEX chunks_qualname ON chunks(qualname);
        CREATE INDEX chunks_content_hash ON chunks(content_hash);
        -- keyword index over identifier-split tokens (codecite.tokens); rowid = chunks.rowid
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            symbol, path, body, tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE TABLE imports (
            path TEXT NOT NULL, module TEXT NOT NULL, names TEXT NOT NULL,
            alias TEXT NOT NULL, line INTEGER NOT NULL
        );
        CREATE INDEX imports_path ON imports(path);
        -- references by name, kept unresolved so later files can resolve them
        CREATE TABLE refs (
            src TEXT NOT NULL, path TEXT NOT NULL, name TEXT NOT NULL,
            qualifier TEXT NOT NULL, kind TEXT NOT NULL, line INTEGER NOT NULL
        );
        CREATE INDEX refs_src ON refs(src);
        CREATE INDEX refs_path ON refs(path);
        CREATE INDEX refs_name ON refs(name);
        CREATE TABLE edges (
            src TEXT NOT NULL, dst TEXT NOT NULL, kind TEXT NOT NULL, line INTEGER NOT NULL,
            PRIMARY KEY (src, dst, kind)
        ) WITHOUT ROWID;
        CREATE INDEX edges_dst ON edges(dst, kind);
        -- one vector per chunk; content_hash lets a renamed chunk reuse its vector
        CREATE TABLE vectors (
            chunk_id TEXT PRIMARY KEY, content_hash TEXT NOT NULL, vec BLOB NOT NULL
        );
        CREATE INDEX vectors_content_hash ON vectors(content_hash);
        """,
    )


def m002_static_vectors(conn: sqlite3.Connection) -> None:
    """The static vector tier (issue 15): same shape as ``vectors``, its own table."""
    run_script(
        conn,
        """
        CREATE TABLE static_vectors (
            chunk_id TEXT PRIMARY KEY, content_hash TEXT NOT NULL, vec BLOB NOT NULL
        );
        CREATE INDEX static_vectors_content_hash ON static_vectors(content_hash);
        """,
    )


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [m001_create_tables, m002_static_vectors]
#: The format version an index written by this code has.
FORMAT_VERSION = len(MIGRATIONS)
