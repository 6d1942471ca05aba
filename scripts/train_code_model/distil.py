"""The starting point of training: token vectors distilled from the bundled MiniLM.

    python scripts/train_code_model/distil.py --out /work/model-data/init/distilled.npy

This is the static model codecite built once per machine before issue 24 (the
``static-minilm-v1-256`` tier of issue 15), kept here because training starts from
it; codecite itself now loads the trained table from its package and never distils.

1. run the bundled ONNX model over its own WordPiece vocabulary, each token alone as
   ``[SEP] token [CLS]`` (model2vec's reversed order measured better than
   ``[CLS] token [SEP]``), and take the mean of the three output vectors;
2. centre and reduce them with PCA to :data:`DIM` dimensions (numpy);
3. scale each token by smooth inverse frequency, ``a / (a + p(token))``, with ``p``
   from token counts over Python's standard library (``code-token-counts.npy``,
   made by ``scripts/code_token_counts.py``).

Measured choices (``bench/static_bench.py --variants``, issue 15): file MRR 0.635 of
vector search alone on click + requests, against 0.571 with model2vec's recipe.
About 43 CPU-seconds on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
COUNTS = HERE / "code-token-counts.npy"
#: The distilled model's name (as the index recorded it before issue 24).
NAME = "static-minilm-v1-256"
DIM = 256
SIF_A = 1e-3
BUILD_BATCH = 256


def code_token_counts() -> np.ndarray:
    """Token counts over Python's standard library (int64, one per vocabulary id)."""
    return np.asarray(np.load(COUNTS, allow_pickle=False), dtype=np.int64)


def sif_weights(counts: np.ndarray, a: float = SIF_A) -> np.ndarray:
    """``a / (a + p)`` per token, ``p`` its add-one smoothed share of ``counts``."""
    p = (counts.astype(np.float64) + 1.0) / float(counts.sum() + len(counts))
    return (a / (a + p)).astype(np.float32)


def pca(matrix: np.ndarray, dims: int) -> np.ndarray:
    """Rows centred and projected on their first ``dims`` principal axes."""
    centred = matrix.astype(np.float64) - matrix.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred)  # ascending eigenvalues
    projected: np.ndarray = (centred @ vectors[:, ::-1][:, :dims]).astype(np.float32)
    return projected


def _session(threads: int) -> Any:
    import onnxruntime as ort

    from codecite.embed.local import bundled_model_path

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads if threads > 0 else (os.cpu_count() or 1)
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(
        str(bundled_model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )


def token_outputs(vocab: int, threads: int = 0, batch_size: int = BUILD_BATCH) -> np.ndarray:
    """(vocab, 384): the model's mean output over ``[SEP] token [CLS]``."""
    from codecite.embed.static import load_tokenizer

    tokenizer = load_tokenizer()
    session = _session(threads)
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    out: np.ndarray | None = None
    for start in range(0, vocab, batch_size):
        ids = np.arange(start, min(vocab, start + batch_size), dtype=np.int64)
        rows = np.stack([np.full_like(ids, sep_id), ids, np.full_like(ids, cls_id)], axis=1)
        feeds = {
            "input_ids": rows,
            "attention_mask": np.ones_like(rows),
            "token_type_ids": np.zeros_like(rows),
        }
        (hidden,) = session.run(["last_hidden_state"], feeds)
        pooled = np.asarray(hidden, dtype=np.float32).mean(axis=1)
        if out is None:
            out = np.empty((vocab, pooled.shape[1]), dtype=np.float32)
        out[start : start + len(ids)] = pooled
    assert out is not None
    return out


def distil(vocab: int | None = None, threads: int = 0) -> np.ndarray:
    """The distilled token matrix (vocab, :data:`DIM`), float32."""
    counts = code_token_counts()
    size = len(counts) if vocab is None else min(vocab, len(counts))
    matrix = pca(token_outputs(size, threads), DIM)
    matrix *= sif_weights(counts)[:size, None]
    return matrix


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="/work/model-data/init/distilled.npy")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    started, cpu = time.perf_counter(), time.process_time()
    matrix = distil(threads=args.threads)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.save(out, matrix)
    info = {
        "model": NAME,
        "rows": int(matrix.shape[0]),
        "dim": DIM,
        "sif_a": SIF_A,
        "seconds": round(time.perf_counter() - started, 1),
        "cpu_seconds": round(time.process_time() - cpu, 1),
    }
    out.with_suffix(".json").write_text(json.dumps(info) + "\n")
    print(json.dumps(info), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
