"""Put a trained table into the package (issue 24):

    python scripts/train_code_model/ship.py /work/model-data/runs/final

(a folder written by ``train.py``, or by ``soup.py`` from several runs).

Writes ``src/codecite/embed/data/static-code-v{VERSION}.npy`` (the float16 table) and
``static-code-v{VERSION}.json``: the model's name, version and shape, the table's
sha256 (checked when codecite loads it), the training recipe and figures of the run,
and the summaries of the data it was trained on (sources, pairs, licences, what the
exclusion list kept out). The per-source lists (every distribution and repository
with its version or commit, licence and pair count) are committed beside the
scripts as ``data-manifest.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "src"))

from codecite.embed.static import (  # noqa: E402
    MANIFEST_FILE,
    STATIC_DIM,
    STATIC_MODEL_NAME,
    STATIC_VERSION,
    TABLE_FILE,
)

DATA = ROOT / "src" / "codecite" / "embed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a folder written by train.py")
    parser.add_argument("--pairs", default="/work/model-data/pairs")
    args = parser.parse_args(argv)
    run, pairs = Path(args.run), Path(args.pairs)
    table = np.load(run / "table.npy")
    assert table.dtype == np.float16 and table.shape[1] == STATIC_DIM, table.shape
    assert np.isfinite(table).all()
    training = json.loads((run / "manifest.json").read_text())
    sources = {}
    for kind in training["data"]["kinds"]:
        full = json.loads((pairs / f"{kind}.manifest.json").read_text())
        sources[kind] = full
    target = DATA / TABLE_FILE
    shutil.copyfile(run / "table.npy", target)
    manifest = {
        "model": STATIC_MODEL_NAME,
        "version": STATIC_VERSION,
        "rows": int(table.shape[0]),
        "dim": int(table.shape[1]),
        "tokenizer": "all-MiniLM-L6-v2 WordPiece (uncased): embed/data/minilm-tokenizer.json",
        "pooling": "sum of token rows, L2-normalised; special tokens are zero",
        "table": {
            "file": Path(TABLE_FILE).name,
            "dtype": "float16",
            "sha256": hashlib.sha256(target.read_bytes()).hexdigest(),
        },
        "training": {k: training[k] for k in ("recipe", "figures", "cpu_seconds", "wall_seconds")}
        | {"torch": training["torch"], "machine": training["machine"]}
        | ({"members": training["members"]} if "members" in training else {}),
        "data": training["data"] | {kind: s["summary"] for kind, s in sources.items()},
        "excluded_projects": "scripts/train_code_model/exclusions.py",
        "sources": "scripts/train_code_model/data-manifest.json",
    }
    (DATA / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1) + "\n")
    # the sources used and those the exclusion list kept out (what gave no pair is
    # counted in the summaries above), one line each: diffs stay readable, the file small
    kept = {
        kind: [x for x in s["sources"] if x.get("pairs") or x.get("excluded")]
        for kind, s in sources.items()
    }
    lines = [
        f'"{kind}": [\n' + ",\n".join(json.dumps(x, separators=(",", ":")) for x in rows) + "\n]"
        for kind, rows in kept.items()
    ]
    (HERE / "data-manifest.json").write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB) and {DATA / MANIFEST_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
