"""Download the distributions the docstring pairs come from (issue 24).

    python scripts/train_code_model/fetch_sdists.py --top 3000 --out /work/model-data/sdists
    python scripts/train_code_model/fetch_sdists.py --top 3000 --wheels   # the fast way

The list is chosen, not probed: the most downloaded PyPI projects by the rank in
``pypi.tsv`` (a name, version, rank table of PyPI), minus every excluded project
(``exclusions.py``), each downloaded as ``pip download --no-deps --no-binary :all:
NAME==VERSION`` a few at a time. ``--pip`` names the Python whose pip runs; with
``--no-build-isolation`` (the default here) pip reads an sdist's metadata with the
build backends installed there (setuptools, wheel, hatchling, flit-core, poetry-core,
pdm-backend, setuptools-scm, hatch-vcs, Cython) instead of building each backend from
source: ~1 s per project rather than ~10. A project whose metadata cannot be prepared
that way is recorded as failed and left out. ``downloads.jsonl`` in ``--out`` records
every project tried (name, version, rank, file, sha256 or the error); a re-run skips
what is recorded.

Preparing an sdist's metadata costs ~1-2 CPU-seconds a project on a loaded 2-core
machine (a build-backend process each) and fails for a third of them (Rust and C
backends), so ``--wheels`` downloads the same releases as wheels instead, forty
requirements to one ``pip download --no-deps --only-binary :all:`` (no metadata to
build: ~0.02 CPU-s a project); the ``.py`` files of a wheel are the release's
modules as the sdist ships them, less its tests. A release with no wheel is then
fetched as an sdist (the slow way) when ``--sdist-fallback`` is given.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exclusions import excluded_name, normalise

PYPI_TSV = Path("/work/.library/env/packages/pypi.tsv")
#: Large binary releases (GPU and machine-learning runtimes, compilers, browsers):
#: hundreds of MB each for little Python. Left out by name prefix.
LARGE_BINARIES = (
    "nvidia-", "torch", "tensorflow", "tf-", "jax", "triton", "xgboost", "onnxruntime",
    "opencv", "pyarrow", "llvmlite", "ray", "catboost", "mxnet", "paddle", "intel-",
    "mkl", "tbb", "cupy", "lightgbm", "vllm", "flash-attn", "bitsandbytes", "deepspeed",
    "playwright", "selenium-", "chromedriver", "clang", "cmake", "ninja", "duckdb",
    "polars", "pyspark", "grpcio-tools", "tensorrt", "cuda", "scipy", "libclang",
    "tokenizers", "faiss", "milvus", "pymilvus", "av", "ale-py", "open3d", "vtk",
    "pyside", "pyqt", "qt", "wxpython", "kaleido", "z3-solver", "h5py", "dask-cuda",
    "sentencepiece", "gdal", "datasets", "transformers", "spacy-", "en-core",
)  # fmt: skip


def choose(tsv: Path, top: int) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(chosen, excluded) rows among the ``top`` ranked projects, best rank first."""
    rows = []
    with tsv.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            rank = row.get("rank_among_15000_most_downloaded") or ""
            if rank.isdigit() and int(rank) <= top and row.get("version"):
                rows.append(row)
    rows.sort(key=lambda r: int(r["rank_among_15000_most_downloaded"]))
    chosen, excluded = [], []
    for row in rows:
        why = excluded_name(row["name"])
        if not why and normalise(row["name"]).startswith(LARGE_BINARIES):
            why = "large binary release"
        (excluded if why else chosen).append(row | {"why": why or ""})
    return chosen, excluded


