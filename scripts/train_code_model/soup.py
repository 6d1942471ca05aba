"""Average the tables of several training runs into one (a "model soup", issue 24).

    python scripts/train_code_model/soup.py /work/model-data/runs/R1 /work/model-data/runs/R4 \
        /work/model-data/runs/R5 --out /work/model-data/runs/final

Runs that start from the same table (the distilled one) and differ in batch size,
temperature or seed end in nearby minima; the element-wise mean of their tables
retrieves better than any one of them (Wortsman et al., 2022, "Model soups"), at no
cost at run time: the result is one table of the same shape. Writes ``table.npy``
(float16) and ``manifest.json`` in ``--out`` in ``train.py``'s format, with each
member's recipe, figures and table digest, so ``ship.py`` takes the soup like a run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="folders written by train.py")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    runs = [Path(r) for r in args.runs]
    manifests = [json.loads((r / "manifest.json").read_text()) for r in runs]
    kinds = {tuple(m["data"]["kinds"]) for m in manifests}
    files = {json.dumps(m["data"]["files"], sort_keys=True) for m in manifests}
    inits = {m["recipe"]["init_sha256"] for m in manifests}
    if len(kinds) != 1 or len(files) != 1 or len(inits) != 1:
        raise SystemExit("the runs must share their data files and starting table")
    tables = [np.load(r / "table.npy").astype(np.float32) for r in runs]
    if len({t.shape for t in tables}) != 1:
        raise SystemExit(f"tables of different shapes: {[t.shape for t in tables]}")
    soup = np.mean(tables, axis=0).astype(np.float16)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "table.npy", soup)
    first = manifests[0]
    members = [
        {
            "run": r.name,
            "recipe": m["recipe"],
            "figures": m["figures"],
            "table_sha256": m["table"]["sha256"],
            "cpu_seconds": m["cpu_seconds"],
        }
        for r, m in zip(runs, manifests, strict=True)
    ]
    manifest = {
        "recipe": {
            "soup": f"element-wise mean of {len(runs)} runs' tables (model soup)",
            "init": first["recipe"]["init"],
            "init_sha256": first["recipe"]["init_sha256"],
            "members": [m["run"] for m in members],
            "seed": [m["recipe"]["seed"] for m in members],
        },
        "members": members,
        "data": first["data"],
        "figures": {"members": {m["run"]: m["figures"]["epochs"][-1] for m in members}},
        "cpu_seconds": round(sum(m["cpu_seconds"] for m in manifests), 1),
        "wall_seconds": round(sum(m["wall_seconds"] for m in manifests), 1),
        "machine": first["machine"],
        "torch": first["torch"],
        "table": {
            "shape": list(soup.shape),
            "dtype": "float16",
            "sha256": hashlib.sha256((out / "table.npy").read_bytes()).hexdigest(),
        },
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"soup of {len(runs)} runs -> {out / 'table.npy'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
