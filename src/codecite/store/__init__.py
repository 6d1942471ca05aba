"""Storage: the narrow protocols retrieval, answers and the indexer use
(:mod:`.protocols`), and the backends that implement them: ``sqlite`` (embedded
default, one file per index) and ``postgresql`` (PostgreSQL + pgvector, many
repositories in one database, docs/DESIGN.md §13; needs ``codecite[postgres]``).

:data:`STORES` is the one switch between them: a location (an index folder, a state
file, or a ``postgresql://`` URL) names its backend (:func:`backend`), and
:func:`open_store` opens the index there. Callers ask the store what differs
(:attr:`~.protocols.Store.shared`, :meth:`~.protocols.IndexWriter.embedding_cache`),
never which backend it is. Nothing outside ``store/`` holds SQL."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .urls import is_postgres_url

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
    from .state import StateTables

#: Public names → the module defining them, imported on first use: a module of this
#: package (``store.sqlite.migrations``, used by the server's state) loads without numpy
#: and both backends (issue 23: start-up time of the commands that need neither).
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
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), name)


def _sqlite() -> Any:
    from .sqlite.store import SQLiteStore

    return SQLiteStore


def _sqlite_state() -> Any:
    from .sqlite.state import SQLiteStateTables

    return SQLiteStateTables


def _postgres() -> Any:
    from .postgres.store import PostgresStore

    return PostgresStore


def _postgres_state() -> Any:
    from .postgres.state import PostgresStateTables

    return PostgresStateTables


@dataclass(frozen=True)
class Backend:
    """A storage backend: which locations are its, whether one of its stores holds many
    repositories, and its store class (imported when first opened: importing a
    backend needs no driver; PostgreSQL's imports psycopg when opened and says how to
    install it when it is missing)."""

    name: str
    #: Whether ``location`` names a store of this backend.
    claims: Callable[[str | Path], bool]
    #: One store holds many repositories, each found by name (not by its folder).
    shared: bool
    #: The store class; its ``open(location, ...)`` opens an index (see :func:`open_store`).
    store_class: Callable[[], Any]
    #: The server's state tables' class (see :func:`open_state_tables`).
    state_tables: Callable[[], Any]


#: The backends by name, in the order locations are tried: the last one claims any.
STORES: dict[str, Backend] = {
    "postgresql": Backend("postgresql", is_postgres_url, True, _postgres, _postgres_state),
    "sqlite": Backend("sqlite", lambda location: True, False, _sqlite, _sqlite_state),
}


def backend(location: str | Path) -> Backend:
    """The backend of ``location``: a ``postgresql://`` URL, else a folder or file."""
    return next(b for b in STORES.values() if b.claims(location))


def stores() -> dict[str, type]:
    """The store classes by backend name."""
    return {name: b.store_class() for name, b in STORES.items()}


def is_shared_store(location: str | Path) -> bool:
    """Whether ``location`` names a shared store (one holding many repositories, found
    by name: a ``postgresql://`` URL) rather than an index folder."""
    return backend(location).shared


def open_state_tables(location: str | Path) -> StateTables:
    """The server's state tables at ``location`` (:mod:`.state`): a ``postgresql://``
    URL, else a SQLite file (created, mode 0600, if missing). The schema is created or
    upgraded on open."""
    tables: StateTables = backend(location).state_tables()(location)
    return tables


def index_exists(index_dir: str | Path, location: str | Path = "") -> bool:
    """Whether an index can be opened from the folder ``index_dir``: it holds a built
    index; or ``location`` names a shared store, which says whether it holds the
    repository when it is opened."""
    if is_shared_store(location):
        return True
    from .sqlite.base import DB_NAME

    return (Path(index_dir) / DB_NAME).is_file()


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
    folder (SQLite; ``repo`` unused). ``discard_damaged``: a damaged SQLite database is
    replaced by a new one."""
    store: Store = (
        backend(location)
        .store_class()
        .open(
            location,
            repo=repo,
            index_dir=index_dir,
            create=create,
            readonly=readonly,
            discard_damaged=discard_damaged,
        )
    )
    return store


def open_repository_store(
    store: str,
    repo: str,
    index_dir: str | Path,
    *,
    create: bool = True,
    readonly: bool = False,
    discard_damaged: bool = False,
) -> Store:
    """The store of a repository whose index folder is ``index_dir``: the shared store
    the ``store`` setting names (the repository ``repo`` in it), else the folder's own
    index. What :func:`codecite.open_index` and the background worker open."""
    return open_store(
        store if is_shared_store(store) else index_dir,
        repo=repo,
        index_dir=index_dir,
        create=create,
        readonly=readonly,
        discard_damaged=discard_damaged,
    )


__all__ = [
    "STORES",
    "Backend",
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
    "backend",
    "index_exists",
    "is_shared_store",
    "open_repository_store",
    "open_store",
]
