"""Compare static tables on the docstring benchmark, quickly (issue 24)::

    python bench/static_tables.py --workdir /work/sb shipped static-code-v2-256 run/table.npy
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

from search_bench import KEYWORD_STATIC, STATIC_ALONE, codecite_search, model_index  # noqa: E402
from search_corpus import PROJECTS, prepare  # noqa: E402
from static_models import SHIPPED  # noqa: E402

from codecite.config import load_config  # noqa: E402
from codecite.errors import ConfigError  # noqa: E402
from codecite.evaluate import evaluate  # noqa: E402
from codecite.retrieve import Searcher  # noqa: E402

K = 10


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", help="'shipped', a registered name or a .npy file")
    parser.add_argument("--workdir", required=True, help="downloads, corpora and indexes")
    parser.add_argument("--static-weight", type=float, help="static_weight (default: config)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another config setting of the searches (e.g. candidates=100); repeatable",
    )
    args = parser.parse_args(argv)
    workdir = Path(args.workdir) / "tables"
    settings = _settings(args.set, args.static_weight)
    corpora = prepare(PROJECTS, Path(args.workdir))
    for table in args.tables:
        started = time.perf_counter()
        golden, fused, alone = [], [], []
        for corpus in corpora:
            index = model_index(corpus, workdir, SHIPPED if table == "shipped" else table)
            config = index.config.replace(**settings) if settings else index.config
            both_search = codecite_search(Searcher(index.store, config), KEYWORD_STATIC)
            static_search = codecite_search(Searcher(index.store, config), STATIC_ALONE)
            fused += [both_search(q.query) for q in corpus.golden]
            alone += [static_search(q.query) for q in corpus.golden]
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


def _settings(pairs: list[str], static_weight: float | None) -> dict[str, object]:
    """The ``--set NAME=VALUE`` settings (and ``--static-weight``), checked and typed as
    a ``codecite.toml`` value would be, before the corpora are prepared (minutes)."""
    given: dict[str, object] = {}
    for text in pairs:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise SystemExit(f"--set {text!r}: expected NAME=VALUE")
        given[name.replace("-", "_")] = value
    if static_weight is not None:
        given["static_weight"] = static_weight
    try:
        checked = load_config(overrides=given, environ={}).settings()
    except ConfigError as exc:
        raise SystemExit(f"--set: {exc}") from None
    return {name: checked[name] for name in given}


if __name__ == "__main__":
    raise SystemExit(main())
