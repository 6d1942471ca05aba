"""Vectors in the SQLite store: one BLOB per chunk in the ``vectors`` table (committed
batch by batch, so an interrupted embedding run resumes), plus the ``vectors.npy``
snapshot (with its row → id map) that loads memory-mapped for fast exact search."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import numpy as np

from ..types import Chunk
from .protocols import VectorRows
from .sqlite_base import (
    CHUNK_COLS,
    VECTOR_IDS_NAME,
    VECTORS_NAME,
    Tables,
    atomic_write,
    row_to_chunk,
)

log = logging.getLogger(__name__)


class VectorTables(Tables):
    """The vector methods of :class:`~codecite.store.sqlite.SQLiteStore`."""

    def vector_count(self) -> int:
        return int(
            self.conn.execute(
                "SELECT count(*) FROM vectors v JOIN chunks c ON c.id = v.chunk_id"
            ).fetchone()[0]
        )

    def generation(self) -> int:
        """SQLite's ``data_version``: it changes when another connection commits."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def vector_rows(self) -> VectorRows | None:
        """The snapshot when it is current, else the vectors read from the database (an
        index still embedding is searched with what it has so far); None when empty."""
        in_db = self.vector_count()
        if in_db == 0:
            return None
        dim = int(self.get_meta("embedding_dim", "0") or 0)
        snapshot = self.load_vectors(dim)
        if snapshot is not None and len(snapshot[0]) == in_db:
            ids, matrix = snapshot
        else:
            log.info("vectors snapshot is stale; reading %d vectors from the database", in_db)
            ids, matrix = self.vector_matrix(dim)
        meta = {
            r[0]: r[1:]
            for r in self.conn.execute("SELECT id, language, kind, path, repo FROM chunks")
        }
        keep = [i for i, chunk_id in enumerate(ids) if chunk_id in meta]
        if len(keep) != len(ids):  # the snapshot holds chunks deleted since
            matrix, ids = matrix[keep], [ids[i] for i in keep]
        if not ids:
            return None
        rows = [meta[i] for i in ids]
        return VectorRows(
            ids,
            matrix,
            [r[0] for r in rows],
            [r[1] for r in rows],
            [r[2] for r in rows],
            [r[3] for r in rows],
        )

    def chunks_missing_vectors(self, limit: int) -> list[Chunk]:
        """Chunks with no vector yet, most useful first."""
        rows = self.conn.execute(
            f"SELECT {', '.join('c.' + c.strip() for c in CHUNK_COLS.split(','))} "
            "FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id "
            "WHERE v.chunk_id IS NULL ORDER BY c.priority DESC, c.path, c.start_line LIMIT ?",
            (limit,),
        )
        return [row_to_chunk(r) for r in rows]

    def count_missing_vectors(self) -> int:
        return int(
            self.conn.execute(
                "SELECT count(*) FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id "
                "WHERE v.chunk_id IS NULL"
            ).fetchone()[0]
        )

    def reuse_vectors_by_content(self) -> int:
        """Give chunks without a vector the vector of a chunk with the same content
        (a renamed or moved file, an unchanged function in an edited file)."""
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO vectors(chunk_id, content_hash, vec) "
            "SELECT c.id, c.content_hash, (SELECT v2.vec FROM vectors v2 "
            "  WHERE v2.content_hash = c.content_hash LIMIT 1) "
            "FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id "
            "WHERE v.chunk_id IS NULL AND EXISTS "
            "  (SELECT 1 FROM vectors v3 WHERE v3.content_hash = c.content_hash)"
        )
        return cur.rowcount

    def put_vectors(self, chunks: Sequence[Chunk], matrix: np.ndarray) -> None:
        data = np.ascontiguousarray(matrix, dtype=np.float32)
        self.conn.executemany(
            "INSERT OR REPLACE INTO vectors(chunk_id, content_hash, vec) VALUES (?,?,?)",
            [(c.id, c.content_hash, data[i].tobytes()) for i, c in enumerate(chunks)],
        )

    def prune_vectors(self) -> int:
        cur = self.conn.execute("DELETE FROM vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)")
        return cur.rowcount

    def vector_matrix(self, dim: int = 0) -> tuple[list[str], np.ndarray]:
        """All vectors of live chunks, in chunk order, read from the database.

        ``dim`` 0 takes the width of the stored vectors (an index still embedding its
        first batches has no ``embedding_dim`` yet); rows of another width are skipped."""
        rows = self.conn.execute(
            "SELECT v.chunk_id, v.vec FROM vectors v JOIN chunks c ON c.id = v.chunk_id "
            "ORDER BY c.rowid"
        ).fetchall()
        width = dim * 4 or (len(rows[0][1]) if rows else 0)
        good = [(chunk_id, blob) for chunk_id, blob in rows if len(blob) == width]
        if len(good) != len(rows):
            log.warning(
                "%d stored vectors have the wrong size; they are ignored", len(rows) - len(good)
            )
        matrix = np.empty((len(good), width // 4), dtype=np.float32)
        for i, (_, blob) in enumerate(good):
            matrix[i] = np.frombuffer(blob, dtype=np.float32)
        return [r[0] for r in good], matrix

    def export_vectors(self, dim: int) -> int:
        """Write the ``vectors.npy`` snapshot (and its row → chunk id map) atomically."""
        ids, matrix = self.vector_matrix(dim)
        with atomic_write(self.dir / VECTORS_NAME) as tmp, tmp.open("wb") as fh:
            np.save(fh, matrix)
        with atomic_write(self.dir / VECTOR_IDS_NAME) as tmp:
            tmp.write_text(json.dumps(ids))
        return len(ids)

    def load_vectors(self, dim: int = 0) -> tuple[list[str], np.ndarray] | None:
        """The snapshot, memory-mapped, or None when there is none or it is unusable
        (damaged, of another width than ``dim``, or not matching its ids map): the
        caller then reads the vectors from the database."""
        npy, ids_file = self.dir / VECTORS_NAME, self.dir / VECTOR_IDS_NAME
        if not (npy.exists() and ids_file.exists()):
            return None
        try:
            ids = json.loads(ids_file.read_text(encoding="utf-8"))
            matrix = np.load(npy, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            log.warning(
                "ignoring the damaged vectors snapshot in %s (%s); `codecite index` rewrites it",
                self.dir,
                exc,
            )
            return None
        usable = (
            isinstance(ids, list)
            and all(isinstance(i, str) for i in ids)
            and matrix.dtype == np.float32
            and matrix.ndim == 2
            and matrix.shape[0] == len(ids)
            and (not dim or matrix.shape[1] == dim)
        )
        if not usable:  # damaged, or caught between its two atomic writes (a re-index)
            log.info(
                "not using the vectors snapshot in %s: it does not match the index (being "
                "rewritten, or damaged: `codecite index` rewrites it); reading the database",
                self.dir,
            )
            return None
        return ids, matrix
