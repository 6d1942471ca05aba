"""The embedding cache in the shared PostgreSQL store (docs/DESIGN.md §13): the same
(model name, sha256 of the text) → vector cache as the machine-wide file's
(:mod:`codecite.store.sqlite.embedding_cache`), in one table of the database, so every
``codecite worker`` on every machine (and every repository: forks, vendored code,
branches indexed as other repositories) embeds a text only once.

Vectors are raw little-endian float32 bytes with their dimension, as in the SQLite
cache. It is an optimisation only: on database errors a warning is logged and embedding
goes on without it. The table is not scoped by repository (a vector depends on the model
and the text only); the store's migration 3 creates it (:mod:`.migrations`). A writable
:class:`~.store.PostgresStore` offers it (:meth:`~.store.PostgresStore.embedding_cache`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Self

import numpy as np

from .migrations import SCHEMA

#: The name its messages had before the module moved (issue 22): the logs read the same.
log = logging.getLogger("codecite.embed.pgcache")

#: In the store's schema (``codecite``), beside its tables.
TABLE = f"{SCHEMA}.embedding_cache"
_DTYPE = np.dtype("<f4")
_QUERY_CHUNK = 1000


class PostgresEmbeddingCache:
    """Vectors by (model, key) in the database of a pool (a PostgreSQL store's, whose
    migrations made the table): the calls of the machine-wide cache file's
    (:class:`~codecite.store.protocols.VectorCache`)."""

    def __init__(self, pool: Any, where: str) -> None:
        self.path = Path(where)
        self._pool: Any = pool

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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
