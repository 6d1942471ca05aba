"""Declines on real bug reports: how many of a project's own reports ``ask`` declines
(they are all about it), and how many of other projects' reports (none is), asked of one
index. Also how many name indexed files in a pasted trace (``signals["framed"]``: never
declined, issue 38). Run by hand, never by CI::

    python bench/bug_declines.py --root /work/answer-bench/trees/sqlfluff \\
        --index /work/answer-bench/index/current/sqlfluff --repo sqlfluff/sqlfluff

The reports are ``../shared/bench-data/swebench-dev.jsonl`` (SWE-bench's development
split: real issues of six projects); the other projects' are taken one in ``--every``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import codecite

REPORTS = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "swebench-dev.jsonl"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="the project's tree (indexed)")
    parser.add_argument("--index", required=True, help="its index folder")
    parser.add_argument("--repo", required=True, help="its name in the reports (owner/name)")
    parser.add_argument("--reports", default=str(REPORTS), help="SWE-bench-style JSONL")
    parser.add_argument("--every", type=int, default=3, help="one in N other reports")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in Path(args.reports).read_text().splitlines() if line]
    own = [r for r in rows if r["repo"] == args.repo]
    other = [r for r in rows if r["repo"] != args.repo][:: args.every]
    if not own:
        raise SystemExit(f"no report of {args.repo} in {args.reports}")
    with codecite.open_index(Path(args.root), index_dir=Path(args.index), create=False) as idx:
        for name, reports in (("own", own), ("other projects'", other)):
            declined = framed = 0
            for r in reports:
                answer = idx.ask(r["problem_statement"], "extractive")
                declined += answer.insufficient
                framed += bool((answer.signals or {}).get("framed"))
            print(f"{name} reports: {len(reports)}, declined {declined}, framed {framed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
