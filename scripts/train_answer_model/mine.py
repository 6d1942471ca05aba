"""Step 2 of the answer model's recipe: each training question asked of its project's
index, and of another project's, through the same search and the same features
``ask`` uses (``codecite.answer.features.observe``).

- *own*: a question of project P asked of P's index; each of search's first
  ``EVIDENCE_HITS`` hits is labelled right when it is the documented definition (it
  overlaps the definition's lines and at least half of its own lines are in them: a
  class skeleton holding a method is not that method);
- *cross*: a question of another project asked of P's index (negatives for abstention,
  made in any number: ``--cross`` per project);

each twice: on the complete index and as the index is right after ``codecite index``
(keyword + static tiers only).

    python scripts/train_answer_model/mine.py --workdir /work/answer-train [--set commits]

Writes ``WORKDIR/mined/<name>.npz`` per project (``mined-commits/`` for the commits'
questions, asked of the index of the released tree with its docstrings).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import itertools
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import codecite
from codecite.answer.answerer import ASKED_K, SPOT, line_embedder
from codecite.answer.features import EVIDENCE_HITS, HIT_FEATURES, code_holds, observe
from codecite.question import read

SEED = 20261206
#: Each question is asked as an index answers it once complete (keyword + the model's
#: vectors) and right after ``codecite index`` (keyword + static, the model's vectors
#: still being computed), so the model has seen both.
TIERS: tuple[tuple[str, ...], ...] = (("static", "model"), ("static",))


#: The question sets: their files, the index they are asked of, where they are mined to.
SETS = {
    "docstrings": (("golden.jsonl", "golden-tests.jsonl"), "index", "mined"),
    "commits": (("golden-commits.jsonl",), "index-full", "mined-commits"),
    "paragraphs": (("golden-paragraphs.jsonl",), "index", "mined-paragraphs"),
}


def load_golden(folder: Path, kind: str = "docstrings") -> list[dict[str, Any]]:
    """A project's questions of one set: its definitions' docstrings, then its tests'
    (``docstrings``); its commits' subjects (``commits``, from ``commits.py``)."""
    rows = []
    for name in SETS[kind][0]:
        path = folder / name
        if path.is_file():
            rows += [json.loads(line) for line in path.read_text().splitlines() if line]
    return rows


def root(folder: Path, kind: str) -> Path:
    """The tree a set's index was made of: the stripped copy, or the released sdist."""
    if kind in ("docstrings", "paragraphs"):
        return folder / "tree"
    (source,) = [p for p in (folder / "download" / "src").iterdir() if p.is_dir()]
    return source


def right(hit: Any, g: dict[str, Any]) -> bool:
    """Whether ``hit`` is the code that answers ``g`` (any of its ``refs`` when it has
    several: a commit that changed two functions)."""
    if "refs" in g:
        return any(right(hit, ref) for ref in g["refs"])
    c = hit.chunk
    if c.path != g["path"] or c.end_line < g["start"] or g["end"] < c.start_line:
        return False
    inside = min(c.end_line, g["end"]) - max(c.start_line, g["start"]) + 1
    return inside * 2 >= c.end_line - c.start_line + 1


def on_the_spot(searcher: Any, row_of: dict[str, int], query: str, hits: list[Any]) -> list[Any]:
    """The hits with the model's cosine to the query, as ``Searcher.fill_similarity``
    computes it for an index whose model tier is still being filled (here read from the
    complete tier: the same vectors)."""
    if not row_of:
        return hits
    vector = searcher.embed_query(query)
    matrix = searcher.vectors.matrix
    return [
        dataclasses.replace(h, similarity=float(matrix[row_of[h.chunk.id]] @ vector))
        if h.chunk.id in row_of
        else h
        for h in hits
    ]


