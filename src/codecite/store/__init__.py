"""Storage: the narrow protocols retrieval, answers and the indexer use
(:mod:`.protocols`), and the backends that implement them: ``sqlite`` (embedded
default, one file per index) and ``postgresql`` (PostgreSQL + pgvector, many
repositories in one database, DESIGN.md §13; needs ``codecite[postgres]``).
:func:`open_store` picks one from a location: a folder or a ``postgresql://`` URL.
Nothing outside ``store/`` holds SQL."""

from __future__ import annotations

from pathlib import Path

from .postgres import PostgresStore, is_postgres_url
from .protocols import (
    ChunkReader,
    GraphReader,
    IndexWriter,
    KeywordIndex,
    ReadStore,
    Store,
    VectorRows,
    VectorSource,
)
from .sqlite import SQLiteStore

#: Backends by name. Importing them needs no driver: PostgresStore imports psycopg when
#: opened, and says how to install it when it is missing.
STORES: dict[str, type] = {"sqlite": SQLiteStore, "postgresql": PostgresStore}


def open_store(
    location: str | Path,
    *,
    repo: str = "",
    index_dir: str | Path | None = None,
    create: bool = True,
    readonly: bool = False,
    discard_damaged: bool = False,
) -> Store:
    """The store at ``location``: a ``postgresql://`` URL (the repository ``repo`` in
    that database; ``index_dir`` keeps local files such as the query log) or an index
    folder (SQLite; ``repo`` unused)."""
    if is_postgres_url(location):
        if readonly:  # queries: a read replica when there are any (store/replicas.py)
            from ..errors import UserError
            from .replicas import open_read

            return open_read(
                str(location),
                lambda url: PostgresStore(url, repo=repo, index_dir=index_dir, readonly=True),
                (UserError,),
            )
        return PostgresStore(
            str(location), repo=repo, index_dir=index_dir, create=create, readonly=readonly
        )
    return SQLiteStore(location, create=create, readonly=readonly, discard_damaged=discard_damaged)


__all__ = [
    "STORES",
    "ChunkReader",
    "GraphReader",
    "IndexWriter",
    "KeywordIndex",
    "PostgresStore",
    "ReadStore",
    "SQLiteStore",
    "Store",
    "VectorRows",
    "VectorSource",
    "open_store",
]
