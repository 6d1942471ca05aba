"""Turn a callback-streaming call into an iterator: a chat client calls ``on_token``
from inside ``complete``; a server or a UI wants ``for piece in ...``. The call runs
in one worker thread (it must touch no store: SQLite connections stay in their
thread); pieces cross over through a queue."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator
from typing import TypeVar

T = TypeVar("T")
_DONE = object()


def stream_pieces(run: Callable[[Callable[[str], None]], T]) -> Generator[str, None, T]:
    """Yield each piece ``run`` passes to its ``on_token``; return what ``run`` returned
    (``result = yield from stream_pieces(run)``). An exception in ``run`` is raised
    here, after the pieces before it. Stopping early leaves the worker to finish on
    its own (its pieces are dropped)."""
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
        assert isinstance(piece, str)
        yield piece
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result  # type: ignore[return-value]
