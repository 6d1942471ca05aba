"""Typed values passed between pipeline stages.

Every stage is a function over these frozen records: the walker yields
:class:`SourceFile`, the chunker :class:`Chunk`, the graph extractor
:class:`FileFacts` (imports and references), the resolver :class:`Edge`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

#: The index folder inside a repository (``PATH/.codecite``).
INDEX_DIRNAME = ".codecite"
#: Most results one query may ask for (``Index.search``, the CLI's ``-k``).
MAX_K = 1000
#: Chunk kinds (DESIGN.md section 3).
CHUNK_KINDS = ("function", "method", "class", "module", "section", "window", "file")
#: Kinds whose ``content`` is the file's lines verbatim (line numbers can be quoted and
#: touching ranges merged); class skeletons and module headers are not.
LINE_EXACT_KINDS = frozenset({"function", "method", "window", "file", "section"})
#: Edge kinds stored in the index (DESIGN.md section 4); ``called_by`` is derived.
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
