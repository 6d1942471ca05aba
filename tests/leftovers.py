"""Processes that outlive what started them (issue 23, issue 21 item 9).

Every process a test run starts inherits :data:`MARKER` from the environment (set
once per run by ``conftest.py``), however it was started and whoever its parent is
now (a killed ``codecite index`` leaves its parse workers to ``init``). At the end
of the run, any process still carrying the run's marker is a leftover: the run fails
and they are killed. The run's own fork server and resource tracker (children of the
pytest process, which end with it once no worker holds them) are not counted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

MARKER = "CODECITE_TEST_RUN"
PROC = Path("/proc")
#: The pytest process's own multiprocessing helpers: they exit with it.
OWN_HELPERS = ("multiprocessing.forkserver", "multiprocessing.resource_tracker")


@dataclass(frozen=True)
class Leftover:
    pid: int
    ppid: int
    command: str

    def __str__(self) -> str:
        return f"pid {self.pid} (parent {self.ppid}): {self.command[:160]}"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # gone, or not ours
        return b""


def _status(pid: int) -> tuple[str, int]:
    """(state letter, parent pid) from /proc/PID/stat ("" when gone)."""
    raw = _read(PROC / str(pid) / "stat").decode("ascii", "replace")
    if not raw:
        return "", 0
    fields = raw.rsplit(")", 1)[-1].split()
    return fields[0], int(fields[1])


def marked_processes(value: str, *, own_helpers_of: int | None = None) -> list[Leftover]:
    """Live processes (not zombies, not this one) whose environment holds
    ``MARKER=value``; with ``own_helpers_of``, that process's own fork server and
    resource tracker are left out."""
    if not PROC.is_dir():
        return []
    needle = f"{MARKER}={value}".encode()
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        if needle not in _read(entry / "environ").split(b"\0"):
            continue
        state, ppid = _status(int(entry.name))
        if state in ("", "Z", "X"):
            continue
        command = _read(entry / "cmdline").replace(b"\0", b" ").decode("utf-8", "replace")
        if ppid == own_helpers_of and any(h in command for h in OWN_HELPERS):
            continue
        found.append(Leftover(int(entry.name), ppid, command.strip()))
    return found


def wait_for_none(value: str, timeout: float, own_helpers_of: int | None = None) -> list[Leftover]:
    """The marked processes still alive after up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        alive = marked_processes(value, own_helpers_of=own_helpers_of)
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.1)


def kill_all(found: list[Leftover]) -> None:
    for leftover in found:
        with contextlib.suppress(OSError):  # already gone
            os.kill(leftover.pid, signal.SIGKILL)
