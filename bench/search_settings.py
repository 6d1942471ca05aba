"""Search's hand-set numbers measured on open data (issue 38, item 4)::

    python bench/search_settings.py --workdir /work/answer-train --json out.json
    python bench/search_settings.py --variants rrf_k=30,rrf_k=120 --per-project 40

The training projects of the answer model (``scripts/train_answer_model``: PyPI
projects, none of an evaluation set; 24 at stop 55, 71 since stop 57: every project
prepared under ``--workdir`` is read) already hold two sets of questions with the code
that answers them: their docstrings' first sentences asked of an index without
docstrings, and their commits' subjects (people's words) asked of the released tree,
right = the definitions the commit changed. Each question is searched as ``ask``
searches it (read once, the complete index), with the shipped settings and with each
variant (one setting changed at a time). Reported per set: a right chunk first (hit@1),
within the first 3 and 5, and MRR over the first 10, as the mean over projects (each
project weighs the same), with how many projects a variant wins and loses on. Nothing
is fitted: a variant is a setting's value, chosen here only among the few given, and a
change must then also hold on the benchmarks that never chose it.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import codecite
from codecite.config import load_config
from codecite.question import read

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "scripts" / "train_answer_model"))

from mine import SETS, load_golden, right, root  # noqa: E402

SEED = 20261207
#: The variants measured by default: each hand-set number of search's fusion and
#: reranking one step below and above its value (a switch: off).
DEFAULT_VARIANTS = (
    "rrf_k=30", "rrf_k=120",
    "prose_vector_weight=0.5", "prose_vector_weight=1.5",
    "keyword_weight=0.5", "keyword_weight=1.5",
    "rerank_path_prior=0", "rerank_path_prior=0.3",
    "rerank_non_code_prior=0.15", "rerank_non_code_prior=0.6",
    "rerank_agreement=0", "rerank_agreement=0.3",
    "rerank_graph_proximity=0", "rerank_graph_proximity=0.2",
    "rerank_exact_symbol=0.25", "rerank_exact_symbol=1.0",
    "rerank_coarse_kind=0", "rerank_coarse_kind=0.15",
    "max_chunks_per_file=2", "max_chunks_per_file=5",
    "bm25_symbol_weight=2", "bm25_symbol_weight=8",
    "bm25_path_weight=1", "bm25_path_weight=4",
    "static_weight_full=0.5", "expand=false", "rerank=false",
)  # fmt: skip
K = 10
METRICS = ("hit1", "hit3", "hit5", "mrr")


def parse(spec: str) -> tuple[str, dict[str, Any]]:
    """``name=value[+name=value...]`` -> (label, the settings with their values typed as
    the defaults')."""
    changes: dict[str, Any] = {}
    search = load_config().search
    for part in spec.split("+") if spec != "shipped" else ():
        name, _, raw = part.partition("=")
        if not raw or not hasattr(search, name):
            raise SystemExit(f"not a search setting with a value: {part!r} (name=value)")
        default = getattr(search, name)
        if isinstance(default, bool):
            changes[name] = raw.lower() in ("1", "true", "on", "yes")
        else:
            changes[name] = type(default)(raw)
    return spec, changes


def rank_of(hits: list[Any], g: dict[str, Any]) -> int:
    """1-based rank of the first right hit in the first :data:`K` (0: none)."""
    return next((i + 1 for i, h in enumerate(hits[:K]) if right(h, g)), 0)


def measure(
    folder: Path, kind: str, questions: list[dict[str, Any]], changes: dict[str, Any]
) -> list[int]:
    """The rank of each question's first right hit with ``changes`` to the settings."""
    tree = root(folder, kind)
    config = load_config(tree).replace(**changes)
    index_dir = folder / SETS[kind][1]
    with codecite.open_index(tree, index_dir=index_dir, config=config, create=False) as idx:
        search = idx.searcher.search
        return [rank_of(list(search(read(g["query"]), k=K).hits), g) for g in questions]


def summary(ranks: list[int]) -> dict[str, float]:
    n = max(len(ranks), 1)
    return {
        "hit1": sum(r == 1 for r in ranks) / n,
        "hit3": sum(0 < r <= 3 for r in ranks) / n,
        "hit5": sum(0 < r <= 5 for r in ranks) / n,
        "mrr": sum(1 / r for r in ranks if r) / n,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default="/work/answer-train")
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS))
    parser.add_argument("--sets", default="docstrings,commits")
    parser.add_argument("--per-project", type=int, default=60, help="questions a project and set")
    parser.add_argument("--json", default="", help="write every rank here")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir)
    folders = sorted(p for p in workdir.iterdir() if (p / ".complete").is_file())
    variants = [parse(s) for s in ["shipped", *[v for v in args.variants.split(",") if v]]]
    ranks: dict[str, dict[str, dict[str, list[int]]]] = {}
    for kind in args.sets.split(","):
        for folder in folders:
            golden = load_golden(folder, kind)
            if not golden:
                continue
            sample = random.Random(f"{SEED}-{folder.name}-{kind}").sample(
                golden, min(args.per_project, len(golden))
            )
            started = time.perf_counter()
            for label, changes in variants:
                got = measure(folder, kind, sample, changes)
                ranks.setdefault(kind, {}).setdefault(label, {})[folder.name] = got
            print(f"{kind} {folder.name}: {len(sample)} q, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(ranks))
    report(ranks)
    return 0


def report(ranks: dict[str, dict[str, dict[str, list[int]]]]) -> None:
    for kind, by_variant in ranks.items():
        base = by_variant["shipped"]
        asked = sum(map(len, base.values()))
        print(f"\n{kind} ({len(base)} projects, {asked} questions; mean over projects; "
              "wins/losses: projects whose MRR rose/fell by 0.01+)")  # fmt: skip
        print("| variant | hit@1 | hit@3 | hit@5 | MRR@10 | wins | losses |")
        print("|---|---|---|---|---|---|---|")
        b = {p: summary(r)["mrr"] for p, r in base.items()}
        for label, per in by_variant.items():
            s = {p: summary(r) for p, r in per.items()}
            mean = {m: statistics.mean(x[m] for x in s.values()) for m in METRICS}
            wins = sum(s[p]["mrr"] >= b[p] + 0.01 for p in s)
            losses = sum(s[p]["mrr"] <= b[p] - 0.01 for p in s)
            print(f"| {label} | {mean['hit1']:.3f} | {mean['hit3']:.3f} | {mean['hit5']:.3f} | "
                  f"{mean['mrr']:.3f} | {wins} | {losses} |")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
