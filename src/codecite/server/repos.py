"""The repositories a server (or an MCP session) answers from: each opened read-only
once, on first use, through the public API (:func:`codecite.open_index`), its models
and vectors kept loaded. SQLite connections are not for two threads at once, so each
repository has a lock; a generated answer's slow model call runs outside it
(:meth:`Answerer.prepare` / ``generate`` / ``finish``).

Searching several repositories fuses their rankings into one (:func:`fuse_repos`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

from .. import index_exists
from ..answer.answerer import Answer, retrieval_signals
from ..answer.llm import LLMChoice
from ..api import Index, open_index
from ..errors import IndexMissingError
from ..filters import Filters
from ..retrieve.intent import analyse
from ..retrieve.types import FileHit, Hit, SearchResult
from .config import RepoConfig

#: Cosine similarity that unrelated code reaches anyway (unanswerable questions scored
#: 0.12-0.33 on the shop fixture): only the part above it counts as relevance.
SIMILARITY_FLOOR = 0.2
#: Relevance of a repository with nothing above the floor (its hits still rank, last).
MIN_RELEVANCE = 1e-3


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


def repo_relevance(result: SearchResult) -> float:
    """How well a repository's hits answer the question, comparable across
    repositories (one model, one question): the best cosine similarity above
    :data:`SIMILARITY_FLOOR`, times one plus the share of the question's terms found in
    its top hits (measured on three repositories, see the closing note of issue 9)."""
    info = result.info or analyse(result.query)
    signals = retrieval_signals(info, result.hits)
    above = max(MIN_RELEVANCE, signals["similarity"] - SIMILARITY_FLOOR)
    return above * (1.0 + signals["coverage"])


def fuse_repos(results: dict[str, SearchResult], k: int) -> list[RepoHit]:
    """One ranking from several repositories' rankings. Within a repository a hit keeps
    its share of that repository's best score; across repositories that share is
    scaled by the repository's relevance to the question, so a question about one
    repository is not filled with the best-of-the-rest of the others."""
    scored: list[RepoHit] = []
    for repo, result in results.items():
        if not result.hits:
            continue
        top = max(h.score for h in result.hits) or 1.0
        weight = repo_relevance(result)
        scored += [RepoHit(repo, h, weight * h.score / top) for h in result.hits]
    scored.sort(key=lambda r: -r.score)
    return scored[:k]


class RepoPool:
    """Named repositories, each opened once (read-only) and used under its lock."""

    def __init__(self, repos: dict[str, RepoConfig], overrides: dict[str, object] | None = None):
        self.repos = repos
        self.overrides = dict(overrides or {})
        self._indexes: dict[str, Index] = {}
        self._locks = {name: threading.RLock() for name in repos}
        self._open_lock = threading.Lock()

    def names(self) -> list[str]:
        return sorted(self.repos)

    @contextmanager
    def using(self, name: str) -> Iterator[Index]:
        """The repository's index, held under its lock for the block."""
        with self._locks[name]:
            yield self._index(name)

    def _index(self, name: str) -> Index:
        with self._open_lock:
            if name not in self._indexes:
                repo = self.repos[name]
                if not index_exists(repo.index, str(self.overrides.get("store", ""))):
                    raise IndexMissingError(
                        f"repository {name} has no index yet; an admin can build it with "
                        f"`codecite index {repo.path} --index {repo.index}`"
                    )
                # The server's audit log replaces each index's own query log.
                overrides = {"repo_name": name, "query_log": False, **self.overrides}
                self._indexes[name] = open_index(
                    repo.path, index_dir=repo.index, create=False, overrides=overrides
                )
            return self._indexes[name]

    def indexed_commit(self, repo: RepoConfig) -> str:
        """The commit the repository's index was built from ("" when none)."""
        try:
            with self.using(repo.name) as index:
                return index.indexed_commit
        except IndexMissingError:
            return ""

    def search(
        self, names: Sequence[str], query: str, *, k: int = 10, filters: Filters | None = None
    ) -> list[RepoHit]:
        """Fused hits of ``query`` over ``names`` (the caller has checked access)."""
        results: dict[str, SearchResult] = {}
        for name in names:
            with self.using(name) as index:
                results[name] = index.search(query, k=k, filters=filters)
        return fuse_repos(results, k)

    def search_files(
        self, names: Sequence[str], query: str, *, k: int = 10, filters: Filters | None = None
    ) -> list[FileHit]:
        """The ``k`` best files of ``query`` over ``names`` (each names its ``repo``),
        each with its best chunks; the caller has checked access."""
        found: list[FileHit] = []
        for name in names:
            with self.using(name) as index:
                files = index.search(query, k=k, filters=filters, files=True).files or []
            found += [replace(f, repo=name) for f in files]
        return sorted(found, key=lambda f: -f.score)[:k]

    def ask(
        self,
        name: str,
        question: str,
        choice: LLMChoice,
        *,
        filters: Filters | None = None,
        on_token: Callable[[str], None] | None = None,
    ) -> Answer:
        """A checked answer from one repository; the model call runs outside its lock."""
        with self.using(name) as index:
            answerer = index.answerer
            draft = index.prepare_answer(question, choice, filters=filters)
        text = None
        if draft.messages is not None and choice.llm is not None:
            text = answerer.generate(draft, choice.llm, on_token)
        with self.using(name):
            answer = answerer.finish(draft, text)
        return answer

    def close(self) -> None:
        with self._open_lock:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()
