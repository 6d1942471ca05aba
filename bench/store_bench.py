"""SQLite vs PostgreSQL + pgvector on the same real chunks, side by side in one run
(issue 12, docs/DESIGN.md §13; run by hand, minutes)::

    python bench/store_bench.py --workdir /work/scratch/storebench          # 50k chunks
    python bench/store_bench.py --workdir /work/scratch/storebench --chunks 500000 --queries 50
    python bench/store_bench.py --corpus replicated --chunks 20000           # the old corpus
    CODECITE_TEST_PG_URL=postgresql://... python bench/store_bench.py   # your server

``--corpus distinct`` (the default): distinct real chunks with static-tier vectors
(256-d), gathered once by bench/store_corpus.py into ``WORKDIR/corpus`` (minutes; every
later run, at any ``--chunks``, reuses it): the source trees (the bare mirrors of
``store_corpus.MIRRORS`` in /work/.mirror, Python's standard library; or ``--source``
mirrors/folders) are each indexed by codecite with no model embedding, and every chunk
gets the vector the static tier of an index run gives it (the model's vectors run ~14
chunks/s here: 500k would take ten hours). Chunks are deduplicated by content hash
across sources, paths get the project's name in front (``sympy/...``), and the files are
put in a fixed hash order, so that ``--chunks N`` (the first N rows) is a mix of every
project. The searcher fuses keyword and static-vector lists (as an index does before
its model vectors exist: ``static_weight``); HNSW recall is measured on the static
tier, the queries being the static vectors of real chunks held out of every load (the
last ~2,000 rows of the order; distinct from the loaded ones by content).

``--corpus replicated`` (the benchmark before): the checkouts of psf/requests and
pallets/click (``git archive`` of the mirrors in /work/.mirror, or ``--source DIR``
folders) indexed once into SQLite with the configured embedder (its vectors come from
the machine-wide embedding cache after the first run), their ~2,850 chunks replicated
under new ids and paths (``cK/PATH``) up to ``--chunks``, each copy's vectors the
originals plus small Gaussian noise (re-normalised). At 500k that is ~175 copies of each
chunk: the exact top 10 is a set of near-ties (an unfair recall reading) and the keyword
postings are 175-fold duplicates.

Either way the same rows are loaded into a new SQLite index and into a new PostgreSQL
database (the embedded PostgreSQL 18 + pgvector of tests/pg.py unless
``$CODECITE_TEST_PG_URL`` names a server whose user may create databases). Rows are
streamed from the corpus files (memory stays bounded at 500k); the time spent reading
them is not counted in the load rates.

Measured: load throughput with 1 loader and with 2 loader processes (two repositories:
two SQLite files / two repositories in one PostgreSQL database; the rows split in
halves), HNSW build time, database size, search latency p50/p95 per stage through the
normal ``Searcher`` (queries: first docstring sentences of loaded chunks), and pgvector
HNSW recall@10 against exact search for ef_search 40/100/200/400 (queries: held-out
static vectors, or stored vectors with noise for the replicated corpus). Prints markdown
tables; the numbers also go to bench/results/store_bench.json.
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
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))

from store_corpus import DistinctRows, default_sources, gather, mirror_source  # noqa: E402

import codecite  # noqa: E402
from codecite.config import Config  # noqa: E402
from codecite.identifiers import keyword_row  # noqa: E402
from codecite.retrieve.search import Searcher  # noqa: E402
from codecite.retrieve.vector import VectorIndex  # noqa: E402
from codecite.store.postgres import PostgresStore  # noqa: E402
from codecite.store.protocols import Tier  # noqa: E402
from codecite.store.sqlite import SQLiteStore  # noqa: E402
from codecite.store.sqlite.base import CHUNK_COLS, row_to_chunk  # noqa: E402
from codecite.types import Chunk  # noqa: E402

MIRRORS = (Path("/work/.mirror/psf+requests/repo"), Path("/work/.mirror/pallets+click/repo"))
BATCH = 2000
NOISE = 0.02
SEED = 11
EF_SEARCH = (40, 100, 200, 400)
#: The search stages in pipeline order (the table's rows).
STAGES = ("keyword", "vector", "expand", "rerank", "total", "total (wall)")
#: The embedded server as a database administrator would set it up on this 24 GiB
#: machine (the tests' server has 64 MB of shared buffers; durability stays off, as
#: there): a quarter of memory for shared buffers, room for an HNSW graph to build in
#: memory, both cores for the build.
PG_OPTIONS = (
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100 "
    "-c shared_buffers=6GB -c effective_cache_size=16GB -c work_mem=64MB "
    "-c maintenance_work_mem=2GB -c max_parallel_maintenance_workers=1"
)
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
    out_chunks: list[Chunk] = []
    out_prio: list[float] = []
    blocks: list[np.ndarray] = []
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
Batch = tuple[list[Chunk], list[float], np.ndarray]


class ReplicatedRows:
    """Rows held in memory (the replicated corpus), read like a gathered corpus."""

    def __init__(self, chunks: list[Chunk], priorities: list[float], vectors: np.ndarray) -> None:
        self.chunks, self.priorities, self.vectors = chunks, priorities, vectors

    def __len__(self) -> int:
        return len(self.chunks)

    def files(self, start: int, stop: int) -> dict[str, tuple[str, int]]:
        """Path → (language, rows in ``[start, stop)``)."""
        out: dict[str, tuple[str, int]] = {}
        for chunk in self.chunks[start:stop]:
            language, n = out.get(chunk.path, (chunk.language, 0))
            out[chunk.path] = (language, n + 1)
        return out

    def batches(self, start: int, stop: int, size: int = BATCH) -> Iterator[Batch]:
        for first in range(start, stop, size):
            last = min(first + size, stop)
            yield self.chunks[first:last], self.priorities[first:last], self.vectors[first:last]


Rows = ReplicatedRows | DistinctRows


def open_target(kind: str, location: str, repo: str) -> Any:
    if kind == "sqlite":
        return SQLiteStore(Path(location), create=True)
    return PostgresStore(location, repo=repo)


def load(
    kind: str,
    location: str,
    repo: str,
    rows: Rows,
    span: tuple[int, int],
    meta: dict[str, str],
    tier: Tier,
) -> tuple[float, float]:
    """(seconds writing, seconds reading) rows ``span`` through the store's writer API
    (no vector index): the time to read the rows from the corpus files is left out."""
    start, stop = span
    files = rows.files(start, stop)
    store = open_target(kind, location, repo)
    reading = 0.0
    started = time.perf_counter()
    try:
        with store.writer_lock():
            with store.transaction():
                store.set_meta({k: v for k, v in meta.items() if k not in SKIP_META})
                for path, (language, n) in files.items():
                    digest = hashlib.sha256(path.encode()).hexdigest()
                    store.put_file(path, language, digest, 0, 0, "", n, 0)
            batches = rows.batches(start, stop)
            while True:
                before = time.perf_counter()
                batch = next(batches, None)
                reading += time.perf_counter() - before
                if batch is None:
                    break
                chunks, priorities, vectors = batch
                part = [replace(c, repo=repo) for c in chunks]
                with store.transaction():
                    store.add_chunks(part, priorities, [keyword_row(c) for c in part])
                    store.put_vectors(part, vectors, tier=tier)
        return time.perf_counter() - started - reading, reading
    finally:
        store.close()


def _load_worker(args: tuple[Any, ...], queue: Any) -> None:
    queue.put(load(*args))


def load_parallel(jobs: list[tuple[Any, ...]]) -> float:
    """Wall seconds for the loads run at once, one process each, less the longest
    time one of them spent reading its rows from the corpus files."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    started = time.perf_counter()
    procs = [ctx.Process(target=_load_worker, args=(job, queue)) for job in jobs]
    for proc in procs:
        proc.start()
    reads = [float(queue.get()[1]) for _ in procs]
    for proc in procs:
        proc.join()
    return time.perf_counter() - started - max(reads)


