"""What explain and docs read of an index: a :class:`codecite.Index` is one.

A protocol, so that this stage depends on the door's shape and not on the door
(``api`` calls ``explain``; ``explain`` never imports ``api``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from ..answer.llm import LLM, LLMChoice
    from ..config import Config
    from ..index.freshness import Freshness
    from ..store.protocols import Store
    from ..types import Chunk

T = TypeVar("T")


class Source(Protocol):
    """An opened index as explain and docs use it."""

    root: Path
    config: Config
    store: Store

    @property
    def repo(self) -> str: ...

    def chunks(self, path: str | None = None) -> Iterator[Chunk]: ...

    def related(self, chunk: Chunk, relation: str, limit: int = 50) -> list[tuple[Chunk, int]]: ...

    def fresh(
        self, run: Callable[[], T], paths_of: Callable[[T], Iterable[str]]
    ) -> tuple[T, Freshness]: ...

    def refresh(self, max_files: int | None = None) -> Freshness: ...

    def choose_llm(self, llm: str | LLM | LLMChoice | None = "auto") -> LLMChoice: ...
