"""Freshness costs (run by hand): how much the check before every query costs on a large
real project, how long an inline refresh of 1 and 20 changed files takes, and what a
branch switch there and back costs (time, embeddings the model computed).

    python bench/freshness_bench.py [--project django==5.2.8] [--history PATH_TO_GIT_REPO]

``--project``: an sdist from PyPI, indexed with ``--no-embed`` (the check and the inline
refresh touch only the keyword index and graph). ``--history``: a git repository (e.g. a
clone of pallets/click) for the branch switch: indexed with embeddings at HEAD, then at a
commit ~100 commits back, then at HEAD again, with a fresh embedding cache.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from index_bench import download_sdist

import codecite

QUERIES = [
    "how is a queryset filtered by a related field",
    "where are migrations applied",
    "what validates an email field",
    "how does the test client log in a user",
    "where is the CSRF token checked",
    "how are template tags registered",
    "which code sends a password reset email",
    "how is a database connection closed",
]
ROUNDS = 20


def median_ms(times: list[float]) -> float:
    return round(statistics.median(times) * 1000, 2)


def check_and_refresh(project: str, work: Path) -> dict[str, object]:
    root = download_sdist(project, work)
    started = time.perf_counter()
    with codecite.open_index(root, overrides={"query_log": False}) as index:
        report = index.update(embed=False)
    out: dict[str, object] = {
        "project": project,
        "files": report.files_seen,
        "index_no_embed_s": round(time.perf_counter() - started, 1),
    }
    with codecite.open_index(root, create=False, overrides={"query_log": False}) as index:
        checks = [index.refresh() for _ in range(ROUNDS)]
        out["check_ms_median"] = statistics.median(f.check_ms for f in checks)
        # The check runs in a thread beside the search: compare whole searches (keyword
        # only: this index has no vectors) with the check on every query and without.
        checked = codecite.open_index(
            root, create=False, overrides={"query_log": False, "refresh_interval": 0}
        )
        plain = codecite.open_index(
            root, create=False, overrides={"query_log": False, "refresh": False}
        )
        times: dict[str, list[float]] = {"with_check": [], "without": []}
        for _ in range(3):
            for query in QUERIES:
                for name, opened in (("with_check", checked), ("without", plain)):
                    began = time.perf_counter()
                    opened.search(query, k=10)
                    times[name].append(time.perf_counter() - began)
        checked.close()
        plain.close()
        out["search_ms_median"] = {name: median_ms(t) for name, t in times.items()}
        indexed = sorted(p for p in index.store.files() if p.endswith(".py"))
        for n in (1, 20):
            for i, path in enumerate(root / p for p in indexed[100 : 100 + n]):
                path.write_text(
                    path.read_text() + f"\n\ndef bench_fresh_{n}_{i}():\n    return {i}\n"
                )
            fresh = index.refresh(max_files=20)
            assert len(fresh.refreshed) == n, fresh
            out[f"refresh_{n}_files"] = {"check_ms": fresh.check_ms, "refresh_ms": fresh.refresh_ms}
    return out


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def branch_switch(history: Path, work: Path) -> dict[str, object]:
    clone = work / "clone"
    subprocess.run(["git", "clone", "-q", str(history), str(clone)], check=True)
    head = git(clone, "rev-parse", "HEAD")
    old = git(clone, "rev-list", "--first-parent", "--skip=100", "-n", "1", "HEAD")
    cache = work / "cache"
    env = {**os.environ, "CODECITE_CACHE_DIR": str(cache)}

    def index() -> dict[str, object]:
        began = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "codecite", "index", str(clone), "--wait", "--json"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        report = json.loads(proc.stdout)
        return {
            "seconds": round(time.perf_counter() - began, 1),
            "changed_files": report["changed"],
            "embedded": report["embedded"],
            "embed_computed": report["embed_computed"],
        }

    out: dict[str, object] = {"repo": str(history), "head": head[:12], "back_to": old[:12]}
    out["first_index_at_head"] = index()
    git(clone, "checkout", "-q", old)
    out["switch_100_commits_back"] = index()
    git(clone, "checkout", "-q", head)
    out["switch_back_to_head"] = index()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", default="django==5.2.8")
    parser.add_argument("--history", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = {"check_and_refresh": check_and_refresh(args.project, Path(tmp) / "p")}
        if args.history:
            result["branch_switch"] = branch_switch(args.history, Path(tmp) / "h")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
