"""What the drivers of index runs (``watch``, the git hooks) need of an opened index:
a :class:`codecite.Index` is one. A protocol, so that this package depends on the
door's shape and never imports the door (``api`` calls ``index``, not back)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..config import Config
    from ..progress import ProgressFn
    from ..types import IndexReport


class Updatable(Protocol):
    """An opened, writable index whose files can be brought up to date."""

    root: Path
    dir: Path
    config: Config

    def update(
        self,
        *,
        embed: bool = True,
        on_progress: ProgressFn | None = None,
        on_wait: Callable[[str], None] | None = None,
    ) -> IndexReport: ...

    def close(self) -> None: ...
