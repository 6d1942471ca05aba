"""Whether an index is complete: an index run records in the index's metadata that it
has started changing files before it parses any, and clears the record once every file
and the graph are committed. An index whose run was interrupted (Ctrl-C) or killed
while parsing keeps the record, so every query can say that its results may miss code
until a run completes. The vector tiers are not part of it: they are filled in the
background and searches fuse whatever exists."""

from __future__ import annotations

import json
import time

from ..store.protocols import IndexWriter

#: The metadata key: ``{"files": N, "since": epoch seconds}`` while a run is unfinished.
INCOMPLETE_KEY = "incomplete"


def mark_incomplete(store: IndexWriter, files: int) -> None:
    """A run is about to change ``files`` files (one transaction)."""
    with store.transaction():
        store.set_meta({INCOMPLETE_KEY: json.dumps({"files": files, "since": time.time()})})


def mark_complete(store: IndexWriter) -> None:
    """Every file and the graph are committed (one transaction)."""
    with store.transaction():
        store.set_meta({INCOMPLETE_KEY: ""})


def incomplete_note(store: IndexWriter) -> str:
    """A sentence saying the index is incomplete and what to do; "" when complete."""
    raw = store.get_meta(INCOMPLETE_KEY)
    if not raw:
        return ""
    try:
        expected = int(json.loads(raw).get("files", 0))
    except (ValueError, TypeError, AttributeError):
        expected = 0
    have = store.counts()["files"]
    held = f" ({have:,} of {expected:,} files indexed)" if have < expected else ""
    return (
        f"this index is incomplete: an index run stopped before it finished{held}, so "
        "results may miss code; run `codecite index` to complete it"
    )
