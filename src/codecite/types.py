"""Typed values passed between pipeline stages.

Every stage is a function over these frozen records: the walker yields
:class:`SourceFile`, the chunker :class:`Chunk`, the graph extractor
:class:`FileFacts` (imports and references), the resolver :class:`Edge`.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

#: The index folder inside a repository (``PATH/.codecite``).
INDEX_DIRNAME = ".codecite"
#: Most results one query may ask for (``Index.search``, the CLI's ``-k``).
MAX_K = 1000
#: Definitions looked at when resolving a name (explain, MCP's symbol tools): all of
#: them are listed when the name is ambiguous.
SYMBOL_LIMIT = 50
#: Chunk kinds (docs/DESIGN.md section 3).
CHUNK_KINDS = (
    "function", "method", "class", "constant", "module", "section", "window", "file"
)  # fmt: skip
#: Kinds whose ``content`` is the file's lines verbatim (line numbers can be quoted and
#: touching ranges merged); class skeletons and module headers are not.
LINE_EXACT_KINDS = frozenset({"function", "method", "constant", "window", "file", "section"})
#: Edge kinds stored in the index (docs/DESIGN.md section 4); ``called_by`` is derived.
EDGE_KINDS = ("calls", "imports", "inherits", "tests")


def sha256_text(text: str) -> str:
    """Hex sha256 of a text, the hash used for content and files."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def make_chunk_id(repo: str, path: str, kind: str, qualname: str, content_hash: str) -> str:
    """Stable chunk id: the same code at the same place keeps its id across runs."""
    key = "\0".join((repo, path, kind, qualname, content_hash))
    return hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]


@dataclass(frozen=True)
class Chunk:
    """One natural unit of code with what is needed to read it alone."""

    id: str
    repo: str
    path: str
    language: str
    kind: str
    name: str
    qualname: str
    start_line: int
    end_line: int
    content: str
    context: str
    content_hash: str
    #: First line(s) of the definition up to the body (``def f(a, b) -> int:``).
    signature: str = ""
    #: Docstring or doc comment, cleaned of comment markers.
    docstring: str = ""
    #: Qualname of the enclosing class/namespace chain, "" at top level.
    parent: str = ""
    #: 1-based part number when a long function was split, else 0.
    part: int = 0


@dataclass(frozen=True)
class Import:
    """One import statement of a file, as written."""

    module: str
    #: Names brought into scope from the module ("cancel", "Order"); empty for a whole module.
    names: tuple[str, ...] = ()
    #: Local alias (``import numpy as np`` gives "np").
    alias: str = ""
    line: int = 0


@dataclass(frozen=True)
class Reference:
    """A use of a name inside a chunk: a call or a base class."""

    chunk_id: str
    #: The referenced identifier, last component ("cancel" in ``orders.cancel()``).
    name: str
    #: What stands before it ("orders", "self", "Order", ""), raw.
    qualifier: str = ""
    #: "call" or "inherit".
    kind: str = "call"
    line: int = 0


@dataclass(frozen=True)
class FileFacts:
    """What the graph extractor found in one file."""

    imports: tuple[Import, ...] = ()
    refs: tuple[Reference, ...] = ()


@dataclass(frozen=True)
class Definition:
    """A chunk seen as a named definition, input of the resolver."""

    chunk_id: str
    path: str
    language: str
    kind: str
    name: str
    qualname: str


@dataclass(frozen=True)
class Edge:
    """A directed edge between chunks. ``imports`` edges link files' chunks."""

    src: str
    dst: str
    kind: str
    #: For ``calls``: the line of the call site in the source file.
    line: int = 0


@dataclass(frozen=True)
class SourceFile:
    """A file the walker decided to index."""

    path: str  # POSIX, relative to the repository root
    abspath: str
    language: str
    size: int
    mtime_ns: int = 0
    git_blob: str = ""


@dataclass(frozen=True)
class Skipped:
    """A file the walker (or a later stage) did not index, and why."""

    path: str
    reason: str
    detail: str = ""


@dataclass
class ScrubResult:
    """Text with secrets redacted and the count of each kind replaced."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass
class IndexReport:
    """What an index run did (the CLI's summary table and ``index --json``)."""

    root: str
    index_dir: str
    dry_run: bool = False
    files_seen: int = 0
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    chunks_written: int = 0
    files_by_language: dict[str, int] = field(default_factory=dict)
    chunks_by_kind: dict[str, int] = field(default_factory=dict)
    secrets_redacted: dict[str, int] = field(default_factory=dict)
    fallback_files: list[str] = field(default_factory=list)
    edges_by_kind: dict[str, int] = field(default_factory=dict)
    embedder: str = ""
    embedded: int = 0
    #: ``embedded`` = ``embed_computed`` (by the model) + ``embed_from_cache`` (from the
    #: machine-wide embedding cache: another clone, branch or earlier version of the code).
    embed_computed: int = 0
    embed_from_cache: int = 0
    #: Chunks given the vector of a chunk with the same content already in this index
    #: (a moved file, an unchanged function of an edited file); not in ``embedded``.
    embed_reused: int = 0
    embed_pending: int = 0
    estimated_embed_seconds: float = 0.0
    #: The static tier (issue 15): its model, vectors computed, vectors reused by content.
    static_model: str = ""
    static_computed: int = 0
    static_reused: int = 0
    #: The pid of the background worker computing the model's vectors (0: none;
    #: ``codecite index`` without ``--wait``, issue 23).
    embed_worker: int = 0
    interrupted: bool = False
    #: The stage Ctrl-C stopped: ``parse`` or ``graph`` (the index is incomplete until a
    #: run completes), ``static`` or ``embed`` (files and graph complete).
    interrupted_in: str = ""
    #: Files in the index when the run was interrupted (of ``files_seen``).
    files_indexed: int = 0
    #: Whether the folder is a git repository (git decides which files are indexed).
    is_git: bool = False
    #: Every file was cut again: the index's chunks came from another chunker version
    #: or other chunking settings (:func:`codecite.chunking.chunking_key`).
    rechunked: bool = False
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def changed(self) -> int:
        return len(self.added) + len(self.modified) + len(self.deleted)

    def skipped_by_reason(self) -> dict[str, int]:
        return dict(Counter(s.reason for s in self.skipped).most_common())
