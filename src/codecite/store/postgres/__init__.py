"""The shared team store: PostgreSQL + pgvector (docs/DESIGN.md §13).

:mod:`.store` (:class:`PostgresStore`, :func:`repositories`) on :mod:`.base`,
:mod:`.search` (full-text search), :mod:`.vectors` (pgvector), :mod:`.graph`,
:mod:`.migrations` and :mod:`.replicas`. Names are imported on first use; psycopg is
imported when a store is opened."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store import PostgresStore, repositories

_EXPORTS = {"PostgresStore": "store", "repositories": "store"}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = ["PostgresStore", "repositories"]
