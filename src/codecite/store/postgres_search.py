"""Keyword search and symbol look-ups in the PostgreSQL store.

Matching is PostgreSQL full-text search: each chunk's ``kw`` tsvector holds the
identifier-split symbol, path and body texts of :func:`codecite.tokens.keyword_row`
(weights A, B and D, with positions), GIN-indexed; a query term is a phrase
(``'apply' <-> 'loyalty' <-> 'discount'``) and terms are OR-ed.

Ranking is SQLite FTS5's ``bm25()``, computed exactly in SQL rather than approximated
by ``ts_rank``: for a one-term query ``ts_rank_cd(weights, kw, q, 0)`` is the sum over
the term's occurrences of its column's weight — FTS5's weighted term frequency (the
weights are scaled to PostgreSQL's [0, 1] and the result scaled back); IDF
``log((N - n + 0.5) / (n + 0.5))`` (floored at 1e-6) counts the matches ``n`` over the
whole repository, and ``N`` and the mean document length come from the per-repository
counters in ``repos``, kept in the write transactions. The filters only choose which
matches may be returned, as in SQLite. Ties are broken by insertion order.

Known differences from FTS5: a lexeme keeps at most 256 positions and positions stop at
16,383 (a token repeated more often in one chunk counts 256 times, which BM25's
saturation makes invisible in practice); scores are sums of float4 frequencies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..filters import Filters
from .postgres_base import PgTables, filter_sql, fts_tokens, tsquery
from .protocols import KeywordWeights

#: FTS5's bm25() constants (the protocol's).
K1, B = 1.2, 0.75
#: The kinds that rank after definitions in a symbol look-up.
COARSE_KINDS_SQL = "('module', 'window', 'file')"

#: The matches of one term (``{n}``): each term is its own scan with its tsquery as a
#: parameter, so the planner estimates it from the column's lexeme statistics (a rare
#: term: a GIN bitmap scan; a very common one: a sequential scan), and each matching
#: chunk's tsvector is read once.
_TERM_SQL = """
    SELECT {n} AS i, c.seq, c.id, c.kw_len, c.language, c.kind, c.path, c.chunk_repo,
           ts_rank_cd(%(rank_weights)s::float4[], c.kw, %(q{n})s::tsquery, 0)::float8
               * %(scale)s AS f
    FROM chunks c WHERE c.repo = %(repo)s AND c.kw @@ %(q{n})s::tsquery"""

_KEYWORD_SQL = """
WITH stats AS (
    SELECT greatest(documents, 1)::float8 AS n,
           greatest(tokens, 1)::float8 / greatest(documents, 1) AS avgdl
    FROM repos WHERE repo = %(repo)s
),
hits AS MATERIALIZED ({terms}
),
idf AS (
    SELECT h.i, CASE WHEN x.idf > 0 THEN x.idf ELSE 1e-6 END AS idf
    FROM (SELECT i, count(*)::float8 AS df FROM hits GROUP BY i) h, stats s,
         LATERAL (SELECT ln((s.n - h.df + 0.5) / (h.df + 0.5)) AS idf) x
)
SELECT c.id
FROM hits c JOIN idf USING (i), stats s
WHERE true {where}
GROUP BY c.seq, c.id
ORDER BY sum(idf.idf * c.f * (%(k1)s + 1) /
              (c.f + %(k1)s * (1 - %(b)s + %(b)s * c.kw_len / s.avgdl))) DESC, c.seq
LIMIT %(limit)s
"""


class SearchTables(PgTables):
    """The keyword-index and symbol-table methods of
    :class:`~codecite.store.postgres.PostgresStore`."""

    _df_cache: tuple[int, dict[str, int]] = (-1, {})

    def keyword_search(
        self, terms: Sequence[str], filters: Filters | None, limit: int, weights: KeywordWeights
    ) -> list[str]:
        """Chunk ids by BM25, best first."""
        queries = [q for q in (tsquery(t) for t in terms) if q]
        if not queries or limit == 0:
            return []
        symbol, path, body = (max(0.0, float(w)) for w in weights)
        scale = max(symbol, path, body) or 1.0
        where, args = filter_sql(filters)
        params: dict[str, object] = {
            **{f"q{n}": query for n, query in enumerate(queries)},
            "repo": self.repo,
            # ts_rank_cd's weights are {D, C, B, A}: body, (unused), path, symbol
            "rank_weights": [body / scale, body / scale, path / scale, symbol / scale],
            "scale": scale,
            "k1": K1,
            "b": B,
            "limit": limit if limit > 0 else None,
        }
        # the filters' %s placeholders become named ones
        for n, value in enumerate(args):
            where = where.replace("%s", f"%(f{n})s", 1)
            params[f"f{n}"] = value
        matches = "\n    UNION ALL".join(_TERM_SQL.format(n=n) for n in range(len(queries)))
        sql = _KEYWORD_SQL.format(terms=matches, where=where)
        return [r[0] for r in self._fetchall(sql, params)]

    def document_count(self) -> int:
        row = self._fetchone("SELECT documents FROM repos WHERE repo = %s", (self.repo,))
        return int(row[0]) if row else 0

    def document_frequency(self, term: str) -> int:
        """Chunks whose keyword texts hold the token ``term`` (a term that is not one
        stored token counts 0), cached until the repository changes."""
        if fts_tokens(term) != [term]:
            return 0
        generation = self.generation()
        if self._df_cache[0] != generation:
            self._df_cache = (generation, {})
        cache = self._df_cache[1]
        if term not in cache:
            row = self._fetchone(
                "SELECT count(*) FROM chunks WHERE repo = %s AND kw @@ %s::tsquery",
                (self.repo, tsquery(term)),
            )
            cache[term] = int(row[0])
        return cache[term]

    def generation(self) -> int:
        row = self._fetchone("SELECT generation FROM repos WHERE repo = %s", (self.repo,))
        return int(row[0]) if row else 0

    def find_symbols(
        self, name: str, column: Literal["qualname", "name"], filters: Filters | None, limit: int
    ) -> list[str]:
        """Ids of chunks whose ``column`` (or qualname) is ``name``: definitions before
        module/window/file chunks, first parts first, shorter paths first."""
        assert column in ("qualname", "name")
        where, args = filter_sql(filters)
        rows = self._fetchall(
            f"SELECT c.id FROM chunks c WHERE c.repo = %s AND (c.{column} = %s OR "
            f"c.qualname = %s) {where} "
            f"ORDER BY c.kind IN {COARSE_KINDS_SQL}, c.part, length(c.path), c.seq LIMIT %s",
            [self.repo, name, name, *args, limit if limit >= 0 else None],
        )
        return [r[0] for r in rows]
