"""Start-up time of the ``codecite`` command (run by hand):

    python bench/cli_bench.py [-n 7] [--json]

Indexes a copy of the shop fixture (``index --wait``, so the model tier is complete),
then runs each command ``n`` times in a new process and reports the median wall
time, the median CPU time (user + system of the child) and the wall time as a ratio
to ``python -c pass`` measured in the same run (so a busy machine inflates both
alike). Then ``python -X importtime`` totals: the sum of every module's own import
time, for ``import codecite.cli`` and for each command, and the slowest modules.

Issue 23's targets on a quiet 2-core machine: ``--version`` and ``--help`` under
0.25 s, the first ``search`` in a new process under 1.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
QUESTION = "where is the loyalty discount computed"


def commands(repo: Path) -> dict[str, list[str]]:
    """Label → arguments after ``codecite``."""
    return {
        "--version": ["--version"],
        "--help": ["--help"],
        "search --help": ["search", "--help"],
        "status": ["status", str(repo)],
        "search": ["search", QUESTION, str(repo), "-k", "5"],
        "search --json": ["search", QUESTION, str(repo), "-k", "5", "--json"],
        "ask": ["ask", "How is the loyalty discount computed?", str(repo), "--llm", "extractive"],
        "chunks FILE": ["chunks", str(repo / "shop" / "pricing.py"), "--no-content"],
    }


def quiet_run(argv: list[str], env: dict[str, str], check: bool = False) -> int:
    done = subprocess.run(
        argv, check=check, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return done.returncode


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(argv: list[str], env: dict[str, str], n: int) -> dict[str, float]:
    timed(argv, env)  # warm the OS file cache (and each command's caches on disk)
    runs = [timed(argv, env) for _ in range(n)]
    return {
        "wall_s": statistics.median(r[0] for r in runs),
        "cpu_s": statistics.median(r[1] for r in runs),
    }


def importtime(argv: list[str], env: dict[str, str]) -> tuple[float, list[tuple[float, str]]]:
    """Total self import time (s) of ``python -X importtime ARGV`` and its slowest modules."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    rows: list[tuple[float, str]] = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _cumulative, name = line.split("|")
        rows.append((int(own.split(":")[1]) / 1e6, name.strip()))
    return sum(r[0] for r in rows), sorted(rows, reverse=True)[:8]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=7, help="runs per command (median)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "shop"
        shutil.copytree(FIXTURES / "shop", repo)
        env = {**os.environ, "CODECITE_QUERY_LOG": "false"}
        cli = [sys.executable, "-m", "codecite"]
        index = [*cli, "index", str(repo), "--json"]
        if quiet_run([*index, "--wait"], env):  # a codecite from before `--wait`
            quiet_run(index, env, check=True)
        base = measure([sys.executable, "-c", "pass"], env, args.n)
        results: dict[str, object] = {"python -c pass": base}
        for label, rest in commands(repo).items():
            got = measure([*cli, *rest], env, args.n)
            got["ratio"] = got["wall_s"] / base["wall_s"]
            results[label] = got
        totals: dict[str, object] = {}
        for label, argv in {
            "import codecite.cli": ["-c", "import codecite.cli"],
            "--version": ["-m", "codecite", "--version"],
            "search": ["-m", "codecite", *commands(repo)["search"]],
            "ask": ["-m", "codecite", *commands(repo)["ask"]],
        }.items():
            total, slowest = importtime(argv, env)
            totals[label] = {"total_s": total, "slowest": slowest}
    if args.json:
        print(json.dumps({"commands": results, "importtime": totals}, indent=2))
        return
    print(f"{'command':<16} {'wall s':>8} {'cpu s':>8} {'x python':>9}")
    for label, got in results.items():
        assert isinstance(got, dict)
        ratio = f"{got['ratio']:.1f}" if "ratio" in got else "1.0"
        print(f"{label:<16} {got['wall_s']:>8.3f} {got['cpu_s']:>8.3f} {ratio:>9}")
    print("\npython -X importtime (sum of every module's own time)")
    for label, got in totals.items():
        assert isinstance(got, dict)
        slowest = ", ".join(f"{name} {s * 1000:.0f} ms" for s, name in got["slowest"][:4])
        print(f"{label:<20} {got['total_s']:.3f} s   slowest: {slowest}")


if __name__ == "__main__":
    main()
