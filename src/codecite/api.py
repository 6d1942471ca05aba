"""The public library surface: ``open_index(path)`` gives an :class:`Index` with
``update()``, ``chunks()``, ``status()``, ``search()``, ``ask()`` and
``ask_stream()``. The CLI, and later the server and MCP, are built on it alone.

The answer stage (with its HTTP client) and the index run (parsers, embedders) are
imported when first used, so that a ``codecite search`` in a new process loads only
the query pipeline (issue 23)."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Collection, Generator, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from .config import Config, load_config
from .errors import (
    IndexMissingError,
    NotIndexedFileError,
    PathError,
    UserError,
    WorkerStartError,
)
from .filetext import DEFAULT_MAX_LINES, FileLines, clean_path, display_lines, select
from .filters import Filters
from .index.freshness import Freshness, Tracker
from .picture.system import MAX_BOXES
from .progress import ProgressFn
from .retrieve import Searcher
from .retrieve.types import FileHit, Hit, SearchResult, mark_stale_result
from .store import Store, index_exists, is_shared_store, open_repository_store, open_store
from .store.protocols import TIERS, Tier
from .store.sqlite.base import OWN_FILES
from .types import INDEX_DIRNAME, MAX_K, Chunk, SourceFile
from .walk import file_changed, folder_prefix, git_changed_paths, walk

if TYPE_CHECKING:
    from .answer.answerer import Answer, Answerer, Draft
    from .answer.llm import LLM, LLMChoice
    from .explain import Explanation
    from .index.background import EmbeddingState
    from .picture.model import Neighbourhood, SystemMap
    from .types import IndexReport


def __getattr__(name: str) -> Any:
    """``Answer`` and ``LLMChoice`` (in ``__all__``), imported on first use."""
    if name == "Answer":
        from .answer.answerer import Answer

        return Answer
    if name == "LLMChoice":
        from .answer.llm import LLMChoice

        return LLMChoice
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


T = TypeVar("T")

__all__ = [
    "MAX_K",
    "Answer",
    "FileHit",
    "FileLines",
    "Filters",
    "Hit",
    "Index",
    "IndexStatus",
    "LLMChoice",
    "SearchResult",
    "find_index",
    "open_existing",
    "open_index",
]

#: Graph relations of :meth:`Index.related`: edge kind, and whether edges point *into* the chunk.
RELATIONS: dict[str, tuple[str, bool]] = {
    "callers": ("calls", True),
    "callees": ("calls", False),
    "tests": ("tests", True),
}


@dataclass
class IndexStatus:
    """Counts, model and staleness of an index (``codecite status``)."""

    root: str
    index_dir: str
    files: int
    chunks: int
    vectors: int
    edges: int
    embedder: str
    embedding_dim: int
    format_version: int
    indexed_commit: str
    head_commit: str
    files_by_language: dict[str, int] = field(default_factory=dict)
    chunks_by_kind: dict[str, int] = field(default_factory=dict)
    edges_by_kind: dict[str, int] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    #: The static vector tier (issue 15): vectors, model and width.
    static_vectors: int = 0
    static_model: str = ""
    static_dim: int = 0
    #: The background worker computing the model's vectors (issue 23):
    #: :meth:`codecite.index.background.EmbeddingState.to_json`; ``{}`` where none ever ran.
    background: dict[str, object] = field(default_factory=dict)
    #: "" when complete, else what :attr:`Index.incomplete` says.
    incomplete: str = ""

    @property
    def embedded_fraction(self) -> float:
        return self.vectors / self.chunks if self.chunks else 1.0

    @property
    def static_fraction(self) -> float:
        return self.static_vectors / self.chunks if self.chunks else 1.0

    def tiers(self) -> dict[str, dict[str, object]]:
        """Coverage of each vector tier: model, vectors, chunks, fraction."""
        return {
            "static": {
                "model": self.static_model,
                "vectors": self.static_vectors,
                "chunks": self.chunks,
                "fraction": self.static_fraction,
            },
            "model": {
                "model": self.embedder,
                "vectors": self.vectors,
                "chunks": self.chunks,
                "fraction": self.embedded_fraction,
            },
        }

    @property
    def stale_files(self) -> int:
        return len(self.added) + len(self.modified) + len(self.deleted)


def _root_of(path: str | Path) -> Path:
    root = Path(path).expanduser()
    if not root.exists():
        raise PathError(f"{path}: no such folder; give the path of a repository to index")
    if not root.is_dir():
        raise PathError(
            f"{path}: is a file, not a folder; give the repository folder "
            f"(use `codecite chunks {path}` to see how one file is cut)"
        )
    return root.resolve()


def find_index(start: str | Path = ".") -> Path | None:
    """The nearest ``.codecite`` folder holding an index, from ``start`` upwards."""
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        if index_exists(folder / INDEX_DIRNAME):
            return folder / INDEX_DIRNAME
    return None


class Index:
    """An index of one repository: a store plus the config it was opened with.

    Queries load the vectors and the query model once, on first use, and reuse them
    for every later ``search`` / ``ask`` on this object.
    """

    def __init__(self, root: Path, index_dir: Path, config: Config, store: Store) -> None:
        self.root, self.dir, self.config, self.store = root, index_dir, config, store
        self._searcher: Searcher | None = None
        self._answerer: Answerer | None = None
        self.freshness = Tracker(store, root, config, lambda: self.repo)

    # --- queries ---------------------------------------------------------------
    @property
    def searcher(self) -> Searcher:
        """The query pipeline over this index (created once)."""
        if self._searcher is None:
            self._searcher = Searcher(self.store, self.config, log_dir=self._log_dir())
        return self._searcher

    @property
    def answerer(self) -> Answerer:
        """Answers over this index (citations checked against the context and the files
        on disk), created once."""
        if self._answerer is None:
            from .answer.answerer import Answerer

            self._answerer = Answerer(self.searcher, log_dir=self._log_dir(), root=self.root)
        return self._answerer

    def _log_dir(self) -> Path | None:
        return self.dir if self.config.query_log else None

    def search(
        self,
        query: str,
        k: int = 10,
        filters: Filters | None = None,
        *,
        expand: bool | None = None,
        rerank: bool | None = None,
        budget: int | None = None,
        files: bool = False,
        tiers: Collection[Tier] = TIERS,
    ) -> SearchResult:
        """Ranked hits for ``query``: keyword + vector search fused, graph expansion and
        rerank (``None``: as the config says; both on by default), packed to ``budget``
        tokens when given. Build ``filters`` from user input with :meth:`Filters.parse`.
        With ``files``: the ``k`` best files in ``result.files``, each with its best
        chunks (``budget`` does not apply). ``tiers``: the vector tiers searched
        (``()``: keyword search only; ``("static",)``: as before the model's vectors)."""
        if not query.strip():
            raise UserError("the query is empty; say what to look for")
        if not 1 <= k <= MAX_K:
            raise UserError(f"k must be between 1 and {MAX_K}, got {k}")
        with self.store.reporting_damage():
            result, fresh = self.fresh(
                lambda: self.searcher.search(
                    query,
                    k=k,
                    filters=filters,
                    expand=expand,
                    rerank=rerank,
                    budget=budget,
                    files=files,
                    tiers=tiers,
                ),
                lambda found: (h.chunk.path for h in found.hits),
            )
        result.refreshed_files, result.stale_files = fresh.refreshed, fresh.stale
        mark_stale_result(result, fresh.stale)
        return result

    # --- freshness (see codecite.index.freshness.Tracker) -------------------------------------
    def fresh(
        self, run: Callable[[], T], paths_of: Callable[[T], Iterable[str]]
    ) -> tuple[T, Freshness]:
        """``run()`` (a search) with query-time freshness: :meth:`Tracker.fresh`."""
        return self.freshness.fresh(run, paths_of)

    def refresh(self, max_files: int | None = None) -> Freshness:
        """Find indexed files changed on disk and re-index up to ``max_files`` of them
        (default ``refresh_max_files``) now: :meth:`Tracker.refresh`."""
        return self.freshness.refresh(max_files)

    def ask(
        self,
        question: str,
        llm: str | LLM | LLMChoice | None = "auto",
        *,
        filters: Filters | None = None,
        on_token: Callable[[str], None] | None = None,
        lock: AbstractContextManager[Any] | None = None,
    ) -> Answer:
        """A grounded answer: every citation checked against the retrieved context.

        ``llm``: ``"auto"`` (a configured endpoint, else Ollama on localhost, else
        extractive), ``"extractive"`` (no model), ``"openai:MODEL"``, an :class:`LLM`,
        a :meth:`choose_llm` result, or None (extractive). ``on_token`` receives a
        generated answer as it streams. ``lock`` (a server's lock of this index) is
        held while the index is read, not while a model writes the answer.
        """
        from .answer.answerer import run_steps

        return run_steps(self._answer_steps(question, llm, filters, lock, on_token=on_token))

    def prepare_answer(
        self, question: str, choice: LLMChoice, *, filters: Filters | None = None
    ) -> Draft:
        """Retrieval and the confidence check of an answer, with query-time freshness
        (sources from stale files marked): a complete answer when no model is needed,
        else the prompt for :meth:`Answerer.generate` (which may run in another thread)."""
        if not question.strip():
            raise UserError("the question is empty")
        stale: list[str] = []

        def run() -> Draft:
            return self.answerer.prepare(
                question,
                llm=choice.llm,
                llm_reason=choice.reason,
                filters=filters,
                stale=stale,
            )

        with self.store.reporting_damage():
            draft, fresh = self.fresh(run, lambda made: (h.chunk.path for h in made.answer.sources))
            if fresh.stale:  # found while the first draft was made: mark its sources
                stale.extend(fresh.stale)
                draft = run()
        return draft

    def ask_stream(
        self,
        question: str,
        llm: str | LLM | LLMChoice | None = "auto",
        *,
        filters: Filters | None = None,
        lock: AbstractContextManager[Any] | None = None,
    ) -> Iterator[str | Answer]:
        """:meth:`ask`, streamed: the answer's pieces (``str``) as they arrive, then the
        checked :class:`Answer` as the last item (extractive answers come whole)."""
        answer = yield from self._answer_steps(question, llm, filters, lock, stream=True)
        yield answer

    def _answer_steps(
        self,
        question: str,
        llm: str | LLM | LLMChoice | None,
        filters: Filters | None,
        lock: AbstractContextManager[Any] | None,
        *,
        stream: bool = False,
        on_token: Callable[[str], None] | None = None,
    ) -> Generator[str, None, Answer]:
        """:func:`~codecite.answer.answerer.answer_steps` (the one ask driver) over this
        index: with query-time freshness, store damage reported, under ``lock``."""
        from .answer.answerer import answer_steps

        choice = self.choose_llm(llm)
        held = lock if lock is not None else nullcontext()
        with held:
            answerer = self.answerer

        @contextmanager
        def hold() -> Iterator[None]:
            with held, self.store.reporting_damage():
                yield

        return answer_steps(
            answerer,
            lambda: self.prepare_answer(question, choice, filters=filters),
            choice.llm,
            hold=hold,
            stream=stream,
            on_token=on_token,
        )

    def choose_llm(self, llm: str | LLM | LLMChoice | None = "auto") -> LLMChoice:
        """The answer mode for ``llm`` (see :meth:`ask`) and why it was chosen."""
        from .answer.llm import EXTRACTIVE, LLMChoice, resolve_llm

        if isinstance(llm, LLMChoice):
            return llm
        if llm is None:
            return LLMChoice(None, EXTRACTIVE, "asked for (no LLM)")
        if isinstance(llm, str):
            return resolve_llm(llm, self.config)
        return LLMChoice(llm, llm.name, "given")

    @property
    def indexed_commit(self) -> str:
        """The git commit the index was last built from ("" outside git)."""
        with self.store.reporting_damage():
            return self.store.get_meta("indexed_commit")

    @property
    def incomplete(self) -> str:
        """ "" when the last index run completed; else a sentence saying the index is
        incomplete (a run was interrupted or killed before its files and graph were
        committed: results may miss code) and what to do."""
        from .index.completeness import incomplete_note

        with self.store.reporting_damage():
            return incomplete_note(self.store)

    @property
    def repo(self) -> str:
        return self.config.repo_name or self.store.get_meta("repo") or self.root.name

    def update(
        self,
        *,
        full: bool = False,
        embed: bool = True,
        dry_run: bool = False,
        on_progress: ProgressFn | None = None,
        on_wait: Callable[[str], None] | None = None,
        background: bool = False,
    ) -> IndexReport:
        """Bring the index up to date with the files; only what changed is redone.

        One writer at a time: when another process is indexing into the same folder,
        ``on_wait(pid)`` is called and this waits for it, then does only what is left.
        ``background``: return once the keyword index, the graph and the static tier
        are committed, and leave the model's vectors to a detached worker process
        (``report.embed_worker`` is its pid; :meth:`embedding` shows its progress,
        :meth:`stop_embedding` stops it). Otherwise every vector is computed before
        this returns. A run that embeds or rebuilds first stops the background worker
        (it would compete), and a background run then starts a new one for what is left.
        """
        if self.store.readonly:
            raise UserError(
                f"{self.dir} was opened read-only; open it with `open_index(path)` to update it"
            )
        if getattr(multiprocessing.current_process(), "_inheriting", False):
            # A parse worker importing the caller's script again (no __main__ guard):
            # fail at once; waiting for the writer lock its parent holds would hang both.
            raise WorkerStartError(
                "codecite's parse worker is importing your script again: put the code that "
                'calls codecite under `if __name__ == "__main__":`'
            )
        from .index import background as worker
        from .index.run import Indexer

        background = background and embed and not dry_run and worker.supported()
        indexer = Indexer(self.store, self.root, self.config, self.repo, on_progress)
        with self.store.reporting_damage():
            if dry_run:
                return indexer.run(full=full, embed=embed, dry_run=True)
            if embed or full:  # before the writer lock: the worker takes it to write
                worker.stop_worker(self.dir)
            with self.store.writer_lock(on_wait):
                if self.store.shared:  # a repository of a shared store is found by name
                    with self.store.transaction():  # from any folder, even mid-run
                        self.store.set_meta({"repo": self.repo, "root": str(self.root)})
                report = indexer.run(full=full, embed=embed, background=background)
        if background and report.embed_pending:
            report.embed_worker = worker.start_worker(self.root, self.dir, self.config)
        return report

    def embedding(self) -> EmbeddingState:
        """The background worker computing this index's model vectors (``codecite
        index`` without ``--wait``): running or not, its progress, why it stopped."""
        from .index.background import read_state

        return read_state(self.dir)

    def stop_embedding(self) -> int:
        """Stop the background worker, if one runs (it stops after its batch in flight;
        what it committed stays, and the next background :meth:`update` resumes).
        Returns its pid, 0 when none ran."""
        from .index.background import stop_worker

        return stop_worker(self.dir)

    def read_lines(
        self,
        path: str,
        start: int | None = None,
        end: int | None = None,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        max_chars: int | None = None,
    ) -> FileLines:
        """Lines ``start``-``end`` (1-based, inclusive; default the whole file) of the
        indexed file ``path`` as it is on disk now, secrets redacted exactly as indexing
        redacted them: the one reader of file text for display (code views, citations,
        agents). A range longer than ``max_lines`` lines or ``max_chars`` characters is
        cut (``truncated``); ``end`` past the file's end is clamped to it.

        Raises :class:`~codecite.errors.NotIndexedFileError` for a path outside the
        repository or not indexed (absolute, ``..``, a folder, a skipped file, a symlink
        out) and :class:`~codecite.errors.LineRangeError` for a range that does not fit.
        """
        rel = clean_path(path)
        refused = NotIndexedFileError(
            f"{path!r} is not an indexed file of {self.repo}; give a repository-relative "
            "file path as in a citation (search finds files)"
        )
        if rel is None:
            raise refused
        language = self._indexed_language(rel)
        lines = display_lines(self.root, rel, self.config) if language is not None else None
        if language is None or lines is None:
            raise refused
        first, last, shown, cut = select(
            lines, start, end, path=rel, max_lines=max_lines, max_chars=max_chars
        )
        return FileLines(rel, first, last, shown, len(lines), cut, language)

    def _indexed_language(self, rel: str) -> str | None:
        """The language of the indexed file ``rel`` (None: not an indexed file; the
        store's ``chunks(path)`` also matches a folder prefix, only the exact path counts)."""
        with self.store.reporting_damage():
            chunks = self.store.chunks(rel)
            try:
                return next((c.language for c in chunks if c.path == rel), None)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()

    def chunks(self, path: str | None = None) -> Iterator[Chunk]:
        """Stored chunks ordered by path and line, optionally under a repo-relative path."""
        with self.store.reporting_damage():
            yield from self.store.chunks(path)

    def status(self) -> IndexStatus:
        with self.store.reporting_damage():
            return self._status()

    def _status(self) -> IndexStatus:
        counts = self.store.counts()
        meta = self.store.get_meta
        walked = walk(self.root, self.config)
        status = IndexStatus(
            root=str(self.root),
            index_dir=str(self.dir),
            files=counts["files"],
            chunks=counts["chunks"],
            vectors=counts["vectors"],
            edges=counts["edges"],
            embedder=meta("embedder"),
            embedding_dim=int(meta("embedding_dim", "0") or 0),
            static_vectors=counts.get("static_vectors", 0),
            static_model=meta("static_model"),
            static_dim=int(meta("static_dim", "0") or 0),
            format_version=int(meta("format_version", "0")),
            indexed_commit=meta("indexed_commit"),
            head_commit=walked.head_commit,
            files_by_language=self.store.group_counts("files", "language"),
            chunks_by_kind=self.store.group_counts("chunks", "kind"),
            edges_by_kind=self.store.group_counts("edges", "kind"),
        )
        worker = self.embedding()
        status.background = worker.to_json() if worker.state else {}
        status.incomplete = self.incomplete
        self._staleness(status, walked.files)
        return status

    def _staleness(self, status: IndexStatus, files: list[SourceFile]) -> None:
        known = self.store.files()
        prefix = folder_prefix(self.dir)
        current = {f.path: f for f in files if not f.abspath.startswith(prefix)}
        status.deleted = sorted(set(known) - set(current))
        for path, source in sorted(current.items()):
            old = known.get(path)
            if old is None:
                status.added.append(path)
            elif file_changed(source.abspath, source.size, source.mtime_ns, old):
                status.modified.append(path)

    # --- the code graph ------------------------------------------------------------
    def find_symbol(self, name: str, limit: int = 10) -> list[Chunk]:
        """Definitions named ``name``: by qualname (``Deal.close``) first, else by plain
        name (``close``: several when ambiguous), definitions before module chunks."""
        with self.store.reporting_damage():
            ids = self.store.find_symbols(name, "qualname", None, limit)
            ids = ids or self.store.find_symbols(name.rsplit(".", 1)[-1], "name", None, limit)
            found = self.store.get_chunks(ids)
            return [found[i] for i in ids if i in found]

    def related(self, chunk: Chunk, relation: str, limit: int = 50) -> list[tuple[Chunk, int]]:
        """Chunks linked to ``chunk`` in the code graph, with the line of the link:
        ``callers`` (who calls it), ``callees`` (what it calls), ``tests`` (tests that
        exercise it)."""
        if relation not in RELATIONS:
            raise UserError(f"unknown relation {relation!r}; choose from: {', '.join(RELATIONS)}")
        kind, incoming = RELATIONS[relation]
        with self.store.reporting_damage():
            edges = (
                self.store.edges_to(chunk.id, kind)
                if incoming
                else self.store.edges_from(chunk.id, kind)
            )[:limit]
            ids = [e.src if incoming else e.dst for e in edges]
            found = self.store.get_chunks(ids)
            return [(found[i], e.line) for i, e in zip(ids, edges, strict=True) if i in found]

    def definition_related(
        self, chunk: Chunk, relation: str, limit: int = 50
    ) -> list[tuple[Chunk, int]]:
        """As :meth:`related`, for the whole definition ``chunk`` belongs to, as a reader
        means it: every part of a long one and, for a class, what it holds. A class's
        ``callers`` are its construction sites and its methods' callers, its ``callees``
        what its methods call, its ``tests`` the tests of it and of its methods and the
        tests that construct it. Links inside the definition are left out; each chunk
        comes once (with the line of its first link), code before tests."""
        from .graph.neighbours import definition_links

        if relation not in RELATIONS:
            raise UserError(f"unknown relation {relation!r}; choose from: {', '.join(RELATIONS)}")
        kind, incoming = RELATIONS[relation]
        with self.store.reporting_damage():
            return definition_links(self.store, chunk, kind, incoming, limit)

    def explain(self, target: str, llm: str | LLM | LLMChoice | None = None) -> Explanation:
        """Documentation of one symbol, every statement cited ``path:start-end``:
        summary, parameters and return value, what it raises and returns early, what it
        calls, usage examples from its callers, its tests. ``target``: a qualname
        (``Deal.close``), a name (ambiguous: :class:`AmbiguousSymbolError` lists the
        candidates), ``path::qualname`` or ``path:line``. ``llm`` None (offline: built
        from the facts) or as for :meth:`ask` (a model writes the prose, its citations
        checked). See :mod:`codecite.explain`."""
        from .explain import explain

        return explain(self, target, llm=llm)

    def map(self, focus: str = "", max_boxes: int = MAX_BOXES, tests: bool = False) -> SystemMap:
        """The system map: the repository's parts (folders, files) as boxes sized by
        their code, and the imports and calls between them as arrows weighted by how
        many, each cited ``path:start-end``; at most ``max_boxes`` parts (deeper folders
        collapsed). ``focus`` opens one folder (a :class:`UserError` names the parts there
        are when it names none); the parts beyond it that its arrows reach are kept,
        marked ``outside``. Test files are left out unless ``tests``. The heaviest arrows
        (and each box's heaviest in and out) are marked ``drawn``; the JSON has them all.
        Render with :func:`codecite.draw_map`."""
        from .picture.system import system_map

        if not 2 <= max_boxes <= 200:
            raise UserError(f"max_boxes must be between 2 and 200, got {max_boxes}")
        with self.store.reporting_damage():
            return system_map(self.store, self.repo, focus, max_boxes, tests=tests)

    def neighbourhood(self, chunk: Chunk, hops: int = 2, impact: bool = False) -> Neighbourhood:
        """The neighbourhood of the definition ``chunk`` belongs to (every part of a long
        one; a class with its methods), as ``codecite explain`` draws it: its callers,
        what it calls, what it inherits from and its tests, ``hops`` (1 or 2) out.
        ``impact``: only what a change of it reaches (its callers, theirs, its tests), as
        a "what breaks if I change X" answer draws it. Render with
        :func:`codecite.draw_neighbourhood`."""
        from .explain.graph import members_of
        from .picture.neighbourhood import neighbourhood

        if hops not in (1, 2):
            raise UserError(f"hops must be 1 or 2, got {hops}")
        with self.store.reporting_damage():
            parts = [chunk]
            if chunk.part:
                key = (chunk.path, chunk.qualname, chunk.kind)
                found = [c for c in self.chunks(chunk.path) if (c.path, c.qualname, c.kind) == key]
                parts = sorted((c for c in found if c.part), key=lambda c: c.part) or parts
            members = [] if impact else members_of(self, parts[0])
            return neighbourhood(self.store, parts, members, hops=hops, impact=impact)

    def write_prose(self, explanation: Explanation, llm: LLM) -> None:
        """Have ``llm`` write the prose of an offline :meth:`explain` result from its facts
        and code, at most ``answer_max_tokens`` tokens, its citations checked (unverified
        ones flagged). Touches no store: a server runs it outside the repository's lock."""
        from .explain import write_prose

        write_prose(explanation, llm, max_tokens=self.config.answer.answer_max_tokens)

    def changed_since_commit(self) -> set[str] | None:
        commit = self.store.get_meta("indexed_commit")
        return git_changed_paths(self.root, commit) if commit else None

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_index(
    path: str | Path = ".",
    *,
    index_dir: str | Path | None = None,
    config: Config | None = None,
    create: bool = True,
    overrides: dict[str, object] | None = None,
    discard_damaged: bool = False,
) -> Index:
    """Open (or create) the index of the repository at ``path``.

    ``index_dir`` defaults to ``path/.codecite``. With ``create=False`` the index is
    opened read-only (queries; works on another user's index or a read-only mount)
    and a missing index raises :class:`IndexMissingError` with the command that builds
    one. ``discard_damaged`` replaces a damaged database by a new one (``index --full``).
    """
    root = _root_of(path)
    folder = Path(index_dir).expanduser().resolve() if index_dir else root / INDEX_DIRNAME
    cfg = config
    if cfg is None and is_shared_store(_store_setting(overrides)):
        cfg = load_config(root, overrides=overrides)  # a shared store needs the repo's name
    if cfg is None or not is_shared_store(cfg.store):  # the folder's own index, so far
        if not create and not index_exists(folder):
            raise IndexMissingError(f"no index at {folder}; build one with `codecite index {path}`")
        if create:
            _check_index_folder(folder)
        cfg = cfg or load_config(root, overrides=overrides)  # may name a shared store
    store = open_repository_store(
        cfg.store,
        cfg.repo_name or root.name,
        folder,
        create=create,
        readonly=not create,
        discard_damaged=discard_damaged,
    )
    return Index(root, folder, cfg, store)


def _store_setting(overrides: dict[str, object] | None) -> str:
    """The store chosen by an option or ``CODECITE_STORE`` (before a repository's
    config files are read)."""
    from_option = (overrides or {}).get("store")
    return str(from_option or os.environ.get("CODECITE_STORE", ""))


def _check_index_folder(folder: Path) -> None:
    """Refuse a folder that holds other files than an index's (``--index src``): the
    files inside an index folder are never indexed, and it must not get our .gitignore."""
    if folder.exists() and not folder.is_dir():
        raise PathError(f"{folder}: is a file; --index takes a folder for the index")
    if not folder.is_dir() or index_exists(folder):
        return
    foreign = sorted(
        p.name for p in folder.iterdir() if p.name not in OWN_FILES and ".tmp" not in p.name
    )
    if foreign:
        raise PathError(
            f"{folder}: this folder holds other files ({', '.join(foreign[:3])}"
            f"{', ...' if len(foreign) > 3 else ''}) and no codecite index; give --index an "
            "empty or new folder (files inside the index folder are never indexed)"
        )


def open_existing(
    index_dir: str | Path | None = None,
    start: str | Path = ".",
    overrides: dict[str, object] | None = None,
) -> Index:
    """Open an existing index read-only: ``index_dir`` if given, else the nearest one
    above ``start``. With a shared store (``--store URL`` / ``CODECITE_STORE``) the
    repository is the one named ``--repo-name`` (else the nearest index folder's
    repository), found from any folder: its root is recorded in the database."""
    if is_shared_store(_store_setting(overrides)) and not index_dir:
        return _open_shared(start, overrides or {})
    if index_dir:
        folder = Path(index_dir).expanduser().resolve()
        if not index_exists(folder):
            raise IndexMissingError(f"no index at {folder}; build one with `codecite index PATH`")
        store = open_store(folder, create=False, readonly=True)
        root = Path(store.get_meta("root") or folder.parent)
        store.close()
        return open_index(root, index_dir=folder, create=False, overrides=overrides)
    found = find_index(start)
    if found is None:
        raise IndexMissingError(
            f"no codecite index in {Path(start).resolve()} or its parents; "
            "build one with `codecite index PATH` or pass --index DIR"
        )
    return open_index(found.parent, index_dir=found, create=False, overrides=overrides)


def _open_shared(start: str | Path, overrides: dict[str, object]) -> Index:
    """A repository of the shared store, opened read-only from any folder."""
    url = _store_setting(overrides)
    name = str(overrides.get("repo_name") or os.environ.get("CODECITE_REPO_NAME", ""))
    if not name:
        found = find_index(start)
        name = found.parent.name if found else Path(start).resolve().name
    store = open_store(url, repo=name, readonly=True)
    try:
        recorded = store.get_meta("root")
    finally:
        store.close()
    root = Path(recorded) if recorded else None
    if root is None or not root.is_dir():
        raise PathError(
            f"repository {name!r} was indexed from {recorded or 'an unknown folder'}, which "
            "is not on this machine; pass its local path: `codecite search QUERY PATH`"
        )
    return open_index(root, create=False, overrides={**overrides, "repo_name": name})


def migrate_index(source: str | Path, url: str, repo_name: str | None = None) -> dict[str, object]:
    """Copy the SQLite index folder ``source`` (e.g. ``REPO/.codecite``) into the
    PostgreSQL store at ``url``, vectors included (nothing is re-embedded); the
    repository's rows there are replaced. Returns ``{"repo", "counts"}``."""
    from .store.copy import migrate

    report = migrate(Path(source).expanduser().resolve(), url, repo_name)
    return {"repo": report.repo, "counts": report.counts}


def migrate_state(source: str | Path, url: str) -> dict[str, int]:
    """Copy a server's SQLite state file (``codecite-state.db``: tokens and the audit
    log) into a PostgreSQL state database at ``url`` (``state = "postgresql://..."``):
    every token keeps working. Returns the counts (see ``StateTables.copy_into``)."""
    from .store import open_state_tables

    path = Path(source).expanduser().resolve()
    if not path.is_file():
        raise PathError(f"{path} is not a state database file (codecite-state.db)")
    if not is_shared_store(url):
        raise UserError(f"--to must be a postgresql:// URL, got {url!r}")
    with open_state_tables(path) as state, open_state_tables(url) as target:
        return state.copy_into(target)


def redact_url(url: str) -> str:
    """``url`` with its password hidden, for messages."""
    from .store.urls import redact

    return redact(url)
