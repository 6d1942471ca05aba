"""Read replicas of the shared PostgreSQL store (docs/DESIGN.md §13): read-only opens (queries)
go to a replica, in turn (round robin), skipping one that does not answer; writes (the
indexer, workers, ``migrate``) always go to the primary.

Replicas of a primary come from ``$CODECITE_STORE_REPLICAS`` (comma-separated
``postgresql://`` URLs, replicas of ``$CODECITE_STORE`` or of any primary opened) or are
registered by the server from its config (``store_replicas = [...]``). With none, reads
use the primary. A replica that is behind shows the index as of its replay position; the
searcher reloads vectors when the replica's generation moves on.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

#: The name its messages had before the module moved (issue 22): the logs read the same.
log = logging.getLogger("codecite.store.replicas")

REPLICAS_ENV = "CODECITE_STORE_REPLICAS"
T = TypeVar("T")

_registered: dict[str, tuple[str, ...]] = {}
_turns: dict[tuple[str, ...], itertools.count[int]] = {}
_lock = threading.Lock()


def register_replicas(primary: str, replicas: Sequence[str]) -> None:
    """Use ``replicas`` for read-only opens of ``primary`` in this process."""
    with _lock:
        _registered[primary] = tuple(replicas)


def replicas_for(primary: str) -> tuple[str, ...]:
    """The replicas of ``primary``: registered ones, else ``$CODECITE_STORE_REPLICAS``."""
    with _lock:
        if primary in _registered:
            return _registered[primary]
    given = os.environ.get(REPLICAS_ENV, "")
    return tuple(url.strip() for url in given.split(",") if url.strip())


def open_read(primary: str, opener: Callable[[str], T], errors: tuple[type[Exception], ...]) -> T:
    """``opener(url)`` on the next replica of ``primary`` that opens (round robin), else
    on the primary itself; ``errors`` are what a replica that is down raises."""
    replicas = replicas_for(primary)
    if not replicas:
        return opener(primary)
    with _lock:
        start = next(_turns.setdefault(replicas, itertools.count()))
    for offset in range(len(replicas)):
        url = replicas[(start + offset) % len(replicas)]
        try:
            return opener(url)
        except errors as exc:
            log.warning("read replica unusable, trying the next: %s", exc)
    log.warning("no read replica answers; reading from the primary")
    return opener(primary)
