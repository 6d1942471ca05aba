"""Keyword search: BM25 (SQLite FTS5 ``bm25()``) over identifier-split tokens,
plus an exact symbol-table lookup for identifiers named in the query. Filters
are SQL conditions of the same query, so they apply inside the search."""

from __future__ import annotations

import fnmatch
import sqlite3

from ..config import Config
from ..tokens import tokenize
from .intent import symbol_candidates
from .types import Filters

#: Words that carry no meaning for code search; dropped from keyword queries.
STOPWORDS = frozenset("""
a an and are as at be by can could do does did for from has have how i if in into is it its
me my of on or our should so than that the their them then there these this those to was
we were what when where which who whom why will with would you your about all any each
get gets got find show tell explain work works handled handle happen happens used use uses
code function method class file files implemented implementation logic
""".split())


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


def path_matches(pattern: str, path: str) -> bool:
    """Path filter semantics: a pattern without wildcards matches that file or folder;
    a pattern without ``/`` matches the file name in any folder (``*.ts``); otherwise
    fnmatch on the whole path, ``**`` matching across folders."""
    pattern = pattern.strip().removeprefix("./")
    if not any(ch in pattern for ch in "*?["):
        folder = pattern.rstrip("/")
        return path == folder or path.startswith(folder + "/")
    if "/" not in pattern:
        return fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern)
    return fnmatch.fnmatchcase(path, pattern.replace("**/", "*").replace("**", "*"))


def register_functions(conn: sqlite3.Connection) -> None:
    """SQL functions the filters use (``path_matches(pattern, path)``)."""
    conn.create_function("path_matches", 2, path_matches, deterministic=True)


def query_terms(text: str) -> list[str]:
    """The meaningful tokens of a question, in order, once each."""
    return list(dict.fromkeys(t for t in tokenize(text) if t not in STOPWORDS and len(t) > 1))


def fts_query(text: str, terms: list[str] | None = None) -> str:
    """An FTS5 query OR-ing the meaningful tokens of a question."""
    return " OR ".join(f'"{t}"' for t in (query_terms(text) if terms is None else terms))


class TermStats:
    """Document frequencies from the keyword index (cached), to leave out terms so
    common that matching them costs more than they tell: on a large index an OR
    query's time grows with the documents its terms match."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.codecite_vocab "
                     "USING fts5vocab(main, 'chunks_fts', 'row')")
        self.documents = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        self._df: dict[str, int] = {}

    def df(self, term: str) -> int:
        if term not in self._df:
            row = self.conn.execute(
                "SELECT doc FROM temp.codecite_vocab WHERE term = ?", (term,)).fetchone()
            self._df[term] = int(row[0]) if row else 0
        return self._df[term]

    def select(self, terms: list[str], config: Config) -> list[str]:
        """``terms`` minus the very common ones on a large index (the rarest few are
        always kept, so a question of common words still matches)."""
        if self.documents < config.keyword_prune_min_chunks or len(terms) <= 2:
            return terms
        limit = config.keyword_max_df_share * self.documents
        kept = [t for t in terms if self.df(t) <= limit]
        if len(kept) >= 2:
            return kept
        return sorted(terms, key=self.df)[:2]


def keyword_search(conn: sqlite3.Connection, text: str, config: Config,
                   filters: Filters | None = None, limit: int = 50,
                   stats: TermStats | None = None) -> list[str]:
    """Chunk ids by BM25, best first."""
    terms = query_terms(text)
    if stats is not None:
        terms = stats.select(terms, config)
    match = fts_query(text, terms)
    if not match:
        return []
    weights = (config.bm25_symbol_weight, config.bm25_path_weight, config.bm25_body_weight)
    if not filters:  # rank on the keyword index alone; join only the winners (much faster)
        rowids = [r[0] for r in conn.execute(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? "
            "ORDER BY bm25(chunks_fts, ?, ?, ?) LIMIT ?", [match, *weights, limit])]
        marks = ",".join("?" * len(rowids))
        ids = dict(conn.execute(f"SELECT rowid, id FROM chunks WHERE rowid IN ({marks})", rowids))
        return [ids[r] for r in rowids if r in ids]
    where, args = filter_sql(filters)
    rows = conn.execute(
        "SELECT c.id FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
        f"WHERE chunks_fts MATCH ? {where} "
        "ORDER BY bm25(chunks_fts, ?, ?, ?) LIMIT ?",
        [match, *args, *weights, limit],
    ).fetchall()
    return [r[0] for r in rows]


def symbol_search(conn: sqlite3.Connection, identifiers: tuple[str, ...],
                  filters: Filters | None = None, limit: int = 10) -> list[str]:
    """Chunks whose qualname or name is exactly an identifier of the query.
    Qualname matches come before name matches; definitions before module chunks."""
    where, args = filter_sql(filters)
    out: list[str] = []
    for identifier in identifiers:
        for i, name in enumerate(symbol_candidates(identifier)):
            column = "qualname" if i == 0 else "name"
            rows = conn.execute(
                f"SELECT c.id FROM chunks c WHERE (c.{column} = ? OR c.qualname = ?) {where} "
                "ORDER BY c.kind IN ('module', 'window', 'file'), c.part, length(c.path) LIMIT ?",
                [name, name, *args, limit],
            ).fetchall()
            out += [r[0] for r in rows if r[0] not in out]
            if rows:
                break
    return out[:limit]
