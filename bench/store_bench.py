"""SQLite vs PostgreSQL + pgvector on the same real chunks, side by side in one run
(issue 12, DESIGN.md §13; run by hand, minutes)::

    python bench/store_bench.py                      # ~50k chunks
    python bench/store_bench.py --chunks 20000 --queries 50
    CODECITE_TEST_PG_URL=postgresql://... python bench/store_bench.py   # your server

Real chunks: the checkouts of psf/requests and pallets/click (``git archive`` of the
mirrors in /work/.mirror, or ``--source DIR`` folders) indexed once into SQLite with the
configured embedder (its vectors come from the machine-wide embedding cache after the
first run). Their chunks are then replicated under new ids and paths (``cK/PATH``) up to
``--chunks``, each copy's vectors the originals plus small Gaussian noise (re-normalised):
nothing is re-embedded. The same rows are loaded into a new SQLite index and into a new
PostgreSQL database (the embedded PostgreSQL 18 + pgvector of tests/pg.py unless
``$CODECITE_TEST_PG_URL`` names a server whose user may create databases).

Measured: load throughput with 1 loader and with 2 loader processes (two repositories:
two SQLite files / two repositories in one PostgreSQL database), HNSW build time,
database size, search latency p50/p95 per stage through the normal ``Searcher``
(queries: first docstring sentences of real chunks), and pgvector HNSW recall@10 against
exact search for ef_search 40/100/200/400 (queries: stored vectors with noise).
Prints markdown tables; the numbers also go to bench/results/store_bench.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

import codecite  # noqa: E402
from codecite.config import Config  # noqa: E402
from codecite.retrieve.search import Searcher  # noqa: E402
from codecite.store.postgres import PostgresStore  # noqa: E402
from codecite.store.sqlite import SQLiteStore  # noqa: E402
from codecite.store.sqlite_base import CHUNK_COLS, row_to_chunk  # noqa: E402
from codecite.tokens import keyword_row  # noqa: E402
from codecite.types import Chunk  # noqa: E402

MIRRORS = (Path("/work/.mirror/psf+requests/repo"), Path("/work/.mirror/pallets+click/repo"))
BATCH = 2000
NOISE = 0.02
SEED = 11
EF_SEARCH = (40, 100, 200, 400)
#: Metadata the searcher reads (embedder, dimension, ...) is copied from the source.
SKIP_META = frozenset({"format_version"})


# --- the real chunks ----------------------------------------------------------------
def checkouts(workdir: Path, sources: list[Path]) -> list[Path]:
    """Plain folders of the sources (a bare mirror is exported with ``git archive``)."""
    out = []
    for source in sources:
        if (source / "HEAD").is_file() and not (source / ".git").exists():  # bare mirror
            target = workdir / "src" / source.parent.name.split("+")[-1]
            target.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(
                ["git", f"--git-dir={source}", "archive", "HEAD"], check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
            out.append(target)
        else:
            out.append(source)
    return out


def base_rows(folders: list[Path]) -> tuple[list[Chunk], list[float], np.ndarray, dict[str, str]]:
    """Chunks, priorities, model vectors (row per chunk) and metadata of the folders,
    each indexed (incrementally) into its own SQLite index."""
    chunks: list[Chunk] = []
    priorities: list[float] = []
    vectors: list[np.ndarray] = []
    meta: dict[str, str] = {}
    for folder in folders:
        with codecite.open_index(folder) as index:
            report = index.update()
            print(
                f"indexed {folder.name}: {report.chunks_written} chunks written, "
                f"{report.embed_computed} vectors computed, {report.embed_from_cache} cached",
                file=sys.stderr,
            )
        store = SQLiteStore(folder / ".codecite", create=False, readonly=True)
        try:
            rows = store.conn.execute(f"SELECT {CHUNK_COLS}, priority FROM chunks").fetchall()
            by_id = {}
            found = store.vector_rows("model")
            assert found is not None, "the source index has no vectors"
            for chunk_id, row in zip(found.ids, np.asarray(found.matrix), strict=True):
                by_id[chunk_id] = row
            for row in rows:
                chunk = row_to_chunk(row[:-1])
                if chunk.id in by_id:
                    chunks.append(chunk)
                    priorities.append(float(row[-1]))
                    vectors.append(by_id[chunk.id])
            meta |= dict(store.conn.execute("SELECT key, value FROM meta").fetchall())
        finally:
            store.close()
    return chunks, priorities, np.vstack(vectors).astype(np.float32), meta


def replicate(
    chunks: list[Chunk], priorities: list[float], vectors: np.ndarray, total: int
) -> tuple[list[Chunk], list[float], np.ndarray]:
    """``total`` rows: the originals, then copies under new ids and paths with noisy
    (re-normalised) vectors."""
    rng = np.random.default_rng(SEED)
    out_chunks, out_prio, blocks = [], [], []
    copy = 0
    while len(out_chunks) < total:
        take = min(len(chunks), total - len(out_chunks))
        for chunk in chunks[:take]:
            if copy == 0:
                out_chunks.append(chunk)
            else:
                new_id = hashlib.sha256(f"{copy}:{chunk.id}".encode()).hexdigest()[: len(chunk.id)]
                out_chunks.append(replace(chunk, id=new_id, path=f"c{copy}/{chunk.path}"))
        out_prio += priorities[:take]
        block = vectors[:take]
        if copy:
            block = block + rng.normal(0, NOISE, block.shape).astype(np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
        blocks.append(block.astype(np.float32))
        copy += 1
    return out_chunks, out_prio, np.vstack(blocks)


# --- loading --------------------------------------------------------------------------
def open_target(kind: str, location: str, repo: str) -> Any:
    if kind == "sqlite":
        return SQLiteStore(Path(location), create=True)
    return PostgresStore(location, repo=repo)


def load(
    kind: str,
    location: str,
    repo: str,
    chunks: list[Chunk],
    priorities: list[float],
    vectors: np.ndarray,
    meta: dict[str, str],
) -> float:
    """Seconds to write the rows through the store's writer API (no vector index)."""
    store = open_target(kind, location, repo)
    started = time.perf_counter()
    try:
        with store.writer_lock():
            paths: dict[str, tuple[str, int]] = {}
            for chunk in chunks:
                language, n = paths.get(chunk.path, (chunk.language, 0))
                paths[chunk.path] = (language, n + 1)
            with store.transaction():
                store.set_meta({k: v for k, v in meta.items() if k not in SKIP_META})
                for path, (language, n) in paths.items():
                    digest = hashlib.sha256(path.encode()).hexdigest()
                    store.put_file(path, language, digest, 0, 0, "", n, 0)
            for start in range(0, len(chunks), BATCH):
                part = [replace(c, repo=repo) for c in chunks[start : start + BATCH]]
                with store.transaction():
                    store.add_chunks(
                        part, priorities[start : start + BATCH], [keyword_row(c) for c in part]
                    )
                    store.put_vectors(part, vectors[start : start + BATCH])
        return time.perf_counter() - started
    finally:
        store.close()


