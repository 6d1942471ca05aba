"""Incremental orchestration of the index flow:

    walk ─► detect changes ─► (read, scrub, parse, chunk, extract) on every
    core ─► store in batches ─► resolve graph ─► embed, most useful first

Only wiring lives here. The keyword index and the graph are committed before
any vector is computed, so the repository is searchable at once; vectors follow
in committed batches, and an interrupted run resumes where it stopped. A file's
row in ``files`` is written in the same transaction as its chunks, so a crash
never leaves a half-indexed file that looks complete: the next run redoes it.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

from ..chunking import chunking_key
from ..config import Config
from ..embed import EMBED_TEXT_VERSION, Embedder, get_embedder
from ..errors import Interrupted, ModelMismatchError
from ..graph.resolve import GRAPH_VERSION, Resolver, dedupe
from ..progress import Progress, ProgressFn, Timer
from ..store.protocols import IndexWriter
from ..types import EDGE_KINDS, IndexReport, Skipped, SourceFile
from ..walk import WalkResult, folder_prefix, same_stat, walk, walk_paths
from .completeness import mark_complete, mark_incomplete
from .model_stage import ModelCounts, fill_model_tier, model_meta, prepare_model_tier
from .parse import FileResult, run_workers
from .static_stage import refresh_static_tier, update_static_tier

log = logging.getLogger(__name__)

#: Chunks/s of the default model on 2 idle cores, for --dry-run estimates: the float model
#: ran ~20/s (bench/index_bench.py); the quantized one at 128 tokens uses ~1/4 of the CPU
#: time per chunk (bench/embed_bench.py), so ~60/s with some margin.
ESTIMATED_CHUNKS_PER_SECOND = 60.0
#: Files written per transaction in the parse stage.
FILES_PER_COMMIT = 200
#: The metadata key recording which resolver drew the index's edges.
GRAPH_KEY = "graph_version"


class Indexer:
    """One incremental run over a repository into a store."""

    def __init__(
        self,
        store: IndexWriter,
        root: Path,
        config: Config,
        repo: str,
        on_progress: ProgressFn | None = None,
    ) -> None:
        self.store, self.root, self.config, self.repo = store, root, config, repo
        self.progress: ProgressFn = on_progress or (lambda _event: None)
        self.timer = Timer()
        #: The stage running now (``report.interrupted_in`` when Ctrl-C stops it).
        self._stage = "walk"
        self._index_prefix = folder_prefix(store.dir)

    # --- the run -------------------------------------------------------------
    def run(
        self,
        *,
        full: bool = False,
        embed: bool = True,
        dry_run: bool = False,
        background: bool = False,
    ) -> IndexReport:
        """One run. ``background``: the model tier is left to a background worker
        (:mod:`codecite.index.background`): its model is recorded and vectors are reused by
        content, but nothing is embedded here."""
        report = IndexReport(str(self.root), str(self.store.dir), dry_run=dry_run)
        embedder = get_embedder(self.config.embed.embedder, self.config) if embed else None
        if embedder is not None and not full:
            self._check_model(embedder.name)
        if full and not dry_run:
            self._clear()
        started = time.perf_counter()
        walked = walk(self.root, self.config)
        files = [f for f in walked.files if not self._inside_index(f)]
        self.timer.add("walk", started)
        report.files_seen, report.skipped = len(files), list(walked.skipped)
        report.is_git = walked.is_git
        if dry_run:
            report.files_by_language = dict(Counter(f.language for f in files).most_common())
        self._stage = "parse"
        try:
            if not dry_run:  # until the files and the graph are committed
                mark_incomplete(self.store, len(files))
            self._update_files(files, report, dry_run)
            if not dry_run:
                # every file is cut by this chunker now: a run stopped later (embedding)
                # leaves nothing to cut again
                with self.store.transaction():
                    self.store.set_meta({"chunking": chunking_key(self.config)})
                self._stage = "graph"
                self._finish_graph(report)
                mark_complete(self.store)
                self._stage = "static"
                if embedder is not None:
                    self._static_tier(report)
                    if background:
                        report.embed_reused = prepare_model_tier(self.store, embedder, self.config)
                    else:
                        self._stage = "embed"
                        self._embed(embedder, report)
                else:  # builds no tier, but keeps an existing static tier whole (ms):
                    # a watched save is then found by meaning as well as by name
                    report.static_computed = refresh_static_tier(self.store, self.config)
                self._write_meta(walked, embedder)
            else:
                self._estimate(report, embedder)
        except KeyboardInterrupt:
            report.interrupted, report.interrupted_in = True, self._stage
            self._finish_interrupted(report, embedder)
            raise Interrupted(report) from None
        finally:
            report.seconds = dict(self.timer.seconds)
        self._summarise(report)
        return report

    def refresh(self, paths: Iterable[str]) -> IndexReport:
        """Re-index just ``paths`` (changed, added or deleted files): their chunks, keyword
        rows, graph edges and static vectors; no model embedding (at the next full run) and
        no new indexed commit. The query-time freshness check calls this inline."""
        wanted = sorted(set(paths))
        report = IndexReport(str(self.root), str(self.store.dir))
        started = time.perf_counter()
        walked = walk_paths(self.root, self.config, wanted)
        files = [f for f in walked.files if not self._inside_index(f)]
        self.timer.add("walk", started)
        report.files_seen, report.skipped = len(files), list(walked.skipped)
        try:
            self._update_files(files, report, False, scope=set(wanted))
            self._finish_graph(report)
            report.static_computed = refresh_static_tier(self.store, self.config)
        finally:
            report.seconds = dict(self.timer.seconds)
        return report

    def _inside_index(self, source: SourceFile) -> bool:
        """Is the file inside the index folder? (Paths under the resolved root.)"""
        return source.abspath.startswith(self._index_prefix)

    def _check_model(self, name: str) -> None:
        built = self.store.get_meta("embedder")
        # Indexes from before the version was recorded embedded text version 1.
        built_text = self.store.get_meta("embedding_text_version") or "1"
        has_vectors = self.store.counts()["vectors"] > 0
        text = str(EMBED_TEXT_VERSION)
        if built and (built, built_text) != (name, text) and has_vectors:
            raise ModelMismatchError(
                f"index built with {built} (embedding text v{built_text}); run "
                f"`codecite index --full` to rebuild with {name} (embedding text v{text})"
            )

    def _clear(self) -> None:
        self.store.clear()

    # --- files ---------------------------------------------------------------
    def _update_files(
        self,
        files: list[SourceFile],
        report: IndexReport,
        dry_run: bool,
        scope: set[str] | None = None,
    ) -> None:
        """Bring ``files`` up to date; indexed files missing from them are deleted (only
        those in ``scope`` when given: a refresh of some paths)."""
        started = time.perf_counter()
        known = self.store.files()
        current = {f.path for f in files}
        candidates = known if scope is None else [p for p in scope if p in known]
        report.deleted = sorted(p for p in candidates if p not in current)
        todo: list[tuple[SourceFile, str]] = []
        # files cut by another chunker (version or settings) are cut again, all of them
        rechunk = scope is None and bool(known) and self._chunked_otherwise()
        report.rechunked = rechunk
        for source in files:
            old = known.get(source.path)
            if rechunk:
                todo.append((source, ""))
            elif old and same_stat(source.size, source.mtime_ns, old["size"], old["mtime_ns"]):
                report.unchanged += 1
            else:
                todo.append((source, str(old["hash"]) if old else ""))
        # What the graph must redo: names of chunks that appear or disappear, and the
        # files with edges into chunks that disappear (filled as files are written).
        self._affected_names: set[str] = set()
        self._dependents: set[str] = set()
        if report.deleted and not dry_run:
            with self.store.transaction():
                for path in report.deleted:
                    self._forget(path, {})
        self._process(todo, known, report, dry_run)
        self.timer.add("parse", started)

    def _chunked_otherwise(self) -> bool:
        """Whether the index's chunks were cut by another chunker than this run's (an
        index from before the key was recorded counts as cut otherwise)."""
        return self.store.get_meta("chunking") != chunking_key(self.config)

    def _process(
        self,
        todo: list[tuple[SourceFile, str]],
        known: dict[str, dict[str, object]],
        report: IndexReport,
        dry_run: bool,
    ) -> None:
        #: Parsed files to write, and indexed files now skipped (their rows go).
        batch: list[FileResult | Skipped] = []
        self.progress(Progress("parse", 0, len(todo)))
        # closing(): a failed write stops the workers now, not when the generator is
        # collected (an exception's traceback keeps it, and its pool, alive).
        with closing(run_workers(todo, self.repo, self.config)) as results:
            for done, result in enumerate(results, start=1):
                if isinstance(result, Skipped):
                    report.skipped.append(result)
                    if result.path in known:
                        report.deleted.append(result.path)
                        batch.append(result)
                elif result.unchanged:
                    report.unchanged += 1
                    batch.append(result)
                else:
                    (report.modified if result.source.path in known else report.added).append(
                        result.source.path
                    )
                    batch.append(result)
                if len(batch) >= FILES_PER_COMMIT:
                    self._write(batch, report, dry_run)
                    batch = []
                self.progress(
                    Progress(
                        "parse",
                        done,
                        len(todo),
                        result.path if isinstance(result, Skipped) else result.source.path,
                    )
                )
        self._write(batch, report, dry_run)

    def _write(self, batch: list[FileResult | Skipped], report: IndexReport, dry_run: bool) -> None:
        for result in batch:
            if isinstance(result, Skipped):
                continue
            if result.fallback:
                report.fallback_files.append(result.source.path)
            for kind, n in result.secrets.items():
                report.secrets_redacted[kind] = report.secrets_redacted.get(kind, 0) + n
            report.chunks_written += len(result.chunks)
            if dry_run:
                for chunk in result.chunks:
                    kinds = report.chunks_by_kind
                    kinds[chunk.kind] = kinds.get(chunk.kind, 0) + 1
        if dry_run or not batch:
            return
        with self.store.transaction():
            for result in batch:
                self._write_one(result)

    def _forget(self, path: str, new: dict[str, str]) -> None:
        """Delete a file's rows before its new version (``new``: id → name) is written,
        noting which names and dependent files the graph must re-resolve."""
        old = self.store.names_by_id(path)
        gone = {i: n for i, n in old.items() if i not in new}
        self._affected_names |= set(gone.values())
        self._affected_names |= {n for i, n in new.items() if i not in old}
        self._dependents |= self.store.paths_pointing_to(gone)
        self.store.delete_file(path, keep=set(old) & set(new))

    def _write_one(self, result: FileResult | Skipped) -> None:
        if isinstance(result, Skipped):  # a previously indexed file that is now skipped
            self._forget(result.path, {})
            return
        src = result.source
        if result.unchanged:
            self.store.touch_file(src.path, src.size, src.mtime_ns, src.git_blob)
            return
        self._forget(src.path, {c.id: c.name for c in result.chunks})
        self.store.add_chunks(result.chunks, result.priorities, result.keyword_rows)
        self.store.add_facts(src.path, result.facts.imports, result.facts.refs)
        self.store.put_file(
            src.path,
            src.language,
            result.digest,
            src.size,
            src.mtime_ns,
            src.git_blob,
            len(result.chunks),
            sum(result.secrets.values()),
        )

    # --- graph ---------------------------------------------------------------
    def _finish_graph(self, report: IndexReport) -> None:
        changed = report.added + report.modified
        # an index whose edges an older resolver drew: every edge is drawn again
        stale = self.store.get_meta(GRAPH_KEY) != str(GRAPH_VERSION)
        if not (changed or report.deleted or stale):
            return
        started = time.perf_counter()
        self.progress(Progress("graph", 0, 1))
        full = bool(report.added or report.deleted or stale)
        if full:  # the set of files changed: imports and names may resolve differently
            paths = set(self.store.files())
        else:  # files that changed, and files referring to names they define(d)
            names = {n for n in self._affected_names if n}
            paths = (
                set(changed)
                | (self._dependents & set(self.store.files()))
                | {p for p, _ in self.store.refs_for(names=names)}
            )
        refs = self.store.refs_for(all_refs=True) if full else self.store.refs_for(paths=paths)
        srcs = set(self.store.chunk_ids_by_path(paths))
        resolver = Resolver(self.store.definitions(), self.store.imports_by_path())
        edges = dedupe(
            [
                *resolver.ref_edges(refs),
                *resolver.import_edges(None if full else paths),
                *resolver.convention_edges(None if full else paths),
            ]
        )
        with self.store.transaction():
            self.store.replace_edges(srcs, edges, EDGE_KINDS)
            self.store.prune_edges()
            self.store.set_meta({GRAPH_KEY: str(GRAPH_VERSION)})
        self.timer.add("graph", started)
        self.progress(Progress("graph", 1, 1))

    # --- vectors -------------------------------------------------------------
    def _embed(self, embedder: Embedder, report: IndexReport) -> None:
        """The model tier, in this run (the caller holds the writer lock)."""
        started = time.perf_counter()
        report.embed_reused = prepare_model_tier(self.store, embedder, self.config)
        counts = ModelCounts()
        try:
            fill_model_tier(self.store, embedder, self.config, counts, self.progress)
        finally:
            report.embedded = counts.embedded
            report.embed_computed, report.embed_from_cache = counts.computed, counts.from_cache
            self.timer.add("embed", started)
        self.store.export_vectors(embedder.dim)

    def _static_tier(self, report: IndexReport) -> None:
        started = time.perf_counter()
        done = update_static_tier(self.store, self.config, self.progress)
        report.static_computed, report.static_reused = done.computed, done.reused
        self.timer.add("static", started)

    def _finish_interrupted(self, report: IndexReport, embedder: Embedder | None) -> None:
        """Keep what was committed usable: vectors snapshot and metadata."""
        try:
            if embedder is not None and not report.dry_run:
                self.store.export_vectors(embedder.dim)
            report.embed_pending = self.store.count_missing_vectors()
            report.files_indexed = self.store.counts()["files"]
        except Exception:  # pragma: no cover - best effort on the way out
            log.exception("could not save the vectors snapshot after an interrupt")

    def _estimate(self, report: IndexReport, embedder: Embedder | None) -> None:
        pending = report.chunks_written + self.store.count_missing_vectors()
        report.embed_pending = pending if embedder is not None else 0
        report.estimated_embed_seconds = report.embed_pending / ESTIMATED_CHUNKS_PER_SECOND

    def _write_meta(self, walked: WalkResult, embedder: Embedder | None) -> None:
        values = {
            "repo": self.repo,
            "root": str(self.root),
            "indexed_commit": walked.head_commit,
            "is_git": "1" if walked.is_git else "0",
            "updated_at": str(time.time()),
        }
        if embedder is not None:
            values.update(model_meta(embedder, self.config))
        with self.store.transaction():
            self.store.set_meta(values)

    def _summarise(self, report: IndexReport) -> None:
        if report.dry_run:
            return
        report.files_by_language = self.store.group_counts("files", "language")
        report.chunks_by_kind = self.store.group_counts("chunks", "kind")
        report.edges_by_kind = self.store.group_counts("edges", "kind")
        report.embed_pending = self.store.count_missing_vectors()
        report.embedder = self.store.get_meta("embedder")
        report.static_model = self.store.get_meta("static_model")
