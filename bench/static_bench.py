"""Static tier benchmark (issues 15 and 24), run by hand::

    python bench/static_bench.py --quick               # click + requests, ~5 min on 2 cores
    python bench/static_bench.py                       # + rich
    python bench/static_bench.py --variants            # + the distillation choices, ~3 min more
    python bench/static_bench.py --workdir /tmp/sb     # keep downloads and MiniLM vectors

Measures:

- loading the shipped static model (issue 24: no build at run time): seconds and
  size on disk;
- chunks/s of the static embedder vs the MiniLM embedder on real chunk texts (the
  requests repository, from ``--speed-repo``, else the benchmark's own corpus);
- quality of vector search alone, shipped static vs the distilled static model of
  issue 15 vs MiniLM, on the docstring benchmark of
  ``search_bench.py`` (same corpora and queries, docstrings stripped): file
  R@1/R@5/MRR and chunk hit@5, exact cosine over every chunk;
- with ``--variants``: the distillation choices of issue 15 (token order and
  pooling, PCA width, frequency weighting; ``scripts/train_code_model/distil.py``)
  on the same benchmark.

Writes ``bench/results/static.json`` and prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from search_corpus import PROJECTS, Corpus, prepare  # noqa: E402
from static_models import DISTILLED, register  # noqa: E402

import codecite  # noqa: E402
from codecite.embed import (  # noqa: E402
    EmbeddingCache,
    embed_text,
    embed_with_cache,
    get_embedder,
    static,
)
from codecite.evaluate import GoldenQuery, Retrieved, evaluate  # noqa: E402
from codecite.types import Chunk  # noqa: E402

sys.path.insert(0, str(HERE.parent / "scripts" / "train_code_model"))
import distil  # noqa: E402

K = 10
Embed = Callable[[list[str]], np.ndarray]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- corpus


def index_chunks(root: Path) -> list[Chunk]:
    """Chunks of ``root`` (keyword index only: no vectors)."""
    with codecite.open_index(root, overrides={"query_log": False}) as index:
        index.update(embed=False)
        return list(index.store.chunks())


def vector_search(
    corpora: list[tuple[Corpus, list[Chunk]]],
    docs: Callable[[str, list[Chunk]], np.ndarray],
    queries: Callable[[str, list[str]], np.ndarray],
) -> dict[str, float]:
    """Exact cosine search of every golden query over its corpus' chunks."""
    golden: list[GoldenQuery] = []
    results: list[list[Retrieved]] = []
    for corpus, chunks in corpora:
        matrix = docs(corpus.name, chunks)
        q = queries(corpus.name, [g.query for g in corpus.golden])
        for row in q @ matrix.T:
            top = np.argsort(-row)[:K]
            results.append(
                [Retrieved(chunks[i].path, chunks[i].start_line, chunks[i].end_line) for i in top]
            )
        golden += corpus.golden
    report = evaluate(golden, results, k=K)
    return {
        "file_r1": round(report.file.recall_at_1, 3),
        "file_r5": round(report.file.recall_at_5, 3),
        "file_mrr": round(report.file.mrr, 3),
        "chunk_hit5": round(report.chunk.hit_at_5, 3),
        "queries": len(golden),
    }


# --------------------------------------------------------------------------- parts


def measure_load() -> dict[str, Any]:
    from importlib import resources

    static._embedders.clear()
    started = time.perf_counter()
    static.static_embedder()
    seconds = time.perf_counter() - started
    size = resources.files("codecite.embed").joinpath(static.TABLE_FILE).read_bytes()
    return {"load_s": round(seconds, 2), "disk_mb": round(len(size) / 1e6, 1)}


