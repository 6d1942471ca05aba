"""PostgreSQL keyword search with MaxScore (terms set aside, ``store/postgres/search.py``)
against scanning every match, on the distinct real corpus of ``bench/store_bench.py``:
the same lists? how much faster? Run by hand (minutes)::

    python bench/store_bench.py --chunks 20000 --workdir W   # gathers W/corpus once
    python bench/pg_keyword_maxscore.py --chunks 500000 --workdir W

The first ``--chunks`` rows are loaded keyword-only into a new database of the embedded
PostgreSQL of tests/pg.py, set up as store_bench's ``PG_OPTIONS`` say (or of
``$CODECITE_TEST_PG_URL``'s server). Questions: first
docstring sentences of loaded chunks (as store_bench's), their terms chosen as the
searcher chooses them (``TermStats.select``); each question runs both ways, in
alternating order, limit 50.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from store_bench import percentile, pg_server, questions  # noqa: E402
from store_corpus import DistinctRows  # noqa: E402

from codecite.config import Config  # noqa: E402
from codecite.identifiers import keyword_row  # noqa: E402
from codecite.retrieve.keyword import TermStats, query_terms  # noqa: E402
from codecite.store.postgres import PostgresStore  # noqa: E402
from codecite.store.postgres import search as postgres_search  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=500_000)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "codecite-store-bench"
    )
    args = parser.parse_args()
    rows = DistinctRows(args.workdir / "corpus", args.chunks)
    server, base = pg_server()
    from pg import stop_embedded

    url = server.create_database()
    try:
        store = PostgresStore(url, repo="bench")
        started = time.perf_counter()
        sample = []
        for chunks, priorities, _ in rows.batches(0, args.chunks):
            part = [replace(c, repo="bench") for c in chunks]
            with store.transaction():
                store.add_chunks(part, priorities, [keyword_row(c) for c in part])
            sample.extend(part[:200])
        print(f"loaded {args.chunks:,} chunks in {time.perf_counter() - started:.0f} s")
        stats, config = TermStats(store), Config()
        asked = [stats.select(query_terms(q), config) for q in questions(sample, args.questions)]
        asked = [terms for terms in asked if terms]
        set_aside = postgres_search.set_aside
        times: dict[str, list[float]] = {"full scan": [], "MaxScore": []}
        identical = 0
        for n, terms in enumerate(asked):
            found = {}
            for mode in ("full scan", "MaxScore") if n % 2 else ("MaxScore", "full scan"):
                postgres_search.set_aside = (  # type: ignore[assignment]
                    set_aside if mode == "MaxScore" else (lambda known, count: {})
                )
                begun = time.perf_counter()
                found[mode] = store.keyword_search(terms, None, 50, (1.0, 1.0, 1.0))
                times[mode].append((time.perf_counter() - begun) * 1000)
            identical += found["full scan"] == found["MaxScore"]
        postgres_search.set_aside = set_aside
        store.close()
        print(f"{len(asked)} questions, identical lists: {identical}")
        for mode, values in times.items():
            print(
                f"{mode}: p50 {percentile(values, 50):.1f} ms, p95 {percentile(values, 95):.1f} ms"
            )
    finally:
        server.drop_database(url)
        if base is not None:
            stop_embedded(base)


if __name__ == "__main__":
    main()
