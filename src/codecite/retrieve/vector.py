"""Vector search: exact cosine (a dot product of unit vectors) over the index's
vectors, vectorised with numpy, metadata filters a row mask applied before ranking
(:class:`VectorIndex`); or the store's own approximate index, nothing loaded
(:class:`DatabaseVectors`: pgvector HNSW in PostgreSQL)."""

from __future__ import annotations

import logging

import numpy as np

from ..filters import Filters, path_matches
from ..store.protocols import NearestVectors, Tier, VectorRows, VectorSource

log = logging.getLogger(__name__)


class VectorIndex:
    """The vectors of an index (possibly memory-mapped), with per-row metadata for filters."""

    def __init__(self, rows: VectorRows) -> None:
        self.ids = rows.ids
        self.matrix = rows.matrix
        self.languages = np.array(rows.languages, dtype=object)
        self.kinds = np.array(rows.kinds, dtype=object)
        self.paths = np.array(rows.paths, dtype=object)
        self.repos = np.array(rows.repos, dtype=object)

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def load(cls, source: VectorSource, tier: Tier = "model") -> VectorIndex | None:
        """The store's vectors of ``tier``, or None when it has none yet."""
        rows = source.vector_rows(tier)
        return cls(rows) if rows is not None else None

    def mask(self, filters: Filters | None) -> np.ndarray | None:
        """Rows allowed by the filters, or None for all."""
        if not filters:
            return None
        allowed = np.ones(len(self.ids), dtype=bool)
        if filters.languages:
            allowed &= np.isin(self.languages, list(filters.languages))
        if filters.kinds:
            allowed &= np.isin(self.kinds, list(filters.kinds))
        if filters.repo:
            allowed &= self.repos == filters.repo
        if filters.path:
            unique = {p: path_matches(filters.path, p) for p in set(self.paths.tolist())}
            allowed &= np.fromiter(
                (unique[p] for p in self.paths), dtype=bool, count=len(self.paths)
            )
        return allowed

    def search(
        self, query: np.ndarray, filters: Filters | None = None, limit: int = 50
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine) best first."""
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        if not len(self.ids):
            return []
        if vector.shape[0] != self.matrix.shape[1]:
            log.warning(
                "the query vector has %d dimensions, the index's vectors %d: vector "
                "search skipped; rebuild with `codecite index --full`",
                vector.shape[0],
                self.matrix.shape[1],
            )
            return []
        scores = self.matrix @ vector
        allowed = self.mask(filters)
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
        limit = min(limit, len(scores))
        top = np.argpartition(-scores, limit - 1)[:limit]
        top = top[np.argsort(-scores[top])]
        return [(self.ids[i], float(scores[i])) for i in top if np.isfinite(scores[i])]


class DatabaseVectors:
    """A vector tier searched where it is stored (:class:`NearestVectors`): each search
    is one query to the store's approximate index, with the filters applied there;
    nothing is loaded, so a server holds no copy to reload after a re-index."""

    def __init__(self, store: NearestVectors, tier: Tier, count: int) -> None:
        self.store, self.tier, self.count = store, tier, count

    def __len__(self) -> int:
        return self.count

    @classmethod
    def load(cls, store: VectorSource, tier: Tier = "model") -> DatabaseVectors | None:
        """The tier of ``store`` (which must search its own vectors), or None when it
        has none yet."""
        assert isinstance(store, NearestVectors)
        count = store.vector_count(tier)
        return cls(store, tier, count) if count else None

    def search(
        self, query: np.ndarray, filters: Filters | None = None, limit: int = 50
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine) best first."""
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        return self.store.vector_search(vector, filters, limit, self.tier)