def measure_speed(chunks: list[Chunk], minilm_sample: int) -> dict[str, Any]:
    texts = [embed_text(c) for c in chunks]
    embedder = static.static_embedder()
    embedder.embed(texts[:10])  # warm up
    started = time.perf_counter()
    embedder.embed(texts)
    static_rate = len(texts) / (time.perf_counter() - started)
    minilm = get_embedder("minilm", codecite.Config())
    sample = texts[:: max(1, len(texts) // minilm_sample)][:minilm_sample]
    minilm.embed(sample[:2], "document")  # load the model
    started = time.perf_counter()
    embed_with_cache(minilm, None, sample, codecite.Config().embed.embed_batch_size)
    minilm_rate = len(sample) / (time.perf_counter() - started)
    return {
        "chunks": len(texts),
        "static_chunks_per_s": round(static_rate),
        "minilm_chunks_per_s": round(minilm_rate, 1),
        "minilm_sample": len(sample),
        "minilm_model": minilm.name,
    }


def measure_quality(
    corpora: list[tuple[Corpus, list[Chunk]]], embed_cache: EmbeddingCache
) -> dict[str, Any]:
    minilm = get_embedder("minilm", codecite.Config())
    out: dict[str, Any] = {"minilm_model": minilm.name}
    register(DISTILLED)
    for key, embedder in (
        ("static", static.static_embedder()),
        ("distilled", static.static_embedder(codecite.Config(static_model=DISTILLED))),
    ):

        def docs(_n: str, chunks: list[Chunk], e: static.StaticEmbedder = embedder) -> np.ndarray:
            return e.embed([embed_text(c) for c in chunks], "document")

        out[key] = vector_search(corpora, docs, lambda _n, q, e=embedder: e.embed(q, "query"))

    def minilm_docs(name: str, chunks: list[Chunk]) -> np.ndarray:
        log(f"{name}: MiniLM vectors of {len(chunks)} chunks (cached after the first run)")
        return embed_with_cache(minilm, embed_cache, [embed_text(c) for c in chunks], 32)

    out["minilm"] = vector_search(corpora, minilm_docs, lambda _n, q: minilm.embed(q, "query"))
    return out


def raw_outputs(reverse: bool) -> np.ndarray:
    """(vocab, 3, 384): the model's outputs for ``[CLS] tok [SEP]`` (or reversed)."""
    tokenizer = static.load_tokenizer()
    session = distil._session(0)
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    first, last = (sep_id, cls_id) if reverse else (cls_id, sep_id)
    vocab = tokenizer.get_vocab_size()
    out = np.empty((vocab, 3, 384), dtype=np.float32)
    for start in range(0, vocab, distil.BUILD_BATCH):
        ids = np.arange(start, min(vocab, start + distil.BUILD_BATCH), dtype=np.int64)
        rows = np.stack([np.full_like(ids, first), ids, np.full_like(ids, last)], axis=1)
        feeds = {"input_ids": rows, "attention_mask": np.ones_like(rows)}
        feeds["token_type_ids"] = np.zeros_like(rows)
        out[start : start + len(ids)] = session.run(["last_hidden_state"], feeds)[0]
    return out


def measure_variants(corpora: list[tuple[Corpus, list[Chunk]]]) -> dict[str, Any]:
    """The distillation choices, each scored by static vector search alone."""
    log("variants: running the model over the vocabulary in both token orders")
    raw = {"cls-tok-sep": raw_outputs(False), "sep-tok-cls": raw_outputs(True)}
    counts = distil.code_token_counts()
    vocab = len(counts)
    zipf = 1 / np.arange(2, vocab + 2)
    shares = {"none": None, "zipf": zipf / zipf.sum(), "code": (counts + 1) / (counts + 1).sum()}
    grid = [  # (order, pooling, pca dims (0: none), weighting, sif a)
        ("cls-tok-sep", "token", 0, "none", 0.0),
        ("cls-tok-sep", "mean", 0, "none", 0.0),
        ("sep-tok-cls", "token", 0, "none", 0.0),
        ("sep-tok-cls", "mean", 0, "none", 0.0),
        ("sep-tok-cls", "mean", 256, "none", 0.0),
        ("cls-tok-sep", "token", 256, "zipf", 1e-4),
        ("sep-tok-cls", "mean", 256, "zipf", 1e-4),
        ("sep-tok-cls", "mean", 256, "code", 1e-4),
        ("sep-tok-cls", "mean", 256, "code", 3e-3),
        ("sep-tok-cls", "mean", 128, "code", 1e-3),
        ("sep-tok-cls", "mean", 384, "code", 1e-3),
        ("sep-tok-cls", "mean", 256, "code", 1e-3),  # the shipped choice
    ]
    rows = []
    for order, pooling, dims, weighting, a in grid:
        hidden = raw[order]
        matrix = hidden[:, 1] if pooling == "token" else hidden.mean(axis=1)
        if dims:
            matrix = distil.pca(matrix, dims)
        share = shares[weighting]
        if share is not None:
            matrix = matrix * (a / (a + share)).astype(np.float32)[:, None]
        embedder = static.StaticEmbedder(np.ascontiguousarray(matrix, dtype=np.float32))

        def docs(_n: str, chunks: list[Chunk], e: static.StaticEmbedder = embedder) -> np.ndarray:
            return e.embed([embed_text(c) for c in chunks], "document")

        scores = vector_search(corpora, docs, lambda _n, q, e=embedder: e.embed(q, "query"))
        row = {"order": order, "pooling": pooling, "pca": dims, "weighting": weighting, "a": a}
        rows.append(row | scores)
        log(f"variant {row}: file MRR {scores['file_mrr']}")
    return {"rows": rows}


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="keep downloads, indexes and vectors here")
    parser.add_argument("--quick", action="store_true", help="click and requests only")
    parser.add_argument("--variants", action="store_true", help="also score the choices")
    parser.add_argument("--speed-repo", help="repository whose chunks time the embedders")
    parser.add_argument("--minilm-sample", type=int, default=200)
    parser.add_argument("--out", default=str(HERE / "results" / "static.json"))
    args = parser.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="codecite-static-bench-"))
    result: dict[str, Any] = {"model": static.STATIC_MODEL_NAME}
    log("loading the shipped static model (cold)")
    result["load"] = measure_load()
    specs = PROJECTS[:2] if args.quick else PROJECTS[:3]
    log("preparing " + ", ".join(specs))
    corpora = [(c, index_chunks(c.root)) for c in prepare(specs, workdir)]
    speed_chunks = index_chunks(Path(args.speed_repo)) if args.speed_repo else None
    result["speed"] = measure_speed(
        speed_chunks or [c for _, chunks in corpora for c in chunks], args.minilm_sample
    )
    with EmbeddingCache(workdir / "embeddings.db") as embed_cache:
        result["quality"] = measure_quality(corpora, embed_cache)
    if args.variants:
        result["variants"] = measure_variants(corpora)
    result["projects"] = [{"spec": c.spec, "chunks": len(ch)} for c, ch in corpora]
    print_report(result)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {out}")
    return 0


