"""Typed values of the query side: hits and results (filters: :mod:`codecite.filters`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..filters import Filters
from ..types import Chunk

if TYPE_CHECKING:
    from ..question.kinds import QueryInfo

#: Where a hit came from (docs/DESIGN.md section 8, ``source`` of a search result).
SOURCES = (
    "keyword",
    "vector",
    "hybrid",
    "graph:calls",
    "graph:called_by",
    "graph:imports",
    "graph:tests",
)


@dataclass(frozen=True)
class Hit:
    """One ranked result: a chunk, its score, and why it is here."""

    chunk: Chunk
    score: float
    source: str
    #: Human-readable reason ("keyword #1 + vector #3", "called by checkout").
    why: str = ""
    keyword_rank: int | None = None
    vector_rank: int | None = None
    #: For graph hits: the id of the chunk they were expanded from.
    via: str = ""
    #: Cosine similarity to the query, when vector search found it.
    similarity: float | None = None
    #: The file changed on disk since it was indexed (and was not re-indexed inline):
    #: the chunk may describe code that no longer exists.
    stale: bool = False

    def to_json(self, with_content: bool = True) -> dict[str, Any]:
        """The ``R`` object of ``search --json`` (docs/DESIGN.md section 8)."""
        c = self.chunk
        data: dict[str, Any] = {
            "path": c.path,
            "start_line": c.start_line,
            "end_line": c.end_line,
            "name": c.name,
            "qualname": c.qualname,
            "kind": c.kind,
            "language": c.language,
            "score": round(self.score, 6),
            "source": self.source,
            "why": self.why,
            "id": c.id,
            "repo": c.repo,
            "stale": self.stale,
        }
        if with_content:
            data["content"] = c.content
        return data


@dataclass
class FileHit:
    """One ranked file: its score (the evidence of its hits) and its best chunks."""

    path: str
    repo: str
    score: float
    hits: list[Hit] = field(default_factory=list)

    def to_json(self, with_content: bool = True) -> dict[str, Any]:
        return {
            "path": self.path,
            "repo": self.repo,
            "score": round(self.score, 6),
            "stale": any(h.stale for h in self.hits),
            "chunks": [h.to_json(with_content) for h in self.hits],
        }


@dataclass
class SearchResult:
    query: str
    intent: str
    hits: list[Hit] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: How the query was read (intent, identifiers); not part of the JSON.
    info: QueryInfo | None = field(default=None, compare=False, repr=False)
    #: Files changed on disk that were re-indexed just before this search.
    refreshed_files: list[str] = field(default_factory=list)
    #: Files changed on disk beyond the inline limit: their results carry ``stale``.
    stale_files: list[str] = field(default_factory=list)
    #: With ``search --files``: ranked files, each with its best chunks (``hits`` then
    #: holds those chunks, file by file).
    files: list[FileHit] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "query": self.query,
            "intent": self.intent,
            "results": [h.to_json() for h in self.hits],
            "refreshed_files": self.refreshed_files,
            "stale_files": self.stale_files,
        }
        if self.files is not None:
            data["files"] = [f.to_json() for f in self.files]
        return data


def mark_stale(hits: list[Hit], stale_paths: list[str]) -> list[Hit]:
    """``hits`` with ``stale`` set on those from the given files."""
    if not stale_paths:
        return hits
    stale = set(stale_paths)
    return [replace(h, stale=True) if h.chunk.path in stale else h for h in hits]


def mark_stale_result(result: SearchResult, stale_paths: list[str]) -> None:
    """``stale`` set on the result's hits (and its files' hits) from the given files."""
    result.hits = mark_stale(result.hits, stale_paths)
    for entry in result.files or ():
        entry.hits = mark_stale(entry.hits, stale_paths)


__all__ = ["SOURCES", "FileHit", "Filters", "Hit", "SearchResult", "mark_stale"]
