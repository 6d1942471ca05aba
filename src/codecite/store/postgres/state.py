"""The server's state tables in PostgreSQL (``state = "postgresql://..."`` in
codecite-server.toml, DESIGN.md §11, §13): tokens and the audit log in the schema
:data:`SCHEMA` (``codecite_state``) of the database the URL names. That can be the
shared store's database (its index lives in the schema ``codecite``), so one database
holds the index, the job queue, the tokens and the audit log, and serve processes on
several machines see each other's tokens, revocations and audit rows at once.

The queries are :class:`~codecite.store.state.StateTables`', as with a SQLite file;
this module adds the connection (a small
``psycopg_pool.ConnectionPool`` in autocommit: each write is one statement, its own
transaction) and the schema: numbered migrations (:data:`MIGRATIONS`), applied under an
advisory lock so that two processes opening a new database create it once, with the
format version and kind in ``meta`` as in the SQLite file. The audit table is
append-only, as there: a trigger refuses UPDATE and TRUNCATE, and DELETE of a row
younger than a day. Times are epoch seconds (``double precision``), so both backends
return the same values.

psycopg is imported when a store is opened: ``codecite token`` and ``audit`` need the
PostgreSQL extra only when ``state`` is a URL.
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from ...errors import ConfigError
from ..state import KIND, StateTables, check_format
from ..urls import redact
from .migrations import LOCK_CLASS
from .store import CONNECT_TIMEOUT, INSTALL_HINT, PoolOwner, open_pool

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

#: The schema holding the state tables (the index's is ``codecite``).
SCHEMA = "codecite_state"
#: Second key of the migration's advisory lock (``'sta'``; the index's is 0).
MIGRATION_LOCK = 0x737461
#: Connections per store (a server's threads share them).
POOL_SIZE = 4

M001_CREATE_TABLES = f"""
CREATE TABLE {SCHEMA}.meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL);
CREATE TABLE {SCHEMA}.tokens (
    id text COLLATE "C" PRIMARY KEY,
    "user" text COLLATE "C" NOT NULL,
    kdf text NOT NULL,
    salt bytea NOT NULL,
    hash bytea NOT NULL,
    repos text NOT NULL,
    admin integer NOT NULL DEFAULT 0,
    created_at double precision NOT NULL,
    expires_at double precision,
    revoked_at double precision
);
CREATE INDEX tokens_user ON {SCHEMA}.tokens ("user");
CREATE TABLE {SCHEMA}.audit (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    time double precision NOT NULL,
    "user" text COLLATE "C" NOT NULL,
    client text NOT NULL,
    method text NOT NULL,
    endpoint text NOT NULL,
    status integer NOT NULL,
    latency_ms double precision NOT NULL,
    repos text NOT NULL,
    question text NOT NULL,
    results text NOT NULL,
    citations text NOT NULL,
    detail text NOT NULL
);
CREATE INDEX audit_time ON {SCHEMA}.audit (time);
CREATE INDEX audit_user_time ON {SCHEMA}.audit ("user", time);
-- append-only: no update, no truncate, and no delete of a row younger than a day
CREATE FUNCTION {SCHEMA}.audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.time <= extract(epoch FROM now())::double precision - 86400 THEN
            RETURN OLD;
        END IF;
        RAISE EXCEPTION 'the audit log is append-only (prune by age only)'
            USING ERRCODE = 'restrict_violation';
    END IF;
    RAISE EXCEPTION 'the audit log is append-only' USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON {SCHEMA}.audit
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.audit_append_only();
CREATE TRIGGER audit_no_recent_delete BEFORE DELETE ON {SCHEMA}.audit
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.audit_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON {SCHEMA}.audit
    FOR EACH STATEMENT EXECUTE FUNCTION {SCHEMA}.audit_append_only();
