"""The query log: one JSON line per search or answer in ``<index>/queries.jsonl``
(``query_log`` in codecite.toml), questions and answers scrubbed of secrets first.

A read-only index still answers; that its log cannot be written is said once per
folder and process (a batch, ``codecite mcp`` or a library caller searching it many
times is told once, not at every search)."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

from ..scrub import scrub_text

log = logging.getLogger("codecite.retrieve.search")  # where its messages always came from

QUERY_LOG = "queries.jsonl"
#: Free-text fields of a query-log record that may hold what a user typed.
LOGGED_TEXT = ("query", "answer")

#: Folders this process could not append a record to (warned about once each).
_unwritable: set[Path] = set()
_lock = threading.Lock()


def append_query_log(folder: Path, record: dict[str, object]) -> None:
    """Append one record (with the time) to ``folder/queries.jsonl``, secrets in the
    question and answer redacted (a token pasted into a question must not be kept); a
    read-only index still answers, with one warning per folder and process."""
    clean = {
        key: scrub_text(value) if key in LOGGED_TEXT and isinstance(value, str) else value
        for key, value in record.items()
    }
    try:
        with (folder / QUERY_LOG).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"time": time.time(), **clean}) + "\n")
    except OSError as exc:
        with _lock:
            first = folder not in _unwritable
            _unwritable.add(folder)
        if first:
            log.warning(
                "cannot append to the query log %s (%s); searches go on without it. Make "
                "the folder writable, or set query_log = false in codecite.toml (said once)",
                folder / QUERY_LOG,
                exc.strerror or exc,
            )
        else:
            log.debug("cannot append to the query log %s: %s", folder / QUERY_LOG, exc)
