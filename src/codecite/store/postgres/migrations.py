"""Numbered schema migrations of the PostgreSQL store (docs/DESIGN.md §13).

Everything lives in one schema (:data:`SCHEMA`, ``codecite``) of the database the URL
names, shared by every repository indexed into it: each table has a ``repo`` column
that leads its primary key and its indexes, and every query the store runs is scoped
by it. ``schema_migrations`` records the migrations applied (one row each); the
format version is the highest. Migrations run in one transaction under a
transaction-level advisory lock, so two processes opening a new database at once
create the schema once. Never edit a released migration: add the next one.

Text columns are ``COLLATE "C"`` so that ``ORDER BY path`` sorts bytes, as SQLite
does, whatever the database's default collation is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import IndexFormatError, IndexOutdatedError, UserError

if TYPE_CHECKING:
    import psycopg

#: The schema holding codecite's tables.
SCHEMA = "codecite"
#: First key of every advisory lock codecite takes (``pg_advisory_lock(int, int)``),
#: so that they never collide with another application's locks ('cci' in ASCII).
LOCK_CLASS = 0x636369
#: Second key of the migration lock (writer locks use ``hashtext(repo)``).
MIGRATION_LOCK = 0
#: Seconds between two tries of a session lock another process holds: such a lock is
#: polled, never waited for in one statement (a waiting statement holds a snapshot, which
#: the holder's ``CREATE INDEX CONCURRENTLY`` waits to end: a deadlock, or a hang when
#: the lock is held on another connection than the build's).
LOCK_POLL = 0.2

M001_CREATE_TABLES = """
CREATE TABLE repos (
    repo text COLLATE "C" PRIMARY KEY,
    -- bumped by every write transaction: other processes reload what they cached
    generation bigint NOT NULL DEFAULT 0,
    -- BM25 statistics (FTS5 keeps the same two numbers): chunk count, total tokens
    documents bigint NOT NULL DEFAULT 0,
    tokens bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE meta (
    repo text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (repo, key)
);
CREATE TABLE files (
    repo text COLLATE "C" NOT NULL,
    path text COLLATE "C" NOT NULL,
    language text COLLATE "C" NOT NULL,
    hash text COLLATE "C" NOT NULL,
    size bigint NOT NULL,
    mtime_ns bigint NOT NULL,
    git_blob text COLLATE "C" NOT NULL DEFAULT '',
    n_chunks integer NOT NULL DEFAULT 0,
    secrets integer NOT NULL DEFAULT 0,
    indexed_at double precision NOT NULL,
    PRIMARY KEY (repo, path)
);
CREATE TABLE chunks (
    -- insertion order (SQLite's rowid): ties in rankings and vector rows follow it
    seq bigint GENERATED ALWAYS AS IDENTITY,
    repo text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    chunk_repo text COLLATE "C" NOT NULL,
    path text COLLATE "C" NOT NULL,
    language text COLLATE "C" NOT NULL,
    kind text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    qualname text COLLATE "C" NOT NULL,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    content text NOT NULL,
    context text NOT NULL,
    content_hash text COLLATE "C" NOT NULL,
    signature text NOT NULL DEFAULT '',
    docstring text NOT NULL DEFAULT '',
    parent text COLLATE "C" NOT NULL DEFAULT '',
    part integer NOT NULL DEFAULT 0,
    priority double precision NOT NULL DEFAULT 0,
    -- keyword index: the identifier-split symbol (weight A), path (B) and body (D)
    -- texts of codecite.tokens.keyword_row, with positions; kw_len counts their tokens
    kw tsvector NOT NULL,
    kw_len integer NOT NULL,
    PRIMARY KEY (repo, id)
);
-- keep the keyword vector in the row (compressed if need be; content moves out first):
-- ranking reads it for every match, and a TOAST fetch per row made that 6x slower
ALTER TABLE chunks ALTER COLUMN kw SET STORAGE MAIN;
CREATE INDEX chunks_path ON chunks (repo, path, start_line);
CREATE INDEX chunks_name ON chunks (repo, name);
CREATE INDEX chunks_qualname ON chunks (repo, qualname);
CREATE INDEX chunks_content_hash ON chunks (repo, content_hash);
CREATE INDEX chunks_seq ON chunks (repo, seq);
CREATE INDEX chunks_kw ON chunks USING gin (kw);
CREATE TABLE imports (
    seq bigint GENERATED ALWAYS AS IDENTITY,
    repo text COLLATE "C" NOT NULL,
    path text COLLATE "C" NOT NULL,
    module text NOT NULL,
    names text NOT NULL,
    alias text NOT NULL,
    line integer NOT NULL
);
CREATE INDEX imports_path ON imports (repo, path);
-- references by name, kept unresolved so later files can resolve them
CREATE TABLE refs (
    seq bigint GENERATED ALWAYS AS IDENTITY,
    repo text COLLATE "C" NOT NULL,
    src text COLLATE "C" NOT NULL,
    path text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    qualifier text NOT NULL,
    kind text COLLATE "C" NOT NULL,
    line integer NOT NULL
);
CREATE INDEX refs_src ON refs (repo, src);
CREATE INDEX refs_path ON refs (repo, path);
CREATE INDEX refs_name ON refs (repo, name);
CREATE TABLE edges (
    repo text COLLATE "C" NOT NULL,
    src text COLLATE "C" NOT NULL,
    dst text COLLATE "C" NOT NULL,
    kind text COLLATE "C" NOT NULL,
    line integer NOT NULL,
    PRIMARY KEY (repo, src, dst, kind)
);
CREATE INDEX edges_dst ON edges (repo, dst, kind);
-- one vector per chunk and tier ('model', 'static'); content_hash lets a renamed chunk
-- reuse its vector. The column has no fixed width (repositories may use different
-- models); the HNSW indexes are partial expression indexes per (tier, dim).
CREATE TABLE vectors (
    repo text COLLATE "C" NOT NULL,
    tier text COLLATE "C" NOT NULL,
    chunk_id text COLLATE "C" NOT NULL,
    content_hash text COLLATE "C" NOT NULL,
    dim integer NOT NULL,
    vec vector NOT NULL,
    PRIMARY KEY (repo, tier, chunk_id)
);
CREATE INDEX vectors_content_hash ON vectors (repo, tier, content_hash);
"""

M002_TERM_STATISTICS = """
-- each keyword-index token's document frequency per repository (the chunks whose
-- keyword vector holds it), kept in the write transactions like repos.documents:
-- keyword search reads it to bound a term's BM25 contribution before scanning its
-- matches (postgres_search.py), and the query analysis reads it to drop common terms
CREATE TABLE terms (
    repo text COLLATE "C" NOT NULL,
    term text COLLATE "C" NOT NULL,
    df bigint NOT NULL,
    PRIMARY KEY (repo, term)
);
INSERT INTO terms (repo, term, df)
SELECT c.repo, u.lexeme, count(*) FROM chunks c, unnest(c.kw) u GROUP BY c.repo, u.lexeme;
"""

M003_EMBEDDING_CACHE = """
-- the embedding cache shared by every worker and repository: (model, sha256 of the
-- text) -> vector, raw little-endian float32 bytes (store/postgres/embedding_cache.py);
-- no repo column: a vector depends on the model and the text only. Before this
-- migration the cache made the same table on first use: IF NOT EXISTS keeps that one
CREATE TABLE IF NOT EXISTS embedding_cache (
    model text NOT NULL,
    key text NOT NULL,
    dim integer NOT NULL,
    vector bytea NOT NULL,
    PRIMARY KEY (model, key)
);
"""

#: The migrations, in order: SQL run in the codecite schema.
MIGRATIONS: list[str] = [M001_CREATE_TABLES, M002_TERM_STATISTICS, M003_EMBEDDING_CACHE]
#: The format version a database written by this code has.
FORMAT_VERSION = len(MIGRATIONS)
#: The oldest format a read-only open (queries) reads: migration 3 adds only the
#: embedding cache, which only writers use, so servers keep reading a database no
#: writer has upgraded yet.
READ_FORMAT = 2


def schema_version(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    """The highest migration applied (0: no codecite schema in this database)."""
    # a query on pg_class sees the statement's snapshot (to_regclass may answer from a
    # cached negative look-up made before another process created the table)
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = 'schema_migrations')",
        (SCHEMA,),
    ).fetchone()
    if not row or not row[0]:
        return 0
    found = conn.execute(f"SELECT coalesce(max(version), 0) FROM {SCHEMA}.schema_migrations")
    version = found.fetchone()
    return int(str(version[0])) if version else 0


def check_version(version: int, where: str, readonly: bool) -> None:
    """The same format checks as the SQLite store's: a newer format is refused; a
    read-only open of an older one asks for ``codecite index``."""
    if version > FORMAT_VERSION:
        raise IndexFormatError(
            f"{where} was written by a newer codecite (format {version}, this one reads up "
            f"to {FORMAT_VERSION}); upgrade codecite"
        )
    if readonly and version < READ_FORMAT:
        what = "holds no codecite schema" if version == 0 else f"has format {version}"
        raise IndexOutdatedError(
            f"{where} {what} (this codecite reads format {FORMAT_VERSION}); run "
            "`codecite index PATH --store URL` once to create or upgrade it"
        )


def migrate(conn: psycopg.Connection[tuple[object, ...]], where: str) -> None:
    """Apply the missing migrations, under an advisory lock: the version is read again
    once the lock is held, so concurrent first opens create the schema once."""
    version = schema_version(conn)
    check_version(version, where, readonly=False)
    if version == FORMAT_VERSION:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, MIGRATION_LOCK))
        version = schema_version(conn)
        check_version(version, where, readonly=False)
        if version == 0:
            _create_extension(conn)
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {SCHEMA}.schema_migrations ("
                "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
        conn.execute(f"SET LOCAL search_path TO {SCHEMA}, {vector_schema(conn)}")
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            conn.execute(script.encode())
            conn.execute(f"INSERT INTO {SCHEMA}.schema_migrations (version) VALUES (%s)", (number,))


def _create_extension(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    import psycopg

    row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row:
        return
    try:
        with conn.transaction():  # a savepoint: a refusal leaves the migration usable
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise UserError(
            "the pgvector extension is not installed in this database and this user may "
            "not install it; ask its administrator to run `CREATE EXTENSION vector;` "
            f"({exc.diag.message_primary})"
        ) from None
    except psycopg.errors.FeatureNotSupported as exc:  # pragma: no cover - no pgvector
        raise UserError(
            f"this PostgreSQL server has no pgvector ({exc}); install pgvector 0.5 or later"
        ) from None
    except psycopg.errors.UndefinedFile as exc:
        raise UserError(
            f"this PostgreSQL server has no pgvector ({exc.diag.message_primary}); install "
            "pgvector 0.5 or later (https://github.com/pgvector/pgvector)"
        ) from None


def vector_schema(conn: psycopg.Connection[tuple[object, ...]]) -> str:
    """The schema pgvector's types live in (``public`` unless installed elsewhere)."""
    row = conn.execute(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'vector'"
    ).fetchone()
    return str(row[0]) if row else "public"
