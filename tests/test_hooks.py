"""``codecite hooks``: real git commands fire real hooks that index in the background."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from repos import make_git_repo, run_cli

import codecite
from codecite.index import hooks

pytestmark = [
    pytest.mark.slow,  # real git hooks starting detached indexers (run by .ci/run)
    pytest.mark.skipif(sys.platform == "win32", reason="git hooks run with sh"),
]


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """git with this process's environment (the hooks inherit CODECITE_CACHE_DIR)."""
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(repo.parent),
            **(env or {}),
        },
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


def commit_file(repo: Path, rel: str, text: str, message: str = "change") -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def symbols(root: Path, *names: str) -> set[str]:
    with codecite.open_index(root, create=False) as index:
        return {n for n in names if any(c.qualname == n for c in index.find_symbol(n))}


def wait_until(root: Path, present: set[str], absent: set[str] = frozenset(), timeout=60) -> None:
    """Poll the index until it holds ``present`` and not ``absent``, then until no hook
    run is left (so the test's folder is not removed under one)."""
    deadline = time.monotonic() + timeout
    while symbols(root, *present, *absent) != present:
        assert time.monotonic() < deadline, (symbols(root, *present, *absent), log_of(root))
        time.sleep(0.1)
    wait_idle(root, deadline)


def wait_idle(root: Path, deadline: float) -> None:
    while runners(root):
        assert time.monotonic() < deadline, log_of(root)
        time.sleep(0.1)


def runners(root: Path) -> int:
    """Live ``codecite hooks run`` processes working in ``root``."""
    count = 0
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            if b"hooks" in cmd and b"run" in cmd and Path(os.readlink(proc / "cwd")) == root:
                count += 1
        except OSError:
            continue
    return count


def log_of(root: Path) -> str:
    path = root / ".codecite" / hooks.LOG_NAME
    return path.read_text() if path.exists() else ""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_git_repo(tmp_path / "repo", {"app/core.py": "def core():\n    return 0\n"})
    assert run_cli("index", str(root), "--wait").returncode == 0
    return root.resolve()


def test_hooks_fire_on_commit_checkout_merge_and_rewrite(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "side")
    commit_file(repo, "app/side.py", "def side_feature():\n    return 1\n")
    git(repo, "checkout", "-q", "main")
    installed = run_cli("hooks", "install", str(repo))
    assert installed.returncode == 0, installed.stderr
    assert all(f"created {repo}/.git/hooks/{h}" in installed.stdout for h in hooks.HOOKS)

    started = time.monotonic()
    commit_file(repo, "app/main_only.py", "def main_feature():\n    return 2\n")
    assert time.monotonic() - started < 5  # git did not wait for the index
    wait_until(repo, {"main_feature"}, {"side_feature"})
    seconds = time.monotonic() - started
    git(repo, "checkout", "-q", "side")  # post-checkout
    wait_until(repo, {"side_feature"}, {"main_feature"})
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "side")  # post-merge (a merge commit)
    wait_until(repo, {"side_feature", "main_feature"})
    commit_file(repo, "app/late.py", "def late_one():\n    return 3\n")
    (repo / "app" / "late.py").write_text("def late_two():\n    return 3\n")
    git(repo, "commit", "-q", "-a", "--amend", "--no-edit")  # post-rewrite (+ post-commit)
    wait_until(repo, {"late_two"}, {"late_one"})

    log = log_of(repo)
    print(f"\ncommit -> indexed by the hook: {seconds:.2f}s\n{log}")
    for hook in hooks.HOOKS:
        assert f"{hook}: " in log
    status = json.loads(run_cli("status", str(repo), "--json").stdout)
    assert status["stale_files"] == 0 and status["vectors"] == status["chunks"]
    assert status["indexed_commit"] == git(repo, "rev-parse", "HEAD").strip()


def test_existing_hooks_survive_install_and_uninstall_byte_for_byte(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "checkout", "-q", "-b", "side")
    commit_file(repo, "app/side.py", "def side_feature():\n    return 1\n")
    git(repo, "checkout", "-q", "main")
    ran = tmp_path / "ran.txt"
    hooks_dir = repo / ".git" / "hooks"
    for sample in hooks_dir.glob("*.sample"):
        sample.unlink()
    shared = tmp_path / "shared-post-rewrite"
    shared.write_text("#!/bin/sh\nexit 0\n")
    shared.chmod(0o755)
    originals = {
        # a shell hook without a final newline that ends with exit: the block goes first
        "post-commit": (f"#!/bin/bash\nset -e\necho commit-hook >> '{ran}'\nexit 0", 0o750),
        # another language: chained
        "post-merge": (
            f"#!/usr/bin/env python3\nopen({str(ran)!r}, 'a').write('merge-hook\\n')\n",
            0o755,
        ),
        # a disabled (not executable) hook stays disabled
        "post-checkout": (f"#!/bin/sh\necho checkout-hook >> '{ran}'\n", 0o644),
    }
    for name, (text, mode) in originals.items():
        (hooks_dir / name).write_text(text)
        (hooks_dir / name).chmod(mode)
    (hooks_dir / "post-rewrite").symlink_to(shared)
    before = {p.name: (p.read_bytes(), p.lstat().st_mode) for p in hooks_dir.iterdir()}
    first = {c.hook: c.action for c in hooks.install(repo)}
    again = {c.hook: c.action for c in hooks.install(repo)}  # idempotent
    assert first == {
        "post-commit": "added",
        "post-merge": "chained",
        "post-checkout": "chained",
        "post-rewrite": "chained",
    }
    assert again == {"post-commit": "updated"} | {h: "updated" for h in hooks.HOOKS[1:]}
    assert (hooks_dir / "post-commit").read_text().count("# >>> codecite (.) >>>") == 1

    commit_file(repo, "app/new.py", "def brand_new():\n    return 1\n")
    wait_until(repo, {"brand_new"})
    git(repo, "merge", "-q", "--no-edit", "side")
    wait_until(repo, {"side_feature", "brand_new"})
    assert ran.read_text().splitlines() == ["commit-hook", "merge-hook"]  # checkout: disabled

    removed = {c.hook: c.action for c in hooks.uninstall(repo)}
    assert removed == {"post-commit": "removed"} | {h: "restored" for h in hooks.HOOKS[1:]}
    after = {p.name: (p.read_bytes(), p.lstat().st_mode) for p in hooks_dir.iterdir()}
    assert after == before
    assert os.readlink(hooks_dir / "post-rewrite") == str(shared)
    assert {c.action for c in hooks.uninstall(repo)} == {"absent"}


