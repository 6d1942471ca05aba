"""Train codecite's static code model (issue 24) on a CPU.

    pip install -e '.[train]'              # torch, for training only
    python scripts/train_code_model/distil.py                       # the starting point
    python scripts/train_code_model/train.py --pairs /work/model-data/pairs \
        --init /work/model-data/init/distilled.npy --out src/codecite/embed/data

The model is a table of token vectors over the bundled MiniLM tokenizer's vocabulary:
a text's vector is the L2-normalised sum of its tokens' rows (what
``codecite.embed.static.StaticEmbedder`` computes). Training starts from the
distilled table (``distil.py``) and minimises the in-batch-negative InfoNCE loss of
(query, code) pairs in both directions, ``softmax(q·d / τ)`` over the batch's code
texts and the reverse; pairs of one group (one commit's changed functions) are
never negatives of one another. Batches are cut from pairs ordered by source (one
distribution or repository at a time, sources in random order), so negatives come
from the same project as in a real search (``--batching random`` mixes sources).
SparseAdam (Adam on the rows each batch uses), a fixed seed, float32; the table ships
as float16.

Prints and writes the figures of the run (loss, held-out MRR, the dev check of
``devset.py``, CPU and wall seconds) into the manifest beside the table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import devset  # noqa: E402


def load_pairs(folder: Path, kinds: list[str]) -> list[dict[str, str]]:
    pairs = []
    for kind in kinds:
        with (folder / f"{kind}.jsonl").open(encoding="utf-8") as fh:
            pairs += [json.loads(line) for line in fh]
    return pairs


def source_of(group: str) -> str:
    """The distribution or repository a pair's group belongs to: ``owner/name@commit``
    (a commit), ``name:n`` (a distribution's pair; an npm name may be ``@scope/name``)."""
    return group.split("@")[0] if "@" in group[1:] else group.split(":")[0]


def held_out(group: str, share: float, by_source: bool = True) -> bool:
    """Whole sources are held out (a stable hash of the source's name); with few
    sources (one's own repositories), whole groups."""
    key = source_of(group) if by_source else group
    return zlib.crc32(key.encode()) % 1000 < share * 1000


def tokenize(texts: list[str]) -> list[np.ndarray]:
    from codecite.embed.static import load_tokenizer

    tokenizer = load_tokenizer()
    encode = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)
    out = []
    for start in range(0, len(texts), 4096):
        for e in encode(texts[start : start + 4096], add_special_tokens=False):
            out.append(np.asarray(e.ids, dtype=np.int64))
    return out


class Model:
    """The token table and its text vectors (torch)."""

    def __init__(self, init: np.ndarray, specials: list[int]) -> None:
        import torch

        self.torch = torch
        weight = np.vstack([init, np.zeros((1, init.shape[1]), np.float32)])
        weight[[s for s in specials if s < len(init)]] = 0.0
        self.pad = len(init)
        self.weight = torch.nn.Parameter(torch.from_numpy(weight))
        self.frozen = torch.zeros(len(weight), dtype=torch.bool)
        self.frozen[[*specials, self.pad]] = True

    def encode(self, ids: list[np.ndarray]) -> Any:
        torch = self.torch
        lengths = [max(len(i), 1) for i in ids]
        flat = np.concatenate([i if len(i) else np.array([self.pad]) for i in ids])
        flat = np.minimum(flat, self.pad)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        summed = torch.nn.functional.embedding_bag(
            torch.from_numpy(flat),
            self.weight,
            torch.from_numpy(offsets),
            mode="sum",
            sparse=True,  # gradients for the rows used only: SparseAdam updates just those
        )
        return torch.nn.functional.normalize(summed, dim=1)

    def table(self) -> np.ndarray:
        return self.weight.detach().numpy()[: self.pad].copy()


def batches(
    pairs: list[int], sources: list[str], size: int, mode: str, rng: random.Random
) -> list[list[int]]:
    """Batches of pair indices: by source (sources shuffled, pairs shuffled within each)
    or at random."""
    if mode == "random":
        order = pairs[:]
        rng.shuffle(order)
    else:
        by_source: dict[str, list[int]] = {}
        for i in pairs:
            by_source.setdefault(sources[i], []).append(i)
        groups = list(by_source.values())
        rng.shuffle(groups)
        order = []
        for group in groups:
            rng.shuffle(group)
            order += group
    cut = [order[i : i + size] for i in range(0, len(order), size)]
    rng.shuffle(cut)
    return [b for b in cut if len(b) > 1]


def info_nce(model: Model, q: Any, d: Any, groups: list[str], tau: float) -> Any:
    torch = model.torch
    logits = q @ d.T / tau
    ids = {g: n for n, g in enumerate(dict.fromkeys(groups))}
    g = torch.tensor([ids[x] for x in groups])
    same = (g[:, None] == g[None, :]) & ~torch.eye(len(groups), dtype=torch.bool)
    logits = logits.masked_fill(same, float("-inf"))
    target = torch.arange(len(groups))
    loss_q = torch.nn.functional.cross_entropy(logits, target)
    loss_d = torch.nn.functional.cross_entropy(logits.T, target)
    return (loss_q + loss_d) / 2


def heldout_mrr(model: Model, q_ids: list[np.ndarray], d_ids: list[np.ndarray]) -> float:
    """MRR of each held-out query's own code among all held-out code texts."""
    torch = model.torch
    with torch.no_grad():
        q = model.encode(q_ids)
        d = model.encode(d_ids)
        scores = q @ d.T
        own = scores.diagonal()[:, None]
        ranks = (scores > own).sum(dim=1) + 1
    return float((1.0 / ranks.double()).mean())


