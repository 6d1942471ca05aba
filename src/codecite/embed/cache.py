"""A machine-wide embedding cache: (model name, sha256 of the text) → vector.

One SQLite file shared by every index and process on the machine, so re-indexing,
branch switches and other clones of a repository never embed the same text twice.
Here is what is cached under which key and where the file is; the file itself (its
schema, WAL mode, busy timeout, raw float32 vectors, no pickle) is the store's:
:class:`codecite.store.sqlite.embedding_cache.FileEmbeddingCache`. A PostgreSQL store
offers a cache of its own, shared by every worker (``store.embedding_cache()``).

The cache is an optimisation only: if the file is corrupt, unwritable, or made by a
newer codecite, a warning is logged and embedding goes on without it.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from ..config import Config
from ..store.sqlite.embedding_cache import FileEmbeddingCache
from ..types import sha256_text

CACHE_FILENAME = "embeddings.db"
CACHE_DIR_ENV = "CODECITE_CACHE_DIR"


def cache_key(text: str) -> str:
    """The cache key of an embedded text: its sha256 in hex."""
    return sha256_text(text)


def default_cache_dir(config: Config) -> Path:
    """``config.embed.cache_dir``, else ``$CODECITE_CACHE_DIR``, else the user cache folder."""
    chosen = config.embed.cache_dir or os.environ.get(CACHE_DIR_ENV, "")
    if chosen:
        return Path(chosen).expanduser()
    return Path(platformdirs.user_cache_dir("codecite"))


class EmbeddingCache(FileEmbeddingCache):
    """Vectors by (model, key) in the cache file ``path``. Every method degrades to
    "no cache" on errors."""

    @classmethod
    def for_config(cls, config: Config) -> EmbeddingCache:
        """The shared cache file in :func:`default_cache_dir`."""
        return cls(default_cache_dir(config) / CACHE_FILENAME)
