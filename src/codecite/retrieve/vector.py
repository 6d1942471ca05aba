"""Vector search: exact cosine (a dot product of unit vectors) over the index's
vectors, vectorised with numpy; metadata filters become a row mask applied
before ranking."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from ..store.sqlite import SQLiteStore
from .keyword import path_matches
from .types import Filters

log = logging.getLogger(__name__)


class VectorIndex:
    """The vectors of an index, memory-mapped, with per-row metadata for filters."""

    def __init__(self, ids: Sequence[str], matrix: np.ndarray,
                 meta: dict[str, tuple[str, str, str, str]]) -> None:
        keep = [i for i, chunk_id in enumerate(ids) if chunk_id in meta]
        if len(keep) != len(ids):  # the snapshot holds chunks deleted since
            matrix, ids = matrix[keep], [ids[i] for i in keep]
        self.ids = list(ids)
        self.matrix = matrix
        rows = [meta[i] for i in self.ids]
        self.languages = np.array([r[0] for r in rows], dtype=object)
        self.kinds = np.array([r[1] for r in rows], dtype=object)
        self.paths = np.array([r[2] for r in rows], dtype=object)
        self.repos = np.array([r[3] for r in rows], dtype=object)

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def load(cls, store: SQLiteStore) -> VectorIndex | None:
        """The snapshot when it is current, else the vectors read from SQLite
        (an index still embedding is searched with what it has so far)."""
        meta = {
            r[0]: (r[1], r[2], r[3], r[4])
            for r in store.conn.execute("SELECT id, language, kind, path, repo FROM chunks")
        }
        in_db = store.counts()["vectors"]
        if in_db == 0:
            return None
        dim = int(store.get_meta("embedding_dim", "0") or 0)
        snapshot = store.load_vectors(dim)
        if snapshot is not None and len(snapshot[0]) == in_db:
            return cls(snapshot[0], snapshot[1], meta)
        log.info("vectors snapshot is stale; reading %d vectors from the database", in_db)
        ids, matrix = store.vector_matrix(dim)
        return cls(ids, matrix, meta) if ids else None

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
            allowed &= np.fromiter((unique[p] for p in self.paths), dtype=bool,
                                   count=len(self.paths))
        return allowed

    def search(self, query: np.ndarray, filters: Filters | None = None,
               limit: int = 50) -> list[tuple[str, float]]:
        """(chunk id, cosine) best first."""
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        if not len(self.ids):
            return []
        if vector.shape[0] != self.matrix.shape[1]:
            log.warning("the query vector has %d dimensions, the index's vectors %d: vector "
                        "search skipped; rebuild with `codecite index --full`",
                        vector.shape[0], self.matrix.shape[1])
            return []
        scores = self.matrix @ vector
        allowed = self.mask(filters)
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
        limit = min(limit, len(scores))
        top = np.argpartition(-scores, limit - 1)[:limit]
        top = top[np.argsort(-scores[top])]
        return [(self.ids[i], float(scores[i])) for i in top if np.isfinite(scores[i])]
