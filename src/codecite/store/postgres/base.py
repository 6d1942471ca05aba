"""What the PostgreSQL store's modules share: the connection handling (a pool, and the
connection of the transaction this thread has open), the keyword-index text as a
``tsvector``, the filters as SQL, and the binary form of pgvector's ``vector``."""

from __future__ import annotations

import re
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import UserError
from ...filters import Filters
from ...types import Chunk

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

#: One token of the keyword texts, split as SQLite FTS5's ``unicode61`` tokenizer splits
#: them (lower-cased runs of letters and digits: ``_`` and ``$`` separate tokens).
_TOKEN = re.compile(r"[^\W_]+")
#: PostgreSQL keeps positions 1..16383 and at most 256 positions per lexeme.
MAX_POSITION = 16383
MAX_POSITIONS_PER_LEXEME = 256
#: Longest lexeme a tsvector accepts (bytes); longer tokens are left out of matching.
MAX_LEXEME_BYTES = 2046
#: tsvector weight labels of the three keyword texts (symbol, path, body).
LABELS = ("A", "B", "")

CHUNK_COLS = (
    "id, chunk_repo, path, language, kind, name, qualname, start_line, end_line, content, "
    "context, content_hash, signature, docstring, parent, part"
)
#: The chunk columns with the ``c.`` alias of queries that join.
CHUNK_COLS_C = ", ".join("c." + col.strip() for col in CHUNK_COLS.split(","))


def fts_tokens(text: str) -> list[str]:
    """``text`` split into the tokens the keyword index stores."""
    return _TOKEN.findall(text.lower())


def keyword_vector(row: Sequence[str]) -> tuple[str, int, list[str]]:
    """The ``tsvector`` literal of one chunk's three keyword texts, their token count
    (BM25's document length) and the lexemes it holds (each once: the ``terms`` table
    counts them). Positions run on across the texts with a gap of one between them, so
    no phrase matches across two texts; the texts' weight labels say which one an
    occurrence is in (ranking counts them with the column weights)."""
    positions: dict[str, list[str]] = {}
    position, total = 0, 0
    for text, label in zip(row, LABELS, strict=True):
        tokens = fts_tokens(text)
        total += len(tokens)
        for token in tokens:
            position += 1
            if position > MAX_POSITION:
                break
            positions.setdefault(token, []).append(f"{position}{label}")
        position += 1
    lexemes = [token for token in positions if len(token.encode()) <= MAX_LEXEME_BYTES]
    literal = " ".join(
        f"'{token}':{','.join(positions[token][:MAX_POSITIONS_PER_LEXEME])}" for token in lexemes
    )
    return literal, total, lexemes


def tsquery(term: str) -> str:
    """A query term as a ``tsquery`` literal: the phrase of its tokens (``a <-> b``),
    "" when it has none."""
    tokens = [t for t in fts_tokens(term) if len(t.encode()) <= MAX_LEXEME_BYTES]
    return " <-> ".join(f"'{t}'" for t in tokens)


