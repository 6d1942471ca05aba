"""The embedding cache in the shared PostgreSQL store (DESIGN.md §13): the same
(model name, sha256 of the text) → vector cache as :mod:`.cache`, in one table of the
database, so every ``codecite worker`` on every machine (and every repository: forks,
vendored code, branches indexed as other repositories) embeds a text only once.

Vectors are raw little-endian float32 bytes with their dimension, as in the SQLite
cache. It is an optimisation only: on database errors a warning is logged and embedding
goes on without it. The table is not scoped by repository (a vector depends on the model
and the text only), and it is created on first use (``CREATE TABLE IF NOT EXISTS``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..store.postgres.migrations import SCHEMA
from .cache import EmbeddingCache

if TYPE_CHECKING:
    from ..store.protocols import IndexWriter

log = logging.getLogger(__name__)

#: In the store's schema (``codecite``), beside its tables.
TABLE = f"{SCHEMA}.embedding_cache"
_DTYPE = np.dtype("<f4")
_QUERY_CHUNK = 1000
CREATE = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    model text NOT NULL,
    key text NOT NULL,
    dim integer NOT NULL,
    vector bytea NOT NULL,
    PRIMARY KEY (model, key)
)
"""


class PostgresEmbeddingCache(EmbeddingCache):
    """Vectors by (model, key) in the database of a pool (a PostgreSQL store's): the
    calls of :class:`EmbeddingCache`, which every caller of it accepts."""

    def __init__(self, pool: Any, where: str) -> None:
        self.path = Path(where)
        self._lock = threading.Lock()
        self._conn = None
        self._writable = True
        self._pool: Any = pool
        try:
            with pool.connection() as conn:
                conn.execute(CREATE)
        except Exception as exc:  # psycopg.Error, PoolTimeout
            self._give_up(f"cannot create its table ({exc})")

    @property
    def enabled(self) -> bool:
        return self._pool is not None

    def _give_up(self, why: str) -> None:
        log.warning(
            "embedding cache in %s disabled: %s; embedding continues without it", self.path, why
        )
        self._pool = None

    def get_many(self, model: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(keys))
        found: dict[str, np.ndarray] = {}
        if self._pool is None:
            return found
        try:
            with self._pool.connection() as conn:
                for start in range(0, len(wanted), _QUERY_CHUNK):
                    rows = conn.execute(
                        f"SELECT key, dim, vector FROM {TABLE} WHERE model = %s AND key = ANY(%s)",
                        (model, wanted[start : start + _QUERY_CHUNK]),
                    ).fetchall()
                    for key, dim, blob in rows:
                        vector = np.frombuffer(bytes(blob), dtype=_DTYPE)
                        if vector.shape[0] == dim:
                            found[key] = vector.astype(np.float32)
        except Exception as exc:
            self._give_up(f"read failed ({exc})")
            return {}
        return found

    def put_many(self, model: str, items: Mapping[str, np.ndarray]) -> None:
        if not items or self._pool is None:
            return
        rows = []
        for key, vector in items.items():
            flat = np.asarray(vector, dtype=_DTYPE).reshape(-1)
            rows.append((model, key, int(flat.shape[0]), flat.tobytes()))
        try:
            with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {TABLE} (model, key, dim, vector) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (model, key) DO NOTHING",
                    rows,
                )
        except Exception as exc:
            self._give_up(f"write failed ({exc})")

    def count(self, model: str | None = None) -> int:
        if self._pool is None:
            return 0
        try:
            with self._pool.connection() as conn:
                if model is None:
                    row = conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()
                else:
                    row = conn.execute(
                        f"SELECT count(*) FROM {TABLE} WHERE model = %s", (model,)
                    ).fetchone()
        except Exception as exc:
            self._give_up(f"read failed ({exc})")
            return 0
        return int(row[0])

    def close(self) -> None:
        self._pool = None  # the store owns the pool


def shared_cache(store: IndexWriter) -> EmbeddingCache | None:
    """The database's embedding cache when ``store`` is a writable PostgreSQL store (its
    pool), else None (the caller uses the machine-wide SQLite cache)."""
    from ..store.postgres.store import PostgresStore
    from ..store.urls import redact

    if not isinstance(store, PostgresStore) or store.readonly:
        return None
    return PostgresEmbeddingCache(store.pool, redact(store.url))
