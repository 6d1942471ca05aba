"""The search pipeline, wired from its stages:

    question ─► intent ─► keyword (BM25 + exact symbols, filtered) ┐
                       └► vector (cosine, filtered)               ┴► RRF ─► expand ─► rerank ─► pack

A :class:`Searcher` loads the vectors and the query model once and answers any
number of queries (``search --batch`` and servers keep one).
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ..config import Config
from ..embed import get_embedder
from ..embed.base import Embedder
from ..scrub import scrub_text
from ..store.protocols import ReadStore
from .expand import expand as graph_expand
from .fusion import ranks, rrf
from .intent import QueryInfo, analyse
from .keyword import TermStats, keyword_search, symbol_search
from .pack import pack
from .rerank import SignalReranker
from .types import Filters, Hit, SearchResult
from .vector import VectorIndex

log = logging.getLogger(__name__)

#: A query is "identifier-heavy" when at least this share of its words are identifiers.
IDENTIFIER_HEAVY = 0.5
QUERY_CACHE_SIZE = 256
QUERY_LOG = "queries.jsonl"


class Searcher:
    """Answers queries against one index; loads what it needs once, lazily."""

    def __init__(self, store: ReadStore, config: Config, log_dir: Path | None = None) -> None:
        """``store``: any backend of the read protocols; ``log_dir``: where the query
        log is appended (None: no log)."""
        self.store, self.config, self.log_dir = store, config, log_dir
        self._vectors: VectorIndex | None = None
        self._vectors_loaded = False
        self._embedder: Embedder | None = None
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self.reranker = SignalReranker(self.store, self.config)
        self.term_stats = TermStats(self.store)
        self._generation = self.store.generation()

    # --- lazily loaded parts -------------------------------------------------
    @property
    def vectors(self) -> VectorIndex | None:
        generation = self.store.generation()
        if generation != self._generation:  # another process committed (a re-index)
            self._generation, self._vectors_loaded = generation, False
            self.term_stats = TermStats(self.store)
        if not self._vectors_loaded:
            self._vectors = VectorIndex.load(self.store)
            self._vectors_loaded = True
        return self._vectors

    def embed_query(self, text: str) -> np.ndarray:
        cached = self._query_vectors.get(text)
        if cached is not None:
            return cached
        if self._embedder is None:
            name = self.store.get_meta("embedder_spec") or self.config.embedder
            self._embedder = get_embedder(name, self.config)
        vector: np.ndarray = self._embedder.embed([text], "query")[0]
        self._query_vectors[text] = vector
        if len(self._query_vectors) > QUERY_CACHE_SIZE:
            self._query_vectors.popitem(last=False)
        return vector

    # --- the pipeline ----------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        k: int = 10,
        filters: Filters | None = None,
        keyword: bool = True,
        vector: bool = True,
        expand: bool | None = None,
        rerank: bool | None = None,
        budget: int | None = None,
    ) -> SearchResult:
        """Ranked hits for a query. ``expand``/``rerank`` default to the config."""
        cfg, clock = self.config, _Clock()
        info = analyse(query)
        kw_ids = self._keyword(info, filters) if keyword else []
        clock.lap("keyword")
        similar = self._vector(query, filters) if vector and self.vectors is not None else {}
        clock.lap("vector")
        hits = self._fuse(info, kw_ids, similar)
        if cfg.expand if expand is None else expand:
            hits = graph_expand(self.store, hits, info.intent, cfg)
            clock.lap("expand")
        if cfg.rerank if rerank is None else rerank:
            hits = self.reranker.rerank(hits, info)
            clock.lap("rerank")
        else:
            hits.sort(key=lambda h: -h.score)
        if budget is not None:
            hits = pack(hits, budget, cfg.chars_per_token)
        result = SearchResult(query, info.intent, hits[:k], clock.laps, info=info)
        self._log(result)
        return result

    def _keyword(self, info: QueryInfo, filters: Filters | None) -> list[str]:
        n = self.config.candidates
        exact = symbol_search(self.store, info.identifiers, filters) if info.identifiers else []
        bm25 = keyword_search(self.store, info.text, self.config, filters, n, self.term_stats)
        return list(dict.fromkeys(exact + bm25))[:n]

    def _vector(self, query: str, filters: Filters | None) -> dict[str, float]:
        """Chunk id → cosine similarity, best first."""
        assert self.vectors is not None
        found = self.vectors.search(self.embed_query(query), filters, self.config.candidates)
        return dict(found)

    def _weights(self, info: QueryInfo) -> dict[str, float]:
        cfg = self.config
        if info.identifier_share >= IDENTIFIER_HEAVY:
            return {
                "keyword": cfg.identifier_keyword_weight,
                "vector": cfg.identifier_vector_weight,
            }
        if not info.identifiers:
            return {"keyword": cfg.prose_keyword_weight, "vector": cfg.prose_vector_weight}
        return {"keyword": cfg.keyword_weight, "vector": cfg.vector_weight}

    def _fuse(self, info: QueryInfo, kw_ids: list[str], similar: dict[str, float]) -> list[Hit]:
        vec_ids = list(similar)
        scores = rrf({"keyword": kw_ids, "vector": vec_ids}, self._weights(info), self.config.rrf_k)
        kw_rank, vec_rank = ranks(kw_ids), ranks(vec_ids)
        chunks = self.store.get_chunks(scores)
        hits = []
        for chunk_id, score in sorted(scores.items(), key=lambda kv: -kv[1]):
            if chunk_id not in chunks:
                continue
            kr, vr = kw_rank.get(chunk_id), vec_rank.get(chunk_id)
            source = "hybrid" if kr and vr else "keyword" if kr else "vector"
            why = " + ".join(f"{name} #{r}" for name, r in (("keyword", kr), ("vector", vr)) if r)
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


#: Free-text fields of a query-log record that may hold what a user typed.
LOGGED_TEXT = ("query", "answer")


def append_query_log(folder: Path, record: dict[str, object]) -> None:
    """Append one record (with the time) to ``folder/queries.jsonl``, secrets in the
    question and answer redacted (a token pasted into a question must not be kept); a
    read-only index still answers, with a warning."""
    clean = {
        key: scrub_text(value) if key in LOGGED_TEXT and isinstance(value, str) else value
        for key, value in record.items()
    }
    try:
        with (folder / QUERY_LOG).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"time": time.time(), **clean}) + "\n")
    except OSError as exc:
        log.warning("cannot append to the query log: %s", exc)


class _Clock:
    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._last = self._start = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round((now - self._last) * 1000, 3)
        self.laps["total"] = round((now - self._start) * 1000, 3)
        self._last = now
