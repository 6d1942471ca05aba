"""Retrieval across repositories (docs/DESIGN.md §11): each repository is searched on its
own, then one ranking is made of their rankings.

Scores of two indexes are not comparable (BM25 and fused ranks depend on each
corpus), so a repository's hits keep their share of its best score, scaled by how well
the repository as a whole answers the question (:func:`repo_relevance`): a question
about one repository is not filled with the best of the rest of the others.

The callers own the indexes: :func:`search_across` takes any objects with a ``search``
method (a :class:`codecite.Index`), and optionally a lock per repository held around
its search (a server's, whose SQLite connections are not for two threads at once).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..identifiers import tokenize
from ..question.kinds import QueryInfo, analyse
from ..question.terms import STOPWORDS
from .types import FileHit, Filters, Hit, SearchResult

#: Cosine similarity that unrelated code reaches anyway (unanswerable questions scored
#: 0.12-0.33 on the shop fixture): only the part above it counts as relevance.
SIMILARITY_FLOOR = 0.2
#: Relevance of a repository with nothing above the floor (its hits still rank, last).
MIN_RELEVANCE = 1e-3
#: Top hits whose text counts for the question-term coverage.
COVERAGE_HITS = 5


class Searchable(Protocol):
    """What :func:`search_across` needs of an index (:meth:`codecite.Index.search`)."""

    def search(
        self, query: str, k: int = ..., filters: Filters | None = ..., *, files: bool = ...
    ) -> SearchResult: ...


@dataclass(frozen=True)
class RepoHit:
    """A hit of a multi-repository search: the repository it comes from and its fused score."""

    repo: str
    hit: Hit
    score: float

    def to_json(self, with_content: bool = True) -> dict[str, object]:
        data = self.hit.to_json(with_content)
        data["repo"], data["score"] = self.repo, round(self.score, 6)
        return data


def retrieval_signals(info: QueryInfo, hits: Sequence[Hit]) -> dict[str, float]:
    """Retrieval signals of a search: the best cosine similarity of a hit, and the
    share of the question's terms that occur in the top hits (comparable across
    repositories searched with one model)."""
    terms = {t for t in tokenize(info.text) if t not in STOPWORDS and len(t) > 2}
    seen: set[str] = set()
    for hit in hits[:COVERAGE_HITS]:
        c = hit.chunk
        seen.update(tokenize(f"{c.path} {c.qualname} {c.docstring} {c.content}"))
    similarity = max((h.similarity for h in hits if h.similarity is not None), default=0.0)
    coverage = len(terms & seen) / len(terms) if terms else 0.0
    return {"similarity": round(similarity, 4), "coverage": round(coverage, 4)}


def repo_relevance(result: SearchResult) -> float:
    """How well a repository's hits answer the question, comparable across
    repositories (one model, one question): the best cosine similarity above
    :data:`SIMILARITY_FLOOR`, times one plus the share of the question's terms found in
    its top hits (measured on three repositories, see the closing note of issue 9)."""
    info = result.info or analyse(result.query)
    signals = retrieval_signals(info, result.hits)
    above = max(MIN_RELEVANCE, signals["similarity"] - SIMILARITY_FLOOR)
    return above * (1.0 + signals["coverage"])


def fuse_repos(results: Mapping[str, SearchResult], k: int) -> list[RepoHit]:
    """One ranking from several repositories' rankings. Within a repository a hit keeps
    its share of that repository's best score; across repositories that share is
    scaled by the repository's relevance to the question."""
    scored: list[RepoHit] = []
    for repo, result in results.items():
        if not result.hits:
            continue
        top = max(h.score for h in result.hits) or 1.0
        weight = repo_relevance(result)
        scored += [RepoHit(repo, h, weight * h.score / top) for h in result.hits]
    scored.sort(key=lambda r: -r.score)
    return scored[:k]


def fuse_files(files: Mapping[str, Sequence[FileHit]], k: int) -> list[FileHit]:
    """The ``k`` best files of several repositories' file rankings, each naming its
    ``repo``, by score."""
    found = [replace(f, repo=repo) for repo, ranked in files.items() for f in ranked]
    return sorted(found, key=lambda f: -f.score)[:k]


def _held(locks: Mapping[str, AbstractContextManager[Any]] | None, repo: str) -> Any:
    return locks[repo] if locks is not None else nullcontext()


def search_across(
    indexes: Mapping[str, Searchable],
    query: str,
    *,
    k: int = 10,
    filters: Filters | None = None,
    locks: Mapping[str, AbstractContextManager[Any]] | None = None,
) -> list[RepoHit]:
    """The ``k`` best hits of ``query`` over several repositories (name → index), in
    one ranking (:func:`fuse_repos`). ``locks``: name → a lock held around that
    repository's search. The caller decides which repositories may be read."""
    results: dict[str, SearchResult] = {}
    for name, index in indexes.items():
        with _held(locks, name):
            results[name] = index.search(query, k=k, filters=filters)
    return fuse_repos(results, k)


def search_files_across(
    indexes: Mapping[str, Searchable],
    query: str,
    *,
    k: int = 10,
    filters: Filters | None = None,
    locks: Mapping[str, AbstractContextManager[Any]] | None = None,
) -> list[FileHit]:
    """The ``k`` best files of ``query`` over several repositories (each names its
    ``repo``), each with its best chunks; ``locks`` as for :func:`search_across`."""
    files: dict[str, list[FileHit]] = {}
    for name, index in indexes.items():
        with _held(locks, name):
            files[name] = index.search(query, k=k, filters=filters, files=True).files or []
    return fuse_files(files, k)
