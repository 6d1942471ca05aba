"""Before/after of the static code model (issue 24), every tier, in one run::

    python bench/model_bench.py --workdir /work/model-bench      # ~1-2 h on 2 cores
    python bench/model_bench.py --only shop                      # seconds

Three dev benchmarks, each with the same tiers:

- ``shop``: the shop fixture's golden set (``tests/fixtures/shop_golden.jsonl``, 42
  questions), here;
- ``docstrings``: ``bench/search_bench.py --skip-latency`` (923 docstring queries of
  click, requests, rich, jupyterlab-git);
- ``bugs``: ``bench/bugs_bench.py`` (225 SWE-bench dev bug reports), with the shipped
  model (keyword, keyword + static, the same with bug reports' static weight halved)
  and with the distilled model of issue 15 (``--static-model static-minilm-v1-256``:
  keyword + static), on indexes of their own; the MiniLM tiers (full, full + static)
  on the first ``--minilm-limit`` reports of each project (MiniLM over every commit of
  all six projects takes hours on 2 cores with a fresh embedding cache).

The tiers: keyword only; keyword + static (the index seconds after ``codecite index``
starts, and all of it with the model tier off); full (+ MiniLM, the static list off
once every model vector exists, as today); full + static (the static list fused too).
"Before" is the distilled static model, "after" the shipped one. The pieces run as
subprocesses side by side (``--jobs``); their JSON goes to ``bench/results/`` and the
combined tables to ``bench/results/model.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from static_models import DISTILLED, PREVIOUS, SHIPPED, register  # noqa: E402

import codecite  # noqa: E402
from codecite.evaluate import Retrieved, evaluate, load_golden  # noqa: E402
from codecite.retrieve import Searcher  # noqa: E402

RESULTS = HERE / "results"
SHOP = HERE.parent / "tests" / "fixtures" / "shop"
SHOP_GOLDEN = HERE.parent / "tests" / "fixtures" / "shop_golden.jsonl"
#: (row name, static model, tiers searched, config settings).
SHOP_SYSTEMS: list[tuple[str, str, tuple[str, ...], dict[str, Any]]] = [
    ("keyword", SHIPPED, (), {}),
    ("keyword + static (distilled, before)", DISTILLED, ("static",), {}),
    ("keyword + static (code model v2)", PREVIOUS, ("static",), {}),
    ("full: + MiniLM (today)", SHIPPED, ("model", "static"), {}),
    ("keyword + static (code model, after)", SHIPPED, ("static",), {}),
    ("full + static (code model)", SHIPPED, ("model", "static"), {"static_weight_full": 1.0}),
]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_shop(workdir: Path) -> dict[str, Any]:
    """The shop golden set under every system (an index per static model)."""
    from codecite.index.static_stage import update_static_tier

    golden = load_golden(SHOP_GOLDEN)
    root = workdir / "shop"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(SHOP, root)
    rows: dict[str, Any] = {}
    indexes: dict[str, codecite.Index] = {}
    for model in (SHIPPED, PREVIOUS, DISTILLED):
        register(model)
        overrides: dict[str, object] = {"query_log": False, "static_model": model}
        index = codecite.open_index(root, index_dir=workdir / f"shop-{model}", overrides=overrides)
        started = time.perf_counter()
        index.update(embed=model == SHIPPED, full=True)
        if model != SHIPPED:
            update_static_tier(index.store, index.config, lambda _event: None)
        log(f"shop: indexed with {model} in {time.perf_counter() - started:.1f} s")
        indexes[model] = index
    for name, model, tiers, settings in SHOP_SYSTEMS:
        index = indexes[model]
        searcher = Searcher(index.store, replace(index.config, **settings))
        results = [
            [
                Retrieved(h.chunk.path, h.chunk.start_line, h.chunk.end_line)
                for h in searcher.search(q.query, k=10, tiers=tiers).hits
            ]
            for q in golden
        ]
        report = evaluate(golden, results, k=10)
        rows[name] = {
            "file": report.overall.file.to_json(),
            "chunk": report.overall.chunk.to_json(),
        }
    for index in indexes.values():
        index.close()
    return {"queries": len(golden), "systems": rows}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="kept between runs (indexes, trees, downloads)")
    parser.add_argument("--only", default="shop,docstrings,bugs", help="benchmarks to run")
    parser.add_argument("--jobs", type=int, default=2, help="benchmarks side by side")
    parser.add_argument(
        "--minilm-limit", type=int, default=8, help="bug reports per project with MiniLM"
    )
    parser.add_argument("--out", default=str(RESULTS / "model.json"))
    args = parser.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="codecite-model-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    only = set(args.only.split(","))
    started, cpu = time.perf_counter(), time.process_time()
    py = sys.executable
    commands: dict[str, list[str]] = {}
    if "docstrings" in only:
        commands["docstrings"] = [
            py, str(HERE / "search_bench.py"), "--skip-latency",
            "--workdir", str(workdir / "search"), "--out", str(RESULTS / "model-search.json"),
        ]  # fmt: skip
    if "bugs" in only:
        commands["bugs"] = [
            py, str(HERE / "bugs_bench.py"), "--workdir", str(workdir / "bugs"),
            "--modes", "keyword,static,static@q0.5", "--json", str(RESULTS / "model-bugs.json"),
        ]  # fmt: skip
        # MiniLM on every commit of every project takes hours here (a fresh embedding
        # cache): the model tier's rows are measured on the first instances of each project
        commands["bugs-minilm"] = [
            py, str(HERE / "bugs_bench.py"), "--workdir", str(workdir / "bugs-minilm"),
            "--modes", "keyword,static,full,full+static", "--limit", str(args.minilm_limit),
            "--json", str(RESULTS / "model-bugs-minilm.json"),
        ]  # fmt: skip
        commands["bugs-distilled"] = [
            py, str(HERE / "bugs_bench.py"), "--workdir", str(workdir / "bugs-distilled"),
            "--modes", "keyword,static", "--static-model", DISTILLED,
            "--json", str(RESULTS / "model-bugs-distilled.json"),
        ]  # fmt: skip
    result: dict[str, Any] = {"command": " ".join(["python bench/model_bench.py", *sys.argv[1:]])}
    running: dict[str, tuple[subprocess.Popen[bytes], float]] = {}
    pending = list(commands.items())
    logs = workdir / "logs"
    logs.mkdir(exist_ok=True)

    def start_next() -> None:
        while pending and len(running) < args.jobs:
            name, command = pending.pop(0)
            log(f"{name}: {' '.join(command[1:])}")
            with (logs / f"{name}.log").open("wb") as fh:
                running[name] = (subprocess.Popen(command, stdout=fh, stderr=fh), time.time())

    start_next()
    if "shop" in only:
        result["shop"] = run_shop(workdir)
        log("shop done")
    while running:
        time.sleep(5)
        for name, (proc, began) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[name]
            result.setdefault("runs", {})[name] = {
                "rc": proc.returncode,
                "wall_s": round(time.time() - began),
            }
            log(f"{name}: exit {proc.returncode} after {time.time() - began:.0f} s")
            start_next()
    result["wall_s"] = round(time.perf_counter() - started)
    result["cpu_s"] = round(time.process_time() - cpu + children_cpu())
    result["machine"] = {"cores": os.cpu_count()}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print_report(result)
    return 0


def print_report(result: dict[str, Any]) -> None:
    shop = result.get("shop")
    if shop:
        print(f"\nShop golden set ({shop['queries']} questions)\n")
        print("| system | file R@5 | file MRR | chunk R@5 | chunk MRR |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, s in shop["systems"].items():
            f, c = s["file"], s["chunk"]
            print(
                f"| {name} | {f['recall_at_5']:.3f} | {f['mrr']:.3f} | {c['recall_at_5']:.3f} "
                f"| {c['mrr']:.3f} |"
            )
    print(f"\nwall {result['wall_s']} s, CPU {result['cpu_s']} s (children included)")


if __name__ == "__main__":
    raise SystemExit(main())
