"""Search quality benchmark (run by hand, not by CI)::

    python bench/search_bench.py                  # everything, ~20 min on 2 cores
    python bench/search_bench.py --skip-latency   # quality only
    python bench/search_bench.py --workdir /tmp/sb --reuse-cache   # keep downloads, warm cache

Downloads real projects from PyPI (pinned in ``search_corpus.PROJECTS``) into a
temporary folder, derives queries from docstrings / JSDoc comments (first
sentence, at least 6 words; ground truth = the documented definition), indexes
a copy of each project with *all* docstrings and doc comments removed (same line
count), and compares on the same queries and the same MiniLM model:

- ``bm25-files``: BM25 over whole files (``baselines.BM25Files``);
- ``naive-rag``: 2,000-character chunks, 200 overlap, dense cosine only;
- codecite with its stages switched on in turn: keyword, vector, hybrid,
  + graph expansion, + rerank (the full pipeline).

Metrics (``codecite.evaluate``, top 10): file-level Recall@1/5/10 and MRR,
chunk-level hit@5, per-query latency p50/p95 after loading. Then the query
latency of the full pipeline on a ~50k-chunk index with random vectors
(``search_latency.py``). Prints markdown tables; writes ``bench/results/search.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from baselines import BM25Files, NaiveRAG  # noqa: E402
from search_corpus import PROJECTS, Corpus, prepare  # noqa: E402
from static_models import DISTILLED, PREVIOUS, register  # noqa: E402

import codecite  # noqa: E402
from codecite.embed import (  # noqa: E402
    EmbeddingCache,
    default_cache_dir,
    embed_with_cache,
    get_embedder,
)
from codecite.evaluate import EvalReport, GoldenQuery, Retrieved, evaluate  # noqa: E402
from codecite.retrieve import Searcher  # noqa: E402

K = 10
Search = Callable[[str], list[Retrieved]]
#: codecite stage switches, in the order they are switched on. ``tiers``: the vector
#: tiers searched (issue 15): "static" alone is the index as it is seconds after
#: ``codecite index`` starts, before the model's vectors exist.
#: The static tier searched alone, and fused with keyword search through the whole
#: pipeline (expansion and rerank on): the index seconds after ``codecite index`` starts.
STATIC_ALONE: dict[str, Any] = {
    "keyword": False, "vector": True, "expand": False, "rerank": False, "tiers": ("static",)
}  # fmt: skip
KEYWORD_STATIC: dict[str, Any] = {
    "keyword": True, "vector": True, "expand": True, "rerank": True, "tiers": ("static",)
}  # fmt: skip
STAGES: dict[str, dict[str, Any]] = {
    "codecite keyword": {"keyword": True, "vector": False, "expand": False, "rerank": False},
    # issue 15's static model distilled from MiniLM (the "before" of issue 24), on an
    # index of its own (same chunks, its static tier only)
    "codecite static (distilled)": STATIC_ALONE | {"index": "distilled"},
    "codecite keyword+static (distilled)": KEYWORD_STATIC | {"index": "distilled"},
    # the code model this one replaced (static-code-v2-256), on an index of its own
    "codecite static (code v2)": STATIC_ALONE | {"index": "previous"},
    "codecite keyword+static (code v2)": KEYWORD_STATIC | {"index": "previous"},
    "codecite static": STATIC_ALONE,
    "codecite keyword+static (full pipeline)": KEYWORD_STATIC,
    "codecite vector": {
        "keyword": False, "vector": True, "expand": False, "rerank": False, "tiers": ("model",)
    },
    "codecite hybrid": {"keyword": True, "vector": True, "expand": False, "rerank": False},
    "codecite +graph": {"keyword": True, "vector": True, "expand": True, "rerank": False},
    "codecite +rerank (full)": {"keyword": True, "vector": True, "expand": True, "rerank": True},
    # the full pipeline with the static list fused even once every model vector exists
    "codecite full+static": {
        "keyword": True, "vector": True, "expand": True, "rerank": True,
        "config": {"static_weight_full": 1.0},
    },
}  # fmt: skip
SYSTEMS = ("bm25-files", "naive-rag", *STAGES)
FILE_LEVEL_ONLY = frozenset({"bm25-files"})


@dataclass
class SystemRun:
    results: list[list[Retrieved]] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


# --------------------------------------------------------------------------- systems


def codecite_search(searcher: Searcher, switches: dict[str, Any]) -> Search:
    def search(query: str) -> list[Retrieved]:
        hits = searcher.search(
            query,
            k=K,
            keyword=switches["keyword"],
            vector=switches["vector"],
            expand=switches["expand"],
            rerank=switches["rerank"],
            tiers=switches.get("tiers", ("model", "static")),
        ).hits
        return [Retrieved(h.chunk.path, h.chunk.start_line, h.chunk.end_line) for h in hits]

    return search


def build_systems(
    corpus: Corpus,
    index: codecite.Index,
    cache: EmbeddingCache,
    info: dict[str, Any],
    others: dict[str, codecite.Index],
) -> dict[str, Callable[[], Search]]:
    """Factories, so each system is built (and loaded) just before it runs."""
    files = {
        path: (corpus.root / path).read_text(encoding="utf-8")
        for path in sorted(index.store.files())
    }

    def bm25() -> Search:
        return BM25Files(files).search

    def naive() -> Search:
        embedder = get_embedder("minilm", codecite.Config())
        started = time.perf_counter()
        rag = NaiveRAG(files, embedder, lambda texts: embed_with_cache(embedder, cache, texts, 32))
        info["naive_rag_chunks"] = len(rag.chunks)
        info["naive_rag_embed_s"] = round(time.perf_counter() - started, 1)
        return rag.search

    def stage(switches: dict[str, Any]) -> Callable[[], Search]:
        # A fresh Searcher per system: its query-vector cache must not carry over.
        chosen = others[switches["index"]] if "index" in switches else index
        config = replace(chosen.config, **switches.get("config", {}))
        return lambda: codecite_search(Searcher(chosen.store, config), switches)

    return {
        "bm25-files": bm25,
        "naive-rag": naive,
        **{name: stage(switches) for name, switches in STAGES.items()},
    }


def run_system(search: Search, golden: list[GoldenQuery], run: SystemRun) -> None:
    search("warm up: load the model and the vectors")
    for query in golden:
        started = time.perf_counter()
        results = search(query.query)
        run.latencies_ms.append((time.perf_counter() - started) * 1000)
        run.results.append(results[:K])


# --------------------------------------------------------------------------- indexing


def index_corpus(corpus: Corpus, cache_dir: Path | None) -> tuple[codecite.Index, dict[str, Any]]:
    overrides: dict[str, object] = {"query_log": False}
    if cache_dir is not None:
        overrides["cache_dir"] = str(cache_dir)
    index = codecite.open_index(corpus.root, overrides=overrides)
    started = time.perf_counter()
    # Cold, stage by stage: keyword index + graph alone, then the static tier, then the
    # model's vectors (what `codecite index` does in one run, in this order).
    keyword = index.update(embed=False)
    keyword_s = time.perf_counter() - started
    report = index.update(embed=True)
    status = index.status()
    info = {
        "spec": corpus.spec,
        "files": corpus.files,
        "lines": corpus.lines,
        "indexed_files": status.files,
        "chunks": status.chunks,
        "vectors": status.vectors,
        "edges": status.edges,
        "queries": len(corpus.golden),
        "index_s": round(time.perf_counter() - started, 1),
        "keyword_index_s": round(keyword_s, 1),
        "static_s": round(report.seconds.get("static", 0.0), 1),
        "model_embed_s": round(report.seconds.get("embed", 0.0), 1),
        "parse_s": round(keyword.seconds.get("parse", 0.0), 1),
        "embedded": report.embedded,
        "static_model": report.static_model,
        "stats": dict(corpus.stats),
        "queries_by_language": _count(q.persona for q in corpus.golden),
    }
    return index, info


def model_index(corpus: Corpus, workdir: Path, model: str = DISTILLED) -> codecite.Index:
    """Another index of ``corpus`` whose static tier is ``model``'s (the keyword index
    again, no model vectors): the distilled model (the "before" of issue 24), the
    previous code model, or any table (a registered name or a ``.npy`` file)."""
    from codecite.index.static_stage import update_static_tier

    register(model)
    overrides: dict[str, object] = {"query_log": False, "static_model": model}
    tag = Path(model).stem if model.endswith(".npy") else model
    folder = workdir / ("distilled-indexes" if model == DISTILLED else f"{tag}-indexes")
    folder = folder / corpus.name
    index = codecite.open_index(corpus.root, index_dir=folder, overrides=overrides)
    index.update(embed=False)
    update_static_tier(index.store, index.config, lambda _event: None)
    return index


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


# --------------------------------------------------------------------------- report


def summarise(name: str, report: EvalReport, run: SystemRun) -> dict[str, Any]:
    chunk = report.chunk.to_json() if name not in FILE_LEVEL_ONLY else None
    return {
        "file": report.file.to_json(),
        "chunk": chunk,
        "latency_ms": {
            "p50": round(percentile(run.latencies_ms, 50), 2),
            "p95": round(percentile(run.latencies_ms, 95), 2),
        },
        "by_project": {k: s.to_json() for k, s in report.by_kind.items()},
        "by_language": {k: s.to_json() for k, s in report.by_persona.items()},
        "per_query": {
            q.id: [
                q.file_ranks[0] if q.file_ranks else None,
                q.chunk_ranks[0] if q.chunk_ranks else None,
            ]
            for q in report.queries
        },
    }


def quality_table(systems: dict[str, dict[str, Any]]) -> str:
    rows = [
        "| system | file R@1 | file R@5 | file R@10 | file MRR | chunk hit@5 | p50 ms | p95 ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, s in systems.items():
        f, lat = s["file"], s["latency_ms"]
        hit = f"{s['chunk']['hit_at_5']:.3f}" if s["chunk"] else "n/a"
        rows.append(
            f"| {name} | {f['recall_at_1']:.3f} | {f['recall_at_5']:.3f} "
            f"| {f['recall_at_10']:.3f} | {f['mrr']:.3f} | {hit} | {lat['p50']:.2f} "
            f"| {lat['p95']:.2f} |"
        )
    return "\n".join(rows)


def breakdown_table(systems: dict[str, dict[str, Any]], key: str) -> str:
    first = next(iter(systems.values()))[key]
    groups = sorted(first)
    head = " | ".join(f"{g} ({first[g]['count']})" for g in groups)
    rows = [f"| file MRR / chunk hit@5 | {head} |", "| --- |" + " ---: |" * len(groups)]
    for name, s in systems.items():
        cells = []
        for g in groups:
            level = s[key][g]
            hit = "n/a" if name in FILE_LEVEL_ONLY else f"{level['chunk']['hit_at_5']:.2f}"
            cells.append(f"{level['file']['mrr']:.3f} / {hit}")
        rows.append(f"| {name} | {' | '.join(cells)} |")
    return "\n".join(rows)


def projects_table(projects: list[dict[str, Any]]) -> str:
    rows = [
        "| project | files | lines | codecite chunks | naive-rag chunks | queries | index s "
        "| keyword index s | + static s | + model s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for p in projects:
        rows.append(
            f"| {p['spec']} | {p['indexed_files']} | {p['lines']} | {p['chunks']} "
            f"| {p.get('naive_rag_chunks', 0)} | {p['queries']} | {p['index_s']} "
            f"| {p.get('keyword_index_s', '')} | {p.get('static_s', '')} "
            f"| {p.get('model_embed_s', '')} |"
        )
    return "\n".join(rows)


# --------------------------------------------------------------------------- main


def run_quality(workdir: Path, cache_dir: Path | None) -> dict[str, Any]:
    log("downloading and stripping " + ", ".join(PROJECTS))
    corpora = prepare(PROJECTS, workdir)
    cache = EmbeddingCache((cache_dir or default_cache_dir(codecite.Config())) / "embeddings.db")
    golden: list[GoldenQuery] = []
    runs = {name: SystemRun() for name in SYSTEMS}
    projects = []
    for corpus in corpora:
        log(f"{corpus.name}: indexing {corpus.files} files, {len(corpus.golden)} queries")
        index, info = index_corpus(corpus, cache_dir)
        log(f"{corpus.name}: {info['chunks']} chunks indexed in {info['index_s']} s")
        others = {
            "distilled": model_index(corpus, workdir),
            "previous": model_index(corpus, workdir, PREVIOUS),
        }
        for name, factory in build_systems(corpus, index, cache, info, others).items():
            run_system(factory(), corpus.golden, runs[name])
            log(f"{corpus.name}: {name} done")
        index.close()
        for other in others.values():
            other.close()
        golden += corpus.golden
        projects.append(info)
    systems = {
        name: summarise(name, evaluate(golden, run.results, k=K), run) for name, run in runs.items()
    }
    return {
        "projects": projects,
        "queries": len(golden),
        "systems": systems,
        "golden_sample": [
            {
                "id": q.id,
                "query": q.query,
                "path": q.relevant[0].path,
                "lines": [q.relevant[0].start_line, q.relevant[0].end_line],
            }
            for q in golden[::25]
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="keep downloads and indexes here (default: a temp dir)")
    parser.add_argument(
        "--reuse-cache",
        action="store_true",
        help="use the machine-wide embedding cache (default: a fresh one)",
    )
    parser.add_argument("--skip-latency", action="store_true", help="skip the 50k-chunk part")
    parser.add_argument("--out", default=str(HERE / "results" / "search.json"))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="codecite-search-bench-"))
    cache_dir = None if args.reuse_cache else workdir / "embedding-cache"
    try:
        result = run_quality(workdir, cache_dir)
        if not args.skip_latency:
            from search_latency import run_latency

            result["latency_50k"] = run_latency(workdir / "latency")
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    result.update(
        date=datetime.date.today().isoformat(),
        runtime_s=round(time.perf_counter() - started),
        machine={
            "cores": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        command="python bench/search_bench.py " + " ".join(sys.argv[1:] if argv is None else argv),
    )
    print_report(result)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    log(f"wrote {out}")
    return 0


def print_report(result: dict[str, Any]) -> None:
    systems = result["systems"]
    print(
        f"\nSearch quality: {result['queries']} docstring queries, top {K}, "
        f"{result['machine']['cores']} cores, run {result['runtime_s']} s\n"
    )
    print(projects_table(result["projects"]), end="\n\n")
    print(quality_table(systems), end="\n\n")
    print("By project:\n" + breakdown_table(systems, "by_project"), end="\n\n")
    print("By language:\n" + breakdown_table(systems, "by_language"), end="\n\n")
    latency = result.get("latency_50k")
    if latency:
        print(
            f"Latency at {latency['chunks']} chunks (RANDOM vectors, full pipeline incl. "
            f"query embedding, {latency['queries']} queries in one process): "
            f"p50 {latency['p50_ms']:.1f} ms, p95 {latency['p95_ms']:.1f} ms"
        )


if __name__ == "__main__":
    raise SystemExit(main())
