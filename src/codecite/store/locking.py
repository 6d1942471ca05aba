"""The single-writer lock of an index folder: an OS file lock (``flock``) on a small
file that records the holder's pid. The OS releases it when the holder exits, even
after ``kill -9``, so a crashed indexer never leaves a stale lock behind."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import PathError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, one writer assumed
    fcntl = None  # type: ignore[assignment]


#: Why a lock file cannot be opened that a user can fix (permissions, a read-only mount).
_NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)


def open_lock_file(path: Path) -> int:
    """The lock file's descriptor (created if needed). A folder this process may not
    write is a user error that says what to do, not an internal one."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno not in _NOT_WRITABLE:
            raise
        raise PathError(
            f"cannot write the index at {path.parent} ({exc.strerror}: {path.name}); "
            "make that folder writable for this user, or index into a folder you can "
            "write with `codecite index PATH --index DIR` (searching this index works "
            "as it is)"
        ) from None


def holder(path: Path) -> str:
    """The pid written by the process holding the lock, or "" when unknown."""
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""


@contextmanager
def _holding(fd: int) -> Iterator[None]:
    """With the lock on ``fd`` taken: record our pid for whoever waits, release at the end."""
    assert fcntl is not None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode("ascii"))
    try:
        yield
    finally:
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextmanager
def file_lock(path: Path, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on ``path``; if another process holds it, call
    ``on_wait(pid)`` once and block until it is released."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = open_lock_file(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait(holder(path))
            fcntl.flock(fd, fcntl.LOCK_EX)
        with _holding(fd):
            yield
    finally:
        os.close(fd)


@contextmanager
def try_file_lock(path: Path) -> Iterator[bool]:
    """Hold the lock on ``path`` if it is free (yields True), else yield False at once."""
    if fcntl is None:  # pragma: no cover
        yield True
        return
    fd = open_lock_file(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        with _holding(fd):
            yield True
    finally:
        os.close(fd)