"""

#: Web sessions (a random id, stored hashed, tied to the token that signed in) and the
#: Slack signatures seen within their replay window.
M002_SESSIONS_AND_SLACK = f"""
CREATE TABLE {SCHEMA}.sessions (
    id_hash text COLLATE "C" PRIMARY KEY,
    token_id text COLLATE "C" NOT NULL,
    "user" text COLLATE "C" NOT NULL,
    created_at double precision NOT NULL,
    expires_at double precision NOT NULL,
    revoked_at double precision
);
CREATE INDEX sessions_expiry ON {SCHEMA}.sessions (expires_at);
CREATE TABLE {SCHEMA}.slack_seen (
    signature text COLLATE "C" PRIMARY KEY,
    seen_at double precision NOT NULL
);
CREATE INDEX slack_seen_time ON {SCHEMA}.slack_seen (seen_at);
"""

#: The migrations, in order (never edit a released one: add the next).
MIGRATIONS: list[str] = [M001_CREATE_TABLES, M002_SESSIONS_AND_SLACK]
FORMAT_VERSION = len(MIGRATIONS)


def _driver() -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise ConfigError(
            'a PostgreSQL state database (state = "postgresql://...") needs psycopg 3 '
            f"and psycopg-pool: {INSTALL_HINT}"
        ) from None
    return psycopg, psycopg_pool


class PostgresStateTables(PoolOwner, StateTables):
    """The state tables in the PostgreSQL database at ``url``; the schema is created or
    upgraded on open.

    Raises :class:`ConfigError` (naming the URL without its password) when the database
    cannot be reached or written, or holds something else in :data:`SCHEMA`.
    """

    TOKENS = f"{SCHEMA}.tokens"
    AUDIT = f"{SCHEMA}.audit"
    SESSIONS = f"{SCHEMA}.sessions"
    SLACK_SEEN = f"{SCHEMA}.slack_seen"

    def __init__(self, url: str, *, pool_size: int = POOL_SIZE) -> None:
        pg, _ = _driver()
        self.url, self.where = url, redact(url)
        self._duplicate = (pg.errors.UniqueViolation,)
        kwargs = {
            "autocommit": True,
            "connect_timeout": CONNECT_TIMEOUT,
            # no server-side prepared statements: a pooler in transaction mode needs none
            "prepare_threshold": None,
            "application_name": f"codecite-state {os.getpid()}@{socket.gethostname()}"[:63],
        }
        try:
            conn = pg.connect(url, **kwargs)
        except (pg.OperationalError, pg.ProgrammingError) as exc:
            raise ConfigError(
                f"cannot connect to the state database {self.where}: {self._safe(exc)}; check "
                "`state` in codecite-server.toml (postgresql://USER[:PASSWORD]@HOST[:PORT]/"
                "DATABASE) and that the server runs"
            ) from None
        try:
            with conn:
                self._migrate(conn)
        except pg.errors.InsufficientPrivilege as exc:
            raise ConfigError(
                f"cannot create the state tables in {self.where} ({self._safe(exc)}); let "
                "this user create a schema there (GRANT CREATE ON DATABASE ...) or point "
                "`state` at another database"
            ) from None
        self.pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]] = open_pool(
            url,
            kwargs=kwargs,
            size=pool_size,
            name="codecite-state",
            where=f"the state database {self.where}",
            error=ConfigError,
        )

    def _safe(self, exc: BaseException) -> str:
        """An error's message, with the URL's password (if it shows) hidden."""
        text = str(exc).strip()
        password = urlsplit(self.url).password
        if password:
            for secret in (password, unquote(password)):
                text = text.replace(secret, "***")
        return text

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        """Apply the missing migrations; the version is read again once the advisory
        lock is held, so concurrent first opens create the schema once."""
        if self._version(conn) == FORMAT_VERSION:
            return
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, MIGRATION_LOCK))
            version = self._version(conn)
            if version == 0:
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                conn.execute(script.encode())
                conn.execute(
                    f"INSERT INTO {SCHEMA}.meta (key, value) VALUES ('format_version', %s), "
                    "('kind', %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    (str(number), KIND),
                )

    def _version(self, conn: psycopg.Connection[Any]) -> int:
        """The format version (0: no state tables yet); refuses another schema's
        contents and a newer format, with the SQLite file's messages."""
        tables = [
            str(r[0])
            for r in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind IN ('r', 'p') ORDER BY 1",
                (SCHEMA,),
            )
        ]
        if not tables:
            return 0
        meta: dict[str, str] = {}
        if "meta" in tables:
            rows = conn.execute(f"SELECT key, value FROM {SCHEMA}.meta").fetchall()
            meta = {str(key): str(value) for key, value in rows}
        return check_format(
            self.where,
            meta.get("kind"),
            int(meta.get("format_version", 0)),
            FORMAT_VERSION,
            f"a PostgreSQL database but not a codecite state database (its schema {SCHEMA} "
            f"holds {', '.join(tables[:5])}); point `state` at another database",
        )

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with self.pool.connection() as conn:
            return conn.execute(sql.replace("?", "%s"), params).fetchall()

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        with self.pool.connection() as conn:  # autocommit: the statement is a transaction
            return conn.execute(sql.replace("?", "%s"), params).rowcount

    def _execute_many(self, sql: str, rows: list[tuple[Any, ...]]) -> int:
        with self.pool.connection() as conn, conn.transaction():
            cursor = conn.cursor()
            cursor.executemany(sql.replace("?", "%s"), rows)
            return cursor.rowcount
