"""Embedding throughput and quality, step by step, before vs after (run by hand)::

    python bench/embed_bench.py                          # ~25 min on 2 cores
    python bench/embed_bench.py --workdir /tmp/eb --quality-projects click,requests

Speed: the same real chunks (a seeded sample of Django's sdist, chunked by
codecite) are embedded by each step in turn, the steps interleaved round by
round in one process so machine load hits them alike; medians over rounds.
Each step adds one change to the one before; step 0 reproduces the settings of
codecite before this work (bundled model as it ships, 256 tokens, text of up to
750 characters, batches of 16 texts, spinning worker threads) so "before" is
measured, not remembered.

Quality: for each step that changes the vectors (text, truncation, model), the
docstring benchmark of ``search_bench.py`` (same corpora and queries) is indexed
once without vectors, given that step's vectors, and searched in vector-only
and full mode: file R@1/R@5/MRR and chunk hit@5. Query vectors come from the
same step's model. Results print as markdown and go to ``bench/results/embed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from search_corpus import PROJECTS, Corpus, prepare  # noqa: E402

import codecite  # noqa: E402
from codecite.embed import EmbeddingCache, embed_text, embed_with_cache  # noqa: E402
from codecite.embed import text as text_module  # noqa: E402
from codecite.embed.local import MiniLMEmbedder  # noqa: E402
from codecite.evaluate import GoldenQuery, Retrieved, evaluate  # noqa: E402
from codecite.retrieve import Searcher  # noqa: E402
from codecite.types import Chunk  # noqa: E402

K = 10
SPEED_PROJECT = "django==5.2.19"
#: The embedding text before this work: up to 750 characters of code, 1,100 of prose.
V1_CODE_CHARS, V1_PROSE_CHARS = 750, 1100


def v1_text(chunk: Chunk) -> str:
    prose = chunk.language in text_module._PROSE_LANGUAGES
    return embed_text(chunk, V1_PROSE_CHARS if prose else V1_CODE_CHARS)


@dataclass(frozen=True)
class Step:
    """One cumulative configuration: the text, the embedder's settings, texts per call."""

    name: str
    text: Callable[[Chunk], str]
    model: dict[str, Any]
    per_call: int = 32  # texts per embed() call (the indexer's embed_batch_size)
    text_id: str = "v1"
    split: bool = False

    def embedder(self) -> MiniLMEmbedder:
        models = Path(os.environ["CODECITE_CACHE_DIR"]) / "models"
        kind = SplitRuns if self.split else MiniLMEmbedder
        return kind(**{**self.model, "model_dir": models})

    @property
    def vector_id(self) -> str:
        """What decides the vectors: text and model name."""
        return f"{self.text_id}/{self.embedder().name}"


BEFORE = {
    "quantized": False,
    "max_tokens": 256,
    "batch_size": 16,
    "batch_tokens": 1 << 30,
    "spinning": True,
}


class SplitRuns(MiniLMEmbedder):
    """The quantized model one text at a time, each run split over all threads
    (the alternative to parallel runs that codecite does not use)."""

    @property
    def _intra_op_threads(self) -> int:
        return self.threads

    @property
    def _parallel_runs(self) -> int:
        return 1


def steps() -> list[Step]:
    """The steps, each adding one change to the one before."""
    s0 = Step("0 before", v1_text, BEFORE)
    s1 = Step("1 + no spinning", v1_text, {**BEFORE, "spinning": False})
    s2 = Step("2 + 128 tokens", v1_text, {**s1.model, "max_tokens": 128})
    s3 = Step(
        "3 + dynamic int8, 1 text/run, parallel runs",
        v1_text,
        {**s2.model, "quantized": True},
        per_call=128,
    )
    s4 = Step("4 + compact text (v2) = after", embed_text, s3.model, per_call=128, text_id="v2")
    alt = Step(
        "4b = 4, each run split over the threads", embed_text, s3.model, 128, "v2", split=True
    )
    return [s0, s1, s2, s3, s4, alt]


