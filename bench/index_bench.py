"""Indexing benchmark (run by hand, not by CI):

    python bench/index_bench.py                       # django (big) + werkzeug (mid)
    python bench/index_bench.py --big django==5.2.19 --mid werkzeug==3.1.9 --skip-embed

Downloads real source distributions from PyPI into a temporary folder (never
committed), then measures, in one run:

1. parse + chunk + graph + keyword index (``--no-embed``) of the big project,
   on all cores and, side by side, on one core (the baseline): files/s, MB/s,
   time to searchable;
2. a full index with embeddings of the mid-size project (fresh embedding
   cache): total time, chunks/s, peak memory, index size;
3. re-index of the big project after touching one file, and with no change;
4. chunk quality: the share of function/method chunks that re-parse alone per
   language, and chunk sizes (lines, model tokens) per language.

Each indexing step runs in its own process so peak memory is its own.
Results print as a table and go to ``bench/results/index.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def download_sdist(spec: str, dest: Path) -> Path:
    """pip-download one sdist and unpack it; returns the project folder."""
    dl = dest / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--no-binary",
            ":all:",
            spec,
            "-d",
            str(dl),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    name = spec.split("==")[0].lower().replace("-", "_")
    archive = next(p for p in dl.iterdir() if p.name.lower().replace("-", "_").startswith(name))
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    folder = dest / archive.name.removesuffix(".tar.gz")
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    subprocess.run(["git", "add", "-A"], cwd=folder, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "src"],
        cwd=folder,
        check=True,
    )
    return folder


def run_step(args: list[str], env: dict[str, str] | None = None) -> dict:
    """Run ``index_bench.py --step ...`` in a fresh process; returns its JSON."""
    proc = subprocess.run(
        [sys.executable, __file__, "--step", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"step {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def step(kind: str, root: str, workers: int, embed: bool, full: bool) -> None:
    """One measured index run in this process; prints a JSON line."""
    import codecite

    started = time.perf_counter()
    with codecite.open_index(root, overrides={"workers": workers}) as idx:
        report = idx.update(full=full, embed=embed)
    wall = time.perf_counter() - started
    usage_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    usage_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    size = sum(p.stat().st_size for p in (Path(root) / ".codecite").iterdir())
    bytes_parsed = sum(
        (Path(root) / p).stat().st_size
        for p in report.added + report.modified
        if (Path(root) / p).exists()
    )
    print(
        json.dumps(
            {
                "kind": kind,
                "wall_s": wall,
                "seconds": report.seconds,
                "changed": report.changed,
                "files": report.files_seen,
                "chunks_written": report.chunks_written,
                "embedded": report.embedded,
                "bytes_parsed": bytes_parsed,
                "peak_rss_mb": max(usage_self, usage_children) / 1024,
                "index_mb": size / 2**20,
                "edges": report.edges_by_kind,
                "skipped": report.skipped_by_reason(),
            }
        )
    )


def touch_one(root: Path) -> str:
    """Edit one mid-sized Python file of the project (append a function)."""
    files = sorted(p for p in root.rglob("*.py") if ".codecite" not in p.parts)
    target = files[len(files) // 2]
    with target.open("a") as fh:
        fh.write("\n\ndef bench_touched_function(x):\n    return x + 1\n")
    return str(target.relative_to(root))


def cli_wall(root: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        ["codecite", "index", str(root), "--json", "--no-embed"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big", default="django==5.2.19")
    parser.add_argument("--mid", default="werkzeug==3.1.9")
    parser.add_argument("--skip-embed", action="store_true", help="skip the embedding step")
    parser.add_argument("--out", default=str(HERE / "results" / "index.json"))
    parser.add_argument("--step", nargs=5, metavar=("KIND", "ROOT", "WORKERS", "EMBED", "FULL"))
    args = parser.parse_args()
    if args.step:
        kind, root, workers, embed, full = args.step
        step(kind, root, int(workers), embed == "1", full == "1")
        return
    results: dict[str, object] = {"cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="codecite-bench-") as tmp:
        work = Path(tmp)
        big = download_sdist(args.big, work / "big")
        mid = download_sdist(args.mid, work / "mid")
        cache = {"CODECITE_CACHE_DIR": str(work / "cache")}
        one = run_step(["parse-1core", str(big), "1", "0", "1"], cache)
        both = run_step(["parse-allcores", str(big), "0", "0", "1"], cache)
        results["parse"] = {"one_core": one, "all_cores": both}
        touched = touch_one(big)
        results["reindex_one_file"] = {
            "file": touched,
            "library": run_step(["touch", str(big), "0", "0", "0"], cache),
        }
        touch_one(big)
        results["reindex_one_file"]["cli_wall_s"] = cli_wall(big)  # type: ignore[index]
        results["reindex_no_change_cli_wall_s"] = cli_wall(big)
        if not args.skip_embed:
            results["embed_mid"] = run_step(["embed-mid", str(mid), "0", "1", "1"], cache)
        from chunk_quality import chunk_quality

        results["chunk_quality"] = chunk_quality([big, mid])
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    print_summary(results)


def print_summary(r: dict) -> None:
    one, both = r["parse"]["one_core"], r["parse"]["all_cores"]
    for label, s in (("1 core", one), (f"{r['cpu_count']} cores", both)):
        parse_s = s["seconds"].get("parse", 0.0)
        print(
            f"parse+chunk+graph+keyword, {label}: {s['changed']} files in {s['wall_s']:.1f}s "
            f"wall (parse stage {parse_s:.1f}s): {s['changed'] / parse_s:.0f} files/s, "
            f"{s['bytes_parsed'] / 2**20 / parse_s:.1f} MB/s; {s['chunks_written']} chunks; "
            f"peak {s['peak_rss_mb']:.0f} MB"
        )
    print(f"speed-up all cores vs 1 core: {one['wall_s'] / both['wall_s']:.2f}x")
    lib = r["reindex_one_file"]["library"]
    print(
        f"re-index after touching one file: {lib['wall_s']:.2f}s in-process, "
        f"{r['reindex_one_file']['cli_wall_s']:.2f}s CLI wall; "
        f"no change: {r['reindex_no_change_cli_wall_s']:.2f}s CLI wall"
    )
    if "embed_mid" in r:
        e = r["embed_mid"]
        emb_s = e["seconds"].get("embed", 0.0)
        print(
            f"full index with embeddings (mid, {e['files']} files): {e['wall_s']:.1f}s, "
            f"{e['embedded']} chunks embedded at {e['embedded'] / max(emb_s, 1e-9):.1f}/s, "
            f"peak {e['peak_rss_mb']:.0f} MB, index {e['index_mb']:.1f} MB"
        )
    for lang, q in r["chunk_quality"].items():
        print(
            f"{lang:11s} defs {q['definitions']:5d}  reparse {q['reparse_ok_pct']:6.2f}%  "
            f"lines p50/p90/max {q['lines_p50']}/{q['lines_p90']}/{q['lines_max']}  "
            f"tokens p50/p90 {q['tokens_p50']}/{q['tokens_p90']}  "
            f">256 tok {q['over_256_tokens_pct']:.0f}%"
        )


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