def finish(kind: str, location: str, repo: str, dim: int, tier: Tier) -> float:
    """Seconds to make the vectors searchable: the snapshot (SQLite) / HNSW (PostgreSQL)."""
    store = open_target(kind, location, repo)
    started = time.perf_counter()
    try:
        store.export_vectors(dim, tier=tier)
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
    assert row is not None
    return int(row[0]) - baseline


# --- queries -------------------------------------------------------------------------
def questions(chunks: Iterable[Chunk], n: int) -> list[str]:
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


def search_latency(
    store: Any, config: Config, queries: list[str]
) -> tuple[dict[str, dict[str, float]], float]:
    """p50/p95 (ms) per stage and in total over ``queries`` (one warm-up first); and the
    mean number of top-10 hits a vector list found (0: no vector tier was searched)."""
    searcher = Searcher(store, config)
    searcher.search(queries[0], k=10)
    stages: dict[str, list[float]] = {}
    found_by_vectors = 0
    for query in queries:
        started = time.perf_counter()
        result = searcher.search(query, k=10)
        stages.setdefault("total (wall)", []).append((time.perf_counter() - started) * 1000)
        for stage, ms in result.timings_ms.items():
            stages.setdefault(stage, []).append(ms)
        found_by_vectors += sum(h.vector_rank is not None for h in result.hits)
    latency = {s: {"p50": percentile(v, 50), "p95": percentile(v, 95)} for s, v in stages.items()}
    return latency, found_by_vectors / len(queries)


