"""Learn the weights of evidence selection (``codecite.answer.evidence.EVIDENCE_WEIGHTS``)
on the answer benchmark (run by hand; needs the trees and indexes that
``bench/answer_bench.py`` builds)::

    python bench/answer_bench.py --no-baseline      # trees + indexes, once
    python bench/answer_train.py                     # leave-one-project-out, then all
    python bench/answer_train.py --write             # also rewrite the weights in place

For every answerable question, every line of its answer context (the hits ``ask``
reads, bridges included) is a candidate with the features the evidence finder
computes; a candidate is right when the block it would be shown as overlaps a
reference range. The model is linear, trained listwise: the softmax of the scores over
a question's candidates, the log of the probability of its right candidates maximised
(L2-regularised, plain gradient descent in numpy, fixed seed and steps: repeatable).

What it reports is how well the weights *carry*: each project's questions scored with
weights learnt on the other five (evidence@3 and lead of the evidence alone, like the
benchmark's but before the lead sentence and the graph facts), next to the hand-set
weights of before.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from answer_bench import WORKDIR  # noqa: E402
from answer_data import Question, load, projects  # noqa: E402

import codecite  # noqa: E402
from codecite.answer import evidence as evidence_module  # noqa: E402
from codecite.answer.answerer import _LineCache, line_embedder  # noqa: E402
from codecite.answer.evidence import MERGE_GAP, PER_CHUNK, Evidence, EvidenceFinder  # noqa: E402
from codecite.answer.extractive import _block_of  # noqa: E402
from codecite.answer.shape import question_shape  # noqa: E402
from codecite.retrieve.question import read_question  # noqa: E402

STEPS = 600
LEARNING_RATE = 0.5
L2 = 0.01
#: The features a weight is learnt for, in a fixed order (others weigh 0).
FEATURES = tuple(
    dict.fromkeys([
        *evidence_module.EVIDENCE_WEIGHTS,
        *(f"role_{r}" for r in ("value", "raise", "branch", "return", "log", "definition",
                                "doc", "line")),
    ])
)  # fmt: skip


@dataclass
class Item:
    """One question's candidates: features (rows), whether each is right, and what the
    selection needs to pick distinct blocks."""

    question: Question
    x: np.ndarray
    right: np.ndarray
    lead_right: np.ndarray
    places: list[tuple[str, str, int, int]]  # chunk id, path, start, end (tight)


def candidates(idx: codecite.Index, q: Question) -> Item | None:
    answerer = idx.answerer
    read = read_question(q.question)
    shape = question_shape(q.question, read)
    _, sought = answerer.term_weights(q.question, read, shape)
    context = answerer.context.build(q.question, read, shape, None, sought)
    lines = _LineCache(answerer._disk_lines)
    finder = EvidenceFinder(
        shape, read, sought, answerer.config, lines, context.tested,
        line_embedder(),
    )  # fmt: skip
    top = max((h.score for h in context.hits), default=0.0)
    finder.measure(context.hits)
    found: list[Evidence] = []
    for rank, hit in enumerate(context.hits):
        found += finder._chunk_evidence(hit, rank, top)
    if not found:
        return None
    x = np.array([[ev.features.get(f, 0.0) for f in FEATURES] for ev in found], dtype=float)
    right, lead = [], []
    for ev in found:
        block = _block_of(ev, lines)
        right.append(any(r.overlaps(ev.path, block.start_line, block.end_line) for r in q.refs))
        lead.append(any(r.overlaps(ev.path, ev.start_line, ev.end_line) for r in q.refs))
    places = [(ev.chunk.id, ev.path, ev.start_line, ev.end_line) for ev in found]
    return Item(q, x, np.array(right), np.array(lead), places)


def pick(item: Item, scores: np.ndarray, k: int = 3) -> list[int]:
    """The candidates the finder would show first (its greedy distinct-block rule)."""
    chosen: list[int] = []
    per_chunk: dict[str, int] = {}
    for i in np.argsort(-scores, kind="stable"):
        cid, path, start, end = item.places[i]
        if any(
            item.places[j][1] == path
            and start <= item.places[j][3] + MERGE_GAP
            and item.places[j][2] <= end + MERGE_GAP
            for j in chosen
        ):
            continue
        if per_chunk.get(cid, 0) >= PER_CHUNK:
            continue
        per_chunk[cid] = per_chunk.get(cid, 0) + 1
        chosen.append(int(i))
        if len(chosen) == k:
            break
    return chosen


def evaluate(items: Sequence[Item], w: np.ndarray) -> tuple[float, float]:
    """(evidence@3, lead) of the evidence picked with weights ``w``."""
    e3 = lead = 0
    for item in items:
        chosen = pick(item, item.x @ w)
        e3 += bool(chosen) and bool(item.right[chosen].any())
        lead += bool(chosen) and bool(item.lead_right[chosen[0]])
    n = len(items) or 1
    return e3 / n, lead / n


def train(items: Sequence[Item], start: np.ndarray) -> np.ndarray:
    """Listwise softmax: maximise log sum_{right} p(candidate | question)."""
    usable = [it for it in items if it.right.any()]
    w = start.copy()
    for _ in range(STEPS):
        grad = L2 * w
        for it in usable:
            s = it.x @ w
            s -= s.max()
            p = np.exp(s)
            p /= p.sum()
            q = p * it.right
            q /= q.sum()
            grad -= (q - p) @ it.x / len(usable)
        w -= LEARNING_RATE * grad
    return w


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default=str(WORKDIR))
    parser.add_argument("--write", action="store_true", help="rewrite EVIDENCE_WEIGHTS")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir)
    by_project: dict[str, list[Item]] = {}
    for name in projects():
        index = workdir / "index" / "current" / name
        with codecite.open_index(workdir / "trees" / name, index_dir=index, create=False) as idx:
            items = [candidates(idx, q) for q in load(name) if q.answerable]
        by_project[name] = [it for it in items if it is not None]
        print(f"{name}: {len(by_project[name])} questions", file=sys.stderr)
    hand = np.array([evidence_module.EVIDENCE_WEIGHTS.get(f, 0.0) for f in FEATURES])
    rows = ["| project | hand-set e@3 / lead | learnt on the other five e@3 / lead |",
            "|---|---|---|"]  # fmt: skip
    totals = np.zeros(4)
    everything = [it for items in by_project.values() for it in items]
    for name, items in by_project.items():
        others = [it for n, its in by_project.items() if n != name for it in its]
        w = train(others, hand)
        before, after = evaluate(items, hand), evaluate(items, w)
        totals += np.array([*before, *after]) * len(items)
        rows.append(
            f"| {name} | {before[0]:.2f} / {before[1]:.2f} | {after[0]:.2f} / {after[1]:.2f} |"
        )
    n = len(everything)
    rows.append(
        f"| all (n={n}) | {totals[0] / n:.3f} / {totals[1] / n:.3f} | "
        f"{totals[2] / n:.3f} / {totals[3] / n:.3f} |"
    )
    print("\n".join(rows))
    final = train(everything, hand)
    learnt = {f: round(float(v), 3) for f, v in zip(FEATURES, final, strict=True)}
    print("weights learnt on all:", json.dumps(learnt))
    if args.write:
        write_weights(learnt)
    return 0


def write_weights(weights: dict[str, float]) -> None:
    path = Path(evidence_module.__file__)
    text = path.read_text(encoding="utf-8")
    body = "".join(f'    "{k}": {v},\n' for k, v in weights.items())
    new = re.sub(
        r"EVIDENCE_WEIGHTS: dict\[str, float\] = \{\n.*?\n\}  # fmt: skip",
        lambda _: "EVIDENCE_WEIGHTS: dict[str, float] = {\n" + body + "}",
        text,
        flags=re.S,
    )
    new = re.sub(
        r"EVIDENCE_WEIGHTS: dict\[str, float\] = \{\n.*?\n\}\n",
        lambda _: "EVIDENCE_WEIGHTS: dict[str, float] = {\n" + body + "}\n",
        new,
        count=1,
        flags=re.S,
    )
    path.write_text(new, encoding="utf-8")
    print(f"wrote the weights into {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
