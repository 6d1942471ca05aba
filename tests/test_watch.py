"""``codecite watch``: a real process on a real git repository, real file events."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from repos import git, make_git_repo, run_cli

import codecite
from codecite.index.watch import Watcher

#: a real file watcher, waiting for settle times (run by .ci/run)
pytestmark = pytest.mark.slow

PRICING = (
    "def loyalty_discount(amount: float, tier: str) -> float:\n"
    '    """Amount after the loyalty discount of a tier."""\n'
    '    rate = {"gold": 0.1, "silver": 0.05}.get(tier, 0.0)\n'
    "    return round(amount * (1 - rate), 2)\n"
)
SAFFRON = (
    "\n\ndef saffron_surcharge(amount: float) -> float:\n"
    '    """Surcharge for saffron-wrapped deliveries."""\n'
    "    return amount * 1.07\n"
)


class Watching:
    """``codecite watch ROOT ARGS`` in a real process; its output lines, as they come."""

    def __init__(self, root: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "codecite", "watch", str(root), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "CODECITE_REFRESH": "0"},
        )
        self.out: list[str] = []
        self.err: list[str] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.streams = (self.proc.stdout, self.proc.stderr)
        self.readers = [
            threading.Thread(target=_collect, args=(stream, lines), daemon=True)
            for stream, lines in zip(self.streams, (self.out, self.err), strict=True)
        ]
        for reader in self.readers:
            reader.start()

    def __enter__(self) -> Watching:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for reader, stream in zip(self.readers, self.streams, strict=True):
            reader.join(timeout=10)
            assert not reader.is_alive(), "a child of watch outlived it, holding its output"
            stream.close()

    def wait_for(self, text: str, timeout: float = 60, after: int = 0) -> str:
        """The first stdout line (from line ``after`` on) containing ``text``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in self.out[after:] if text in line]
            if found:
                return found[0]
            assert self.proc.poll() is None, f"watch exited: {self.err}"
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} in {self.out} / {self.err}")

    def updates(self, after: int = 0) -> list[str]:
        return [line for line in self.out[after:] if " index: " in line]

    def stop(self, sig: signal.Signals, timeout: float = 30) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout)
        for reader in self.readers:
            reader.join(timeout=10)
        return code


