"""The embedded default store: one SQLite file per index (WAL mode) and a
memory-mappable ``vectors.npy`` snapshot beside it.

SQLite is the source of truth for everything, vectors included (one BLOB per
chunk, committed batch by batch so an interrupted embedding run resumes).
``vectors.npy`` + ``vectors.ids.json`` are a derived snapshot for fast exact
cosine search, rewritten atomically when the vectors change.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from contextlib import contextmanager
from pathlib import Path

from ...errors import IndexCorruptError, IndexFormatError, IndexOutdatedError, PathError
from ...identifiers import keyword_row
from ...types import Chunk, Definition, Edge, Import, Reference
from ..locking import file_lock as _file_lock
from ..locking import try_file_lock as _try_file_lock
from .base import (
    CHUNK_COLS,
    DB_NAME,
    LOCK_NAME,
    READONLY_WORDS,
    damaged_message,
    is_damage,
    row_to_chunk,
)
from .migrations import FORMAT_VERSION, MIGRATIONS
from .overview import OverviewTables
from .search import SearchTables, register_functions
from .vectors import SNAPSHOT_FILES, VectorTables

#: The name its messages had before the module moved (issue 22): the logs read the same.
log = logging.getLogger("codecite.store.sqlite")

#: Seconds a connection waits for another process's write lock.
BUSY_TIMEOUT = 30.0
LOCKED_RETRY_SECONDS = 0.05


class SQLiteStore(SearchTables, VectorTables, OverviewTables):
    """Chunks, files, graph and vectors of one index folder.

    ``readonly=True`` opens the database for queries only: nothing is written (no
    migration, no journal-mode change), so another user's index or a read-only mount
    can be searched. A damaged database raises :class:`IndexCorruptError`; with
    ``discard_damaged=True`` (``index --full``) it is removed and built anew.
    """

    #: One index per folder (:attr:`codecite.store.protocols.Store.shared`).
    shared = False

    @classmethod
    def open(
        cls,
        location: str | Path,
        *,
        repo: str = "",
        index_dir: str | Path | None = None,
        create: bool = True,
        readonly: bool = False,
        discard_damaged: bool = False,
    ) -> SQLiteStore:
        """The index in the folder ``location`` (:func:`codecite.store.open_store`;
        ``repo`` and ``index_dir`` are the folder's own)."""
        return cls(location, create=create, readonly=readonly, discard_damaged=discard_damaged)

    def __init__(
        self,
        index_dir: str | Path,
        *,
        create: bool = True,
        readonly: bool = False,
        discard_damaged: bool = False,
    ) -> None:
        self.dir = Path(index_dir)
        self.readonly = readonly
        if create and not readonly:
            try:
                self.dir.mkdir(parents=True)
            except FileExistsError:
                pass
            else:  # only a folder we created gets our .gitignore: never hide a user's files
                (self.dir / ".gitignore").write_text("# codecite index: local build output\n*\n")
        self.db_path = self.dir / DB_NAME
        try:
            self.conn = self._connect()
        except IndexCorruptError:
            if not discard_damaged or readonly:
                raise
            log.warning("discarding the damaged index at %s", self.db_path)
            self._remove_files()
            self.conn = self._connect()

    # --- lifecycle -------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self.readonly and self.db_path.is_file() and self.db_path.stat().st_size == 0:
            raise IndexCorruptError(
                f"{self.db_path} is empty (0 bytes): the index is damaged; rebuild it with "
                "`codecite index --full`"
            )
        conn: sqlite3.Connection | None = None
        try:
            conn = self._open_readonly() if self.readonly else self._open_writable()
            register_functions(conn)
            self.conn = conn
            if self.readonly:
                self._check_version()
            else:
                self._migrate()
            return conn
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            if not self.readonly and READONLY_WORDS.search(str(exc)):
                raise PathError(
                    f"cannot write the index at {self.dir} ({exc}); index into a folder you "
                    "can write with --index DIR (searching this index still works)"
                ) from exc
            if not is_damage(exc):
                raise
            raise IndexCorruptError(damaged_message(self.db_path, exc)) from exc

    def _open_writable(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.db_path, timeout=BUSY_TIMEOUT, isolation_level=None)
        # Switching a new database to WAL needs an exclusive lock, and SQLite answers
        # "locked" at once (no busy wait) when another process is doing the same: retry.
        deadline = time.monotonic() + BUSY_TIMEOUT
        while True:
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    conn.close()
                    raise
                time.sleep(LOCKED_RETRY_SECONDS)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=OFF")
        return conn

    def _open_readonly(self) -> sqlite3.Connection:
        """A connection that cannot write. A WAL database in a folder we cannot write to
        (no ``-shm`` to share) is opened as immutable: nobody can be writing it either.
        It may be used from any thread, one at a time (a server serialises its use)."""
        uri = self.db_path.resolve().as_uri()
        conn = sqlite3.connect(
            f"{uri}?mode=ro",
            uri=True,
            timeout=BUSY_TIMEOUT,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            if "unable to open" not in str(exc):
                raise
        return sqlite3.connect(
            f"{uri}?immutable=1", uri=True, isolation_level=None, check_same_thread=False
        )

    def _remove_files(self) -> None:
        for name in (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm", *SNAPSHOT_FILES):
            (self.dir / name).unlink(missing_ok=True)

    def reopen_writable(self) -> SQLiteStore:
        """The same index opened for writing (a read-only open's query-time refresh)."""
        return SQLiteStore(self.dir, create=False)

    def embedding_cache(self) -> None:
        """None: an index folder has no embedding cache of its own (the indexer uses the
        machine-wide cache file, shared by every index on the machine)."""
        return None

    def reset(self) -> None:
        """Start from an empty database (``index --full`` on any index, damaged or not)."""
        self.conn.close()
        self._remove_files()
        self.conn = self._connect()

    def close(self) -> None:
        self.conn.close()

    def _version(self) -> int:
        has_meta = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        if not has_meta:
            return 0
        row = self.conn.execute("SELECT value FROM meta WHERE key='format_version'").fetchone()
        return int(row[0]) if row else 0

    def _check_version(self) -> None:
        version = self._version()
        if version > FORMAT_VERSION:
            raise IndexFormatError(
                f"{self.db_path} was written by a newer codecite (format {version}, this one "
                f"reads up to {FORMAT_VERSION}); upgrade codecite or rebuild with --full"
            )
        if self.readonly and version < FORMAT_VERSION:
            what = "holds no codecite index" if version == 0 else f"has format {version}"
            raise IndexOutdatedError(
                f"{self.db_path} {what} (this codecite reads format {FORMAT_VERSION}); "
                "run `codecite index` to build or upgrade it"
            )

    def _migrate(self) -> None:
        """Apply the missing migrations. The version is read inside the write lock, so
        two processes opening a new index at once cannot both create its tables."""
        self._check_version()
        if self._version() == FORMAT_VERSION:
            return
        with self.transaction():
            version = self._version()
            for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
                migration(self.conn)
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('format_version', ?)",
                    (str(number),),
                )

    @contextmanager
    def reporting_damage(self) -> Iterator[None]:
        """Turn SQLite's "malformed"/"not a database" errors met while reading or writing
        (a file damaged after it was opened) into :class:`IndexCorruptError`."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            raise IndexCorruptError(damaged_message(self.db_path, exc)) from exc

    @contextmanager
    def writer_lock(self, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Hold the index's single-writer lock (``index.lock``, an OS file lock that a
        crashed process releases). When another process holds it, ``on_wait`` is told
        who, then this waits for it."""
        with _file_lock(self.dir / LOCK_NAME, on_wait):
            yield

    @contextmanager
    def try_writer_lock(self) -> Iterator[bool]:
        """The writer lock if no other process holds it (True), else False at once."""
        with _try_file_lock(self.dir / LOCK_NAME) as held:
            yield held

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic batch: everything inside commits together or not at all."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # --- metadata --------------------------------------------------------------
    def set_meta(self, values: dict[str, str]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(values.items())
        )

    # --- files -----------------------------------------------------------------
    def files(self) -> dict[str, dict[str, object]]:
        cur = self.conn.execute(
            "SELECT path, language, hash, size, mtime_ns, git_blob, n_chunks, secrets FROM files"
        )
        cols = [d[0] for d in cur.description]
        return {row[0]: dict(zip(cols, row, strict=True)) for row in cur}

    def put_file(
        self,
        path: str,
        language: str,
        digest: str,
        size: int,
        mtime_ns: int,
        git_blob: str,
        n_chunks: int,
        secrets: int,
    ) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO files(path, language, hash, size, mtime_ns, git_blob, "
            "n_chunks, secrets, indexed_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (path, language, digest, size, mtime_ns, git_blob, n_chunks, secrets, time.time()),
        )

    def touch_file(self, path: str, size: int, mtime_ns: int, git_blob: str) -> None:
        self.conn.execute(
            "UPDATE files SET size=?, mtime_ns=?, git_blob=? WHERE path=?",
            (size, mtime_ns, git_blob, path),
        )

    def delete_file(self, path: str, keep: Set[str] = frozenset()) -> None:
        """Remove a file with its chunks, keyword rows, refs, imports and edges.
        Edges into the chunks of ``keep`` (ids that the file's new version has too)
        stay, so their callers need no re-resolution. Vectors are kept until
        :meth:`prune_vectors` so unchanged chunks keep theirs."""
        ids = [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE path=?", (path,))]
        self.conn.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE path=?)",
            (path,),
        )
        self.conn.execute("DELETE FROM chunks WHERE path=?", (path,))
        self.conn.execute("DELETE FROM refs WHERE path=?", (path,))
        self.conn.execute("DELETE FROM imports WHERE path=?", (path,))
        self.conn.executemany("DELETE FROM edges WHERE src=?", [(i,) for i in ids])
        self.conn.executemany("DELETE FROM edges WHERE dst=?", [(i,) for i in ids if i not in keep])
        self.conn.execute("DELETE FROM files WHERE path=?", (path,))

    # --- chunks ----------------------------------------------------------------
    def add_chunks(
        self,
        chunks: Sequence[Chunk],
        priorities: Sequence[float],
        keyword_rows: Sequence[tuple[str, str, str]] | None = None,
    ) -> None:
        """Insert chunks with their keyword-index rows (computed here unless given:
        the indexer computes them in its worker processes)."""
        rows = keyword_rows if keyword_rows is not None else [keyword_row(c) for c in chunks]
        first = int(self.conn.execute("SELECT coalesce(max(rowid), 0) FROM chunks").fetchone()[0])
        rowids = range(first + 1, first + 1 + len(chunks))
        self.conn.executemany(
            f"INSERT INTO chunks(rowid, {CHUNK_COLS}, priority) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    rowid,
                    c.id,
                    c.repo,
                    c.path,
                    c.language,
                    c.kind,
                    c.name,
                    c.qualname,
                    c.start_line,
                    c.end_line,
                    c.content,
                    c.context,
                    c.content_hash,
                    c.signature,
                    c.docstring,
                    c.parent,
                    c.part,
                    priority,
                )
                for rowid, c, priority in zip(rowids, chunks, priorities, strict=True)
            ],
        )
        self.conn.executemany(
            "INSERT INTO chunks_fts(rowid, symbol, path, body) VALUES (?,?,?,?)",
            [(rowid, *row) for rowid, row in zip(rowids, rows, strict=True)],
        )

    def clear(self) -> None:
        """Remove every file, chunk, graph row and vector (``index --full``), in one
        transaction; a database too damaged for that is replaced by a new one."""
        try:
            with self.transaction():
                for table in (
                    "chunks_fts",
                    "chunks",
                    "files",
                    "imports",
                    "refs",
                    "edges",
                    "vectors",
                    "static_vectors",
                ):
                    self.conn.execute(f"DELETE FROM {table}")
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            log.warning("the index is damaged (%s); starting a new one", exc)
            self.reset()

    def chunks(self, path_prefix: str | None = None) -> Iterator[Chunk]:
        """Chunks ordered by path and start line, optionally under a path or folder."""
        sql = f"SELECT {CHUNK_COLS} FROM chunks"
        args: tuple[object, ...] = ()
        if path_prefix:  # exact and case-sensitive (LIKE would ignore ASCII case)
            prefix = path_prefix.rstrip("/")
            sql += " WHERE path = ? OR substr(path, 1, ?) = ?"
            args = (prefix, len(prefix) + 1, prefix + "/")
        sql += " ORDER BY path, start_line, end_line DESC"
        for row in self.conn.execute(sql, args):
            yield row_to_chunk(row)

    def get_chunks(self, ids: Iterable[str]) -> dict[str, Chunk]:
        out: dict[str, Chunk] = {}
        for chunk_id in ids:
            row = self.conn.execute(
                f"SELECT {CHUNK_COLS} FROM chunks WHERE id=?", (chunk_id,)
            ).fetchone()
            if row:
                out[chunk_id] = row_to_chunk(row)
        return out

    def definitions(self) -> list[Definition]:
        return [
            Definition(*row)
            for row in self.conn.execute(
                "SELECT id, path, language, kind, name, qualname FROM chunks "
                "WHERE kind IN ('function', 'method', 'class', 'module')"
            )
        ]

    def chunk_ids_by_path(self, paths: Iterable[str]) -> list[str]:
        out: list[str] = []
        for path in paths:
            out += [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE path=?", (path,))]
        return out

    def names_by_id(self, path: str) -> dict[str, str]:
        """Chunk id → name of a file's chunks."""
        return dict(self.conn.execute("SELECT id, name FROM chunks WHERE path=?", (path,)))

    def paths_pointing_to(self, ids: Iterable[str]) -> set[str]:
        """Files with an edge into one of the chunks ``ids`` (callers, importers, tests)."""
        out: set[str] = set()
        for chunk_id in ids:
            out.update(
                r[0]
                for r in self.conn.execute(
                    "SELECT DISTINCT s.path FROM edges e JOIN chunks s ON s.id = e.src "
                    "WHERE e.dst = ?",
                    (chunk_id,),
                )
            )
        return out

    def counts(self) -> dict[str, int]:
        q = self.conn.execute
        return {
            "files": q("SELECT count(*) FROM files").fetchone()[0],
            "chunks": q("SELECT count(*) FROM chunks").fetchone()[0],
            "edges": q("SELECT count(*) FROM edges").fetchone()[0],
            "vectors": self.vector_count("model"),
            "static_vectors": self.vector_count("static"),
        }

    def group_counts(self, table: str, column: str) -> dict[str, int]:
        assert (table, column) in {
            ("files", "language"),
            ("chunks", "kind"),
            ("chunks", "language"),
            ("edges", "kind"),
        }
        rows = self.conn.execute(
            f"SELECT {column}, count(*) FROM {table} GROUP BY {column} ORDER BY 2 DESC"
        )
        return {str(k): int(n) for k, n in rows}

    # --- graph -----------------------------------------------------------------
    def add_facts(self, path: str, imports: Sequence[Import], refs: Sequence[Reference]) -> None:
        self.conn.executemany(
            "INSERT INTO imports(path, module, names, alias, line) VALUES (?,?,?,?,?)",
            [(path, i.module, json.dumps(list(i.names)), i.alias, i.line) for i in imports],
        )
        self.conn.executemany(
            "INSERT INTO refs(src, path, name, qualifier, kind, line) VALUES (?,?,?,?,?,?)",
            [(r.chunk_id, path, r.name, r.qualifier, r.kind, r.line) for r in refs],
        )

    def imports_by_path(self) -> dict[str, list[Import]]:
        out: dict[str, list[Import]] = {}
        for path, module, names, alias, line in self.conn.execute(
            "SELECT path, module, names, alias, line FROM imports ORDER BY path, line"
        ):
            out.setdefault(path, []).append(Import(module, tuple(json.loads(names)), alias, line))
        return out

    def refs_for(
        self,
        *,
        paths: Iterable[str] = (),
        names: Iterable[str] = (),
        srcs: Iterable[str] = (),
        all_refs: bool = False,
    ) -> list[tuple[str, Reference]]:
        """References by source path, referenced name or source chunk, as (path, Reference)."""
        sql = "SELECT path, src, name, qualifier, kind, line FROM refs"
        rows: list[tuple[str, str, str, str, str, int]] = []
        if all_refs:
            rows = list(self.conn.execute(sql))
        else:
            for column, values in (("path", paths), ("name", names), ("src", srcs)):
                for value in set(values):
                    rows += self.conn.execute(f"{sql} WHERE {column}=?", (value,)).fetchall()
        seen: set[tuple[object, ...]] = set()
        out: list[tuple[str, Reference]] = []
        for row in rows:
            if row not in seen:
                seen.add(row)
                out.append((row[0], Reference(row[1], row[2], row[3], row[4], row[5])))
        return out

    def replace_edges(
        self, srcs: Iterable[str], edges: Iterable[Edge], kinds: Sequence[str]
    ) -> None:
        """Drop the edges of ``kinds`` leaving ``srcs``, then insert ``edges``."""
        marks = ",".join("?" * len(kinds))
        self.conn.executemany(
            f"DELETE FROM edges WHERE src=? AND kind IN ({marks})",
            [(s, *kinds) for s in set(srcs)],
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO edges(src, dst, kind, line) VALUES (?,?,?,?)",
            [(e.src, e.dst, e.kind, e.line) for e in edges],
        )

    def prune_edges(self) -> int:
        """Drop edges whose end chunk no longer exists."""
        cur = self.conn.execute(
            "DELETE FROM edges WHERE src NOT IN (SELECT id FROM chunks) "
            "OR dst NOT IN (SELECT id FROM chunks)"
        )
        return cur.rowcount

    def edges_from(self, chunk_id: str, kind: str | None = None) -> list[Edge]:
        sql, args = "SELECT src, dst, kind, line FROM edges WHERE src=?", [chunk_id]
        if kind:
            sql, args = sql + " AND kind=?", [*args, kind]
        return [Edge(*r) for r in self.conn.execute(sql + " ORDER BY dst, kind", args)]

    def edges_among(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        """(src, dst) of every edge whose two ends are both in ``ids``."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return [
            (str(s), str(d))
            for s, d in self.conn.execute(
                f"SELECT src, dst FROM edges WHERE src IN ({marks}) AND dst IN ({marks})",
                [*ids, *ids],
            )
        ]

    def edges_to(self, chunk_id: str, kind: str | None = None) -> list[Edge]:
        sql, args = "SELECT src, dst, kind, line FROM edges WHERE dst=?", [chunk_id]
        if kind:
            sql, args = sql + " AND kind=?", [*args, kind]
        return [Edge(*r) for r in self.conn.execute(sql + " ORDER BY kind, src", args)]
