"""Keyword search and symbol look-ups in the PostgreSQL store.

Matching is PostgreSQL full-text search: each chunk's ``kw`` tsvector holds the
identifier-split symbol, path and body texts of :func:`codecite.identifiers.keyword_row`
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

Only the rarer terms' matches are scanned when that cannot change the result (the
MaxScore method of Turtle and Flood, 1995): a term adds at most ``idf · (k1 + 1)`` to a
chunk's score, and its ``idf`` is known before any scan from the ``terms`` table (each
token's document frequency, kept by the writes). The most common single-token terms are
set aside while their bounds add up to less than the ``limit``-th best score of the
other terms' matches; then no chunk that matches only set-aside terms can reach the
top ``limit``, so those terms are scored on the candidates alone. When the bound is not
met the search runs again with fewer terms set aside (at worst all scanned, as without
the method). The ranking is unchanged: same scores, same order (scores are compared to
:data:`TIE_DIGITS` decimals, so floating-point sums of equal scores tie, as in FTS5).

Known differences from FTS5: a lexeme keeps at most 256 positions and positions stop at
16,383 (a token repeated more often in one chunk counts 256 times, which BM25's
saturation makes invisible in practice); scores are sums of float4 frequencies.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from ...filters import Filters
from ..protocols import KeywordWeights
from .base import PgTables, filter_sql, fts_tokens, tsquery

#: FTS5's bm25() constants (the protocol's).
K1, B = 1.2, 0.75
#: Scores are compared to this many decimals: chunks with the same texts score the same
#: whatever order a sum's terms were added in, and insertion order breaks the tie.
TIE_DIGITS = 9
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

_HEAD_SQL = """
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
)"""

_SCORE_SQL = """sum(idf.idf * c.f * (%(k1)s + 1) /
              (c.f + %(k1)s * (1 - %(b)s + %(b)s * c.kw_len / s.avgdl)))"""

#: Every matching chunk's score; the best ``limit``.
_KEYWORD_SQL = (
    _HEAD_SQL
    + """
SELECT c.id
FROM hits c JOIN idf USING (i), stats s
WHERE true {where}
GROUP BY c.seq, c.id
ORDER BY round(("""
    + _SCORE_SQL
    + """)::numeric, %(digits)s) DESC, c.seq
LIMIT %(limit)s
"""
)

#: The scanned terms' scores of the chunks that can still reach the top ``limit`` once
#: the set-aside terms (whose bounds add up to ``bound``) are counted, and the
#: ``limit``-th best of those scores (``theta``; 0 with fewer matches), and the mean
#: document length.
_CANDIDATES_SQL = (
    _HEAD_SQL
    + """,
scored AS (
    SELECT c.seq, c.id, c.kw_len, """
    + _SCORE_SQL
    + """ AS score
    FROM hits c JOIN idf USING (i), stats s
    WHERE true {where}
    GROUP BY c.seq, c.id, c.kw_len
),
theta AS (
    SELECT coalesce((SELECT score FROM scored ORDER BY score DESC
                     OFFSET %(offset)s LIMIT 1), 0) AS t
)
SELECT sc.seq, sc.id, sc.kw_len, sc.score, theta.t, (SELECT avgdl FROM stats)
FROM scored sc, theta WHERE sc.score + %(bound)s > theta.t
"""
)

#: The weighted frequency of one set-aside term (``{n}``) in the candidates.
_RESCORE_SQL = """
    SELECT {n} AS i, c.seq, ts_rank_cd(%(rank_weights)s::float4[], c.kw, %(q{n})s::tsquery, 0)
               ::float8 * %(scale)s AS f
    FROM chunks c WHERE c.repo = %(repo)s AND c.seq = ANY(%(seqs)s)
        AND c.kw @@ %(q{n})s::tsquery"""


def idf(documents: int, df: int) -> float:
    """FTS5's inverse document frequency (floored at 1e-6), as the SQL computes it."""
    n = float(max(documents, 1))
    value = math.log((n - df + 0.5) / (df + 0.5))
    return value if value > 0 else 1e-6


def set_aside(known_idf: dict[int, float], n_queries: int) -> dict[int, float]:
    """The first guess of the terms (index → idf) to set aside: the most common
    single-token ones while their bounds add up to at most half the largest single
    term's (a rarer term then usually clears it); at least one term is scanned."""
    if not known_idf:
        return {}
    chosen = within(known_idf, 0.5 * max(known_idf.values()) * (K1 + 1))
    return dict(list(chosen.items())[: n_queries - 1])