def download(python: str, row: dict[str, str], out: Path, isolation: bool) -> dict[str, object]:
    name, version = row["name"], row["version"]
    record: dict[str, object] = {
        "name": name,
        "version": version,
        "rank": int(row["rank_among_15000_most_downloaded"]),
    }
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        command = [python, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        if not isolation:
            command.append("--no-build-isolation")
        command += [f"{name}=={version}", "-d", tmp]
        env = os.environ | {"PIP_CONSTRAINT": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=180, env=env)
        except subprocess.TimeoutExpired:
            return record | {"error": "timeout"}
        files = sorted(Path(tmp).iterdir())
        if proc.returncode != 0 or len(files) != 1:
            lines = [ln for ln in proc.stderr.splitlines() if ln and "is ignored" not in ln]
            return record | {"error": (lines[-1] if lines else f"rc {proc.returncode}")[:200]}
        target = out / files[0].name
        os.replace(files[0], target)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    return record | {"file": target.name, "sha256": digest, "bytes": target.stat().st_size}


_MISSING = re.compile(r"(?:satisfies the requirement|distribution found for) ([A-Za-z0-9_.\-]+)==")


def download_wheels(python: str, rows: list[dict[str, str]], out: Path) -> list[dict[str, object]]:
    """Wheels of ``rows`` in one pip run; a requirement pip cannot find as a wheel is
    recorded as an error and the rest are tried again without it."""
    records: list[dict[str, object]] = []
    pending = {normalise(r["name"]): r for r in rows}
    env = os.environ | {"PIP_CONSTRAINT": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    while pending:
        with tempfile.TemporaryDirectory(dir=out) as tmp:
            command = [python, "-m", "pip", "download", "-q", "--no-deps"]
            command += ["--only-binary", ":all:", "-d", tmp]
            command += [f"{r['name']}=={r['version']}" for r in pending.values()]
            try:
                proc = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
            except subprocess.TimeoutExpired:
                records += [_record(r) | {"error": "timeout"} for r in pending.values()]
                return records
            if proc.returncode != 0:
                missing = _MISSING.search(proc.stderr)
                key = normalise(missing[1]) if missing else ""
                if key not in pending:  # an error we cannot pin on one requirement
                    lines = [ln for ln in proc.stderr.splitlines() if "is ignored" not in ln]
                    error = (lines[-1] if lines else f"rc {proc.returncode}")[:200]
                    records += [_record(r) | {"error": error} for r in pending.values()]
                    return records
                records.append(_record(pending.pop(key)) | {"error": "no wheel of this version"})
                continue
            for path in sorted(Path(tmp).iterdir()):
                key = normalise(path.name.split("-")[0])
                row = pending.pop(key, None)
                if row is None:
                    continue
                target = out / path.name
                os.replace(path, target)
                digest = hashlib.sha256(target.read_bytes()).hexdigest()
                size = target.stat().st_size
                records.append(
                    _record(row) | {"file": target.name, "sha256": digest, "bytes": size}
                )
            records += [_record(r) | {"error": "not downloaded"} for r in pending.values()]
            pending = {}
    return records


def _record(row: dict[str, str]) -> dict[str, object]:
    rank = int(row["rank_among_15000_most_downloaded"])
    return {"name": row["name"], "version": row["version"], "rank": rank}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=3000, help="projects ranked 1..TOP")
    parser.add_argument("--out", default="/work/model-data/sdists")
    parser.add_argument("--tsv", default=str(PYPI_TSV))
    parser.add_argument("--pip", default=sys.executable, help="the Python whose pip runs")
    parser.add_argument("--threads", type=int, default=3)
    parser.add_argument("--isolation", action="store_true", help="build isolation (slow)")
    parser.add_argument("--wheels", action="store_true", help="wheels, 40 to a pip run")
    parser.add_argument("--sdist-fallback", action="store_true", help="sdists where no wheel")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chosen, excluded = choose(Path(args.tsv), args.top)
    (out / "excluded.json").write_text(
        json.dumps([{"name": r["name"], "why": r["why"]} for r in excluded], indent=1) + "\n"
    )
    log = out / "downloads.jsonl"
    done = set()
    if log.exists():
        for line in log.read_text().splitlines():
            record = json.loads(line)
            # a release with no wheel is tried again as an sdist with --sdist-fallback
            retry = args.sdist_fallback and record.get("error") == "no wheel of this version"
            if not retry:
                done.add(record["name"])
    todo = [r for r in chosen if r["name"] not in done]
    if args.wheels:
        batches = [todo[i : i + 40] for i in range(0, len(todo), 40)]
        with ThreadPoolExecutor(args.threads) as pool, log.open("a") as fh:
            futures = [pool.submit(download_wheels, args.pip, b, out) for b in batches]
            for n, future in enumerate(futures, 1):
                for record in future.result():
                    fh.write(json.dumps(record | {"kind": "wheel"}) + "\n")
                fh.flush()
                print(f"batch {n}/{len(batches)} done", flush=True)
        return 0
    print(f"{len(chosen)} chosen, {len(excluded)} excluded, {len(todo)} to download", flush=True)
    lock = threading.Lock()
    ok = failed = 0
    with ThreadPoolExecutor(args.threads) as pool, log.open("a") as fh:
        futures = [pool.submit(download, args.pip, r, out, args.isolation) for r in todo]
        for n, future in enumerate(futures, 1):
            record = future.result()
            with lock:
                fh.write(json.dumps(record) + "\n")
                fh.flush()
            ok, failed = ok + ("file" in record), failed + ("error" in record)
            if n % 50 == 0:
                print(f"{n}/{len(todo)}: {ok} downloaded, {failed} failed", flush=True)
    print(f"done: {ok} downloaded, {failed} failed", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
