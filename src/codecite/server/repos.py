"""The repositories a server (or an MCP session) answers from: each opened read-only
once, on first use, through the public API (:func:`codecite.open_index`), its models
and vectors kept loaded. SQLite connections are not for two threads at once, so each
repository has a lock; a generated answer's slow model call runs outside it (the
``lock`` of :meth:`codecite.Index.ask`).

Searching several repositories fuses their rankings into one
(:func:`codecite.search_across`, the retrieval stage ``retrieve/across.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from .. import (
    Answer,
    FileHit,
    Filters,
    Index,
    LLMChoice,
    RepoHit,
    analyse,
    index_exists,
    open_index,
    search_across,
    search_files_across,
)
from ..errors import IndexMissingError
from .config import RepoConfig

__all__ = ["RepoHit", "RepoPool"]


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

    def _opened(self, names: Sequence[str]) -> dict[str, Index]:
        return {name: self._index(name) for name in names}

    def search(
        self, names: Sequence[str], query: str, *, k: int = 10, filters: Filters | None = None
    ) -> list[RepoHit]:
        """Fused hits of ``query`` over ``names`` (the caller has checked access)."""
        opened = self._opened(names)
        return search_across(opened, query, k=k, filters=filters, locks=self._locks)

    def answering(self, names: Sequence[str], question: str, filters: Filters | None = None) -> str:
        """The repository of ``names`` to ask ``question`` of: the only one that defines
        a name the question writes ("if I changed how respond handles HEAD requests":
        the one with ``respond``, though another writes "requests" everywhere), else the
        one holding the best hit of the fused search (the caller has checked access)."""
        if len(names) == 1:
            return names[0]
        written = analyse(question).identifiers
        if written:
            defining = [name for name in names if self._defines(name, written)]
            if len(defining) == 1:
                return defining[0]
        best = self.search(names, question, k=1, filters=filters)
        return best[0].repo if best else names[0]

    def _defines(self, name: str, written: Sequence[str]) -> bool:
        with self.using(name) as index:
            return any(index.find_symbol(identifier, 1) for identifier in written)

    def search_files(
        self, names: Sequence[str], query: str, *, k: int = 10, filters: Filters | None = None
    ) -> list[FileHit]:
        """The ``k`` best files of ``query`` over ``names`` (each names its ``repo``),
        each with its best chunks; the caller has checked access."""
        opened = self._opened(names)
        return search_files_across(opened, query, k=k, filters=filters, locks=self._locks)

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
        index = self._index(name)
        return index.ask(
            question, choice, filters=filters, on_token=on_token, lock=self._locks[name]
        )

    def ask_stream(
        self, name: str, question: str, choice: LLMChoice, *, filters: Filters | None = None
    ) -> Iterator[str | Answer]:
        """:meth:`ask`, streamed (:meth:`codecite.Index.ask_stream`): the pieces of a
        generated answer, then the checked :class:`Answer`."""
        index = self._index(name)
        return index.ask_stream(question, choice, filters=filters, lock=self._locks[name])

    def close(self) -> None:
        with self._open_lock:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()
