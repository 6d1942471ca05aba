"""The per-file part of indexing, run in worker processes: read, scrub,
parse, chunk and extract graph facts; plus the embedding order of chunks.
``indexer.py`` wires these into the incremental index run."""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .chunking import chunk_file, parse
from .chunking.grammars import is_code_language
from .config import Config
from .graph import extract_facts
from .graph.testmap import is_test_path
from .scrub import scrub
from .store.sqlite import keyword_row
from .types import Chunk, FileFacts, Skipped, SourceFile
from .walk import MINIFIED_MAX_LINE, read_source

log = logging.getLogger(__name__)

#: Files written per SQLite transaction in the parse stage.
FILES_PER_COMMIT = 200
#: Below this many files the parse stage runs in-process (a pool costs more).
MIN_FILES_FOR_POOL = 24

#: Embedding order: what a reader most likely asks about is embedded first.
KIND_PRIORITY = {
    "function": 3.0, "method": 3.0, "class": 2.5, "module": 1.5,
    "section": 1.5, "file": 1.0, "window": 0.5,
}
DOCUMENTED_BONUS = 1.0
PUBLIC_BONUS = 0.5
TEST_PENALTY = 1.0
#: Priority lost per 100 lines of chunk (long chunks embed less precisely).
LENGTH_PENALTY_PER_100_LINES = 0.5


@dataclass(frozen=True)
class Progress:
    """A progress event: the CLI draws it, the library only reports it."""

    stage: str  # "walk", "parse", "graph", "embed"
    done: int
    total: int
    detail: str = ""


ProgressFn = Callable[[Progress], None]


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


def chunk_priority(chunk: Chunk) -> float:
    """Embedding order of a chunk: small, public, documented symbols first."""
    score = KIND_PRIORITY.get(chunk.kind, 0.0)
    if chunk.docstring:
        score += DOCUMENTED_BONUS
    if chunk.name and not chunk.name.startswith("_"):
        score += PUBLIC_BONUS
    if is_test_path(chunk.path):
        score -= TEST_PENALTY
    lines = chunk.end_line - chunk.start_line + 1
    return score - LENGTH_PENALTY_PER_100_LINES * min(lines / 100.0, 2.0)


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
        if config.default_excludes:
            return Skipped(source.path, "minified", f"a line of {longest:,} characters")
        language = "text"  # line windows: each line is stored at most twice
    cleaned = scrub(text, config, path=source.path)
    result = FileResult(source, digest, secrets=dict(cleaned.counts))
    try:
        if is_code_language(language):
            tree = parse(cleaned.text, language)
            result.chunks = chunk_file(
                cleaned.text, path=source.path, language=language, repo=repo,
                config=config, tree=tree,
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


# Worker-process state, set once per process by the pool initializer.
_WORKER: dict[str, object] = {}


def _init_worker(repo: str, config: Config) -> None:
    _WORKER["repo"], _WORKER["config"] = repo, config


def _work(item: tuple[SourceFile, str]) -> FileResult | Skipped:
    source, known = item
    return process_file(source, known, str(_WORKER["repo"]), _WORKER["config"])  # type: ignore[arg-type]


def run_workers(
    items: Sequence[tuple[SourceFile, str]], repo: str, config: Config
) -> Iterator[FileResult | Skipped]:
    """Process files on every core; results arrive as they finish."""
    workers = config.workers or os.cpu_count() or 1
    if workers <= 1 or len(items) < MIN_FILES_FOR_POOL:
        for source, known in items:
            yield process_file(source, known, repo, config)
        return
    ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    with ctx.Pool(workers, initializer=_init_worker, initargs=(repo, config)) as pool:
        yield from pool.imap_unordered(_work, items, chunksize=8)


@dataclass
class Timer:
    """Wall time per stage, for the summary."""

    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, stage: str, started: float) -> None:
        self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - started


def folder_prefix(folder: Path) -> str:
    """``folder`` resolved, with a trailing separator: ``path.startswith(prefix)`` then
    tells whether a path under the (resolved) repository root lies inside it."""
    return os.path.join(str(folder.resolve()), "")
