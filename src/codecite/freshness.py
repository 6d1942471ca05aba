"""Never answer from stale code (DESIGN.md §12): before a query, find the indexed files
that changed on disk — a ``stat`` of each (size + mtime), then the content hash of the
few whose stat differs (a touched but unchanged file is not a change) — so that the
caller can re-index them inline or mark their results stale. New files are not looked
for here (they cannot give a wrong answer; ``codecite index`` or watch mode adds them).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from .walk import file_digest


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


def changed_files(root: Path, known: dict[str, dict[str, object]]) -> tuple[list[str], list[str]]:
    """(changed, deleted) among the indexed files ``known`` (path → files-table row with
    ``size``, ``mtime_ns``, ``hash``) under ``root``."""
    changed: list[str] = []
    deleted: list[str] = []
    for path, row in known.items():
        full = os.path.join(root, path)
        try:
            st = os.stat(full)
        except FileNotFoundError:
            deleted.append(path)
            continue
        except OSError:
            continue  # unreadable now: the next `codecite index` will say so
        if st.st_size == row["size"] and st.st_mtime_ns == row["mtime_ns"]:
            continue
        try:
            if file_digest(full) != row["hash"]:
                changed.append(path)
        except OSError:
            deleted.append(path)
    return sorted(changed), sorted(deleted)


def check(root: Path, known: dict[str, dict[str, object]]) -> Freshness:
    started = time.perf_counter()
    changed, deleted = changed_files(root, known)
    return Freshness(changed, deleted, check_ms=round((time.perf_counter() - started) * 1000, 3))


__all__ = ["Freshness", "changed_files", "check"]