def dev_mrr(model: Model, data: dict[str, Any]) -> float:
    from codecite.embed.static import StaticEmbedder

    embedder = StaticEmbedder(model.table())
    return devset.file_mrr(data, lambda texts: embedder.embed(texts))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", default="/work/model-data/pairs")
    parser.add_argument("--kinds", default="docstrings,commits")
    parser.add_argument("--init", default="/work/model-data/init/distilled.npy")
    parser.add_argument("--dev", default="/work/model-data/dev")
    parser.add_argument("--out", default="/work/model-data/runs/latest")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--tau", type=float, default=0.05)
    parser.add_argument("--batching", choices=("source", "random"), default="source")
    parser.add_argument("--commit-weight", type=float, default=1.0, help="repeats of commits")
    parser.add_argument("--holdout", type=float, default=0.02)
    parser.add_argument("--max-pairs", type=int, default=0)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-dev", action="store_true")
    parser.add_argument("--save-epochs", action="store_true", help="a table after each epoch")
    args = parser.parse_args(argv)

    import torch

    started, cpu = time.perf_counter(), time.process_time()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    folder = Path(args.pairs)
    kinds = [k for k in args.kinds.split(",") if k]
    pairs = load_pairs(folder, kinds)
    if args.max_pairs and len(pairs) > args.max_pairs:
        pairs = rng.sample(pairs, args.max_pairs)
    by_source = len({source_of(p["g"]) for p in pairs}) >= 100
    test = [i for i, p in enumerate(pairs) if held_out(p["g"], args.holdout, by_source)]
    held = set(test)
    train = [i for i in range(len(pairs)) if i not in held]
    test = rng.sample(test, min(len(test), 4000))
    commits = [i for i in train if pairs[i]["src"] == "commit"]
    extra = int(len(commits) * (args.commit_weight - 1))
    if extra > 0:
        train += [commits[i % len(commits)] for i in range(extra)]
    q_ids = tokenize([p["q"] for p in pairs])
    d_ids = tokenize([p["d"] for p in pairs])
    groups = [p["g"] for p in pairs]
    sources = [source_of(g) for g in groups]
    print(f"{len(pairs)} pairs: {len(train)} training, {len(test)} held out", flush=True)

    from codecite.embed.static import load_tokenizer

    tokenizer = load_tokenizer()
    specials = [tokenizer.token_to_id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")]
    model = Model(np.load(args.init).astype(np.float32), specials)
    optimiser = torch.optim.SparseAdam([model.weight], lr=args.lr)
    data = None if args.no_dev else devset.build(Path(args.dev))
    test_q, test_d = [q_ids[i] for i in test], [d_ids[i] for i in test]
    figures: dict[str, Any] = {"epochs": []}
    figures["start"] = {
        "heldout_mrr": round(heldout_mrr(model, test_q, test_d), 4),
        "dev_file_mrr": round(dev_mrr(model, data), 4) if data else None,
    }
    print(f"start: {figures['start']}", flush=True)
    steps = 0
    for epoch in range(1, args.epochs + 1):
        losses = []
        plan = batches(train, sources, args.batch, args.batching, rng)
        for batch in plan:
            q = model.encode([q_ids[i] for i in batch])
            d = model.encode([d_ids[i] for i in batch])
            loss = info_nce(model, q, d, [groups[i] for i in batch], args.tau)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            with torch.no_grad():
                model.weight[model.frozen] = 0.0  # special tokens and padding stay zero
            losses.append(float(loss.detach()))
            steps += 1
        row = {
            "epoch": epoch,
            "steps": steps,
            "loss": round(float(np.mean(losses)), 4),
            "heldout_mrr": round(heldout_mrr(model, test_q, test_d), 4),
            "dev_file_mrr": round(dev_mrr(model, data), 4) if data else None,
            "cpu_s": round(time.process_time() - cpu, 1),
            "wall_s": round(time.perf_counter() - started, 1),
        }
        figures["epochs"].append(row)
        print(row, flush=True)
        if args.save_epochs:  # each epoch's table, to measure epochs on the benchmarks
            Path(args.out).mkdir(parents=True, exist_ok=True)
            np.save(Path(args.out) / f"table-epoch{epoch}.npy", model.table().astype(np.float16))

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = model.table().astype(np.float16)
    np.save(out / "table.npy", table)
    manifest = {
        "recipe": {
            "init": Path(args.init).name,
            "init_sha256": digest(Path(args.init)),
            "loss": "symmetric in-batch-negative InfoNCE, same-group pairs masked",
            "pooling": "sum of token rows, L2-normalised",
            "optimiser": "SparseAdam (Adam on the rows a batch uses)",
            **{k: getattr(args, k) for k in ("epochs", "batch", "lr", "tau", "batching")},
            "commit_weight": args.commit_weight,
            "holdout_share": args.holdout,
            "seed": args.seed,
            "threads": args.threads,
        },
        "data": {
            "kinds": kinds,
            "pairs": len(pairs),
            "training_pairs": len(train),
            "heldout_pairs": len(test),
            "files": {f"{k}.jsonl": digest(folder / f"{k}.jsonl") for k in kinds},
        },
        "figures": figures,
        "cpu_seconds": round(time.process_time() - cpu, 1),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "machine": {"cores": os.cpu_count(), "platform": platform.platform()},
        "torch": torch.__version__,
        "table": {
            "shape": list(table.shape),
            "dtype": "float16",
            "sha256": digest(out / "table.npy"),
        },
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps({k: manifest[k] for k in ("cpu_seconds", "wall_seconds")}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