# --------------------------------------------------------------------------- speed


def speed_chunks(workdir: Path, n: int) -> list[Chunk]:
    """A seeded sample of ``n`` chunks of Django, chunked by codecite (no vectors)."""
    from index_bench import download_sdist

    root = (
        next((workdir / "django").glob("django-*"), None) if (workdir / "django").exists() else None
    )
    if root is None:
        root = download_sdist(SPEED_PROJECT, workdir / "django")
    with codecite.open_index(root, overrides={"query_log": False}) as index:
        if not index.store.counts()["chunks"]:
            index.update(embed=False)
        index.store.clear_vectors("model")
        chunks = index.store.chunks_missing_vectors(10**9)
    random.Random(20261130).shuffle(chunks)
    return chunks[:n]


def embed_step(step: Step, embedder: MiniLMEmbedder, texts: list[str]) -> None:
    embed_with_cache(embedder, None, texts, step.per_call)


def measure_speed(all_steps: list[Step], chunks: list[Chunk], rounds: int) -> dict[str, Any]:
    texts = {s.name: [s.text(c) for c in chunks] for s in all_steps}
    embedders = {s.name: s.embedder() for s in all_steps}
    for s in all_steps:  # load sessions (and build the quantized model) before timing
        embed_step(s, embedders[s.name], texts[s.name][:4])
    rates: dict[str, list[float]] = {s.name: [] for s in all_steps}
    cpu: dict[str, list[float]] = {s.name: [] for s in all_steps}
    loads = []
    for r in range(rounds):
        order = all_steps if r % 2 == 0 else all_steps[::-1]
        for s in order:
            t0, c0 = time.perf_counter(), os.times()
            embed_step(s, embedders[s.name], texts[s.name])
            wall, c1 = time.perf_counter() - t0, os.times()
            rates[s.name].append(len(chunks) / wall)
            cpu[s.name].append((c1.user + c1.system - c0.user - c0.system) / len(chunks) * 1000)
            loads.append(os.getloadavg()[0])
            log(f"round {r + 1} {s.name}: {rates[s.name][-1]:.1f} chunks/s (load {loads[-1]:.2f})")
    return {
        s.name: {
            "chunks_per_s": round(statistics.median(rates[s.name]), 2),
            "all": [round(x, 2) for x in rates[s.name]],
            "cpu_ms_per_chunk": round(statistics.median(cpu[s.name]), 2),
            "chars_mean": round(statistics.mean(len(t) for t in texts[s.name]), 1),
        }
        for s in all_steps
    } | {"load_1min": {"min": min(loads), "median": statistics.median(loads), "max": max(loads)}}


# --------------------------------------------------------------------------- quality


@dataclass
class QualityIndex:
    corpus: Corpus
    index: codecite.Index
    chunks: list[Chunk] = field(default_factory=list)


def quality_indexes(workdir: Path, projects: tuple[str, ...]) -> list[QualityIndex]:
    out = []
    for corpus in prepare(projects, workdir / "quality"):
        index = codecite.open_index(corpus.root, overrides={"query_log": False})
        index.update(embed=False, full=True)
        index.store.clear_vectors("model")
        chunks = index.store.chunks_missing_vectors(10**9)
        out.append(QualityIndex(corpus, index, chunks))
        log(f"{corpus.name}: {len(chunks)} chunks, {len(corpus.golden)} queries")
    return out


