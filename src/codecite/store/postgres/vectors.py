"""Vectors in the PostgreSQL store: pgvector ``vector`` rows keyed by (repo, tier,
chunk id), committed batch by batch (an interrupted embedding run resumes).

``vector_rows`` returns every vector of a tier (retrieval does exact cosine search in
numpy over it, as with SQLite); :meth:`VectorTables.vector_search` asks PostgreSQL
instead, through an HNSW index (``vector_cosine_ops``, m = :data:`HNSW_M`,
ef_construction = :data:`HNSW_EF_CONSTRUCTION`, ``hnsw.ef_search`` =
max(:data:`HNSW_EF_SEARCH`, limit), iterative scans so that filters still fill the
limit). The column has no fixed width (each repository may use its own model), so
each (tier, width) gets a partial expression index ``(vec::vector(dim)) WHERE tier =
... AND dim = ...``, created by :meth:`VectorTables.export_vectors` (``CREATE INDEX
CONCURRENTLY``: other repositories keep writing meanwhile).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np

from ...filters import Filters
from ...types import Chunk
from ..protocols import Tier, VectorRows
from .base import CHUNK_COLS_C, PgTables, Vector, filter_sql, row_to_chunk
from .migrations import LOCK_CLASS, LOCK_POLL

#: The name its messages had before the module moved (issue 22): the logs read the same.
log = logging.getLogger("codecite.store.postgres_vectors")

#: HNSW build parameters (pgvector's defaults) and the search breadth.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
HNSW_EF_SEARCH = 100
#: The metadata key holding each tier's vector width (as in the SQLite store).
DIM_KEYS: dict[str, str] = {"model": "embedding_dim", "static": "static_dim"}
#: Second key of the advisory lock around building an HNSW index.
INDEX_LOCK = 1


def _tier(tier: Tier) -> str:
    if tier not in DIM_KEYS:
        raise ValueError(f"unknown vector tier {tier!r}")
    return tier


def hnsw_index_name(tier: Tier, dim: int) -> str:
    return f"vectors_hnsw_{_tier(tier)}_{int(dim)}"


class VectorTables(PgTables):
    """The vector methods of :class:`~codecite.store.postgres.PostgresStore`."""

    def vector_count(self, tier: Tier = "model") -> int:
        row = self._fetchone(
            "SELECT count(*) FROM vectors v JOIN chunks c ON c.repo = v.repo AND c.id = "
            "v.chunk_id WHERE v.repo = %s AND v.tier = %s",
            (self.repo, _tier(tier)),
        )
        return int(row[0])

    def _dim(self, tier: Tier) -> int:
        """The tier's width: the metadata's, else that of its first stored vector."""
        dim = int(self.get_meta(DIM_KEYS[tier], "0") or 0)
        if dim:
            return dim
        row = self._fetchone(
            "SELECT v.dim FROM vectors v JOIN chunks c ON c.repo = v.repo AND c.id = v.chunk_id "
            "WHERE v.repo = %s AND v.tier = %s ORDER BY c.seq LIMIT 1",
            (self.repo, tier),
        )
        return int(row[0]) if row else 0

    def vector_rows(self, tier: Tier = "model") -> VectorRows | None:
        """Every vector of ``tier`` whose chunk exists, in chunk insertion order; rows of
        another width than the tier's are skipped. None when there are none."""
        _tier(tier)
        dim = self._dim(tier)
        if not dim:
            return None
        with self._conn() as conn:
            cur = conn.cursor(binary=True)
            rows = cur.execute(
                "SELECT v.chunk_id, v.vec, c.language, c.kind, c.path, c.chunk_repo "
                "FROM vectors v JOIN chunks c ON c.repo = v.repo AND c.id = v.chunk_id "
                "WHERE v.repo = %s AND v.tier = %s AND v.dim = %s ORDER BY c.seq",
                (self.repo, tier, dim),
            ).fetchall()
            skipped = self._count_other_widths(tier, dim)
        if skipped:
            log.warning("%d stored vectors have the wrong size; they are ignored", skipped)
        if not rows:
            return None
        blob = b"".join(bytes(r[1])[4:] for r in rows)
        matrix = np.frombuffer(blob, dtype=">f4").astype(np.float32).reshape(len(rows), dim)
        return VectorRows(
            [r[0] for r in rows],
            matrix,
            [r[2] for r in rows],
            [r[3] for r in rows],
            [r[4] for r in rows],
            [r[5] for r in rows],
        )

    def _count_other_widths(self, tier: Tier, dim: int) -> int:
        row = self._fetchone(
            "SELECT count(*) FROM vectors WHERE repo = %s AND tier = %s AND dim <> %s",
            (self.repo, tier, dim),
        )
        return int(row[0])

    def vector_search(
        self,
        query: np.ndarray,
        filters: Filters | None = None,
        limit: int = 10,
        tier: Tier = "model",
        *,
        exact: bool = False,
        ef_search: int | None = None,
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) of the ``limit`` nearest vectors of ``tier``,
        searched in PostgreSQL: through the HNSW index (``ef_search`` candidates, default
        max(:data:`HNSW_EF_SEARCH`, limit); the filters apply during the scan, and a
        filter so selective that an exact scan of its rows is cheaper gets that), or by
        an exact scan with ``exact=True`` (what a benchmark compares recall with)."""
        dim = int(np.asarray(query).reshape(-1).shape[0])
        if limit <= 0 or dim == 0:
            return []
        cast = f"::vector({dim})"
        where, args = filter_sql(filters)
        tier_sql = {"model": "'model'", "static": "'static'"}[_tier(tier)]
        vec = Vector(query)
        # the vectors scan drives the query (the index's order), each candidate's chunk
        # checked against the filters as it comes (an iterative scan goes on until
        # ``limit`` pass); literals for tier and width, so the partial index applies
        sql = (
            f"SELECT v.chunk_id, 1 - (v.vec{cast} <=> %s{cast}) FROM vectors v "
            f"WHERE v.tier = {tier_sql} AND v.dim = {dim} AND v.repo = %s AND EXISTS "
            "(SELECT 1 FROM chunks c WHERE c.repo = v.repo AND c.id = v.chunk_id "
            f"{where}) ORDER BY v.vec{cast} <=> %s{cast} LIMIT %s"
        )
        with self._conn() as conn, conn.transaction():
            if exact:  # every row of the tier, sorted: the reference for recall
                conn.execute("SET LOCAL enable_indexscan = off")
            else:  # the HNSW index, even where the planner would sort a small table
                breadth = ef_search or max(HNSW_EF_SEARCH, limit)
                conn.execute(f"SET LOCAL hnsw.ef_search = {min(max(int(breadth), 1), 1000)}")
                conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
                conn.execute("SET LOCAL enable_seqscan = off")
                conn.execute("SET LOCAL enable_bitmapscan = off")
            rows = conn.execute(sql, [vec, self.repo, *args, vec, limit]).fetchall()
        return [(str(r[0]), float(r[1])) for r in rows]

    def chunks_missing_vectors(self, limit: int, tier: Tier = "model") -> list[Chunk]:
        """Chunks with no vector of ``tier`` yet, most useful first."""
        rows = self._fetchall(
            f"SELECT {CHUNK_COLS_C} FROM chunks c WHERE c.repo = %s AND NOT EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.repo = c.repo AND v.tier = %s AND v.chunk_id = c.id) "
            "ORDER BY c.priority DESC, c.path, c.start_line, c.seq LIMIT %s",
            (self.repo, _tier(tier), limit if limit >= 0 else None),
        )
        return [row_to_chunk(r) for r in rows]

    def count_missing_vectors(self, tier: Tier = "model") -> int:
        row = self._fetchone(
            "SELECT count(*) FROM chunks c WHERE c.repo = %s AND NOT EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.repo = c.repo AND v.tier = %s AND v.chunk_id = c.id)",
            (self.repo, _tier(tier)),
        )
        return int(row[0])

    def reuse_vectors_by_content(self, tier: Tier = "model") -> int:
        """Give chunks without a vector the vector of a chunk with the same content
        (a renamed or moved file, an unchanged function in an edited file)."""
        with self._writing() as conn:
            cur = conn.execute(
                "INSERT INTO vectors (repo, tier, chunk_id, content_hash, dim, vec) "
                "SELECT c.repo, %(tier)s, c.id, c.content_hash, src.dim, src.vec FROM chunks c "
                "JOIN LATERAL (SELECT v2.dim, v2.vec FROM vectors v2 WHERE v2.repo = c.repo "
                "  AND v2.tier = %(tier)s AND v2.content_hash = c.content_hash LIMIT 1) src "
                "ON true WHERE c.repo = %(repo)s AND NOT EXISTS (SELECT 1 FROM vectors v "
                "  WHERE v.repo = c.repo AND v.tier = %(tier)s AND v.chunk_id = c.id) "
                "ON CONFLICT DO NOTHING",
                {"repo": self.repo, "tier": _tier(tier)},
            )
            return max(cur.rowcount, 0)

    def put_vectors(
        self, chunks: Sequence[Chunk], matrix: np.ndarray, tier: Tier = "model"
    ) -> None:
        self.put_vector_rows([c.id for c in chunks], [c.content_hash for c in chunks], matrix, tier)

    def put_vector_rows(
        self,
        ids: Sequence[str],
        hashes: Sequence[str],
        matrix: np.ndarray,
        tier: Tier = "model",
    ) -> None:
        """Store (replace) the vectors of chunks ``ids`` with their content hashes."""
        data = np.asarray(matrix, dtype=np.float32)
        if len(ids) != len(data) or len(hashes) != len(data):
            raise ValueError(f"{len(ids)} ids and {len(hashes)} hashes for {len(data)} vectors")
        if not len(data):
            return
        dim = int(data.shape[1])
        with self._writing() as conn:
            conn.cursor().executemany(
                "INSERT INTO vectors (repo, tier, chunk_id, content_hash, dim, vec) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (repo, tier, chunk_id) DO UPDATE "
                "SET content_hash = EXCLUDED.content_hash, dim = EXCLUDED.dim, vec = EXCLUDED.vec",
                [
                    (self.repo, _tier(tier), chunk_id, digest, dim, Vector(row))
                    for chunk_id, digest, row in zip(ids, hashes, data, strict=True)
                ],
            )

    def prune_vectors(self) -> int:
        with self._writing() as conn:
            cur = conn.execute(
                "DELETE FROM vectors v WHERE v.repo = %s AND NOT EXISTS "
                "(SELECT 1 FROM chunks c WHERE c.repo = v.repo AND c.id = v.chunk_id)",
                (self.repo,),
            )
            return max(cur.rowcount, 0)

    def clear_vectors(self, tier: Tier) -> None:
        with self._writing() as conn:
            conn.execute(
                "DELETE FROM vectors WHERE repo = %s AND tier = %s", (self.repo, _tier(tier))
            )

    def export_vectors(self, dim: int, tier: Tier = "model") -> int:
        """Make the tier's vectors fast to search: build the HNSW index of (tier, dim)
        if the database has none yet (once per width, for every repository). Returns
        the number of vectors of the tier."""
        if getattr(self._local, "conn", None) is None and not self.readonly:
            if dim > 0:
                self.ensure_hnsw_index(tier, dim)
            self.analyze()
        return self.vector_count(tier)

    def analyze(self) -> None:
        """Refresh the planner's statistics (the keyword vectors' lexeme frequencies
        decide between a GIN scan and a sequential scan per query term) after a run,
        rather than waiting for autovacuum."""
        with self.pool.connection() as conn:
            conn.execute("ANALYZE chunks, vectors")

    def ensure_hnsw_index(self, tier: Tier, dim: int) -> None:
        """``CREATE INDEX CONCURRENTLY`` the HNSW index of (tier, dim) unless a valid
        one exists; one process builds it (advisory lock), an invalid left-over of an
        interrupted build is dropped first."""
        name = hnsw_index_name(tier, dim)
        with self.pool.connection() as conn:
            # polled (LOCK_POLL): a statement waiting for it would deadlock with the
            # holder's CREATE INDEX CONCURRENTLY
            while not conn.execute(
                "SELECT pg_try_advisory_lock(%s, %s)", (LOCK_CLASS, INDEX_LOCK)
            ).fetchone()[0]:
                time.sleep(LOCK_POLL)
            try:
                row = conn.execute(
                    "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE c.relname = %s AND n.nspname = current_schema()",
                    (name,),
                ).fetchone()
                if row and row[0]:
                    return
                if row:
                    conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
                conn.execute(
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON vectors USING hnsw "
                    f"((vec::vector({int(dim)})) vector_cosine_ops) WITH (m = {HNSW_M}, "
                    f"ef_construction = {HNSW_EF_CONSTRUCTION}) "
                    f"WHERE tier = '{_tier(tier)}' AND dim = {int(dim)}"
                )
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_CLASS, INDEX_LOCK))
