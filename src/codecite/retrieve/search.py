"""The search pipeline, wired from its stages:

    question ─► intent ─► keyword (BM25 + exact symbols, filtered) ┐
                       └► vector (cosine, filtered)               ┴► RRF ─► expand ─► rerank ─► pack

A :class:`Searcher` loads the vectors and the query model once and answers any
number of queries (``search --batch`` and servers keep one).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..config import Config
from ..embed import EmbeddingCache, embed_text, embed_with_cache, get_embedder
from ..embed.base import Embedder
from ..errors import ConfigError
from ..question import Question, read
from ..question.kinds import QueryInfo
from ..question.parts import Parts
from ..store.protocols import TIERS, NearestVectors, ReadStore, Tier
from .expand import expand as graph_expand
from .files import add_file_evidence, diversify, rank_files
from .fusion import ranks, rrf
from .keyword import TermStats, keyword_search, symbol_search
from .pack import pack
from .parts import (
    Deadline,
    code_only,
    error_chunks,
    part_lists,
    part_weights,
    specific_identifiers,
)
from .querylog import append_query_log
from .rerank import SignalReranker
from .types import Filters, Hit, SearchResult
from .vector import DatabaseVectors, VectorIndex

#: Fills the model's cosine of a query with hits (``Searcher.fill_similarity``'s shape).
SpotFill = Callable[[str, list[Hit]], list[Hit]]

log = logging.getLogger(__name__)

QUERY_CACHE_SIZE = 256
#: The fused lists that come from vector search (the others are keyword lists).
VECTOR_LISTS = frozenset({"vector", "static"})


class Searcher:
    """Answers queries against one index; loads what it needs once, lazily."""

    def __init__(self, store: ReadStore, config: Config, log_dir: Path | None = None) -> None:
        """``store``: any backend of the read protocols; ``log_dir``: where the query
        log is appended (None: no log)."""
        self.store, self.config, self.log_dir = store, config, log_dir
        self._tiers: dict[Tier, VectorIndex | DatabaseVectors | None] = {}
        self._embedder: Embedder | None = None
        self._cache: EmbeddingCache | None = None
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self.reranker = SignalReranker(self.store, self.config)
        self.term_stats = TermStats(self.store)
        self._generation = self.store.generation()

    # --- lazily loaded parts -------------------------------------------------
    @property
    def vectors(self) -> VectorIndex | DatabaseVectors | None:
        """The model tier's vectors (None while there are none)."""
        return self.tier("model")

    @property
    def in_database(self) -> bool:
        """Whether vector search runs in the store (``vector_search`` setting)."""
        mode = self.config.search.vector_search
        native = isinstance(self.store, NearestVectors)
        if mode == "database" and not native:
            raise ConfigError(
                "vector_search = 'database' needs a store with a vector index "
                "(PostgreSQL + pgvector); this index searches its vectors in memory"
            )
        return native and mode != "memory"

    def refresh(self) -> None:
        """Forget what another process's commit (a re-index) made stale: loaded vectors,
        term statistics. One query to the store; each search starts with it."""
        generation = self.store.generation()
        if generation != self._generation:
            self._generation = generation
            self._tiers.clear()
            self.term_stats = TermStats(self.store)

    def tier(self, tier: Tier) -> VectorIndex | DatabaseVectors | None:
        """A vector tier as of the last :meth:`refresh`, loaded once (in the database:
        nothing loaded, only counted)."""
        if tier not in self._tiers:
            loader = DatabaseVectors.load if self.in_database else VectorIndex.load
            self._tiers[tier] = loader(self.store, tier)
        return self._tiers[tier]

    def _static(self, text: str, filters: Filters | None) -> list[str]:
        """Chunk ids by cosine to the query's static vector (issue 15), best first; none
        when the index has no static tier or one built by another static model."""
        static = self.tier("static")
        if static is None or not self.config.embed.static_tier:
            return []
        from ..embed.static import static_embedder
        from ..errors import EmbeddingError

        try:
            embedder = static_embedder(self.config)  # shipped in the package: loaded once
        except EmbeddingError as exc:
            log.warning("static vectors are not searched: %s", exc)
            return []
        if self.store.get_meta("static_model") != embedder.name:
            log.warning(
                "the index's static vectors come from another static model; "
                "`codecite index` rebuilds them (seconds)"
            )
            return []
        query = embedder.embed([text], "query")[0]
        return [
            chunk_id for chunk_id, _ in static.search(query, filters, self.config.search.candidates)
        ]

    @property
    def embedder(self) -> Embedder:
        """The index's embedding model (loaded once)."""
        if self._embedder is None:
            name = self.store.get_meta("embedder_spec") or self.config.embed.embedder
            self._embedder = get_embedder(name, self.config)
        return self._embedder

    def fill_similarity(self, query: str, hits: list[Hit]) -> list[Hit]:
        """``hits`` with ``similarity`` (the query's cosine with the chunk, in the model
        tier) filled in where vector search could not give it because the model tier
        is incomplete (a background worker is still embedding: issue 23): those chunks
        are embedded now, through the machine-wide embedding cache (the worker then
        finds them there). An answer's confidence check reads this; on an index
        whose model tier is complete, or has none, the hits are returned as they are."""
        missing = [i for i, h in enumerate(hits) if h.similarity is None]
        if not missing or not self.store.get_meta("embedder"):
            return hits
        if self.store.vector_count("model") >= self.term_stats.documents:
            return hits  # complete: a hit without a similarity ranked below the candidates
        query_vector = self.embed_query(query)
        matrix = embed_with_cache(
            self.embedder,
            self._cache or self._open_cache(),
            [embed_text(hits[i].chunk) for i in missing],
            self.config.embed.embed_batch_size,
        )
        filled = list(hits)
        for row, i in enumerate(missing):
            filled[i] = replace(hits[i], similarity=float(matrix[row] @ query_vector))
        return filled

    def _open_cache(self) -> EmbeddingCache:
        self._cache = EmbeddingCache.for_config(self.config)  # degrades to no cache
        return self._cache

    def embed_query(self, text: str) -> np.ndarray:
        cached = self._query_vectors.get(text)
        if cached is not None:
            return cached
        vector: np.ndarray = self.embedder.embed([text], "query")[0]
        self._query_vectors[text] = vector
        if len(self._query_vectors) > QUERY_CACHE_SIZE:
            self._query_vectors.popitem(last=False)
        return vector

    # --- the pipeline ----------------------------------------------------------
    def search(
        self,
        query: str | Question,
        *,
        k: int = 10,
        filters: Filters | None = None,
        keyword: bool = True,
        vector: bool = True,
        expand: bool | None = None,
        rerank: bool | None = None,
        budget: int | None = None,
        files: bool = False,
        tiers: Collection[Tier] = TIERS,
        spot: int = 0,
        spot_fill: SpotFill | None = None,
    ) -> SearchResult:
        """Ranked hits for a query. ``expand``/``rerank`` default to the config. With
        ``files``, the ``k`` best files (``result.files``), each with its best chunks.
        ``tiers``: the vector tiers searched when ``vector`` (benchmarks measure the
        static tier alone, as it is before the model's vectors exist). ``query``: the
        text, or the question already read (:func:`codecite.question.read`: ``ask``
        reads it once and passes it down). ``spot``: while the model tier is
        incomplete or not searched, the first ``spot`` candidates are embedded now
        (``spot_fill``, default :meth:`fill_similarity`; the answer model's recipe reads
        them from a complete tier) and ranked by the model's cosine, the vector list the
        complete tier would give them (``ask`` right after ``codecite index``)."""
        question = query if isinstance(query, Question) else read(query)
        self.refresh()
        cfg, clock = self.config, _Clock()
        use = set(tiers) if vector else set()
        hits, info = self._candidates(question, filters, keyword, use, clock, spot, spot_fill)
        if cfg.search.expand if expand is None else expand:
            hits = graph_expand(self.store, hits, info.intent, cfg, filters)
            clock.lap("expand")
        if cfg.search.rerank if rerank is None else rerank:
            hits = self.reranker.rerank(hits, info)
            if question.long:  # short questions ask for one unit, not a file's worth
                hits = add_file_evidence(
                    hits, cfg.search.file_evidence_weight, cfg.search.file_evidence_decay
                )
            hits = diversify(hits, cfg.search.max_chunks_per_file)
            clock.lap("rerank")
        else:
            hits.sort(key=lambda h: -h.score)
        ranked_files = None
        if files:
            ranked_files = rank_files(
                hits, k, cfg.search.file_chunks, cfg.search.file_evidence_decay
            )
            hits = [h for f in ranked_files for h in f.hits]
        elif budget is not None:
            hits = pack(hits, budget, cfg.search.chars_per_token)
        result = SearchResult(
            question.text, info.intent, hits if files else hits[:k], clock.laps, info=info
        )
        result.files = ranked_files
        self._log(result)
        return result

    def _candidates(
        self,
        question: Question,
        filters: Filters | None,
        keyword: bool,
        tiers: set[Tier],
        clock: _Clock,
        spot: int = 0,
        spot_fill: SpotFill | None = None,
    ) -> tuple[list[Hit], QueryInfo]:
        """The fused keyword and vector candidates. One of two pipelines, chosen once,
        makes the keyword lists: a short question's (:meth:`_question_lists`), or a long
        question's (a bug report, :meth:`_report_lists`), read into its parts, each
        searched for what it is good at (:mod:`.parts`). The vector lists follow."""
        lists_of = self._report_lists if question.long else self._question_lists
        plan = lists_of(question, filters, keyword)
        clock.lap("keyword")
        similar: dict[str, float] = {}
        model = "model" in tiers and self.vectors is not None
        if model:
            similar = self._vector(plan.text, plan.filters)
            plan.lists["vector"] = list(similar)
        weights = plan.weights
        weights["static"] = self._static_weight(weights.get("vector", 1.0), model)
        if "static" in tiers and weights["static"] > 0:
            plan.lists["static"] = self._static(plan.static_text or plan.text, plan.filters)
        clock.lap("vector")
        hits = self._fuse(plan.lists, weights, similar)
        if spot and weights.get("vector", 0) > 0 and not self._complete(model):
            # the model tier still fills: search's first candidates embedded now, ranked
            # by the model's cosine with those the tier already holds
            spotted = (spot_fill or self.fill_similarity)(plan.text, hits[:spot])
            new = {h.chunk.id: h.similarity for h in spotted if h.similarity is not None}
            if any(i not in similar for i in new):
                similar = {**similar, **new}
                plan.lists["vector"] = sorted(similar, key=lambda i: -similar[i])
                hits = self._fuse(plan.lists, weights, similar)
            clock.lap("spot")
        return hits, plan.info

    def _complete(self, searched: bool) -> bool:
        """Whether the model tier was searched and holds every chunk."""
        model = self.vectors
        return searched and model is not None and len(model) >= self.term_stats.documents

    def _question_lists(self, question: Question, filters: Filters | None, keyword: bool) -> _Plan:
        """A short question: its identifiers looked up exactly, its words by BM25; the
        weights follow how much of it is identifiers. A question in the user's words
        ("before the server gives up") meets the code's (``timeout``) in the vector
        tiers, learnt from docstring/identifier pairs of many projects."""
        info, parts = question.info, question.parts
        lists = {"keyword": self._keyword(info, filters)} if keyword else {}
        weights = self._weights(info)
        if keyword and parts.messages:  # a pasted error: the code writing its message
            lists["errors"] = error_chunks(
                self.store,
                parts,
                filters,
                self.config.search.candidates,
                self.config.search.long_query_phrases,
            )
            weights["errors"] = weights["keyword"] * self.config.search.question_error_weight
        return _Plan(info, filters, lists, question.text, weights)

    def _report_lists(self, question: Question, filters: Filters | None, keyword: bool) -> _Plan:
        """A long question (a bug report, a pasted log): it asks where the code is,
        whatever its title says ("breaks", "why"); code only; each part searched for
        what it is good at, within the time box of a long question."""
        deadline = Deadline(self.config.search.long_query_seconds)
        query, info, parts = question.text, question.info, question.parts
        filters = code_only(info, filters)
        lists: dict[str, list[str]] = {}
        if keyword:
            # The class of a reported error is rarely where the fix goes (its raise
            # is); of the rest, only specific names earn exact look-ups and the bonus.
            raised = set(parts.error_types)
            kept = tuple(i for i in info.identifiers if i.rpartition(".")[2] not in raised)
            specific = specific_identifiers(
                self.store,
                kept,
                filters,
                self.config.search.long_query_symbols,
                deadline,
                self.config.search.long_query_max_terms,
            )
            info = replace(info, identifiers=specific)
            lists = part_lists(
                self.store, parts, info, self.config, filters, self.term_stats, deadline
            )
        text = parts.prose if parts.prose.strip() else query
        # the static tier embeds the title: its token-sum model learnt from one-sentence
        # queries, and a whole report's sum is its common words (bug reports, keyword +
        # static: Acc@5 59.6 -> 60.1, chunk hit@5 70.9 -> 71.7)
        return _Plan(info, filters, lists, text, part_weights(self.config), _title(parts))

    def _keyword(self, info: QueryInfo, filters: Filters | None) -> list[str]:
        n = self.config.search.candidates
        exact = symbol_search(self.store, info.identifiers, filters) if info.identifiers else []
        bm25 = keyword_search(self.store, info.text, self.config, filters, n, self.term_stats)
        return list(dict.fromkeys(exact + bm25))[:n]

    def _vector(self, query: str, filters: Filters | None) -> dict[str, float]:
        """Chunk id → cosine similarity, best first."""
        assert self.vectors is not None
        found = self.vectors.search(self.embed_query(query), filters, self.config.search.candidates)
        return dict(found)

    def _static_weight(self, vector_weight: float, model_searched: bool) -> float:
        """The static list's weight: the vector weight times ``static_weight`` while
        model vectors are missing (still being computed, or not searched), times
        ``static_weight_full`` once every chunk has one."""
        cfg = self.config
        return vector_weight * (
            cfg.search.static_weight_full
            if self._complete(model_searched)
            else cfg.search.static_weight
        )

    def _weights(self, info: QueryInfo) -> dict[str, float]:
        cfg = self.config
        if info.identifier_share >= cfg.search.identifier_heavy_share:
            return {
                "keyword": cfg.search.identifier_keyword_weight,
                "vector": cfg.search.identifier_vector_weight,
            }
        if not info.identifiers:
            return {
                "keyword": cfg.search.prose_keyword_weight,
                "vector": cfg.search.prose_vector_weight,
            }
        return {"keyword": cfg.search.keyword_weight, "vector": cfg.search.vector_weight}

    def _fuse(
        self, lists: dict[str, list[str]], weights: dict[str, float], similar: dict[str, float]
    ) -> list[Hit]:
        """Weighted RRF of the lists; a hit's keyword rank is its best in any
        non-vector list, and ``why`` names the lists that found it."""
        scores = rrf(lists, weights, self.config.search.rrf_k)
        list_ranks = {name: ranks(ids) for name, ids in lists.items()}
        chunks = self.store.get_chunks(scores)
        hits = []
        for chunk_id, score in sorted(scores.items(), key=lambda kv: -kv[1]):
            if chunk_id not in chunks:
                continue
            found = [(n, r[chunk_id]) for n, r in list_ranks.items() if chunk_id in r]
            kr = min((r for n, r in found if n not in VECTOR_LISTS), default=None)
            vr = min((r for n, r in found if n in VECTOR_LISTS), default=None)
            source = "hybrid" if kr and vr else "keyword" if kr else "vector"
            why = " + ".join(f"{name} #{r}" for name, r in found)
            hits.append(
                Hit(chunks[chunk_id], score, source, why, kr, vr, similarity=similar.get(chunk_id))
            )
        return hits

    def _log(self, result: SearchResult) -> None:
        if self.config.query_log and self.log_dir is not None:
            append_query_log(
                self.log_dir,
                {
                    "type": "search",
                    "query": result.query,
                    "intent": result.intent,
                    "chunk_ids": [h.chunk.id for h in result.hits],
                    "timings_ms": result.timings_ms,
                },
            )


def _title(question: Parts) -> str:
    """A long question's first line (an issue's title): what it asks for."""
    return next((line for line in question.text.splitlines() if line.strip()), "")


@dataclass
class _Plan:
    """What a pipeline hands to the vector search and the fusion."""

    info: QueryInfo
    #: The filters of the vector searches (a bug report's: code only).
    filters: Filters | None
    lists: dict[str, list[str]]
    #: The text the vector searches embed (the static one: ``static_text`` when set).
    text: str
    weights: dict[str, float]
    static_text: str = ""


class _Clock:
    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._last = self._start = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round((now - self._last) * 1000, 3)
        self.laps["total"] = round((now - self._start) * 1000, 3)
        self._last = now