def glob_regex(pattern: str, any_char: str = ".") -> str:
    """An fnmatch-style glob as a PostgreSQL (ARE) regular expression matching the whole
    text: ``*`` any run, ``?`` one character, ``[...]`` / ``[!...]`` a set."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        ch = pattern[i]
        i += 1
        if ch == "*":
            out.append(any_char + "*")
        elif ch == "?":
            out.append(any_char)
        elif ch == "[":
            j = i
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: a literal "["
                out.append("\\[")
                continue
            body = pattern[i:j].replace("\\", "\\\\")
            i = j + 1
            if body.startswith("!"):
                body = "^" + body[1:]
            elif body.startswith("^"):
                body = "\\" + body
            out.append(f"[{body}]")
        else:
            out.append(ch if ch.isalnum() else "\\" + ch)
    return "^(?:" + "".join(out) + ")$"


def path_condition(pattern: str, column: str) -> tuple[str, list[object]]:
    """:func:`codecite.filters.path_matches` as an SQL condition on ``column``."""
    pattern = pattern.strip().removeprefix("./")
    if not any(ch in pattern for ch in "*?["):
        folder = pattern.rstrip("/")
        return f"({column} = %s OR starts_with({column}, %s))", [folder, folder + "/"]
    if "/" not in pattern:
        return f"substring({column} from '[^/]*$') ~ %s", [glob_regex(pattern)]
    return f"{column} ~ %s", [glob_regex(pattern.replace("**/", "*").replace("**", "*"))]


def filter_sql(filters: Filters | None, alias: str = "c") -> tuple[str, list[object]]:
    """``AND ...`` conditions on the chunks table for the filters, with parameters."""
    if not filters:
        return "", []
    sql, args = "", list[object]()
    if filters.languages:
        sql += f" AND {alias}.language = ANY(%s)"
        args.append(list(filters.languages))
    if filters.kinds:
        sql += f" AND {alias}.kind = ANY(%s)"
        args.append(list(filters.kinds))
    if filters.path:
        cond, more = path_condition(filters.path, f"{alias}.path")
        sql += " AND " + cond
        args += more
    if filters.repo:
        sql += f" AND {alias}.chunk_repo = %s"
        args.append(filters.repo)
    return sql, args


def row_to_chunk(row: Sequence[object]) -> Chunk:
    return Chunk(*row)  # type: ignore[arg-type]


class Vector:
    """A float32 vector sent to PostgreSQL in pgvector's binary format (dimensions,
    a reserved zero, then big-endian floats)."""

    __slots__ = ("data",)

    def __init__(self, values: np.ndarray) -> None:
        array = np.asarray(values, dtype=">f4").reshape(-1)
        self.data = struct.pack(">HH", len(array), 0) + array.tobytes()


def register_vector(conn: psycopg.Connection[Any]) -> None:
    """Send :class:`Vector` parameters as pgvector's binary ``vector`` on ``conn``."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "vector")
    if info is None:  # pragma: no cover - the migration installs pgvector
        raise RuntimeError("pgvector's vector type is missing from the database")
    vector_oid = info.oid

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = vector_oid

        def dump(self, obj: Vector) -> bytes:
            return obj.data

    conn.adapters.register_dumper(Vector, VectorDumper)


class PgTables:
    """Base of the PostgreSQL store's parts: the pool, the repository every query is
    scoped by, and the connection of the transaction this thread has open."""

    pool: ConnectionPool[Any]
    repo: str
    dir: Path
    readonly: bool
    _local: threading.local

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection of this thread's open transaction, else one from the pool
        (autocommit: a read sees everything committed so far)."""
        tx = getattr(self._local, "conn", None)
        if tx is not None:
            yield tx
            return
        with self.pool.connection() as conn:
            yield conn

    def _fetchall(self, sql: str, args: Sequence[object] | dict[str, object] = ()) -> list[Any]:
        with self._conn() as conn:
            return conn.execute(sql, args).fetchall()

    def _fetchone(self, sql: str, args: Sequence[object] | dict[str, object] = ()) -> Any:
        with self._conn() as conn:
            return conn.execute(sql, args).fetchone()

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """One atomic batch: everything inside commits together or not at all, and the
        commit bumps the repository's generation (other processes then reload). A
        transaction opened inside another one is part of it."""
        tx = getattr(self._local, "conn", None)
        if tx is not None:
            yield tx
            return
        if self.readonly:
            raise UserError(
                f"the index of {self.repo!r} was opened read-only; it cannot be written"
            )
        with self.pool.connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield conn
                conn.execute(
                    "UPDATE repos SET generation = generation + 1 WHERE repo = %s", (self.repo,)
                )
            finally:
                self._local.conn = None

    #: A write outside a transaction is its own transaction.
    _writing = transaction

    def get_meta(self, key: str, default: str = "") -> str:
        row = self._fetchone(
            "SELECT value FROM meta WHERE repo = %s AND key = %s", (self.repo, key)
        )
        return str(row[0]) if row else default