def noisy_queries(vectors: np.ndarray, n: int) -> np.ndarray:
    """Replicated corpus: ``n`` stored vectors plus noise (re-normalised)."""
    rng = np.random.default_rng(SEED + 1)
    picks = rng.choice(len(vectors), size=min(n, len(vectors)), replace=False)
    queries = vectors[picks] + rng.normal(0, 0.05, (len(picks), vectors.shape[1]))
    out: np.ndarray = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    return out


def recall_sweep(store: PostgresStore, queries: np.ndarray, tier: Tier) -> list[dict[str, float]]:
    """HNSW recall@10 of ``tier`` against an exact scan, per ef_search, and latencies."""
    exact, exact_ms = [], []
    for query in queries:
        started = time.perf_counter()
        found = store.vector_search(query, limit=10, tier=tier, exact=True)
        exact_ms.append((time.perf_counter() - started) * 1000)
        exact.append({cid for cid, _ in found})
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
            found = store.vector_search(query, limit=10, tier=tier, ef_search=ef)
            times.append((time.perf_counter() - started) * 1000)
            hits += len({cid for cid, _ in found} & truth)
        rows.append(
            {
                "ef_search": ef,
                "recall@10": hits / sum(len(t) for t in exact),
                "p50_ms": percentile(times, 50),
                "p95_ms": percentile(times, 95),
            }
        )
    return rows


# --- the run -------------------------------------------------------------------------
def pg_server() -> tuple[Any, Path | None]:
    """The server named by ``$CODECITE_TEST_PG_URL``, else the embedded one started with
    :data:`PG_OPTIONS`."""
    from pg import URL_ENV, PgServer, start_embedded

    given = os.environ.get(URL_ENV, "").strip()
    if given:
        return PgServer(given), None
    started = start_embedded(PG_OPTIONS)
    if isinstance(started, str):
        raise SystemExit(started)
    server, base = started
    return server, Path(base)


def replicated_rows(
    workdir: Path, sources: list[Path], size: int
) -> tuple[ReplicatedRows, dict[str, Any]]:
    """The replicated corpus: the real chunks of ``sources`` (model vectors), copied
    with noisy vectors up to ``size``; and what the run records about it."""
    folders = checkouts(workdir / "replicated", sources)
    base_chunks, base_prio, base_vecs, meta = base_rows(folders)
    print(f"{len(base_chunks)} real chunks with vectors; replicating to {size}", file=sys.stderr)
    rows = ReplicatedRows(*replicate(base_chunks, base_prio, base_vecs, size))
    info = {
        "corpus": "replicated",
        "tier": "model",
        "real_chunks": len(base_chunks),
        "meta": meta,
        "questions": base_chunks,
    }
    return rows, info


