"""Never answer from stale code (docs/DESIGN.md §12): before a query, find the indexed files
that changed on disk — a ``stat`` of each (size + mtime), then the content hash of the
few whose stat differs (a touched but unchanged file is not a change) — so that the
caller can re-index them inline or mark their results stale. New files are not looked
for here (they cannot give a wrong answer; ``codecite index`` or watch mode adds them).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from ..config import Config
from ..errors import PathError, UserError
from ..store.protocols import Store
from ..walk import file_changed

T = TypeVar("T")


@dataclass
class Freshness:
    """What the check before a query found and did."""

    #: Indexed files whose content changed on disk, and indexed files now missing.
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    #: Of those, the files re-indexed inline (keyword index and graph).
    refreshed: list[str] = field(default_factory=list)
    #: The files left as they were: their results are marked stale.
    stale: list[str] = field(default_factory=list)
    #: Why nothing was refreshed ("over the limit of 20 files", "read-only index", ...).
    reason: str = ""
    check_ms: float = 0.0
    refresh_ms: float = 0.0

    @property
    def paths(self) -> list[str]:
        return sorted({*self.changed, *self.deleted})


#: Threads that ``stat`` files (a stat waits on the kernel, not on Python: 2 threads
#: took 14 ms instead of 19 ms for Django's 4,795 files on 2 cores).
STAT_THREADS = 2
#: Below this many files one thread is faster than handing work to others.
MIN_FILES_FOR_THREADS = 500


def _stat_changes(root: Path, rows: list[tuple[str, int, int, str]]) -> tuple[list[str], list[str]]:
    changed: list[str] = []
    deleted: list[str] = []
    for path, size, mtime_ns, digest in rows:
        full = os.path.join(root, path)
        try:
            st = os.stat(full)
        except FileNotFoundError:
            deleted.append(path)
            continue
        except OSError:
            continue  # unreadable now: the next `codecite index` will say so
        indexed = {"size": size, "mtime_ns": mtime_ns, "hash": digest}
        try:
            if file_changed(full, st.st_size, st.st_mtime_ns, indexed):
                changed.append(path)
        except OSError:
            deleted.append(path)
    return changed, deleted


def changed_files(
    root: Path, known: list[tuple[str, int, int, str]]
) -> tuple[list[str], list[str]]:
    """(changed, deleted) among the indexed files ``known`` (path, size, mtime_ns,
    content hash) under ``root``."""
    if len(known) < MIN_FILES_FOR_THREADS:
        changed, deleted = _stat_changes(root, known)
        return sorted(changed), sorted(deleted)
    step = -(-len(known) // STAT_THREADS)
    parts = [known[i : i + step] for i in range(0, len(known), step)]
    with ThreadPoolExecutor(STAT_THREADS) as pool:
        found = list(pool.map(lambda part: _stat_changes(root, part), parts))
    return (
        sorted(p for changed, _ in found for p in changed),
        sorted(p for _, deleted in found for p in deleted),
    )


def known_files(files: dict[str, dict[str, object]]) -> list[tuple[str, int, int, str]]:
    """The files-table rows a check needs, from ``store.files()``."""
    return [
        (path, int(str(row["size"])), int(str(row["mtime_ns"])), str(row["hash"]))
        for path, row in files.items()
    ]


def check(root: Path, known: list[tuple[str, int, int, str]]) -> Freshness:
    started = time.perf_counter()
    changed, deleted = changed_files(root, known)
    return Freshness(changed, deleted, check_ms=round((time.perf_counter() - started) * 1000, 3))


class Tracker:
    """Query-time freshness of one open index: which files changed, re-indexing them
    inline, and how often every file is checked (per ``refresh_interval``)."""

    def __init__(self, store: Store, root: Path, config: Config, repo: Callable[[], str]) -> None:
        self.store, self.root, self.config, self.repo = store, root, config, repo
        self._known: tuple[int, list[tuple[str, int, int, str]]] | None = None
        self._last_fresh: Freshness | None = None
        self._last_checked = 0.0
        self.dir = store.dir

    def fresh(
        self, run: Callable[[], T], paths_of: Callable[[T], Iterable[str]]
    ) -> tuple[T, Freshness]:
        """``run()`` (a search) with query-time freshness. Every indexed file is checked
        in a thread *while* ``run()`` runs (the first query of a process overlaps it with
        loading the model and vectors), at most once per ``refresh_interval`` seconds on
        this object; between two such checks only the files of the results
        (``paths_of(result)``) are checked, which costs microseconds. Changed files are
        re-indexed (up to ``refresh_max_files``) and ``run()`` runs again; beyond that,
        or when the index cannot be written, they are reported ``stale``."""
        if not self.config.freshness.refresh:
            return run(), Freshness()
        now = time.monotonic()
        last = self._last_fresh
        known = self._known_files()
        if last is not None and now - self._last_checked < self.config.freshness.refresh_interval:
            result = run()
            wanted = set(paths_of(result))
            fresh = check(self.root, [row for row in known if row[0] in wanted])
            fresh.stale = sorted({*last.stale, *fresh.stale})
        else:
            with ThreadPoolExecutor(1, thread_name_prefix="codecite-fresh") as pool:
                checking = pool.submit(check, self.root, known)
                result = run()
                fresh = checking.result()
            self._last_checked = now
        if fresh.paths:
            self._apply(fresh)
            if fresh.refreshed:
                result = run()
        if fresh.stale or last is None or now == self._last_checked:
            self._last_fresh = fresh
        return result, fresh

    def _known_files(self) -> list[tuple[str, int, int, str]]:
        """The indexed files' stat and hash, cached until the store changes."""
        generation = self.store.generation()
        if self._known is None or self._known[0] != generation:
            with self.store.reporting_damage():
                self._known = (generation, known_files(self.store.files()))
        return self._known[1]

    def refresh(self, max_files: int | None = None) -> Freshness:
        """Find indexed files changed on disk and re-index up to ``max_files`` of them
        (default ``refresh_max_files``) now: keyword index and graph, no embedding.
        Beyond the limit — or when the index cannot be written (another user's, a
        read-only mount) or another process is writing it — nothing is re-indexed and
        the changed files are reported ``stale``."""
        fresh = check(self.root, self._known_files())
        if fresh.paths:
            self._apply(fresh, max_files)
        return fresh

    def _apply(self, fresh: Freshness, max_files: int | None = None) -> None:
        paths = fresh.paths
        limit = self.config.freshness.refresh_max_files if max_files is None else max_files
        if len(paths) > limit:
            fresh.stale = paths
            fresh.reason = f"{len(paths)} changed files, over the limit of {limit}"
            return
        started = time.perf_counter()
        fresh.reason = self._refresh_paths(paths)
        self._known = None  # our own writes do not move the generation of our connection
        fresh.refresh_ms = round((time.perf_counter() - started) * 1000, 3)
        if fresh.reason:
            fresh.stale = paths
        else:
            fresh.refreshed = paths

    def _refresh_paths(self, paths: list[str]) -> str:
        """Re-index ``paths`` under the writer lock; "" when done, else why not."""
        from .run import Indexer  # the parse stage loads at the first change seen

        try:
            store = self.store.reopen_writable() if self.store.readonly else self.store
        except UserError as exc:  # a read-only folder, say
            return f"the index cannot be written here ({exc})"
        try:
            with ExitStack() as stack:
                try:
                    held = stack.enter_context(store.try_writer_lock())
                except PathError as exc:  # the lock file cannot be written here
                    return f"the index cannot be written here ({exc})"
                if not held:
                    return "another codecite process is writing the index"
                with store.reporting_damage():
                    Indexer(store, self.root, self.config, self.repo()).refresh(paths)
            return ""
        finally:
            if store is not self.store:
                store.close()


__all__ = ["Freshness", "Tracker", "changed_files", "check", "known_files"]
