"""Progress of long work, as events: the library reports them through a callback,
the CLI draws them. Plus wall time per stage, for the summaries."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Progress:
    """A progress event: the CLI draws it, the library only reports it."""

    stage: str  # "walk", "parse", "graph", "static", "embed"
    done: int
    total: int
    detail: str = ""


ProgressFn = Callable[[Progress], None]


@dataclass
class Timer:
    """Wall time per stage, for the summary."""

    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, stage: str, started: float) -> None:
        self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - started