def print_report(result: dict[str, Any]) -> None:
    load, speed, quality = result["load"], result["speed"], result["quality"]
    print(
        f"\nStatic model {result['model']}: loaded in {load['load_s']} s, "
        f"{load['disk_mb']} MB in the package\n"
        f"Speed on {speed['chunks']} chunks: static {speed['static_chunks_per_s']:,} chunks/s, "
        f"{speed['minilm_model']} {speed['minilm_chunks_per_s']} chunks/s "
        f"({speed['minilm_sample']} chunks)\n"
    )
    print("| vectors only | file R@1 | file R@5 | file MRR | chunk hit@5 |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, s in (
        (result["model"], quality["static"]),
        (DISTILLED, quality["distilled"]),
        (quality["minilm_model"], quality["minilm"]),
    ):
        print(
            f"| {name} | {s['file_r1']:.3f} | {s['file_r5']:.3f} | {s['file_mrr']:.3f} "
            f"| {s['chunk_hit5']:.3f} |"
        )
    if "variants" in result:
        print("\n| order | pooling | PCA | weighting | a | file R@1 | file MRR | chunk hit@5 |")
        print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
        for r in result["variants"]["rows"]:
            print(
                f"| {r['order']} | {r['pooling']} | {r['pca'] or 'none'} | {r['weighting']} "
                f"| {r['a']:g} | {r['file_r1']:.3f} | {r['file_mrr']:.3f} "
                f"| {r['chunk_hit5']:.3f} |"
            )


if __name__ == "__main__":
    raise SystemExit(main())
