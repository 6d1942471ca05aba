"""Step 4 of the answer model's recipe: the focus line of a block (``answer/focus.py``).

Reads ``golden-lines.jsonl`` (``lines.py``: commit subjects, each with a definition the
commit changed and the lines it added there), computes every line's
``LINE_FEATURES`` as an answer does (the question read once, its terms weighed by the
released tree's index, the static code model's cosines), fits a listwise linear score
(softmax over a definition's lines, the right lines the target, plain gradient descent
with fixed steps, numpy only) and validates it leaving one project out, beside the rule
it replaces (the line holding most of the question's words; ties: the first):

- **exact**: the line picked is one the commit added;
- **shown**: one the commit added lies within the lines a block shows around the pick
  (from 2 above to 7 below).

    python scripts/train_answer_model/train_lines.py --workdir /work/answer-train --write

``--write`` stores ``line_features``, ``line_weights`` and ``line_validation`` in
``answer-model.json`` (``train.py --write`` keeps them).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import codecite
from codecite.answer.answerer import line_embedder
from codecite.answer.compose import whole_lines
from codecite.answer.focus import LINE_FEATURES, MAX_LINES, line_cosines, line_features
from codecite.question import read

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from commits import source_tree  # noqa: E402
from prepare import projects as listed_specs  # noqa: E402

TARGET = HERE.parents[1] / "src" / "codecite" / "answer" / "data" / "answer-model.json"

L2 = 1e-3
STEPS = 800
RATE = 0.5
#: The lines a block shows around its focus (blocks.widen: up to 10, mostly below).
ABOVE, BELOW = 2, 7


@dataclass
class Lists:
    name: str
    X: np.ndarray  # (N, L, F)
    y: np.ndarray  # (N, L) 0/1
    mask: np.ndarray  # (N, L) bool


def mine(name: str, folder: Path, static: Any, cache: Path) -> Lists | None:
    """The lists of ``name`` (read from ``cache/<name>.npz`` when mined before with
    these features)."""
    path = folder / "golden-lines.jsonl"
    if not path.is_file():
        return None
    kept = cache / f"{name}.npz"
    if kept.is_file():
        d = np.load(kept)
        if tuple(d["features"]) == LINE_FEATURES:
            return Lists(name, d["X"], d["y"], d["mask"])
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    tree = source_tree(folder)
    X = np.zeros((len(rows), MAX_LINES, len(LINE_FEATURES)), dtype=np.float32)
    y = np.zeros((len(rows), MAX_LINES), dtype=np.int8)
    mask = np.zeros((len(rows), MAX_LINES), dtype=bool)
    texts: dict[str, list[str]] = {}
    with codecite.open_index(tree, index_dir=folder / "index-full", create=False) as idx:
        stats = idx.searcher.term_stats
        for i, g in enumerate(rows):
            if g["path"] not in texts:
                texts[g["path"]] = (tree / g["path"]).read_text(errors="replace").splitlines()
            lines = texts[g["path"]][g["start"] - 1 : g["end"]][:MAX_LINES]
            asked = read(g["query"])
            terms = asked.terms(stats.df, stats.documents)
            cos = line_cosines(asked.subject, lines, static)
            n = len(lines)
            X[i, :n] = line_features(lines, whole_lines(lines), terms, cos)
            mask[i, :n] = True
            y[i, [n_ - g["start"] for n_ in g["lines"] if n_ - g["start"] < n]] = 1
    keep = (y.sum(1) > 0) & (mask.sum(1) > 1)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(kept, X=X[keep], y=y[keep], mask=mask[keep], features=LINE_FEATURES)
    return Lists(name, X[keep], y[keep], mask[keep])


def fit(X: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    target = y / y.sum(1, keepdims=True)
    w = np.zeros(X.shape[2])
    w[LINE_FEATURES.index("share")] = 1.0  # start from the rule it replaces
    for _ in range(STEPS):
        s = np.where(mask, X @ w, -1e9)
        p = np.exp(s - s.max(1, keepdims=True)) * mask
        p /= p.sum(1, keepdims=True)
        w -= RATE * (np.einsum("nl,nlf->f", p - target, X) / len(X) + L2 * w)
    return w


def picks_by_rule(X: np.ndarray, mask: np.ndarray) -> np.ndarray:
    share = np.where(mask, X[..., LINE_FEATURES.index("share")], -1.0)
    return share.argmax(1)  # the first of the largest, as compose.focus_of


def picks_by(w: np.ndarray, X: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.where(mask, X @ w, -1e9).argmax(1)


def rates(pick: np.ndarray, y: np.ndarray) -> dict[str, float]:
    rows = np.arange(len(y))
    exact = y[rows, pick] > 0
    shown = np.zeros(len(y), dtype=bool)
    for d in range(-ABOVE, BELOW + 1):
        at = np.clip(pick + d, 0, y.shape[1] - 1)
        shown |= y[rows, at] > 0
    return {"n": len(y), "exact": float(exact.mean()), "shown": float(shown.mean())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default="/work/answer-train")
    parser.add_argument("--projects", default="projects.txt", help="the list it was prepared from")
    parser.add_argument("--write", action="store_true", help=f"store in {TARGET.name}")
    parser.add_argument(
        "--drop", default="", help="features left out (weight 0), comma-separated: a variant"
    )
    args = parser.parse_args(argv)
    dropped = [LINE_FEATURES.index(f) for f in args.drop.split(",") if f]
    static = line_embedder()
    data = [
        lists
        for spec in listed_specs(HERE / args.projects)
        if (
            lists := mine(
                spec.split("==")[0],
                Path(args.workdir) / spec.split("==")[0],
                static,
                Path(args.workdir) / "mined-lines",
            )
        )
        is not None
        and len(lists.y)
    ]
    if len(data) < 3:
        raise SystemExit("run lines.py on at least 3 projects first")
    for d in data:  # a left-out feature reads 0: its weight stays 0
        d.X[..., dropped] = 0
    per: dict[str, dict[str, Any]] = {}
    for i, test in enumerate(data):
        train = [d for j, d in enumerate(data) if j != i]
        w = fit(*(np.concatenate([getattr(d, k) for d in train]) for k in ("X", "y", "mask")))
        rule = rates(picks_by_rule(test.X, test.mask), test.y)
        model = rates(picks_by(w, test.X, test.mask), test.y)
        per[test.name] = {"n": rule["n"], "rule": rule, "model": model}
        print(f"{test.name:12} n={rule['n']:4} exact {rule['exact']:.3f} -> {model['exact']:.3f}"
              f"  shown {rule['shown']:.3f} -> {model['shown']:.3f}", flush=True)  # fmt: skip
    mean = {
        who: {k: round(float(np.mean([p[who][k] for p in per.values()])), 4)
              for k in ("exact", "shown")}
        for who in ("rule", "model")
    }  # fmt: skip
    print(json.dumps({"mean_of_projects": mean}, indent=1))
    w = fit(*(np.concatenate([getattr(d, k) for d in data]) for k in ("X", "y", "mask")))
    print(json.dumps(dict(zip(LINE_FEATURES, np.round(w, 4).tolist(), strict=True)), indent=1))
    if args.write:
        model_file = json.loads(TARGET.read_text())
        model_file["line_features"] = list(LINE_FEATURES)
        model_file["line_weights"] = [round(float(v), 6) for v in w]
        model_file["line_validation"] = {
            "method": "leave one project out",
            "definitions": int(sum(len(d.y) for d in data)),
            "mean_of_projects": mean,
        }
        TARGET.write_text(json.dumps(model_file, indent=1) + "\n")
        print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
