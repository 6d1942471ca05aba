"""Turn a callback-streaming answer into an iterator: the model's client calls
``on_token`` from inside ``complete``; a server or a UI wants ``for piece in ...``.
The answer runs in one worker thread; pieces cross over through a queue."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")
_DONE = object()


def stream_answer(run: Callable[[Callable[[str], None]], T]) -> Iterator[str | T]:
    """Yield each piece ``run`` passes to its ``on_token``, then what ``run`` returned.
    An exception in ``run`` is raised here, after the pieces before it. Stopping the
    iteration early leaves the worker to finish on its own (its pieces are dropped)."""
    pieces: queue.Queue[object] = queue.Queue()
    outcome: list[object] = []

    def work() -> None:
        try:
            outcome.append(run(pieces.put))
        except BaseException as exc:  # handed to the consumer below
            outcome.append(exc)
        finally:
            pieces.put(_DONE)

    threading.Thread(target=work, name="codecite-answer", daemon=True).start()
    while (piece := pieces.get()) is not _DONE:
        yield piece  # type: ignore[misc]
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    yield result  # type: ignore[misc]
