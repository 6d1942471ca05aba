"""Query latency of the full search pipeline on a ~50k-chunk index (run by hand)::

    python bench/search_latency.py            # alone; search_bench.py also runs it

Builds one index over several real source distributions (pinned in
:data:`LATENCY_PROJECTS`, downloaded into a temporary folder) with the keyword
index and graph only (no embedding: parsing is fast), then gives every chunk a
**random** unit vector, so the numbers say how fast a query is at this size, not
how good the results are. It then times ``Searcher.search`` with every stage on
(query embedding, keyword, vector, RRF, graph expansion, rerank) over
:data:`QUERIES` docstring queries in one process (batch mode, model loaded once).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from search_corpus import code_files, fetch_sdist, is_test_path  # noqa: E402
from search_queries import documented, first_sentence  # noqa: E402

import codecite  # noqa: E402
from codecite.embed import get_embedder  # noqa: E402

#: Together about 56k chunks (django is most of it, docs and tests included).
LATENCY_PROJECTS = ("django==5.2.8", "werkzeug==3.1.3", "jinja2==3.1.6")
QUERIES = 200
DIM = 384
SEED = 7
VECTOR_BATCH = 5000


def build(workdir: Path) -> Path:
    """Download the projects side by side under one root; returns the root."""
    root = workdir / "repo"
    for spec in LATENCY_PROJECTS:
        name = spec.split("==")[0]
        folder = fetch_sdist(spec, workdir / "sdists" / name)
        shutil.copytree(folder, root / name, dirs_exist_ok=True)
    return root


def random_vectors(index: codecite.Index) -> int:
    """Give every chunk a random unit vector and set the metadata the indexer sets."""
    rng = np.random.default_rng(SEED)
    chunks = list(index.chunks())
    with index.store.transaction():
        for start in range(0, len(chunks), VECTOR_BATCH):
            batch = chunks[start : start + VECTOR_BATCH]
            matrix = rng.standard_normal((len(batch), DIM)).astype(np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            index.store.put_vectors(batch, matrix)
    index.store.export_vectors(DIM)
    name = get_embedder("minilm", index.config).name
    with index.store.transaction():
        index.store.set_meta(
            {"embedder": name, "embedder_spec": "minilm", "embedding_dim": str(DIM)}
        )
    return len(chunks)


def queries(root: Path, n: int = QUERIES) -> list[str]:
    """First sentences of docstrings of the indexed code (a seeded sample)."""
    found = []
    for rel, language in code_files(root):
        if is_test_path(rel):
            continue
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        found += [s for d in documented(text, language) if (s := first_sentence(d.doc))]
    unique = sorted(set(found))
    return random.Random(SEED).sample(unique, min(n, len(unique)))


def run_latency(workdir: Path) -> dict[str, Any]:
    """Build the index, time the queries; returns the numbers."""
    log = _logger()
    log("latency: downloading " + ", ".join(LATENCY_PROJECTS))
    root = build(workdir)
    index = codecite.open_index(root, overrides={"query_log": False})
    started = time.perf_counter()
    index.update(embed=False)
    parse_s = time.perf_counter() - started
    chunks = random_vectors(index)
    log(f"latency: {chunks} chunks indexed (--no-embed) in {parse_s:.0f} s; random vectors set")
    texts = queries(root)
    started = time.perf_counter()
    searcher = index.searcher
    searcher.search("warm up: load the model and the vectors", k=10)
    load_s = time.perf_counter() - started
    times: list[float] = []
    laps: dict[str, list[float]] = {}
    for text in texts:
        began = time.perf_counter()
        result = searcher.search(text, k=10, keyword=True, vector=True, expand=True, rerank=True)
        times.append((time.perf_counter() - began) * 1000)
        for stage, ms in result.timings_ms.items():
            laps.setdefault(stage, []).append(ms)
    index.close()
    return {
        "vectors": "random unit vectors (speed only, results meaningless)",
        "projects": list(LATENCY_PROJECTS),
        "chunks": chunks,
        "queries": len(texts),
        "index_no_embed_s": round(parse_s, 1),
        "load_s": round(load_s, 2),
        "p50_ms": round(float(np.percentile(times, 50)), 2),
        "p95_ms": round(float(np.percentile(times, 95)), 2),
        "stage_p50_ms": {k: round(float(np.percentile(v, 50)), 2) for k, v in laps.items()},
    }


def _logger() -> Any:
    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    return log


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="codecite-latency-") as tmp:
        result = run_latency(Path(tmp))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
