"""The narrow protocols between storage and the rest of codecite (docs/DESIGN.md §5).

Retrieval and answers read through :class:`ChunkReader`, :class:`GraphReader`,
:class:`KeywordIndex` and :class:`VectorSource` (together: :class:`ReadStore`); the
indexer writes through :class:`IndexWriter`. Every SQL and FTS5 text lives in the
backends (``sqlite.py``; a PostgreSQL backend implements the same protocols), so a new
backend plugs in without touching ``retrieve/`` or ``answer/``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple, Protocol, runtime_checkable

import numpy as np

from ..filters import Filters
from ..types import Chunk, Definition, Edge, Import, Reference

#: Relative weights of the symbol, path and body texts in keyword ranking.
KeywordWeights = tuple[float, float, float]

#: The two vector tiers (issue 15): ``static`` vectors (the sum of token vectors of the
#: shipped static code model, issue 24; thousands of chunks a second, built right
#: after the keyword index) and ``model`` vectors (the configured embedder; minutes).
#: Each tier is stored, counted, exported and searched on its own; models never mix
#: within a tier.
Tier = Literal["model", "static"]
TIERS: tuple[Tier, ...] = ("model", "static")


@dataclass(frozen=True)
class VectorRows:
    """Every stored vector with the chunk columns filters need, row-aligned. Rows are
    unit vectors (cosine similarity is their dot product with a unit query)."""

    ids: list[str]
    matrix: np.ndarray  # float32, (rows, dim); may be memory-mapped
    languages: list[str]
    kinds: list[str]
    paths: list[str]
    repos: list[str]


@runtime_checkable
class ChunkReader(Protocol):
    """Chunks by id or path, exact symbol look-ups, and index metadata."""

    def get_chunks(self, ids: Iterable[str]) -> dict[str, Chunk]: ...
    def chunks(self, path_prefix: str | None = None) -> Iterator[Chunk]:
        """Chunks ordered by path, start line, end line descending (a class before its
        methods); with ``path_prefix``, only that file or the files under that folder
        (exact, case-sensitive)."""
        ...

    def find_symbols(
        self, name: str, column: Literal["qualname", "name"], filters: Filters | None, limit: int
    ) -> list[str]:
        """Ids of chunks whose ``column`` (or qualname) is ``name``: definitions before
        module/window/file chunks, first parts first, shorter paths first."""
        ...

    def get_meta(self, key: str, default: str = "") -> str: ...


@runtime_checkable
class GraphReader(Protocol):
    """The code graph's edges."""

    def edges_from(self, chunk_id: str, kind: str | None = None) -> list[Edge]:
        """Edges leaving ``chunk_id``, ordered by (dst, kind): graph expansion scores a
        neighbour by its position, so every backend must give the same order."""
        ...

    def edges_to(self, chunk_id: str, kind: str | None = None) -> list[Edge]:
        """Edges into ``chunk_id``, ordered by (kind, src)."""
        ...

    def edges_among(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        """(src, dst) of every edge whose two ends are both in ``ids``."""
        ...


@runtime_checkable
class KeywordIndex(Protocol):
    """BM25 (k1 1.2, b 0.75, as SQLite FTS5) over the three identifier-split texts of
    :func:`codecite.identifiers.keyword_row`: symbol, path, body."""

    def keyword_search(
        self, terms: Sequence[str], filters: Filters | None, limit: int, weights: KeywordWeights
    ) -> list[str]:
        """Ids of chunks matching any of ``terms`` (OR), best BM25 first, at most
        ``limit`` (> 0). A term is a phrase of the tokens it splits into at ``_``/``$``;
        a column's term frequency counts ``weights[column]`` times; IDF is over the whole
        index, the filters only choose which chunks may be returned."""
        ...

    def document_count(self) -> int: ...
    def document_frequency(self, term: str) -> int:
        """Chunks whose texts hold ``term``, one token as :func:`codecite.identifiers.tokenize`
        yields it (a term that is not one stored token counts 0)."""
        ...


@runtime_checkable
class VectorSource(Protocol):
    """The stored chunk vectors."""

    def vector_count(self, tier: Tier = "model") -> int: ...
    def generation(self) -> int:
        """A number that changes whenever the store's content does, by another process
        (a re-index running beside a server) or by this one (an update through the same
        store): loaded vectors and term statistics are then reloaded."""
        ...

    def vector_rows(self, tier: Tier = "model") -> VectorRows | None:
        """All vectors of ``tier`` (None when there are none), as fresh as the store can
        give them: an index still embedding is searched with what it has so far."""
        ...


@runtime_checkable
class NearestVectors(Protocol):
    """A store that searches its vectors itself, through an approximate index
    (PostgreSQL's pgvector HNSW): a searcher then loads nothing (``vector_search``
    setting, docs/DESIGN.md §13)."""

    def vector_search(
        self,
        query: np.ndarray,
        filters: Filters | None = None,
        limit: int = 10,
        tier: Tier = "model",
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) of the nearest vectors of ``tier`` that the
        filters allow, best first."""
        ...


@runtime_checkable
class VectorCache(Protocol):
    """An embedding cache: (model name, sha256 of a text) → its vector. An optimisation
    only: on errors it logs a warning and behaves as empty (``enabled`` turns False)."""

    @property
    def enabled(self) -> bool: ...
    def get_many(self, model: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors of ``model`` for those ``keys`` that have one."""
        ...

    def put_many(self, model: str, items: Mapping[str, np.ndarray]) -> None:
        """Store vectors of ``model`` by key, in one transaction."""
        ...

    def count(self, model: str | None = None) -> int: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class FileSize:
    """How much indexed code one file holds: the map sizes its boxes by it."""

    path: str
    language: str
    chunks: int
    #: The last line any of its chunks covers (about the file's length).
    lines: int


class PathEdge(NamedTuple):
    """A graph edge with the files of its two ends and the place it stands on: the
    map reads the graph file by file, each arrow cited where its edges are. (A named
    tuple, not a frozen dataclass: a large repository has 100k+ of them, built 5x
    faster this way.)"""

    src_path: str
    dst_path: str
    kind: str
    #: The line of the call site or import statement (0: unknown; cite the source chunk).
    line: int
    src_start: int
    src_end: int
    src_qualname: str
    dst_qualname: str


def path_edge_order(e: PathEdge) -> tuple[str, int, str, str, int, str]:
    """The one order of :meth:`GraphOverview.path_edges` (code points, not a database's
    collation): an arrow's evidence is its first edges in it, on every backend."""
    return (e.src_path, e.line, e.dst_path, e.kind, e.src_start, e.dst_qualname)


@runtime_checkable
class GraphOverview(Protocol):
    """The whole graph at once, by file (``codecite map``): one query each, however
    big the repository."""

    def file_sizes(self) -> list[FileSize]:
        """Every file that has chunks, ordered by path (code points)."""
        ...

    def path_edges(self, kinds: Sequence[str]) -> list[PathEdge]:
        """Every edge of ``kinds`` whose two ends exist, in :func:`path_edge_order`."""
        ...


@runtime_checkable
class ReadStore(ChunkReader, GraphReader, KeywordIndex, VectorSource, Protocol):
    """Everything the query side reads."""


@runtime_checkable
class IndexWriter(ChunkReader, GraphReader, VectorSource, Protocol):
    """What the incremental indexer needs from a backend."""

    dir: Path

    # lifecycle
    def transaction(self) -> AbstractContextManager[object]: ...
    def writer_lock(
        self, on_wait: Callable[[str], None] | None = None
    ) -> AbstractContextManager[None]: ...
    def try_writer_lock(self) -> AbstractContextManager[bool]: ...
    def clear(self) -> None: ...
    def set_meta(self, values: dict[str, str]) -> None: ...
    def counts(self) -> dict[str, int]: ...
    def group_counts(self, table: str, column: str) -> dict[str, int]: ...
    # files and chunks
    def files(self) -> dict[str, dict[str, object]]: ...
    def put_file(
        self,
        path: str,
        language: str,
        digest: str,
        size: int,
        mtime_ns: int,
        git_blob: str,
        n_chunks: int,
        secrets: int,
    ) -> None: ...
    def touch_file(self, path: str, size: int, mtime_ns: int, git_blob: str) -> None: ...
    def delete_file(self, path: str, keep: Set[str] = frozenset()) -> None: ...
    def add_chunks(
        self,
        chunks: Sequence[Chunk],
        priorities: Sequence[float],
        keyword_rows: Sequence[tuple[str, str, str]] | None = None,
    ) -> None: ...
    def names_by_id(self, path: str) -> dict[str, str]: ...
    def chunk_ids_by_path(self, paths: Iterable[str]) -> list[str]: ...
    # graph
    def definitions(self) -> list[Definition]: ...
    def add_facts(
        self, path: str, imports: Sequence[Import], refs: Sequence[Reference]
    ) -> None: ...
    def imports_by_path(self) -> dict[str, list[Import]]: ...
    def refs_for(
        self,
        *,
        paths: Iterable[str] = (),
        names: Iterable[str] = (),
        srcs: Iterable[str] = (),
        all_refs: bool = False,
    ) -> list[tuple[str, Reference]]: ...
    def paths_pointing_to(self, ids: Iterable[str]) -> set[str]: ...
    def replace_edges(
        self, srcs: Iterable[str], edges: Iterable[Edge], kinds: Sequence[str]
    ) -> None: ...
    def prune_edges(self) -> int: ...
    # vectors
    def chunks_missing_vectors(self, limit: int, tier: Tier = "model") -> list[Chunk]:
        """Chunks with no vector of ``tier`` yet, highest priority first."""
        ...

    def count_missing_vectors(self, tier: Tier = "model") -> int: ...
    def reuse_vectors_by_content(self, tier: Tier = "model") -> int: ...
    def put_vectors(
        self, chunks: Sequence[Chunk], matrix: np.ndarray, tier: Tier = "model"
    ) -> None: ...
    def prune_vectors(self) -> int:
        """Delete vectors (of every tier) whose chunk is gone."""
        ...

    def clear_vectors(self, tier: Tier) -> None:
        """Delete every vector of ``tier`` (its model changed, or the tier is off)."""
        ...

    def export_vectors(self, dim: int, tier: Tier = "model") -> int:
        """Make the stored vectors of ``tier`` fast to load (SQLite: the ``vectors.npy``
        / ``static.npy`` snapshots)."""
        ...

    def embedding_cache(self) -> VectorCache | None:
        """The store's own embedding cache (PostgreSQL: a table shared by every worker
        and repository), or None: the indexer then uses the machine-wide cache file."""
        ...


@runtime_checkable
class Store(ReadStore, IndexWriter, GraphOverview, Protocol):
    """A whole backend as :class:`codecite.api.Index` holds it (SQLite or PostgreSQL):
    the read and write protocols plus the lifecycle the facade needs."""

    readonly: bool
    #: One store of many repositories, each found by name (PostgreSQL), rather than one
    #: index per folder (SQLite): an index run records the repository's name and root.
    shared: bool

    def close(self) -> None: ...
    def reporting_damage(self) -> AbstractContextManager[None]:
        """Turn the backend's "damaged"/"unreachable" errors into user errors."""
        ...

    def reopen_writable(self) -> Store:
        """The same index opened for writing (a read-only open's query-time refresh)."""
        ...
