"""The embedded default store: one SQLite file per index folder (docs/DESIGN.md §5).

:mod:`.store` (:class:`SQLiteStore`) on :mod:`.base`, :mod:`.search` (FTS5),
:mod:`.vectors` and :mod:`.migrations`. Names are imported on first use, so that a
module of this package that needs neither numpy nor the store (the migrations' runner)
loads alone."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store import SQLiteStore

_EXPORTS = {"SQLiteStore": "store"}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = ["SQLiteStore"]
