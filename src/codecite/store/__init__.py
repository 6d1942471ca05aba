"""Storage: the narrow protocols retrieval, answers and the indexer use
(:mod:`.protocols`), and the backends that implement them: ``sqlite`` (embedded
default, one file per index) and ``postgresql`` (PostgreSQL + pgvector, many
repositories in one database, DESIGN.md §13; needs ``codecite[postgres]``).
:func:`open_store` picks one from a location: a folder or a ``postgresql://`` URL.
Nothing outside ``store/`` holds SQL."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .postgres import PostgresStore
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

#: Public names → the module defining them, imported on first use: a module of this
#: package (``store.migrations``, used by the server's state) loads without numpy and
#: both backends (issue 23: start-up time of the commands that need neither).
_EXPORTS = {
    "PostgresStore": "postgres",
    "SQLiteStore": "sqlite",
    **{
        name: "protocols"
        for name in (
            "ChunkReader",
            "GraphReader",
            "IndexWriter",
            "KeywordIndex",
            "ReadStore",
            "Store",
            "VectorRows",
            "VectorSource",
        )
    },
}


def __getattr__(name: str) -> Any:
    if name == "STORES":
        return stores()
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), name)


def stores() -> dict[str, type]:
    """Backends by name. Importing them needs no driver: PostgresStore imports psycopg
    when opened, and says how to install it when it is missing."""
    from .postgres import PostgresStore
    from .sqlite import SQLiteStore

    return {"sqlite": SQLiteStore, "postgresql": PostgresStore}


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
    from .postgres import PostgresStore, is_postgres_url
    from .sqlite import SQLiteStore

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
