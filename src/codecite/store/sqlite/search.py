"""Keyword search and symbol look-ups in the SQLite store: FTS5 ``bm25()`` over the
identifier-split texts (columns symbol, path, body), with the filters as SQL
conditions of the same query so they apply inside the search."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Literal

from ...filters import Filters, path_matches
from ..protocols import KeywordWeights
from .base import Tables

#: The kinds that rank after definitions in a symbol look-up.
COARSE_KINDS_SQL = "('module', 'window', 'file')"


def register_functions(conn: sqlite3.Connection) -> None:
    """SQL functions the filters use (``path_matches(pattern, path)``)."""
    conn.create_function("path_matches", 2, path_matches, deterministic=True)


def filter_sql(filters: Filters | None, alias: str = "c") -> tuple[str, list[object]]:
    """``AND ...`` conditions on the chunks table for the filters, with parameters."""
    if not filters:
        return "", []
    sql, args = "", list[object]()
    if filters.languages:
        sql += f" AND {alias}.language IN ({','.join('?' * len(filters.languages))})"
        args += list(filters.languages)
    if filters.kinds:
        sql += f" AND {alias}.kind IN ({','.join('?' * len(filters.kinds))})"
        args += list(filters.kinds)
    if filters.path:
        sql += f" AND path_matches(?, {alias}.path)"
        args.append(filters.path)
    if filters.repo:
        sql += f" AND {alias}.repo = ?"
        args.append(filters.repo)
    return sql, args


def fts_match(terms: Sequence[str]) -> str:
    """An FTS5 query OR-ing the terms (each quoted: no FTS5 syntax gets through)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class SearchTables(Tables):
    """The keyword-index and symbol-table methods of
    :class:`~codecite.store.sqlite.SQLiteStore`."""

    _vocab_ready: bool = False

    def keyword_search(
        self, terms: Sequence[str], filters: Filters | None, limit: int, weights: KeywordWeights
    ) -> list[str]:
        """Chunk ids by BM25, best first."""
        if not terms:
            return []
        match = fts_match(terms)
        if not filters:  # rank on the keyword index alone; join only the winners (faster)
            rowids = [
                r[0]
                for r in self.conn.execute(
                    "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? "
                    "ORDER BY bm25(chunks_fts, ?, ?, ?) LIMIT ?",
                    [match, *weights, limit],
                )
            ]
            marks = ",".join("?" * len(rowids))
            ids = dict(
                self.conn.execute(f"SELECT rowid, id FROM chunks WHERE rowid IN ({marks})", rowids)
            )
            return [ids[r] for r in rowids if r in ids]
        where, args = filter_sql(filters)
        rows = self.conn.execute(
            "SELECT c.id FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? {where} "
            "ORDER BY bm25(chunks_fts, ?, ?, ?) LIMIT ?",
            [match, *args, *weights, limit],
        ).fetchall()
        return [r[0] for r in rows]

    def document_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def document_frequency(self, term: str) -> int:
        """Chunks whose keyword texts hold ``term``, as the index is now (callers cache
        per :meth:`generation`: :class:`~codecite.retrieve.keyword.TermStats`)."""
        if not self._vocab_ready:
            self.conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.codecite_vocab "
                "USING fts5vocab(main, 'chunks_fts', 'row')"
            )
            self._vocab_ready = True
        row = self.conn.execute(
            "SELECT doc FROM temp.codecite_vocab WHERE term = ?", (term,)
        ).fetchone()
        return int(row[0]) if row else 0

    def find_symbols(
        self, name: str, column: Literal["qualname", "name"], filters: Filters | None, limit: int
    ) -> list[str]:
        """Ids of chunks whose ``column`` (or qualname) is ``name``: definitions before
        module/window/file chunks, first parts first, shorter paths first."""
        assert column in ("qualname", "name")
        where, args = filter_sql(filters)
        rows = self.conn.execute(
            f"SELECT c.id FROM chunks c WHERE (c.{column} = ? OR c.qualname = ?) {where} "
            f"ORDER BY c.kind IN {COARSE_KINDS_SQL}, c.part, length(c.path) LIMIT ?",
            [name, name, *args, limit],
        ).fetchall()
        return [r[0] for r in rows]