def _load_worker(args: tuple[Any, ...], queue: Any) -> None:
    queue.put(load(*args))


def load_parallel(jobs: list[tuple[Any, ...]]) -> float:
    """Wall seconds for the loads run at once, one process each."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    started = time.perf_counter()
    procs = [ctx.Process(target=_load_worker, args=(job, queue)) for job in jobs]
    for proc in procs:
        proc.start()
    for _ in procs:
        queue.get()
    for proc in procs:
        proc.join()
    return time.perf_counter() - started


def finish(kind: str, location: str, repo: str, dim: int) -> float:
    """Seconds to make the vectors searchable: the snapshot (SQLite) / HNSW (PostgreSQL)."""
    store = open_target(kind, location, repo)
    started = time.perf_counter()
    try:
        store.export_vectors(dim)
        if kind == "postgres":
            store.analyze()
        return time.perf_counter() - started
    finally:
        store.close()


def size_bytes(kind: str, location: str, baseline: int = 0) -> int:
    if kind == "sqlite":
        return sum(p.stat().st_size for p in Path(location).rglob("*") if p.is_file())
    import psycopg

    with psycopg.connect(location) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) - baseline


# --- queries -------------------------------------------------------------------------
def questions(chunks: list[Chunk], n: int) -> list[str]:
    out = []
    for chunk in chunks:
        doc = " ".join(chunk.docstring.split())
        sentence = doc.split(". ")[0].strip().rstrip(".")
        if 4 <= len(sentence.split()) <= 25 and sentence not in out:
            out.append(sentence)
        if len(out) == n:
            break
    return out


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


def search_latency(store: Any, config: Config, queries: list[str]) -> dict[str, dict[str, float]]:
    """p50/p95 (ms) per stage and in total over ``queries`` (one warm-up first)."""
    searcher = Searcher(store, config)
    searcher.search(queries[0], k=10)
    stages: dict[str, list[float]] = {}
    for query in queries:
        started = time.perf_counter()
        result = searcher.search(query, k=10)
        stages.setdefault("total (wall)", []).append((time.perf_counter() - started) * 1000)
        for stage, ms in result.timings_ms.items():
            stages.setdefault(stage, []).append(ms)
    return {s: {"p50": percentile(v, 50), "p95": percentile(v, 95)} for s, v in stages.items()}


def recall_sweep(store: PostgresStore, vectors: np.ndarray, n: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(SEED + 1)
    picks = rng.choice(len(vectors), size=min(n, len(vectors)), replace=False)
    queries = vectors[picks] + rng.normal(0, 0.05, (len(picks), vectors.shape[1]))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    exact, exact_ms = [], []
    for query in queries:
        started = time.perf_counter()
        exact.append({cid for cid, _ in store.vector_search(query, limit=10, exact=True)})
        exact_ms.append((time.perf_counter() - started) * 1000)
    rows = [
        {
            "ef_search": 0,
            "recall@10": 1.0,
            "p50_ms": percentile(exact_ms, 50),
            "p95_ms": percentile(exact_ms, 95),
        }
    ]
    for ef in EF_SEARCH:
        hits, times = 0, []
        for query, truth in zip(queries, exact, strict=True):
            started = time.perf_counter()
            found = store.vector_search(query, limit=10, ef_search=ef)
            times.append((time.perf_counter() - started) * 1000)
            hits += len({cid for cid, _ in found} & truth)
        rows.append(
            {
                "ef_search": ef,
                "recall@10": hits / (10 * len(queries)),
                "p50_ms": percentile(times, 50),
                "p95_ms": percentile(times, 95),
            }
        )
    return rows


# --- the run -------------------------------------------------------------------------
def pg_server() -> tuple[Any, Path | None]:
    from pg import URL_ENV, PgServer, start_embedded

    given = os.environ.get(URL_ENV, "").strip()
    if given:
        return PgServer(given), None
    started = start_embedded()
    if isinstance(started, str):
        raise SystemExit(started)
    return started


def run(size: int, n_queries: int, sources: list[Path], workdir: Path) -> dict[str, Any]:
    from pg import stop_embedded

    folders = checkouts(workdir, sources)
    base_chunks, base_prio, base_vecs, meta = base_rows(folders)
    print(f"{len(base_chunks)} real chunks with vectors; replicating to {size}", file=sys.stderr)
    chunks, prio, vecs = replicate(base_chunks, base_prio, base_vecs, size)
    dim = int(vecs.shape[1])
    config = Config()
    queries = questions(base_chunks, n_queries)
    server, base = pg_server()
    results: dict[str, Any] = {"chunks": size, "real_chunks": len(base_chunks), "dim": dim}
    try:
        empty = server.create_database()
        baseline = size_bytes("postgres", empty)
        urls = {"one": server.create_database(), "two": server.create_database()}
        half = size // 2
        targets = {
            "sqlite": (
                str(workdir / "sqlite-one"),
                str(workdir / "sqlite-a"),
                str(workdir / "sqlite-b"),
            ),
            "postgres": (urls["one"], urls["two"], urls["two"]),
        }
        for kind, (one, two_a, two_b) in targets.items():
            row: dict[str, Any] = {}
            seconds = load(kind, one, "bench", chunks, prio, vecs, meta)
            row["load_1_s"] = seconds
            row["load_1_rows_s"] = size / seconds
            row["index_s"] = finish(kind, one, "bench", dim)
            row["size_mb"] = size_bytes(kind, one, baseline if kind == "postgres" else 0) / 2**20
            jobs = [
                (kind, two_a, "bench_a", chunks[:half], prio[:half], vecs[:half], meta),
                (kind, two_b, "bench_b", chunks[half:], prio[half:], vecs[half:], meta),
            ]
            seconds = load_parallel(jobs)
            row["load_2_s"] = seconds
            row["load_2_rows_s"] = size / seconds
            store = (
                SQLiteStore(Path(one), create=False, readonly=True)
                if kind == "sqlite"
                else PostgresStore(one, repo="bench", readonly=True)
            )
            try:
                row["search"] = search_latency(store, config, queries)
                if kind == "postgres":
                    results["recall"] = recall_sweep(store, vecs, n_queries)
            finally:
                store.close()
            results[kind] = row
            print(
                f"{kind} done: {json.dumps({k: v for k, v in row.items() if k != 'search'})}",
                file=sys.stderr,
            )
        for url in (empty, *urls.values()):
            server.drop_database(url)
    finally:
        if base is not None:
            stop_embedded(base)
    return results


def report(results: dict[str, Any]) -> str:
    lines = [
        f"### Store benchmark: {results['chunks']:,} chunks "
        f"({results['real_chunks']:,} real ones replicated; {results['dim']}-d vectors)",
        "",
        "| | SQLite | PostgreSQL + pgvector |",
        "|---|---:|---:|",
    ]
    sq, pg = results["sqlite"], results["postgres"]
    for key, label, fmt in (
        ("load_1_rows_s", "load, 1 loader (rows/s)", "{:,.0f}"),
        ("load_2_rows_s", "load, 2 loader processes (rows/s, together)", "{:,.0f}"),
        ("index_s", "vector snapshot / HNSW build (s)", "{:.1f}"),
        ("size_mb", "database size (MB)", "{:,.0f}"),
    ):
        lines.append(f"| {label} | {fmt.format(sq[key])} | {fmt.format(pg[key])} |")
    lines += [
        "",
        "Search latency through `Searcher` (ms, p50 / p95):",
        "",
        "| stage | SQLite | PostgreSQL |",
        "|---|---:|---:|",
    ]
    for stage in sorted(set(sq["search"]) | set(pg["search"])):
        cells = []
        for row in (sq, pg):
            got = row["search"].get(stage)
            cells.append(f"{got['p50']:.1f} / {got['p95']:.1f}" if got else "-")
        lines.append(f"| {stage} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        "pgvector HNSW recall@10 vs exact (`vector_search`):",
        "",
        "| ef_search | recall@10 | p50 ms | p95 ms |",
        "|---:|---:|---:|---:|",
    ]
    for row in results["recall"]:
        ef = "exact" if row["ef_search"] == 0 else str(row["ef_search"])
        lines.append(
            f"| {ef} | {row['recall@10']:.3f} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--source", type=Path, action="append", default=[])
    args = parser.parse_args()
    sources = args.source or [m for m in MIRRORS if m.exists()]
    workdir = Path(tempfile.mkdtemp(prefix="codecite-store-bench-"))
    try:
        results = run(args.chunks, args.queries, sources, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    out = HERE / "results" / "store_bench.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))
    print(f"\n(numbers in {out.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
