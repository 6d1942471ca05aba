"""No codecite process outlives its purpose (issue 21 item 9, issue 23): the parse
workers, their fork server and the resource tracker end with the process that
started them, whether it exits or is killed with ``kill -9``. Real processes; each
test marks the processes it starts (:mod:`leftovers`) and looks for survivors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import leftovers
import pytest

pytestmark = [
    pytest.mark.slow,  # real processes killed with kill -9 (run by .ci/run)
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)"),
]

#: Files in the repository: enough that parsing takes seconds on two parse workers.
FILES = 600


def _many_files(root: Path) -> Path:
    root.mkdir()
    body = "".join(f"def g{j}(y):\n    return y * {j}\n\n" for j in range(30))
    for i in range(FILES):
        (root / f"m{i}.py").write_text(f"def f{i}(x):\n    '''doc {i}'''\n    return x\n\n{body}")
    return root


def _env(mark: str) -> dict[str, str]:
    return {**os.environ, leftovers.MARKER: mark, "CODECITE_WORKERS": "2"}


def _workers_started(mark: str, parent: int) -> bool:
    """The fork server (a grandchild of ``parent``'s) has forked a parse worker."""
    servers = [
        p for p in leftovers.marked_processes(mark) if "multiprocessing.forkserver" in p.command
    ]
    return any(s.ppid != parent for s in servers)


def test_parse_workers_end_when_codecite_index_is_killed(tmp_path: Path) -> None:
    repo = _many_files(tmp_path / "many")
    mark = f"kill-{os.getpid()}-{time.monotonic_ns()}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "codecite", "index", str(repo), "--no-embed", "--json"],
        env=_env(mark),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not _workers_started(mark, proc.pid) and time.monotonic() < deadline:
            assert proc.poll() is None, "codecite index ended before its workers started"
            time.sleep(0.05)
        assert proc.poll() is None, "codecite index ended before it could be killed mid-parse"
        assert _workers_started(mark, proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        alive = leftovers.wait_for_none(mark, timeout=5.0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    leftovers.kill_all(alive)
    assert alive == [], "\n".join(map(str, alive))


def test_a_library_index_run_leaves_no_process_behind(tmp_path: Path) -> None:
    """A script that indexes through the library (parse pool in its own process)
    and exits leaves no fork server, resource tracker or worker running."""
    repo = _many_files(tmp_path / "many")
    mark = f"lib-{os.getpid()}-{time.monotonic_ns()}"
    script = (
        "import codecite, sys\n"
        "with codecite.open_index(sys.argv[1]) as index:\n"
        "    report = index.update(embed=False)\n"
        "print(report.chunks_written)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(repo)],
        env=_env(mark),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == FILES * 31
    alive = leftovers.wait_for_none(mark, timeout=5.0)
    leftovers.kill_all(alive)
    assert alive == [], "\n".join(map(str, alive))
