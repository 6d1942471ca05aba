"""Vectors in the SQLite store: one BLOB per chunk in the ``vectors`` table (committed
batch by batch, so an interrupted embedding run resumes), plus the ``vectors.npy``
snapshot (with its row → id map) that loads memory-mapped for fast exact search.
The static tier (issue 15) has the same shape: ``static_vectors`` and ``static.npy``."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import numpy as np

from ...types import Chunk
from ..protocols import Tier, VectorRows
from .base import (
    CHUNK_COLS,
    STATIC_VECTOR_IDS_NAME,
    STATIC_VECTORS_NAME,
    VECTOR_IDS_NAME,
    VECTORS_NAME,
    Tables,
    atomic_write,
    row_to_chunk,
)

#: The name its messages had before the module moved (issue 22): the logs read the same.
log = logging.getLogger("codecite.store.sqlite_vectors")

#: Per tier: the table and the snapshot files (matrix, row → id map). Table names
#: come only from here, never from a caller's text.
_TIERS: dict[str, tuple[str, str, str]] = {
    "model": ("vectors", VECTORS_NAME, VECTOR_IDS_NAME),
    "static": ("static_vectors", STATIC_VECTORS_NAME, STATIC_VECTOR_IDS_NAME),
}
#: The snapshot files of every tier (``index --full`` removes them).
SNAPSHOT_FILES = tuple(name for _, *files in _TIERS.values() for name in files)
#: The metadata key holding each tier's vector width.
DIM_KEYS = {"model": "embedding_dim", "static": "static_dim"}


def _table(tier: Tier) -> str:
    try:
        return _TIERS[tier][0]
    except KeyError:
        raise ValueError(f"unknown vector tier {tier!r}") from None


class VectorTables(Tables):
    """The vector methods of :class:`~codecite.store.sqlite.SQLiteStore`."""

    def vector_count(self, tier: Tier = "model") -> int:
        return int(
            self.conn.execute(
                f"SELECT count(*) FROM {_table(tier)} v JOIN chunks c ON c.id = v.chunk_id"
            ).fetchone()[0]
        )

    def generation(self) -> int:
        """Changes whenever the index does: SQLite's ``data_version`` counts the commits
        of other connections (a re-index beside a server), ``total_changes`` this
        connection's own writes (an ``Index.update`` or a query-time refresh in this
        process, which ``data_version`` does not see)."""
        version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        return version << 40 | self.conn.total_changes

    def vector_rows(self, tier: Tier = "model") -> VectorRows | None:
        """The snapshot when it is current, else the vectors read from the database (an
        index still embedding is searched with what it has so far); None when empty."""
        in_db = self.vector_count(tier)
        if in_db == 0:
            return None
        dim = int(self.get_meta(DIM_KEYS[tier], "0") or 0)
        snapshot = self.load_vectors(dim, tier)
        meta = {
            r[0]: r[1:]
            for r in self.conn.execute("SELECT id, language, kind, path, repo FROM chunks")
        }
        # current: as many vectors as the table's, all of chunks that exist (an id names
        # its content, so the same ids are the same vectors; a count alone would take a
        # snapshot whose chunks were replaced one for one since it was written)
        if (
            snapshot is not None
            and len(snapshot[0]) == in_db
            and all(chunk_id in meta for chunk_id in snapshot[0])
        ):
            ids, matrix = snapshot
        else:
            log.info("%s snapshot is stale; reading %d vectors from the database", tier, in_db)
            ids, matrix = self.vector_matrix(dim, tier)
        keep = [i for i, chunk_id in enumerate(ids) if chunk_id in meta]
        if len(keep) != len(ids):  # chunks another process committed after the read above
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

    def chunks_missing_vectors(self, limit: int, tier: Tier = "model") -> list[Chunk]:
        """Chunks with no vector of ``tier`` yet, most useful first."""
        rows = self.conn.execute(
            f"SELECT {', '.join('c.' + c.strip() for c in CHUNK_COLS.split(','))} "
            f"FROM chunks c LEFT JOIN {_table(tier)} v ON v.chunk_id = c.id "
            "WHERE v.chunk_id IS NULL ORDER BY c.priority DESC, c.path, c.start_line LIMIT ?",
            (limit,),
        )
        return [row_to_chunk(r) for r in rows]

    def count_missing_vectors(self, tier: Tier = "model") -> int:
        return int(
            self.conn.execute(
                f"SELECT count(*) FROM chunks c LEFT JOIN {_table(tier)} v "
                "ON v.chunk_id = c.id "
                "WHERE v.chunk_id IS NULL"
            ).fetchone()[0]
        )

    def reuse_vectors_by_content(self, tier: Tier = "model") -> int:
        """Give chunks without a vector the vector of a chunk with the same content
        (a renamed or moved file, an unchanged function in an edited file)."""
        table = _table(tier)
        cur = self.conn.execute(
            f"INSERT OR IGNORE INTO {table}(chunk_id, content_hash, vec) "
            f"SELECT c.id, c.content_hash, (SELECT v2.vec FROM {table} v2 "
            "  WHERE v2.content_hash = c.content_hash LIMIT 1) "
            f"FROM chunks c LEFT JOIN {table} v ON v.chunk_id = c.id "
            "WHERE v.chunk_id IS NULL AND EXISTS "
            f"  (SELECT 1 FROM {table} v3 WHERE v3.content_hash = c.content_hash)"
        )
        return cur.rowcount

    def put_vectors(
        self, chunks: Sequence[Chunk], matrix: np.ndarray, tier: Tier = "model"
    ) -> None:
        data = np.ascontiguousarray(matrix, dtype=np.float32)
        self.conn.executemany(
            f"INSERT OR REPLACE INTO {_table(tier)}(chunk_id, content_hash, vec) VALUES (?,?,?)",
            [(c.id, c.content_hash, data[i].tobytes()) for i, c in enumerate(chunks)],
        )

    def prune_vectors(self) -> int:
        pruned = 0
        for table, *_ in _TIERS.values():
            cur = self.conn.execute(
                f"DELETE FROM {table} WHERE chunk_id NOT IN (SELECT id FROM chunks)"
            )
            pruned += cur.rowcount
        return pruned

    def clear_vectors(self, tier: Tier) -> None:
        self.conn.execute(f"DELETE FROM {_table(tier)}")
        for name in _TIERS[tier][1:]:
            (self.dir / name).unlink(missing_ok=True)

    def vector_matrix(self, dim: int = 0, tier: Tier = "model") -> tuple[list[str], np.ndarray]:
        """All vectors of live chunks, in chunk order, read from the database.

        ``dim`` 0 takes the width of the stored vectors (an index still embedding its
        first batches has no ``embedding_dim`` yet); rows of another width are skipped."""
        rows = self.conn.execute(
            f"SELECT v.chunk_id, v.vec FROM {_table(tier)} v JOIN chunks c ON c.id = v.chunk_id "
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

    def export_vectors(self, dim: int, tier: Tier = "model") -> int:
        """Write the tier's snapshot (``vectors.npy`` / ``static.npy``, and its row →
        chunk id map) atomically."""
        ids, matrix = self.vector_matrix(dim, tier)
        _, npy, ids_name = _TIERS[tier]
        with atomic_write(self.dir / npy) as tmp, tmp.open("wb") as fh:
            np.save(fh, matrix)
        with atomic_write(self.dir / ids_name) as tmp:
            tmp.write_text(json.dumps(ids))
        return len(ids)

    def load_vectors(
        self, dim: int = 0, tier: Tier = "model"
    ) -> tuple[list[str], np.ndarray] | None:
        """The snapshot, memory-mapped, or None when there is none or it is unusable
        (damaged, of another width than ``dim``, or not matching its ids map): the
        caller then reads the vectors from the database."""
        _, npy_name, ids_name = _TIERS[tier]
        npy, ids_file = self.dir / npy_name, self.dir / ids_name
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
