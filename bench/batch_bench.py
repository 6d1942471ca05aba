"""Batch mode against separate processes (run by hand):

    python bench/batch_bench.py [REPO] [-n 10] [--batch-queries 200]

Indexes the shop fixture (default) or REPO, then times, side by side on the same
questions: ``n`` separate ``codecite search --json`` processes, and one
``codecite search --batch`` process answering ``--batch-queries`` questions
(models and vectors loaded once). Reports seconds per query for each and the
ratio; the issue asks for at least 20x.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"


def questions() -> list[str]:
    lines = (FIXTURES / "shop_golden.jsonl").read_text().splitlines()
    return [json.loads(ln)["query"] for ln in lines if ln.startswith("{")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", nargs="?")
    parser.add_argument("-n", type=int, default=10, help="separate processes to time")
    parser.add_argument("--batch-queries", type=int, default=200)
    args = parser.parse_args()
    qs = questions()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(args.repo) if args.repo else Path(tmp) / "shop"
        if not args.repo:
            shutil.copytree(FIXTURES / "shop", repo)
        cli = [sys.executable, "-m", "codecite"]
        subprocess.run(
            [*cli, "index", str(repo), "--wait", "--json"], check=True, stdout=subprocess.DEVNULL
        )
        started = time.perf_counter()
        for q in (qs * 10)[: args.n]:
            subprocess.run(
                [*cli, "search", q, str(repo), "--json"], check=True, stdout=subprocess.DEVNULL
            )
        separate = (time.perf_counter() - started) / args.n
        batch_file = Path(tmp) / "queries.jsonl"
        # distinct texts, so no query embedding is served from the in-process cache
        batch = [
            f"{q} ({i // len(qs)})" if i >= len(qs) else q
            for i, q in enumerate((qs * (args.batch_queries // len(qs) + 1))[: args.batch_queries])
        ]
        batch_file.write_text(
            "\n".join(json.dumps({"id": i, "query": q}) for i, q in enumerate(batch)) + "\n"
        )
        started = time.perf_counter()
        out = subprocess.run(
            [*cli, "search", "--batch", str(batch_file), str(repo)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        batched = (time.perf_counter() - started) / len(batch)
        assert len(out.splitlines()) == len(batch)
    print(f"separate processes: {separate * 1000:.0f} ms/query (n={args.n})")
    print(
        f"one --batch process: {batched * 1000:.1f} ms/query (n={len(batch)}, model load included)"
    )
    print(f"batch is {separate / batched:.0f}x faster per query")


if __name__ == "__main__":
    main()
