"""Storage: the narrow protocols retrieval, answers and the indexer use
(:mod:`.protocols`), and the backends that implement them: ``sqlite`` (embedded
default, one file per index). A PostgreSQL + pgvector backend implements the same
protocols (DESIGN.md §13); nothing outside ``store/`` holds SQL."""

from __future__ import annotations

from .protocols import (
    ChunkReader,
    GraphReader,
    IndexWriter,
    KeywordIndex,
    ReadStore,
    VectorRows,
    VectorSource,
)
from .sqlite import SQLiteStore

#: Backends by name.
STORES: dict[str, type] = {"sqlite": SQLiteStore}

__all__ = [
    "STORES",
    "ChunkReader",
    "GraphReader",
    "IndexWriter",
    "KeywordIndex",
    "ReadStore",
    "SQLiteStore",
    "VectorRows",
    "VectorSource",
]
