"""The parse stage of indexing, run in worker processes: read, scrub, parse, chunk
and extract graph facts of each file. ``indexer.py`` wires it into the index run."""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from collections.abc import Generator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import partial

from ..chunking import chunk_file, parse
from ..chunking.grammars import is_code_language
from ..config import Config
from ..errors import WorkerStartError
from ..graph import extract_facts
from ..identifiers import keyword_row
from ..scrub import scrub
from ..types import Chunk, FileFacts, Skipped, SourceFile
from ..walk import MINIFIED_MAX_LINE, read_source
from .priority import chunk_priority

log = logging.getLogger(__name__)

#: Below this many files the parse stage runs in-process (a pool costs more).
MIN_FILES_FOR_POOL = 24
#: Files a worker processes per task (fewer round trips than one by one).
WORKER_BATCH = 8


@dataclass
class FileResult:
    """What a worker made of one file."""

    source: SourceFile
    digest: str
    unchanged: bool = False
    chunks: list[Chunk] = field(default_factory=list)
    facts: FileFacts = field(default_factory=FileFacts)
    secrets: dict[str, int] = field(default_factory=dict)
    fallback: bool = False
    #: Keyword-index rows and embedding priorities of the chunks, computed in the worker.
    keyword_rows: list[tuple[str, str, str]] = field(default_factory=list)
    priorities: list[float] = field(default_factory=list)


def process_file(
    source: SourceFile, known_digest: str, repo: str, config: Config
) -> FileResult | Skipped:
    """Read, scrub, parse, chunk and extract one file. Never raises for bad input."""
    read = read_source(source.abspath, source.path)
    if isinstance(read, Skipped):
        return Skipped(source.path, read.reason, read.detail)
    text, digest = read
    if digest == known_digest:
        return FileResult(source, digest, unchanged=True)
    language = source.language
    longest = max(map(len, text.split("\n")))
    if longest > MINIFIED_MAX_LINE:
        # The walker judged the file by its head; a long line further down (bundled or
        # minified code) would be stored once per definition on it: quadratic.
        if config.index.default_excludes:
            return Skipped(source.path, "minified", f"a line of {longest:,} characters")
        language = "text"  # line windows: each line is stored at most twice
    cleaned = scrub(text, config, path=source.path)
    result = FileResult(source, digest, secrets=dict(cleaned.counts))
    try:
        if is_code_language(language):
            tree = parse(cleaned.text, language)
            result.chunks = chunk_file(
                cleaned.text,
                path=source.path,
                language=language,
                repo=repo,
                config=config,
                tree=tree,
            )
            result.facts = extract_facts(
                tree, cleaned.text, language=language, path=source.path, chunks=result.chunks
            )
        else:
            result.chunks = chunk_file(
                cleaned.text, path=source.path, language=language, repo=repo, config=config
            )
    except Exception:  # a chunker bug must not stop indexing: fall back to windows
        log.exception("chunking %s failed; indexing it as line windows", source.path)
        result.chunks = chunk_file(
            cleaned.text, path=source.path, language="text", repo=repo, config=config
        )
        result.facts = FileFacts()
        result.fallback = True
    result.keyword_rows = [keyword_row(c) for c in result.chunks]
    result.priorities = [chunk_priority(c) for c in result.chunks]
    return result


def run_workers(
    items: Sequence[tuple[SourceFile, str]], repo: str, config: Config
) -> Generator[FileResult | Skipped, None, None]:
    """Process files on every core; results come in the order of ``items`` (the
    workers run ahead), so two builds of one tree write their chunks in the same order
    and rank tied hits alike. Close the generator when not reading it to the end: that
    shuts the pool down."""
    workers = config.index.workers or os.cpu_count() or 1
    if workers <= 1 or len(items) < MIN_FILES_FOR_POOL:
        for source, known in items:
            yield process_file(source, known, repo, config)
        return
    work = partial(_work_batch, repo, config)
    pool = ProcessPoolExecutor(workers, mp_context=_context(), initializer=_worker_init)
    try:
        futures = [
            pool.submit(work, items[i : i + WORKER_BATCH])
            for i in range(0, len(items), WORKER_BATCH)
        ]
        for future in futures:
            yield from future.result()
    except BrokenProcessPool:
        raise WorkerStartError(
            "the parse workers stopped before they could start. If you call codecite from a "
            'script, put that code under `if __name__ == "__main__":` (Python starts each '
            "worker by importing your script again)"
        ) from None
    finally:  # interrupted or done: never wait for batches nobody will read
        pool.shutdown(wait=True, cancel_futures=True)


def _work_batch(
    repo: str, config: Config, batch: Sequence[tuple[SourceFile, str]]
) -> list[FileResult | Skipped]:
    return [process_file(source, known, repo, config) for source, known in batch]


def _context() -> multiprocessing.context.BaseContext:
    """Workers start from a fork server: forking this process itself is unsafe once it
    has threads (a server's request threads, the embedding model's, a test run's), since
    a lock one of them held stays locked in the child for ever (seen: a worker hung in
    ``re.compile``). The server preloads the parse stage, so workers start fast."""
    if os.name != "posix":
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["codecite.index.parse"])
    return ctx


def _worker_init() -> None:
    """Ctrl-C reaches the whole process group: the parent decides what stops (and
    terminates the pool); a worker must not die half-way through a task. A worker
    whose parent died (``kill -9`` of ``codecite index``) exits at once: nobody will
    read its results, and while it lives the fork server and the resource tracker
    (which it holds open) live on too (issue 21 item 9)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None and parent.sentinel is not None:
        threading.Thread(
            target=_exit_with_parent, args=(parent.sentinel,), name="parent-watch", daemon=True
        ).start()


def _exit_with_parent(sentinel: int) -> None:
    """Block until the parent's end of the pipe closes (it exited, however), then exit."""
    multiprocessing.connection.wait([sentinel])
    os._exit(1)