def mine(
    folder: Path,
    others: list[dict[str, Any]],
    out: Path,
    kind: str = "docstrings",
    names_of: str = "asked",
) -> None:
    """``names_of``: the index whose code decides which of a question's names the
    project holds: "asked" (the index the question is asked of) or "full" (the
    released tree's, docstrings kept: a user's index holds its docstrings, so a name
    that only the stripped docstring wrote is no unknown name there)."""
    static = line_embedder()
    golden = load_golden(folder, kind)
    keys = ("X", "y", "n", "unknown", "soft", "absent", "terms", "own")
    rows: dict[str, list[Any]] = {k: [] for k in keys}
    index_dir = folder / SETS[kind][1]
    with contextlib.ExitStack() as stack:
        idx = stack.enter_context(
            codecite.open_index(root(folder, kind), index_dir=index_dir, create=False)
        )
        searcher = idx.searcher
        stats = searcher.term_stats
        holds = code_holds(idx.store, stats.df)
        if names_of == "full":
            full = stack.enter_context(
                codecite.open_index(root(folder, "commits"), index_dir=folder / "index-full",
                                    create=False)
            )  # fmt: skip
            holds = code_holds(full.store, full.searcher.term_stats.df)
        model = searcher.vectors
        row_of = {chunk_id: row for row, chunk_id in enumerate(model.ids)} if model else {}
        asked_of = [(True, g) for g in golden] + [(False, g) for g in others]
        # right after ``codecite index`` (the static tier), ``ask`` ranks its first
        # candidates by the model's cosine computed on the spot: read from the tier
        fill = functools.partial(on_the_spot, searcher, row_of)
        for (own, g), tiers in itertools.product(asked_of, TIERS):
            asked = read(g["query"])  # as ``ask`` reads it: once, passed down
            spot = 0 if "model" in tiers else SPOT
            result = searcher.search(asked, k=ASKED_K, tiers=tiers, spot=spot, spot_fill=fill)
            hits = list(result.hits[:EVIDENCE_HITS])
            if "model" in tiers:
                hits = searcher.fill_similarity(g["query"], hits)
            else:  # as ``ask`` does while the model tier fills: the hits' cosines now
                hits = on_the_spot(searcher, row_of, g["query"], hits)
            obs = observe(asked, hits, stats.df, stats.documents, static, holds)
            X = np.zeros((EVIDENCE_HITS, len(HIT_FEATURES)), dtype=np.float32)
            y = np.zeros(EVIDENCE_HITS, dtype=np.int8)
            X[: len(hits)] = obs.evidence
            if own:
                y[: len(hits)] = [right(h, g) for h in hits]
            rows["X"].append(X)
            rows["y"].append(y)
            rows["n"].append(len(hits))
            rows["unknown"].append(obs.unknown)
            rows["soft"].append(obs.soft_unknown)
            rows["absent"].append(obs.absent)
            rows["terms"].append(len(obs.terms.stems))
            rows["own"].append(own)
    np.savez_compressed(out, **{k: np.array(v) for k, v in rows.items()})


def nearest_projects(golden: dict[str, list[dict[str, Any]]], n: int) -> dict[str, list[str]]:
    """Each project's ``n`` closest others by the mean static vector of their questions."""
    embed = line_embedder()
    if embed is None:
        raise SystemExit("the static model is needed for --nearest")
    names = sorted(golden)
    means = []
    for name in names:
        vectors = embed([g["query"] for g in golden[name][:400]])
        mean = vectors.mean(0)
        means.append(mean / max(float(np.linalg.norm(mean)), 1e-9))
    sims = np.array(means) @ np.array(means).T
    out = {}
    for i, name in enumerate(names):
        ranked = [names[j] for j in np.argsort(-sims[i]) if j != i]
        out[name] = ranked[:n]
        print(f"{name}: nearest {', '.join(out[name])}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default="/work/answer-train")
    parser.add_argument("--cross", type=int, default=50, help="other projects' questions each")
    parser.add_argument("--set", choices=sorted(SETS), default="docstrings", help="questions")
    parser.add_argument(
        "--nearest", type=int, default=0,
        help="take the other projects' questions from the N projects closest in meaning "
        "(their questions' mean static vectors): harder negatives (a variant)",
    )  # fmt: skip
    parser.add_argument("--out", default="", help="the folder mined into (default: the set's)")
    parser.add_argument(
        "--names-of", choices=("asked", "full"), default="asked",
        help="the index whose code decides a question's unknown names: the one asked, or "
        "the released tree's with its docstrings (commits.py's index-full): a variant",
    )  # fmt: skip
    args = parser.parse_args(argv)
    workdir = Path(args.workdir)
    folders = sorted(p for p in workdir.iterdir() if (p / ".complete").is_file())
    golden = {f.name: load_golden(f, args.set) for f in folders}
    folders = [f for f in folders if golden[f.name]]
    mined = workdir / (args.out or SETS[args.set][2])
    mined.mkdir(exist_ok=True)
    near = nearest_projects(golden, args.nearest) if args.nearest else {}
    for folder in folders:
        out = mined / f"{folder.name}.npz"
        if out.is_file():
            continue
        sources = near.get(folder.name) or [name for name in golden if name != folder.name]
        pool = [g for name in sources for g in golden[name]]
        others = random.Random(f"{SEED}-{folder.name}").sample(pool, min(args.cross, len(pool)))
        started = time.perf_counter()
        mine(folder, others, out, args.set, args.names_of)
        print(f"{folder.name}: {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
