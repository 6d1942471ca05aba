"""Real temporary git repositories for tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import codecite


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "PATH": "/usr/bin:/bin:/usr/local/bin",
            "HOME": str(repo),
        },
    ).stdout


def make_git_repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    prefix: tuple[str, ...] = (),
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    """``codecite ARGS`` in a real process (``prefix``: a wrapper such as ``unshare``)."""
    import os
    import sys

    proc = subprocess.run(
        [*prefix, sys.executable, "-m", "codecite", *args],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=300,
        input=stdin,
    )
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    config: Path, port: int, log: Path, log_level: str = "warning"
) -> subprocess.Popen[bytes]:
    """``codecite serve --config CONFIG --port PORT`` in its own process, once it answers
    ``/healthz`` (its output goes to ``log``, shown when it fails to start; ``log_level``
    "info", serve's default, writes the access log too)."""
    import os
    import sys
    import time

    import httpx

    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "codecite",
                "serve",
                "--config",
                str(config),
                "--port",
                str(port),
                "--log-level",
                log_level,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ),
        )
    deadline = time.time() + 60
    while time.time() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"server did not start: {log.read_text()}")


def copy_index(indexed: Path, dest: Path) -> Path:
    """A copy of an indexed repository at ``dest`` (a folder of the same name, so its
    chunks' repository name is the same): the files keep their sizes and times, so
    nothing in it is stale, and the index records its new place."""
    assert dest.name == indexed.name, (dest, indexed)
    shutil.copytree(indexed, dest, symlinks=True)
    with codecite.open_index(dest) as index, index.store.transaction():
        index.store.set_meta({"root": str(dest)})
    return dest