def within(aside: dict[int, float], theta: float) -> dict[int, float]:
    """The most common of ``aside`` whose bounds add up to at most ``theta``, most
    common first."""
    out: dict[int, float] = {}
    total = 0.0
    for i in sorted(aside, key=lambda i: (aside[i], i)):
        if total + aside[i] * (K1 + 1) > theta:
            break
        out[i] = aside[i]
        total += aside[i] * (K1 + 1)
    return out


class SearchTables(PgTables):
    """The keyword-index and symbol-table methods of
    :class:`~codecite.store.postgres.PostgresStore`."""

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
            "digits": TIE_DIGITS,
        }
        # the filters' %s placeholders become named ones
        for n, value in enumerate(args):
            where = where.replace("%s", f"%(f{n})s", 1)
            params[f"f{n}"] = value
        aside = set_aside(self._term_idf(queries), len(queries)) if limit > 0 else {}
        while aside:
            found = self._with_terms_aside(queries, aside, where, params, limit)
            if isinstance(found, list):
                return found
            aside = within(aside, found)  # the bound failed: set fewer aside
        matches = "\n    UNION ALL".join(_TERM_SQL.format(n=n) for n in range(len(queries)))
        sql = _KEYWORD_SQL.format(terms=matches, where=where)
        return [r[0] for r in self._fetchall(sql, params)]

    def _term_idf(self, queries: list[str]) -> dict[int, float]:
        """The idf of each single-token query (by its index), from the ``terms`` table."""
        single = {n: q.strip("'") for n, q in enumerate(queries) if "<->" not in q}
        if not single:
            return {}
        rows = self._fetchall(
            "SELECT r.documents, t.term, t.df FROM repos r LEFT JOIN terms t "
            "ON t.repo = r.repo AND t.term = ANY(%s) WHERE r.repo = %s",
            (sorted(set(single.values())), self.repo),
        )
        documents = int(rows[0][0]) if rows else 0
        df = {term: int(n) for _, term, n in rows if term is not None}
        return {n: idf(documents, df.get(term, 0)) for n, term in single.items()}

    def _with_terms_aside(
        self,
        queries: list[str],
        aside: dict[int, float],
        where: str,
        params: dict[str, object],
        limit: int,
    ) -> list[str] | float:
        """The best ``limit`` ids, scanning only the terms not in ``aside``; or, when the
        set-aside terms' bound is not below the ``limit``-th score, that score."""
        scanned = [n for n in range(len(queries)) if n not in aside]
        matches = "\n    UNION ALL".join(_TERM_SQL.format(n=n) for n in scanned)
        bound = sum(value * (K1 + 1) for value in aside.values())
        rows = self._fetchall(
            _CANDIDATES_SQL.format(terms=matches, where=where),
            {**params, "offset": limit - 1, "bound": bound},
        )
        theta = float(rows[0][4]) if rows else 0.0
        if bound > theta:
            return theta
        avgdl = float(rows[0][5])
        scores = {row[0]: float(row[3]) for row in rows}
        lengths = {row[0]: int(row[2]) for row in rows}
        rescore = "\n    UNION ALL".join(_RESCORE_SQL.format(n=n) for n in sorted(aside))
        for n, seq, f in self._fetchall(rescore, {**params, "seqs": list(scores)}):
            norm = K1 * (1 - B + B * lengths[seq] / avgdl)
            scores[seq] += aside[n] * f * (K1 + 1) / (f + norm)
        ids = {row[0]: row[1] for row in rows}
        best = sorted(scores, key=lambda seq: (-round(scores[seq], TIE_DIGITS), seq))[:limit]
        return [ids[seq] for seq in best]

    def document_count(self) -> int:
        row = self._fetchone("SELECT documents FROM repos WHERE repo = %s", (self.repo,))
        return int(row[0]) if row else 0

    def document_frequency(self, term: str) -> int:
        """Chunks whose keyword texts hold the token ``term`` (a term that is not one
        stored token counts 0): one look-up in the ``terms`` table."""
        if fts_tokens(term) != [term]:
            return 0
        row = self._fetchone(
            "SELECT df FROM terms WHERE repo = %s AND term = %s", (self.repo, term)
        )
        return int(row[0]) if row else 0

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
