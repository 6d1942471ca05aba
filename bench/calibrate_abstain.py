"""Calibrate abstention ("not enough information in the indexed code"):

    python bench/calibrate_abstain.py [REPO] [GOLDEN.jsonl] [UNANSWERABLE.jsonl]

Indexes the shop fixture (default) and computes the retrieval-confidence signals
(best cosine similarity, share of question terms found in the top hits) for the
answerable golden questions and for questions the repository cannot answer.
Prints the distributions and the (min_similarity, min_coverage) pair that
classifies best: abstain when similarity < s AND coverage < c. Answerable
questions wrongly refused cost twice as much as unanswerable ones answered.
"""

from __future__ import annotations

import itertools
import json
import shutil
import sys
import tempfile
from pathlib import Path

import codecite
from codecite.answer.answerer import confidence
from codecite.evaluate import load_golden
from codecite.retrieve import Searcher
from codecite.retrieve.intent import analyse

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
MISSED_ANSWER_COST = 2.0


def signals(searcher: Searcher, queries: list[str]) -> list[dict[str, float]]:
    out = []
    for q in queries:
        hits = searcher.search(q, k=12, budget=searcher.config.answer_context_tokens).hits
        out.append(confidence(analyse(q), hits))
    return out


def main() -> None:
    args = sys.argv[1:]
    golden = load_golden(args[1] if len(args) > 1 else FIXTURES / "shop_golden.jsonl")
    unanswerable = load_golden_queries(
        Path(args[2]) if len(args) > 2 else FIXTURES / "shop_unanswerable.jsonl"
    )
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(args[0]) if args else Path(tmp) / "shop"
        if not args:
            shutil.copytree(FIXTURES / "shop", repo)
        with codecite.open_index(repo) as idx:
            idx.update()
            searcher = idx.searcher
            pos = signals(searcher, [g.query for g in golden])
            neg = signals(searcher, unanswerable)
    best = None
    for s, c in itertools.product([x / 100 for x in range(20, 61)], [x / 20 for x in range(21)]):
        refused = sum(p["similarity"] < s and p["coverage"] < c for p in pos)
        answered = sum(not (n["similarity"] < s and n["coverage"] < c) for n in neg)
        cost = MISSED_ANSWER_COST * refused + answered
        if best is None or cost < best[0]:
            best = (cost, s, c, refused, answered)
    assert best is not None
    _, s, c, refused, answered = best
    for label, rows in (("answerable", pos), ("unanswerable", neg)):
        sims = sorted(r["similarity"] for r in rows)
        covs = sorted(r["coverage"] for r in rows)
        print(
            f"{label:12s} n={len(rows)} similarity min/median/max {sims[0]:.3f}/"
            f"{sims[len(sims) // 2]:.3f}/{sims[-1]:.3f}  coverage min/median/max "
            f"{covs[0]:.2f}/{covs[len(covs) // 2]:.2f}/{covs[-1]:.2f}"
        )
    print(
        f"best: abstain_min_similarity={s:.2f} abstain_min_coverage={c:.2f}: "
        f"{refused}/{len(pos)} answerable refused, {answered}/{len(neg)} unanswerable "
        "answered"
    )
    print(json.dumps({"answerable": pos, "unanswerable": neg}))


def load_golden_queries(path: Path) -> list[str]:
    lines = path.read_text().splitlines()
    return [json.loads(ln)["query"] for ln in lines if ln.strip() and not ln.startswith("//")]


if __name__ == "__main__":
    main()
