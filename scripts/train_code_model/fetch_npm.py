"""Download the npm packages whose doc comments give JavaScript/TypeScript pairs (issue 24).

    python scripts/train_code_model/fetch_npm.py --top 4000 --out /work/model-data/npm

The docstring pairs of ``fetch_sdists.py`` are all Python, and the docstring
benchmark's TypeScript project (jupyterlab-git) is searched with a table that saw
TypeScript only through identifiers shared with Python. This fetches the same kind
of data for JavaScript and TypeScript: the most downloaded packages of the npm
registry by ``downloads_a_month`` in ``npm.tsv`` (the machine's npm package list),
less the exclusion list (``exclusions.py``: names, their plugins and scoped copies),
type-only packages (``@types/*``: declarations restating another package's API) and
known binary or bundled releases, each downloaded as ``npm pack NAME@VERSION``
(forty to one npm run, a few runs at a time). ``downloads.jsonl`` in ``--out``
records every package tried (name, version, rank, file, sha512 integrity or the
error); a re-run skips what is recorded. ``pairs.py npm`` reads them.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exclusions import excluded_name

NPM_TSV = Path("/work/.library/env/packages/npm.tsv")
#: Scopes and prefixes of packages with no documented source of their own: type
#: declarations, platform binaries, compilers and bundles of other packages.
SKIPPED_PREFIXES = (
    "@types/", "@esbuild/", "@swc/", "@rollup/rollup-", "@img/", "@next/swc", "@biomejs/",
    "@nx/nx-", "@parcel/watcher-", "@tailwindcss/oxide", "@rspack/binding", "@oxc-",
    "@napi-rs/", "@unrs/", "@ast-grep/", "@sentry/cli-", "@aws-sdk/client-",
    "typescript", "esbuild", "@typescript/", "caniuse-lite", "electron-to-chromium",
    "@babel/compat-data", "mime-db", "spdx-", "core-js", "playwright", "puppeteer",
    "prettier", "sass", "lightningcss", "sharp", "canvas", "pdfjs-dist", "monaco-editor",
    "@jupyterlab/git",
)  # fmt: skip
#: Packages named in the exclusion list under an npm spelling.
NPM_EXCLUDED = frozenset({"@jupyterlab/git", "jupyterlab-git", "remeda", "express"})
BATCH = 40


def excluded_package(name: str) -> str | None:
    """Why the npm package ``name`` is kept out, or None when it may be used."""
    bare = name.rsplit("/", 1)[-1]
    if name in NPM_EXCLUDED:
        return "excluded (evaluation or held-out project)"
    if name.startswith(SKIPPED_PREFIXES):
        return "types, binaries or bundles"
    scope = name[1:].split("/", 1)[0] if name.startswith("@") else ""
    return excluded_name(bare) or (excluded_name(scope) if scope else None)


def choose(tsv: Path, top: int) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(chosen, excluded) rows among the ``top`` most downloaded packages."""
    rows = []
    with tsv.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            downloads = row.get("downloads_a_month") or ""
            if downloads.isdigit() and row.get("version"):
                rows.append(row)
    rows.sort(key=lambda r: -int(r["downloads_a_month"]))
    chosen: list[dict[str, str]] = []
    excluded: list[dict[str, str]] = []
    for rank, row in enumerate(rows[:top], 1):
        why = excluded_package(row["name"])
        (excluded if why else chosen).append(row | {"rank": str(rank), "why": why or ""})
    return chosen, excluded


def _record(row: dict[str, str]) -> dict[str, object]:
    return {"name": row["name"], "version": row["version"], "rank": int(row["rank"])}


def pack(rows: list[dict[str, str]], out: Path) -> list[dict[str, object]]:
    """``npm pack`` of ``rows`` into ``out``; one that fails alone is recorded as an
    error (the batch is tried one by one when npm refuses it as a whole)."""
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        command = ["npm", "pack", "--json", "--silent", "--ignore-scripts"]
        command += ["--pack-destination", tmp] + [f"{r['name']}@{r['version']}" for r in rows]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            return [_record(r) | {"error": "timeout"} for r in rows]
        if proc.returncode != 0:
            if len(rows) > 1:
                return [rec for r in rows for rec in pack([r], out)]
            lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
            return [_record(rows[0]) | {"error": (lines[-1] if lines else "npm failed")[:200]}]
        try:
            packed = {(p["name"], p["version"]): p for p in json.loads(proc.stdout)}
        except (ValueError, KeyError, TypeError):
            return [_record(r) | {"error": "unreadable npm output"} for r in rows]
        records: list[dict[str, object]] = []
        for row in rows:
            info = packed.get((row["name"], row["version"]))
            source = Path(tmp) / str(info["filename"]) if info else None
            if info is None or source is None or not source.exists():
                records.append(_record(row) | {"error": "not downloaded"})
                continue
            target = out / source.name
            source.replace(target)
            integrity, size = info.get("integrity", ""), target.stat().st_size
            records.append(
                _record(row) | {"file": target.name, "integrity": integrity, "bytes": size}
            )
        return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=4000, help="packages ranked 1..TOP")
    parser.add_argument("--out", default="/work/model-data/npm")
    parser.add_argument("--tsv", default=str(NPM_TSV))
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "downloads.jsonl"
    done = set()
    if log.exists():
        done = {json.loads(line)["name"] for line in log.read_text().splitlines() if line}
    chosen, excluded = choose(Path(args.tsv), args.top)
    (out / "excluded.json").write_text(
        json.dumps([{"name": r["name"], "why": r["why"]} for r in excluded], indent=1) + "\n"
    )
    todo = [r for r in chosen if r["name"] not in done]
    print(f"{len(chosen)} chosen, {len(excluded)} excluded, {len(todo)} to fetch", flush=True)
    lock = threading.Lock()
    batches = [todo[i : i + BATCH] for i in range(0, len(todo), BATCH)]

    def work(batch: list[dict[str, str]]) -> int:
        records = pack(batch, out)
        with lock, log.open("a") as fh:
            for record in records:
                fh.write(json.dumps(record) + "\n")
        return sum("file" in r for r in records)

    with ThreadPoolExecutor(args.threads) as pool:
        for n, got in enumerate(pool.map(work, batches), 1):
            print(f"batch {n}/{len(batches)}: {got}/{len(batches[n - 1])} downloaded", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
