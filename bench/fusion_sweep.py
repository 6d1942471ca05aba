"""The static list's fusion weight, measured on the docstring benchmark (issue 24)::

    python bench/fusion_sweep.py --workdir /work/model-bench/search

Reuses the indexes a ``search_bench.py --workdir W`` run left in ``W/stripped/*``
(its queries are derived again from ``W/sdists``, into a scratch copy), and runs the
keyword + static pipeline and the full pipeline with each ``static_weight`` /
``static_weight_full`` given. Prints file R@1/R@5/MRR and chunk hit@5 per setting.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from search_corpus import PROJECTS, build_corpus  # noqa: E402

import codecite  # noqa: E402
from codecite.evaluate import Retrieved, evaluate  # noqa: E402
from codecite.retrieve import Searcher  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--static", default="0.5,1.0,1.5,2.0", help="static_weight values")
    parser.add_argument("--full", default="0.0,0.5,1.0,1.5", help="static_weight_full values")
    args = parser.parse_args(argv)
    work = Path(args.workdir)
    scratch = Path(tempfile.mkdtemp(prefix="codecite-sweep-"))
    corpora = []
    for spec in PROJECTS:
        name = spec.split("==")[0]
        source = next(p for p in (work / "sdists" / name / "src").iterdir() if p.is_dir())
        golden = build_corpus(spec, source, scratch / name).golden
        index = codecite.open_index(work / "stripped" / name, overrides={"query_log": False})
        corpora.append((golden, index))
    settings = [
        ("keyword+static", ("static",), {"static_weight": float(w)}) for w in args.static.split(",")
    ] + [
        ("full", ("model", "static"), {"static_weight_full": float(w)})
        for w in args.full.split(",")
    ]
    print("| pipeline | setting | file R@1 | file R@5 | file MRR | chunk hit@5 |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for label, tiers, values in settings:
        golden_all, results = [], []
        for golden, index in corpora:
            searcher = Searcher(index.store, replace(index.config, **values))
            for q in golden:
                hits = searcher.search(q.query, k=10, tiers=tiers).hits
                results.append(
                    [Retrieved(h.chunk.path, h.chunk.start_line, h.chunk.end_line) for h in hits]
                )
            golden_all += golden
        f = evaluate(golden_all, results, k=10).overall
        setting = ", ".join(f"{k} {v}" for k, v in values.items())
        print(
            f"| {label} | {setting} | {f.file.recall_at_1:.3f} | {f.file.recall_at_5:.3f} "
            f"| {f.file.mrr:.3f} | {f.chunk.hit_at_5:.3f} |",
            flush=True,
        )
    for _, index in corpora:
        index.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
