"""The shared team store: PostgreSQL + pgvector (docs/DESIGN.md §13), selected by a
``postgresql://`` URL (config ``store``, ``--store``, ``CODECITE_STORE``).

One database holds many repositories: every table has a ``repo`` column leading its
keys and every query is scoped by the repository name the store was opened with
(:mod:`.migrations` has the schema). Connections come from a
``psycopg_pool.ConnectionPool``; reads run in autocommit (they see every committed
batch, so queries keep working while another process indexes); writes run in
:meth:`PostgresStore.transaction`, one atomic batch each, which also bumps the
repository's ``generation`` so that other processes reload what they cached. The
single-writer lock of a repository is a session-level advisory lock held on its own
connection: the server releases it when the holder disconnects, even after ``kill -9``.

The repository's files stay on a local disk (walking and freshness read them); the
local index folder (``PATH/.codecite``) keeps only the query log.

Beyond the protocols, for servers, workers and benchmarks: :func:`repositories` lists
the repositories of a database; :meth:`PostgresStore.vector_search` is the HNSW search
(``exact=True``: the exact reference); :meth:`PostgresStore.put_vector_rows` stores
vectors computed elsewhere; :meth:`PostgresStore.analyze` refreshes planner statistics
after a bulk load; :meth:`PostgresStore.all_meta` lists the metadata. One store serves
one repository with its own small pool (:data:`POOL_SIZE`); a process serving many
repositories opens one store per repository.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import IndexMissingError, UserError
from ...identifiers import keyword_row
from ...types import Chunk, Definition
from ..urls import redact

if TYPE_CHECKING:
    from .embedding_cache import PostgresEmbeddingCache
from .base import CHUNK_COLS, keyword_vector, register_vector, row_to_chunk
from .graph import GraphTables
from .migrations import (
    FORMAT_VERSION,
    LOCK_CLASS,
    LOCK_POLL,
    SCHEMA,
    check_version,
    migrate,
    schema_version,
    vector_schema,
)
from .search import SearchTables
from .vectors import VectorTables

#: The name its messages had before the module moved (issue 22): the logs read the same.
log = logging.getLogger("codecite.store.postgres")

#: URL schemes that select this backend.
INSTALL_HINT = "pip install 'codecite[postgres]'"
#: Connections per store (a server's threads share them).
POOL_SIZE = 4
CONNECT_TIMEOUT = 10
#: Per-repository tables (``clear`` empties them; ``meta`` and ``repos`` stay).
DATA_TABLES = ("chunks", "files", "imports", "refs", "edges", "vectors", "terms")


def repositories(url: str) -> list[str]:
    """The repositories indexed in the database at ``url`` (none: no codecite schema)."""
    psycopg, _ = _driver()
    with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as conn:
        if not schema_version(conn):
            return []
        return [str(r[0]) for r in conn.execute(f"SELECT repo FROM {SCHEMA}.repos ORDER BY repo")]


def _driver() -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise UserError(
            f"the PostgreSQL store needs psycopg 3 and psycopg-pool: {INSTALL_HINT}"
        ) from None
    return psycopg, psycopg_pool


def no_nul(text: str) -> str:
    """``text`` as PostgreSQL can store it: a NUL character (which its text type
    refuses) becomes U+FFFD. Files with one are not indexed and docstrings write it as
    ``\\x00``; this guards chunks made some other way."""
    return text.replace("\0", "\ufffd") if "\0" in text else text


def open_pool(
    url: str,
    *,
    kwargs: dict[str, Any],
    size: int,
    name: str,
    where: str,
    error: type[Exception],
    configure: Callable[[Any], None] | None = None,
) -> Any:
    """An open ``psycopg_pool.ConnectionPool`` of 1 to ``size`` connections made with
    ``kwargs``; a connection broken by a server restart or failover is replaced, not
    used. ``error`` (naming ``where``) when none can be made in time."""
    _, pool_module = _driver()
    pool = pool_module.ConnectionPool(
        url,
        min_size=1,
        max_size=max(1, size),
        num_workers=1,
        kwargs=kwargs,
        configure=configure,
        check=pool_module.ConnectionPool.check_connection,
        name=name,
        open=False,
    )
    try:
        pool.open(wait=True, timeout=CONNECT_TIMEOUT)
    except pool_module.PoolTimeout as exc:
        pool.close()
        raise error(f"cannot connect to {where}: {exc}") from None
    return pool


class PoolOwner:
    """Closes its connection pool (``pool``: :func:`open_pool`), also when nobody did."""

    pool: Any

    def close(self) -> None:
        self.pool.close()

    def __del__(self) -> None:  # a store nobody closed must not keep its threads
        pool = getattr(self, "pool", None)
        if pool is not None and not pool.closed:
            pool.close(timeout=0)


class PostgresStore(PoolOwner, SearchTables, VectorTables, GraphTables):
    """Files, chunks, keyword index, graph and vectors of one repository (``repo``) in
    a PostgreSQL database shared with other repositories.

    ``create=True`` creates or upgrades the schema (numbered migrations) and registers
    the repository; ``readonly=True`` checks the format only, writes nothing (its
    connections are read-only) and raises :class:`IndexMissingError` for a repository
    that was never indexed. ``index_dir``: the local folder for the query log.
    """

    #: Many repositories in one database, each found by name.
    shared = True

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
    ) -> PostgresStore:
        """The repository ``repo`` of the database at the URL ``location``
        (:func:`codecite.store.open_store`); a read-only open (queries) takes a read
        replica when there are any (:mod:`.replicas`)."""
        if readonly:
            from .replicas import open_read

            return open_read(
                str(location),
                lambda url: cls(url, repo=repo, index_dir=index_dir, readonly=True),
                (UserError,),
            )
        return cls(str(location), repo=repo, index_dir=index_dir, create=create)

    def __init__(
        self,
        url: str,
        *,
        repo: str,
        index_dir: str | Path | None = None,
        create: bool = True,
        readonly: bool = False,
        pool_size: int = POOL_SIZE,
    ) -> None:
        if not repo:
            raise UserError("a PostgreSQL store needs a repository name (--repo-name NAME)")
        self._psycopg, _ = _driver()
        self.url, self.repo, self.readonly = url, repo, readonly
        self.where = f"{redact(url)} (repository {repo!r})"
        self.dir = Path(index_dir) if index_dir is not None else Path(os.devnull)
        self._local = threading.local()
        self.application_name = f"codecite {os.getpid()}@{socket.gethostname()}"[:63]
        self._vector_schema = self._prepare(create)
        if index_dir is not None and create and not readonly:
            try:
                self.dir.mkdir(parents=True)
            except FileExistsError:
                pass
            else:  # only a folder we created gets our .gitignore (as SQLiteStore)
                (self.dir / ".gitignore").write_text("# codecite index: local build output\n*\n")
        self.pool = open_pool(
            url,
            kwargs=self._connect_kwargs(),
            size=pool_size,
            name=f"codecite-{repo}",
            where=self.where,
            error=UserError,
            configure=self._configure,
        )

    # --- lifecycle -------------------------------------------------------------
    def _connect_kwargs(self) -> dict[str, Any]:
        return {
            "autocommit": True,
            "application_name": self.application_name,
            "connect_timeout": CONNECT_TIMEOUT,
        }

    def _connect(self) -> Any:
        try:
            return self._psycopg.connect(self.url, **self._connect_kwargs())
        except self._psycopg.OperationalError as exc:
            raise UserError(
                f"cannot connect to {redact(self.url)}: {str(exc).strip()}; check the URL "
                "(postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE) and that the server runs"
            ) from None

    def _prepare(self, create: bool) -> str:
        """Check (readonly) or migrate the schema; register the repository."""
        with self._connect() as conn:
            if self.readonly:
                check_version(schema_version(conn), redact(self.url), readonly=True)
            else:
                migrate(conn, redact(self.url))
            schema = vector_schema(conn)
            known = conn.execute(
                f"SELECT 1 FROM {SCHEMA}.repos WHERE repo = %s", (self.repo,)
            ).fetchone()
            if known is None and (self.readonly or not create):
                names = [
                    r[0]
                    for r in conn.execute(f"SELECT repo FROM {SCHEMA}.repos ORDER BY repo LIMIT 20")
                ]
                raise IndexMissingError(
                    f"no repository named {self.repo!r} is indexed in {redact(self.url)} "
                    f"(indexed: {', '.join(names) or 'none'}); build it with `codecite index "
                    f"PATH --store URL --repo-name {self.repo}`"
                )
            if known is None:
                conn.execute(
                    f"INSERT INTO {SCHEMA}.repos (repo) VALUES (%s) ON CONFLICT DO NOTHING",
                    (self.repo,),
                )
            if not self.readonly:  # as SQLite's meta holds it (`codecite status` shows it)
                conn.execute(
                    f"INSERT INTO {SCHEMA}.meta (repo, key, value) VALUES (%s, 'format_version', "
                    "%s) ON CONFLICT (repo, key) DO UPDATE SET value = EXCLUDED.value "
                    f"WHERE {SCHEMA}.meta.value <> EXCLUDED.value",
                    (self.repo, str(FORMAT_VERSION)),
                )
            return schema

    def _configure(self, conn: Any) -> None:
        # no server-side prepared statements: each query is planned with its values (a
        # generic plan cannot tell a rare keyword from a common one), and a pooler in
        # transaction mode (PgBouncer) needs none
        conn.prepare_threshold = None
        conn.execute(f'SET search_path TO {SCHEMA}, "{self._vector_schema}"')
        if self.readonly:
            conn.execute("SET default_transaction_read_only = on")
        register_vector(conn)

    def reopen_writable(self) -> PostgresStore:
        """The same repository opened for writing (query-time refresh of a read-only
        open)."""
        return PostgresStore(self.url, repo=self.repo, index_dir=self.dir, create=False)

    def reset(self) -> None:
        self.clear()

    def embedding_cache(self) -> PostgresEmbeddingCache | None:
        """The database's embedding cache (the table ``codecite.embedding_cache``, shared
        by every worker and repository) when this store is writable, else None."""
        if self.readonly:
            return None
        from .embedding_cache import PostgresEmbeddingCache

        return PostgresEmbeddingCache(self.pool, redact(self.url))

    @contextmanager
    def reporting_damage(self) -> Iterator[None]:
        """A lost connection becomes a :class:`UserError` that says what to check."""
        try:
            yield
        except self._psycopg.OperationalError as exc:
            raise UserError(f"the database {self.where} failed: {str(exc).strip()}") from exc

    @contextmanager
    def writer_lock(self, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Hold the repository's single-writer lock: an advisory lock on a connection of
        its own, released by the server when this process disconnects or dies. When
        another process holds it, ``on_wait`` is told who, then this waits."""
        with self._connect() as conn:
            if not self._try_lock(conn):
                if on_wait is not None:
                    on_wait(self._lock_holder(conn))
                while not self._try_lock(conn):  # polled: see LOCK_POLL
                    time.sleep(LOCK_POLL)
            yield

    @contextmanager
    def try_writer_lock(self) -> Iterator[bool]:
        """The writer lock if no other process holds it (True), else False at once."""
        with self._connect() as conn:
            yield self._try_lock(conn)

    def _try_lock(self, conn: Any) -> bool:
        row = conn.execute(
            "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (LOCK_CLASS, self.repo)
        ).fetchone()
        return bool(row[0])

    def _lock_holder(self, conn: Any) -> str:
        row = conn.execute(
            "SELECT a.application_name, l.pid FROM pg_locks l "
            "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
            "AND l.classid = %s::oid AND l.objid = hashtext(%s)::oid AND l.granted LIMIT 1",
            (LOCK_CLASS, self.repo),
        ).fetchone()
        if not row:
            return ""
        name = str(row[0])
        return name.removeprefix("codecite ") if name.startswith("codecite ") else f"pg {row[1]}"

    # --- metadata --------------------------------------------------------------
    def set_meta(self, values: dict[str, str]) -> None:
        with self._writing() as conn:
            conn.cursor().executemany(
                "INSERT INTO meta (repo, key, value) VALUES (%s, %s, %s) "
                "ON CONFLICT (repo, key) DO UPDATE SET value = EXCLUDED.value",
                [(self.repo, k, str(v)) for k, v in values.items()],
            )

    def all_meta(self) -> dict[str, str]:
        return {
            str(k): str(v)
            for k, v in self._fetchall("SELECT key, value FROM meta WHERE repo = %s", (self.repo,))
        }

    # --- files -----------------------------------------------------------------
    def files(self) -> dict[str, dict[str, object]]:
        cols = ("path", "language", "hash", "size", "mtime_ns", "git_blob", "n_chunks", "secrets")
        rows = self._fetchall(f"SELECT {', '.join(cols)} FROM files WHERE repo = %s", (self.repo,))
        return {row[0]: dict(zip(cols, row, strict=True)) for row in rows}

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
        indexed_at: float | None = None,
    ) -> None:
        with self._writing() as conn:
            conn.execute(
                "INSERT INTO files (repo, path, language, hash, size, mtime_ns, git_blob, "
                "n_chunks, secrets, indexed_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) "
                "ON CONFLICT (repo, path) DO UPDATE SET language = EXCLUDED.language, "
                "hash = EXCLUDED.hash, size = EXCLUDED.size, mtime_ns = EXCLUDED.mtime_ns, "
                "git_blob = EXCLUDED.git_blob, n_chunks = EXCLUDED.n_chunks, "
                "secrets = EXCLUDED.secrets, indexed_at = EXCLUDED.indexed_at",
                (self.repo, path, language, digest, size, mtime_ns, git_blob, n_chunks, secrets,
                 time.time() if indexed_at is None else indexed_at),
            )  # fmt: skip

    def touch_file(self, path: str, size: int, mtime_ns: int, git_blob: str) -> None:
        with self._writing() as conn:
            conn.execute(
                "UPDATE files SET size = %s, mtime_ns = %s, git_blob = %s "
                "WHERE repo = %s AND path = %s",
                (size, mtime_ns, git_blob, self.repo, path),
            )

    def delete_file(self, path: str, keep: Set[str] = frozenset()) -> None:
        """Remove a file with its chunks, keyword rows, refs, imports and edges (one
        statement). Edges into the chunks of ``keep`` stay; vectors are kept until
        :meth:`prune_vectors` so unchanged chunks keep theirs."""
        with self._writing() as conn:
            lexemes = conn.execute(
                """
                WITH gone AS (
                    DELETE FROM chunks WHERE repo = %(repo)s AND path = %(path)s
                    RETURNING id, kw_len, kw),
                out_edges AS (DELETE FROM edges e USING gone
                    WHERE e.repo = %(repo)s AND e.src = gone.id),
                in_edges AS (DELETE FROM edges e USING gone
                    WHERE e.repo = %(repo)s AND e.dst = gone.id AND NOT gone.id = ANY(%(keep)s)),
                r AS (DELETE FROM refs WHERE repo = %(repo)s AND path = %(path)s),
                i AS (DELETE FROM imports WHERE repo = %(repo)s AND path = %(path)s),
                f AS (DELETE FROM files WHERE repo = %(repo)s AND path = %(path)s),
                counts AS (UPDATE repos SET documents = documents - (SELECT count(*) FROM gone),
                    tokens = tokens - (SELECT coalesce(sum(kw_len), 0) FROM gone)
                    WHERE repo = %(repo)s),
                lex AS (SELECT u.lexeme, count(*) AS n FROM gone, unnest(gone.kw) u
                    GROUP BY u.lexeme),
                t AS (UPDATE terms SET df = terms.df - lex.n FROM lex
                    WHERE terms.repo = %(repo)s AND terms.term = lex.lexeme)
                SELECT lexeme FROM lex
                """,
                {"repo": self.repo, "path": path, "keep": sorted(keep)},
            ).fetchall()
            if lexemes:  # a term no chunk holds any more leaves the table
                conn.execute(
                    "DELETE FROM terms WHERE repo = %s AND term = ANY(%s) AND df <= 0",
                    (self.repo, [r[0] for r in lexemes]),
                )

    # --- chunks ----------------------------------------------------------------
    def add_chunks(
        self,
        chunks: Sequence[Chunk],
        priorities: Sequence[float],
        keyword_rows: Sequence[tuple[str, str, str]] | None = None,
    ) -> None:
        """Insert chunks (``COPY``) with their keyword vectors, built from the keyword
        rows (computed here unless given: the indexer computes them in its workers)."""
        if not chunks:
            return
        rows = keyword_rows if keyword_rows is not None else [keyword_row(c) for c in chunks]
        vectors = [keyword_vector(row) for row in rows]
        cols = f"repo, {CHUNK_COLS}, priority, kw, kw_len"
        with self._writing() as conn:
            with conn.cursor().copy(f"COPY chunks ({cols}) FROM STDIN") as copy:
                for c, priority, (kw, kw_len, _) in zip(chunks, priorities, vectors, strict=True):
                    copy.write_row(
                        (self.repo, c.id, c.repo, c.path, c.language, c.kind, c.name,
                         c.qualname, c.start_line, c.end_line, no_nul(c.content),
                         no_nul(c.context), c.content_hash, no_nul(c.signature),
                         no_nul(c.docstring), c.parent, c.part, priority, kw, kw_len)
                    )  # fmt: skip
            conn.execute(
                "UPDATE repos SET documents = documents + %s, tokens = tokens + %s WHERE repo = %s",
                (len(chunks), sum(n for _, n, _ in vectors), self.repo),
            )
            df = Counter(lexeme for _, _, lexemes in vectors for lexeme in lexemes)
            terms = sorted(df)  # one order for every writer
            conn.execute(
                "INSERT INTO terms (repo, term, df) SELECT %s, t, n "
                "FROM unnest(%s::text[], %s::bigint[]) AS u(t, n) "
                "ON CONFLICT (repo, term) DO UPDATE SET df = terms.df + excluded.df",
                (self.repo, terms, [df[t] for t in terms]),
            )

    def clear(self) -> None:
        """Remove every file, chunk, graph row and vector of this repository (``index
        --full``) in one transaction; other repositories are untouched."""
        with self.transaction() as conn:
            for table in DATA_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE repo = %s", (self.repo,))
            conn.execute("UPDATE repos SET documents = 0, tokens = 0 WHERE repo = %s", (self.repo,))

    def chunks(self, path_prefix: str | None = None) -> Iterator[Chunk]:
        """Chunks ordered by path and start line, optionally under a path or folder."""
        sql = f"SELECT {CHUNK_COLS} FROM chunks WHERE repo = %s"
        args: list[object] = [self.repo]
        if path_prefix:  # exact and case-sensitive
            prefix = path_prefix.rstrip("/")
            sql += " AND (path = %s OR starts_with(path, %s))"
            args += [prefix, prefix + "/"]
        sql += " ORDER BY path, start_line, end_line DESC, seq"
        for row in self._fetchall(sql, args):
            yield row_to_chunk(row)

    def get_chunks(self, ids: Iterable[str]) -> dict[str, Chunk]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        rows = self._fetchall(
            f"SELECT {CHUNK_COLS} FROM chunks WHERE repo = %s AND id = ANY(%s)",
            (self.repo, wanted),
        )
        found = {r[0]: row_to_chunk(r) for r in rows}
        return {i: found[i] for i in wanted if i in found}

    def definitions(self) -> list[Definition]:
        return [
            Definition(*row)
            for row in self._fetchall(
                "SELECT id, path, language, kind, name, qualname FROM chunks WHERE repo = %s "
                "AND kind IN ('function', 'method', 'class', 'module') ORDER BY seq",
                (self.repo,),
            )
        ]

    def chunk_ids_by_path(self, paths: Iterable[str]) -> list[str]:
        wanted = list(dict.fromkeys(paths))
        rows = self._fetchall(
            "SELECT id FROM chunks WHERE repo = %s AND path = ANY(%s) "
            "ORDER BY array_position(%s::text[], path::text), start_line, seq",
            (self.repo, wanted, wanted),
        )
        return [r[0] for r in rows]

    def names_by_id(self, path: str) -> dict[str, str]:
        """Chunk id → name of a file's chunks."""
        rows = self._fetchall(
            "SELECT id, name FROM chunks WHERE repo = %s AND path = %s", (self.repo, path)
        )
        return {str(i): str(n) for i, n in rows}

    def counts(self) -> dict[str, int]:
        row = self._fetchone(
            "SELECT (SELECT count(*) FROM files WHERE repo = %(r)s), "
            "(SELECT count(*) FROM chunks WHERE repo = %(r)s), "
            "(SELECT count(*) FROM edges WHERE repo = %(r)s)",
            {"r": self.repo},
        )
        return {
            "files": int(row[0]),
            "chunks": int(row[1]),
            "edges": int(row[2]),
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
        rows = self._fetchall(
            f"SELECT {column}, count(*) FROM {table} WHERE repo = %s GROUP BY {column} "
            "ORDER BY 2 DESC, 1",
            (self.repo,),
        )
        return {str(k): int(n) for k, n in rows}
