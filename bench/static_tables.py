"""Compare static tables on the docstring benchmark, quickly (issue 24)::

    python bench/static_tables.py --workdir /work/sb shipped static-code-v1-256 run/table.npy
    python bench/static_tables.py --workdir /work/sb --static-weight 1.5 run/table.npy

The loop that chose the shipped code model: ``search_bench.py``'s corpora and
queries (923 docstring first sentences of click, requests, rich and jupyterlab-git,
docstrings stripped), each table on an index of its own (the keyword index, the
static tier, no model vectors), searched two ways: keyword + static with the full
pipeline's switches (expansion and rerank on: the index as it is seconds after
``codecite index`` starts), and the static list alone. Prints file MRR@10 overall
and by language. Tables are run one after another (two runs at once would strip the
same corpora under each other). ``search_bench.py`` is the full before/after.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from search_corpus import PROJECTS, prepare  # noqa: E402
from static_models import SHIPPED, register  # noqa: E402

import codecite  # noqa: E402
from codecite.evaluate import Retrieved, evaluate  # noqa: E402
from codecite.index.static_stage import update_static_tier  # noqa: E402
from codecite.retrieve import Searcher  # noqa: E402

K = 10


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", help="'shipped', a registered name or a .npy file")
    parser.add_argument("--workdir", required=True, help="downloads, corpora and indexes")
    parser.add_argument("--static-weight", type=float, help="static_weight (default: config)")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir)
    corpora = prepare(PROJECTS, workdir)
    for table in args.tables:
        model = register(SHIPPED if table == "shipped" else table)
        tag = Path(model).stem if model.endswith(".npy") else model
        started = time.perf_counter()
        golden, fused, alone = [], [], []
        for corpus in corpora:
            folder = workdir / "table-indexes" / tag / corpus.name
            overrides: dict[str, object] = {"query_log": False, "static_model": model}
            index = codecite.open_index(corpus.root, index_dir=folder, overrides=overrides)
            index.update(embed=False)
            update_static_tier(index.store, index.config, lambda _event: None)
            config = index.config
            if args.static_weight is not None:
                config = config.replace(static_weight=args.static_weight)
            searcher = Searcher(index.store, config)
            for query in corpus.golden:
                for out, switches in ((fused, {}), (alone, {"keyword": False})):
                    if switches:
                        switches |= {"expand": False, "rerank": False}
                    hits = searcher.search(query.query, k=K, tiers=("static",), **switches).hits
                    out.append(
                        [
                            Retrieved(h.chunk.path, h.chunk.start_line, h.chunk.end_line)
                            for h in hits
                        ]
                    )
            golden += corpus.golden
            index.close()
        both = evaluate(golden, fused, k=K)
        static = evaluate(golden, alone, k=K)
        languages = ", ".join(f"{k} {v.file.mrr:.3f}" for k, v in sorted(both.by_persona.items()))
        print(
            f"{table}: keyword + static file MRR {both.overall.file.mrr:.4f} "
            f"(R@5 {both.overall.file.recall_at_5:.3f}; {languages}); "
            f"static alone {static.overall.file.mrr:.4f}; {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