def test_hooks_created_by_install_are_deleted_by_uninstall(repo: Path) -> None:
    hooks_dir = repo / ".git" / "hooks"
    before = sorted(p.name for p in hooks_dir.iterdir())
    assert {c.action for c in hooks.install(repo)} == {"created"}
    text = (hooks_dir / "post-checkout").read_text()
    assert text.startswith("#!/bin/sh\n# >>> codecite (.) >>>") and sys.executable in text
    assert os.access(hooks_dir / "post-checkout", os.X_OK)
    proc = run_cli("hooks", "uninstall", str(repo))
    assert proc.returncode == 0 and proc.stdout.count("deleted") == 4
    assert sorted(p.name for p in hooks_dir.iterdir()) == before


def test_core_hooks_path_a_subfolder_index_and_codecite_on_path(tmp_path: Path) -> None:
    root = make_git_repo(
        tmp_path / "repo",
        {"pkg/lib.py": "def lib():\n    return 0\n", "other/x.py": "def x():\n    return 0\n"},
    ).resolve()
    git(root, "config", "core.hooksPath", "tools/githooks")
    assert run_cli("index", str(root / "pkg"), "--wait").returncode == 0
    changes = hooks.install(root / "pkg", python="/nonexistent/python")  # falls back to PATH
    assert {c.path.parent for c in changes} == {root / "tools" / "githooks"}
    assert not (root / ".git" / "hooks" / "post-commit").exists()
    assert "pkg/.codecite/index.db" in (root / "tools/githooks/post-commit").read_text()

    on_path = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    (root / "pkg" / "lib.py").write_text(
        "def lib():\n    return 0\n\n\ndef from_path():\n    return 1\n"
    )
    git(root, "commit", "-q", "-am", "more", env=on_path)
    wait_until(root / "pkg", {"from_path"})
    assert not (root / ".codecite").exists()  # only the installed folder is indexed
    assert {c.action for c in hooks.uninstall(root / "pkg")} == {"deleted"}


def test_hooks_work_from_a_worktree(repo: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", "-b", "wt", str(tree))
    tree = tree.resolve()
    assert run_cli("index", str(tree), "--wait").returncode == 0
    assert hooks.hook_site(tree).hooks_dir == repo / ".git" / "hooks"  # shared by worktrees
    hooks.install(tree)
    commit_file(tree, "app/wt.py", "def in_worktree():\n    return 1\n")
    wait_until(tree, {"in_worktree"})
    commit_file(repo, "app/main.py", "def in_main():\n    return 1\n")
    wait_until(repo, {"in_main"})  # the main work tree has an index too: refreshed
    assert symbols(tree, "in_main") == set()


def test_a_burst_of_commits_runs_one_indexer_at_a_time(repo: Path) -> None:
    hooks.install(repo)
    names = [f"burst_{i}" for i in range(5)]
    started = time.monotonic()
    most = 0
    for i, name in enumerate(names):
        commit_file(repo, f"app/burst_{i}.py", f"def {name}():\n    return {i}\n")
        most = max(most, runners(repo))
    while runners(repo) or symbols(repo, *names) != set(names):
        most = max(most, runners(repo))
        assert time.monotonic() - started < 90, log_of(repo)
        time.sleep(0.02)
    log = log_of(repo)
    spans = _indexing_spans(log)
    overlap = max(sum(a <= t < b for a, b in spans) for t, _ in spans)
    print(
        f"\n5 commits: {len(spans)} index runs, at most {overlap} indexing at once, "
        f"{most} hook processes alive at once\n{log}"
    )
    assert overlap <= 1 < 2  # never two hook runs indexing at once
    assert 1 <= len(spans) <= 5
    status = json.loads(run_cli("status", str(repo), "--json").stdout)
    assert status["stale_files"] == 0
    assert status["indexed_commit"] == git(repo, "rev-parse", "HEAD").strip()
    with sqlite3.connect(repo / ".codecite" / "index.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    again = json.loads(run_cli("index", str(repo), "--wait", "--json").stdout)
    assert again["changed"] == 0 and again["embedded"] == 0


_LINE = re.compile(r"^(\S+ \S+) \[(\d+)\] [\w-]+: (indexing|indexed)")


def _indexing_spans(log: str) -> list[tuple[float, float]]:
    """(start, end) of each index run in hooks.log."""
    open_runs: dict[str, float] = {}
    spans = []
    for line in log.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        at = datetime.fromisoformat(match[1]).timestamp()
        if match[3] == "indexing":
            open_runs[match[2]] = at
        else:
            spans.append((open_runs.pop(match[2]), at))
    assert not open_runs
    return spans
