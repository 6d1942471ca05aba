"""Typed values of the query side: filters, options, hits, results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..types import Chunk

#: Where a hit came from (DESIGN.md section 8, ``source`` of a search result).
SOURCES = ("keyword", "vector", "hybrid", "graph:calls", "graph:called_by", "graph:imports",
           "graph:tests")


@dataclass(frozen=True)
class Filters:
    """Metadata filters applied inside both searches, not after."""

    languages: tuple[str, ...] = ()
    #: fnmatch-style glob on the repository-relative path (``src/**``, ``*.py``).
    path: str = ""
    kinds: tuple[str, ...] = ()
    repo: str = ""

    def __bool__(self) -> bool:
        return bool(self.languages or self.path or self.kinds or self.repo)


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

    def to_json(self, with_content: bool = True) -> dict[str, Any]:
        """The ``R`` object of ``search --json`` (DESIGN.md section 8)."""
        c = self.chunk
        data: dict[str, Any] = {
            "path": c.path, "start_line": c.start_line, "end_line": c.end_line,
            "name": c.name, "qualname": c.qualname, "kind": c.kind, "language": c.language,
            "score": round(self.score, 6), "source": self.source, "why": self.why,
            "id": c.id, "repo": c.repo,
        }
        if with_content:
            data["content"] = c.content
        return data


@dataclass
class SearchResult:
    query: str
    intent: str
    hits: list[Hit] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "intent": self.intent,
                "results": [h.to_json() for h in self.hits]}
