"""Keyword search: BM25 over identifier-split tokens (the store's
:class:`~codecite.store.protocols.KeywordIndex`), plus an exact symbol-table lookup
for identifiers named in the query. Filters apply inside the store's search."""

from __future__ import annotations

from ..config import Config
from ..filters import Filters
from ..identifiers import joined_names, tokenize
from ..question.kinds import symbol_candidates
from ..question.terms import STOPWORDS
from ..store.protocols import ChunkReader, KeywordIndex


def query_terms(text: str) -> list[str]:
    """The meaningful tokens of a question, in order, once each, and the identifiers its
    versioned names stand for ("HTTP/2": ``http2``)."""
    tokens = [t for t in tokenize(text) if t not in STOPWORDS and len(t) > 1]
    return list(dict.fromkeys([*tokens, *joined_names(text)]))


#: Document frequencies a TermStats remembers before starting over.
DF_CACHE_SIZE = 100_000


class TermStats:
    """Leaves out terms so common that matching them costs more than they tell: on a
    large index an OR query's time grows with the documents its terms match."""

    def __init__(self, index: KeywordIndex) -> None:
        self.index = index
        self.documents = index.document_count()
        self._df: dict[str, int] = {}

    def df(self, term: str) -> int:
        """The term's document frequency, asked of the index once (a searcher makes new
        statistics when another process commits)."""
        found = self._df.get(term)
        if found is None:
            if len(self._df) >= DF_CACHE_SIZE:
                self._df.clear()
            found = self._df[term] = self.index.document_frequency(term)
        return found

    def select(self, terms: list[str], config: Config) -> list[str]:
        """``terms`` minus the very common ones on a large index (the rarest few are
        always kept, so a question of common words still matches)."""
        if self.documents < config.search.keyword_prune_min_chunks or len(terms) <= 2:
            return terms
        limit = config.search.keyword_max_df_share * self.documents
        df = self.df
        kept = [t for t in terms if df(t) <= limit]
        if len(kept) >= 2:
            return kept
        return sorted(terms, key=df)[:2]


def keyword_search(
    index: KeywordIndex,
    text: str,
    config: Config,
    filters: Filters | None = None,
    limit: int = 50,
    stats: TermStats | None = None,
) -> list[str]:
    """Chunk ids by BM25, best first."""
    terms = query_terms(text)
    if stats is not None:
        terms = stats.select(terms, config)
    weights = (
        config.search.bm25_symbol_weight,
        config.search.bm25_path_weight,
        config.search.bm25_body_weight,
    )
    return index.keyword_search(terms, filters, limit, weights)


def symbol_search(
    chunks: ChunkReader,
    identifiers: tuple[str, ...],
    filters: Filters | None = None,
    limit: int = 10,
) -> list[str]:
    """Chunks whose qualname or name is exactly an identifier of the query.
    Qualname matches come before name matches; definitions before module chunks."""
    out: list[str] = []
    for identifier in identifiers:
        for i, name in enumerate(symbol_candidates(identifier)):
            found = chunks.find_symbols(name, "qualname" if i == 0 else "name", filters, limit)
            out += [chunk_id for chunk_id in found if chunk_id not in out]
            if found:
                break
    return out[:limit]