def distinct_rows(
    workdir: Path, sources: list[Path], size: int
) -> tuple[DistinctRows, dict[str, Any]]:
    """The first ``size`` rows of the distinct corpus (gathered first when the workdir
    has none); and what the run records about it."""
    chosen = [mirror_source(p) for p in sources] or default_sources()
    started = time.perf_counter()
    corpus = gather(workdir / "corpus", chosen)
    print(
        f"distinct corpus: {corpus['total']:,} chunks ({corpus['loadable']:,} loadable) from "
        f"{len(corpus['sources'])} sources, {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    rows = DistinctRows(workdir / "corpus", size)
    loaded = rows.per_source()
    info = {
        "corpus": "distinct",
        "tier": "static",
        "real_chunks": size,
        "gathered": {k: corpus[k] for k in ("total", "loadable", "files", "seconds")},
        "sources": [
            {
                "name": s["name"],
                "commit": s["commit"],
                "origin": s["origin"],
                "gathered": s["chunks"],
                "loaded": loaded.get(s["name"], 0),
            }
            for s in corpus["sources"]
        ],
        "meta": {
            "static_model": corpus["static_model"],
            "static_dim": str(corpus["dim"]),
            "static_text_version": str(corpus["static_text_version"]),
        },
    }
    return rows, info


def run(
    size: int, n_queries: int, sources: list[Path], workdir: Path, corpus: str
) -> dict[str, Any]:
    from pg import stop_embedded

    rows: Rows
    if corpus == "distinct":
        distinct, info = distinct_rows(workdir, sources, size)
        queries = questions(
            (c for chunks, _, _ in distinct.batches(0, size) for c in chunks), n_queries
        )
        recall_queries = distinct.query_vectors(n_queries)
        rows = distinct
    else:
        replicated, info = replicated_rows(workdir, sources, size)
        queries = questions(info.pop("questions"), n_queries)
        recall_queries = noisy_queries(replicated.vectors, n_queries)
        rows = replicated
    tier: Tier = info["tier"]
    meta = info.pop("meta")
    dim = int(recall_queries.shape[1])
    config = Config()
    server, base = pg_server()
    results: dict[str, Any] = {"chunks": size, "dim": dim, **info}
    results["questions"], results["recall_queries"] = len(queries), len(recall_queries)
    run_dir = workdir / f"run-{os.getpid()}"
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        empty = server.create_database()
        baseline = size_bytes("postgres", empty)
        urls = {"one": server.create_database(), "two": server.create_database()}
        half = size // 2
        targets = {
            "sqlite": (
                str(run_dir / "sqlite-one"),
                str(run_dir / "sqlite-a"),
                str(run_dir / "sqlite-b"),
            ),
            "postgres": (urls["one"], urls["two"], urls["two"]),
        }
        for kind, (one, two_a, two_b) in targets.items():
            row: dict[str, Any] = {}
            seconds, reading = load(kind, one, "bench", rows, (0, size), meta, tier)
            row["load_1_s"], row["read_1_s"] = seconds, reading
            row["load_1_rows_s"] = size / seconds
            row["index_s"] = finish(kind, one, "bench", dim, tier)
            row["size_mb"] = size_bytes(kind, one, baseline if kind == "postgres" else 0) / 2**20
            jobs = [
                (kind, two_a, "bench_a", rows, (0, half), meta, tier),
                (kind, two_b, "bench_b", rows, (half, size), meta, tier),
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
                started = time.perf_counter()  # what a server does after each commit
                matrix = VectorIndex.load(store, tier)
                row["vectors_load_s"] = time.perf_counter() - started
                row["vectors_mb"] = matrix.matrix.nbytes / 2**20 if matrix else 0.0
                del matrix
                row["search"], row["vector_hits_top10"] = search_latency(store, config, queries)
                if isinstance(store, PostgresStore):  # the default asks HNSW; also loaded
                    memory = config.replace(vector_search="memory")
                    row["search_memory"], _ = search_latency(store, memory, queries)
                if not row["vector_hits_top10"]:
                    print(f"warning: {kind}: no vector list found a hit", file=sys.stderr)
                if isinstance(store, PostgresStore):
                    results["recall"] = recall_sweep(store, recall_queries, tier)
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
        shutil.rmtree(run_dir, ignore_errors=True)
    return results


def report(results: dict[str, Any]) -> str:
    distinct = results.get("corpus") == "distinct"
    if distinct:
        title = (
            f"### Store benchmark: {results['chunks']:,} distinct real chunks, static-tier "
            f"vectors ({results['dim']}-d)"
        )
        loaded = [s for s in results["sources"] if s["loaded"]]
        sources = ", ".join(
            f"{s['name']} `{s['commit'][:10] if len(s['commit']) == 40 else s['commit']}` "
            f"{s['loaded']:,}"
            for s in loaded
        )
        intro = [title, "", f"Sources (commit, chunks loaded): {sources}.", ""]
    else:
        intro = [
            f"### Store benchmark: {results['chunks']:,} chunks "
            f"({results['real_chunks']:,} real ones replicated; {results['dim']}-d vectors)",
            "",
        ]
    lines = [
        *intro,
        "| | SQLite | PostgreSQL + pgvector |",
        "|---|---:|---:|",
    ]
    sq, pg = results["sqlite"], results["postgres"]
    for key, label, fmt in (
        ("load_1_rows_s", "load, 1 loader (rows/s)", "{:,.0f}"),
        ("load_2_rows_s", "load, 2 loader processes (rows/s, together)", "{:,.0f}"),
        ("index_s", "vector snapshot / HNSW build (s)", "{:.1f}"),
        ("size_mb", "database size (MB)", "{:,.0f}"),
        ("vectors_load_s", "loading a tier's vectors into a process (s)", "{:.1f}"),
        ("vectors_mb", "... and their memory (MB)", "{:,.0f}"),
    ):
        if key in sq and key in pg:
            lines.append(f"| {label} | {fmt.format(sq[key])} | {fmt.format(pg[key])} |")
    searched = "keyword + static vectors" if distinct else "keyword + model vectors"
    lines += [
        "",
        f"Search latency through `Searcher` ({searched}; {results['questions']} docstring "
        "questions; ms, p50 / p95):",
        "",
        "| stage | SQLite | PostgreSQL (HNSW, the default) | PostgreSQL (vectors in memory) |",
        "|---|---:|---:|---:|",
    ]
    searches = [sq["search"], pg["search"], pg.get("search_memory", {})]
    stages = set(sq["search"]) | set(pg["search"])
    for stage in sorted(stages, key=lambda s: (STAGES.index(s) if s in STAGES else 9, s)):
        cells = []
        for search in searches:
            got = search.get(stage)
            cells.append(f"{got['p50']:.1f} / {got['p95']:.1f}" if got else "-")
        lines.append(f"| {stage} | {' | '.join(cells)} |")
    lines.append(
        f"| top-10 hits found by vectors (mean) | {sq['vector_hits_top10']:.1f} "
        f"| {pg['vector_hits_top10']:.1f} | |"
    )
    queries = (
        f"{results['recall_queries']} queries: static vectors of held-out real chunks, never loaded"
        if distinct
        else f"{results['recall_queries']} queries: stored vectors plus noise"
    )
    lines += [
        "",
        f"pgvector HNSW recall@10 vs exact (`vector_search`, {results['tier']} tier; {queries}):",
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
    parser.add_argument("--corpus", choices=("distinct", "replicated"), default="distinct")
    parser.add_argument(
        "--source",
        type=Path,
        action="append",
        default=[],
        help="a bare git mirror or a folder (repeatable; distinct corpus: used only while "
        "WORKDIR/corpus holds none yet); default: see the module docstring",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "codecite-store-bench",
        help="keeps the gathered corpus (WORKDIR/corpus) between runs; the databases of a "
        "run go in a folder of their own there, removed at the end",
    )
    args = parser.parse_args()
    sources = args.source
    if args.corpus == "replicated":
        sources = sources or [m for m in MIRRORS if m.exists()]
    results = run(args.chunks, args.queries, sources, args.workdir.resolve(), args.corpus)
    out = HERE / "results" / "store_bench.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))
    print(f"\n(numbers in {out.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