def _collect(stream: object, lines: list[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        lines.append(line.rstrip("\n"))


def _poll(check: Callable[[], bool], timeout: float) -> float:
    """Seconds until ``check()`` holds (fails after ``timeout``)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check():
            return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout}s")


def _has_symbol(root: Path, name: str) -> bool:
    with codecite.open_index(root, create=False) as index:
        return any(c.qualname == name for c in index.find_symbol(name))


def _search(root: Path, query: str) -> dict:
    proc = run_cli("search", query, str(root), "--json", env={"CODECITE_REFRESH": "0"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_filter_uses_the_walkers_rules(tmp_path: Path) -> None:
    root = make_git_repo(
        tmp_path / "repo",
        {"src/a.py": "x = 1\n", ".gitignore": "out/\n*.log\n", ".codeciteignore": "docs/\n"},
    )
    with codecite.open_index(root) as index:
        watcher = Watcher(index)
    rules = watcher.filter
    kept = ["src/a.py", "src/new.ts", ".gitignore", ".codeciteignore", "codecite.toml"]
    dropped = [".git/index", ".codecite/index.db", "node_modules/x/y.js", "docs/readme.md"]
    dropped += ["yarn.lock", "app.min.js", "logo.png", "sub/.git/HEAD", "build/gen.py"]
    assert [rules.relative(str(root / p)) for p in kept] == kept
    assert [rules.relative(str(root / p)) for p in dropped] == [None] * len(dropped)
    assert rules.relative(str(tmp_path / "elsewhere.py")) is None
    assert rules.drop_ignored({"out/x.py", "debug.log", "src/a.py"}) == {"src/a.py"}
    (root / ".codeciteignore").write_text("docs/\nscratch/\n")  # read again when it changes
    assert rules.relative(str(root / "scratch" / "x.py")) == "scratch/x.py"
    watcher._reload_rules()
    assert watcher.filter.relative(str(root / "scratch" / "x.py")) is None


def test_watch_picks_up_a_save_and_not_ignored_files(tmp_path: Path) -> None:
    root = make_git_repo(
        tmp_path / "repo",
        {"shop/pricing.py": PRICING, "shop/orders.py": "def total(items):\n    return 1\n"}
        | {".gitignore": "out/\n"},
    )
    assert run_cli("index", str(root), "--wait").returncode == 0
    with Watching(root) as w:
        w.wait_for("watching")
        start = len(w.out)
        (root / "out").mkdir()
        (root / "out" / "gen.py").write_text("def ignored_output():\n    return 0\n")
        (root / "node_modules" / "left").mkdir(parents=True)
        (root / "node_modules" / "left" / "pad.js").write_text("function pad() {}\n")
        (root / "poetry.lock").write_text("[[package]]\n")
        time.sleep(1.5)
        assert w.updates(start) == []  # none of these is indexed: no update

        (root / "shop" / "pricing.py").write_text(PRICING + SAFFRON)
        seconds = _poll(lambda: _has_symbol(root, "saffron_surcharge"), timeout=10)
        print(f"\nsave -> searchable (keyword + graph): {seconds:.2f}s")
        assert seconds < 5
        line = w.wait_for(" index: ", after=start)
        assert "1 files" in line and "1 modified" in line
        top = _search(root, "saffron surcharge for deliveries")["results"][0]
        assert top["qualname"] == "saffron_surcharge"
        w.wait_for("vectors:", after=start)  # then vectors, when it is quiet
        assert len(w.updates(start)) == 1
        assert w.stop(signal.SIGINT) == 130
    assert any("stopped: 1 updates" in line for line in w.err)
    assert not _has_symbol(root, "ignored_output")


def test_a_checkout_of_200_files_is_one_batch(tmp_path: Path) -> None:
    root = make_git_repo(tmp_path / "repo", {"app/main.py": "def main():\n    return 0\n"})
    git(root, "checkout", "-q", "-b", "many")
    for i in range(200):
        path = root / "gen" / f"mod_{i:03}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"def generated_{i}(x):\n    return x + {i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "many")
    git(root, "checkout", "-q", "main")
    assert run_cli("index", str(root), "--no-embed").returncode == 0

    def files() -> int:
        with codecite.open_index(root, create=False) as index:
            return index.store.counts()["files"]

    with Watching(root, "--no-embed") as w:
        w.wait_for("watching")
        start = len(w.out)
        git(root, "checkout", "-q", "many")
        seconds = _poll(lambda: files() == 201, timeout=30)
        time.sleep(1.5)  # any straggling batch would show by now
        there = w.updates(start)
        git(root, "checkout", "-q", "main")
        _poll(lambda: files() == 1, timeout=30)
        time.sleep(1.5)
        back = w.updates(start)[len(there) :]
        print(f"\ncheckout of 200 files: {len(there)} update(s), indexed after {seconds:.2f}s")
        assert len(there) == 1 and "200 files" in there[0] and "200 added" in there[0]
        assert len(back) == 1 and "200 deleted" in back[0]
        assert w.stop(signal.SIGTERM) == 0
    assert any("stopped: 2 updates" in line for line in w.err)


def test_changes_pause_vectors_and_ctrl_c_leaves_a_consistent_index(tmp_path: Path) -> None:
    token = uuid.uuid4().hex[:8]  # texts no embedding cache has seen
    files = {
        f"lib/m{i:02}.py": "".join(
            f"def f_{token}_{i}_{j}(x):\n    return x * {j} + {i}  # {token} {i} {j}\n\n\n"
            for j in range(10)
        )
        for i in range(100)
    }
    root = make_git_repo(tmp_path / "repo", files)
    with Watching(root, "--embed-delay", "0.2") as w:  # no index yet: watch builds it
        w.wait_for("watching")
        time.sleep(1.0)  # vectors are being computed now
        late = root / "lib" / "m00.py"
        late.write_text(late.read_text() + "def late_addition(x):\n    return x\n")
        w.wait_for("paused: files changed", timeout=60)
        assert " index: 1 files" in w.wait_for(" index: 1 files", timeout=30)
        assert _has_symbol(root, "late_addition")
        time.sleep(0.8)  # vectors resumed
        stopped_at = time.monotonic()
        assert w.stop(signal.SIGINT) == 130
        print("\n" + "\n".join(w.out + w.err))
        print(f"Ctrl-C while embedding: exit after {time.monotonic() - stopped_at:.2f}s")
    assert any("the index is consistent" in line for line in w.err), w.err
    status = json.loads(run_cli("status", str(root), "--json").stdout)
    assert status["stale_files"] == 0 and status["vectors"] <= status["chunks"]
    with sqlite3.connect(root / ".codecite" / "index.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    again = json.loads(run_cli("index", str(root), "--no-embed", "--json").stdout)
    assert again["changed"] == 0  # keyword index and graph were complete
    assert _search(root, "late_addition")["results"][0]["qualname"] == "late_addition"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stopping_an_idle_watch(tmp_path: Path, sig: signal.Signals) -> None:
    root = make_git_repo(tmp_path / "repo", {"a.py": "def a():\n    return 1\n"})
    with Watching(root, "--no-embed") as w:
        w.wait_for("watching")
        assert w.stop(sig, timeout=10) == (130 if sig == signal.SIGINT else 0)
    assert sum("stopping" in line for line in w.err) == 1
    assert any("stopped: 1 updates" in line for line in w.err)