def measure_quality(step: Step, indexes: list[QualityIndex], cache: EmbeddingCache) -> dict:
    embedder = step.embedder()
    golden: list[GoldenQuery] = []
    runs: dict[str, list[list[Retrieved]]] = {"vector": [], "full": []}
    for q in indexes:
        started = time.perf_counter()
        matrix = embed_with_cache(embedder, cache, [step.text(c) for c in q.chunks], 128)
        store = q.index.store
        with store.transaction():
            store.clear_vectors("model")
            store.put_vectors(q.chunks, matrix)
            store.set_meta({"embedder": embedder.name, "embedder_spec": "minilm"})
        store.export_vectors(embedder.dim)
        log(f"{step.name}: {q.corpus.name} vectors in {time.perf_counter() - started:.0f} s")
        for mode, switches in (("vector", {"keyword": False}), ("full", {})):
            searcher = Searcher(store, q.index.config)
            searcher._embedder = embedder  # queries through this step's model
            for query in q.corpus.golden:
                hits = searcher.search(query.query, k=K, **switches).hits
                runs[mode].append(
                    [Retrieved(h.chunk.path, h.chunk.start_line, h.chunk.end_line) for h in hits]
                )
        golden += q.corpus.golden
    out = {}
    for mode, results in runs.items():
        report = evaluate(golden, results, k=K)
        f, c = report.file, report.chunk
        out[mode] = {
            "file_r1": round(f.recall_at_1, 3),
            "file_r5": round(f.recall_at_5, 3),
            "file_mrr": round(f.mrr, 3),
            "chunk_hit5": round(c.hit_at_5, 3),
        }
    out["queries"] = len(golden)
    return out


# --------------------------------------------------------------------------- main


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def table(result: dict[str, Any]) -> str:
    speed, quality = result["speed"], result["quality"]
    base = speed[result["steps"][0]]["chunks_per_s"]
    rows = [
        "| step | chunks/s | x before | CPU ms/chunk "
        "| vector R@1/R@5/MRR/hit@5 | full R@1/R@5/MRR/hit@5 |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for name in result["steps"]:
        s = speed.get(name, {})
        q = quality.get(result["vector_ids"][name], {})

        def cell(mode: str, q: dict = q) -> str:
            m = q.get(mode)
            return (
                "/".join(f"{m[k]:.3f}" for k in ("file_r1", "file_r5", "file_mrr", "chunk_hit5"))
                if m
                else "(same vectors)"
            )

        rate = s.get("chunks_per_s", 0.0)
        rows.append(
            f"| {name} | {rate:.1f} | {rate / base:.2f} | {s.get('cpu_ms_per_chunk', 0):.0f} "
            f"| {cell('vector')} | {cell('full')} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="keep downloads, indexes and caches here")
    parser.add_argument("--chunks", type=int, default=500, help="chunks in the speed sample")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quality-projects", default="", help="comma list (default: all)")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--steps", default="", help="comma list of step numbers (default: all)")
    parser.add_argument("--out", default=str(HERE / "results" / "embed.json"))
    args = parser.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="codecite-embed-bench-"))
    os.environ.setdefault("CODECITE_CACHE_DIR", str(workdir / "cache"))
    chosen = [s for s in steps() if not args.steps or s.name.split()[0] in args.steps.split(",")]
    result: dict[str, Any] = {
        "steps": [s.name for s in chosen],
        "vector_ids": {s.name: s.vector_id for s in chosen},
        "cores": os.cpu_count(),
        "speed": {},
        "quality": {},
    }
    if not args.skip_speed:
        chunks = speed_chunks(workdir, args.chunks)
        log(f"speed: {len(chunks)} Django chunks, {args.rounds} rounds")
        result["speed"] = measure_speed(chosen, chunks, args.rounds)
    if not args.skip_quality:
        wanted = [
            p
            for p in PROJECTS
            if not args.quality_projects or p.split("==")[0] in args.quality_projects.split(",")
        ]
        indexes = quality_indexes(workdir, tuple(wanted))
        cache = EmbeddingCache(workdir / "cache" / "quality.db")
        for s in chosen:
            if s.vector_id not in result["quality"]:
                result["quality"][s.vector_id] = measure_quality(s, indexes, cache)
                log(f"{s.name}: {result['quality'][s.vector_id]}")
        for q in indexes:
            q.index.close()
    print(table(result))
    if result["speed"]:
        print(f"\nload average (1 min) during the speed runs: {result['speed']['load_1min']}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
