"""Answer benchmark (issue 20; run by hand, not by CI): questions people really ask,
each with the lines of code that answer it (``bench/answers/``, see its README), on real
projects fetched at run time::

    python bench/answer_bench.py                        # baseline vs current, ~15 min
    python bench/answer_bench.py --projects starlette   # one project
    python bench/answer_bench.py --no-baseline --signals   # current only, + abstention data
    python bench/answer_bench.py --baseline HEAD --static-only   # full vs keyword + static
    python bench/answer_bench.py --no-baseline --first-answer    # right after `codecite index`

Side by side, in one run, on the same trees and questions, offline (extractive answers):

- ``baseline``: ``Index.ask`` of the code at ``--baseline REV`` (default: the commit
  before the evidence-first answers), exported with ``git archive`` into the workdir
  and run in its own process (``PYTHONPATH``), with its own index;
- ``current``: ``Index.ask`` of this checkout's ``src/``.

Both run through the public API only (``codecite.open_index(...).ask(q, "extractive")``).
Metrics, overall and per persona (engineer, QA, PM), on the answerable questions:

- **evidence@3**: a reference range overlaps one of the answer's first 3 cited blocks
  (its distinct ``path:start-end`` citations in the order written, a citation that lies
  inside an earlier one counting as that one: a line quoted from a cited block);
- **lead hit**: the first cited block overlaps a reference;
- **declined**: answerable questions the answer declined ("not enough information");

on the out-of-scope questions: the share **declined** (the right answer); and for all:
answer length (characters, median) and time per answer (p50, after loading).

Trees: PyPI sdists (``pip download --no-binary``) or ``git archive`` of a mirror under
``--mirrors`` (``github:OWNER/NAME`` fetched as ``OWNER+NAME/repo``; bench-data's README
says how). Nothing of those projects is committed. Writes ``bench/results/answers.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from answer_data import PERSONAS, Question, Ref, check, load, projects  # noqa: E402

#: The last commit before the evidence-first answers (issue 20).
BASELINE_REV = "ed4b857"
WORKDIR = Path("/work/answer-bench")
MIRRORS = Path("/work/.mirror")
FIRST_BLOCKS = 3
#: The floor every answer figure is reported beside (issue 38): the same answer with
#: its blocks in search's order, nothing reordered, nothing declined.
SEARCH_ORDER = "search order"
#: Search's own chunks, each cited whole (what ``search`` lists).
SEARCH_CHUNKS = "search chunks"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- trees


def tree(name: str, pin: dict[str, str], workdir: Path, mirrors: Path) -> Path:
    """The project's pinned tree under ``workdir/trees`` (made once)."""
    root = workdir / "trees" / name
    if (root / ".complete").is_file():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    if pin["source"] == "pypi":
        downloads = workdir / "downloads"
        downloads.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
             ":all:", pin["spec"], "-d", str(downloads)],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        stem = pin["spec"].replace("==", "-").lower().replace("_", "-")
        archive = next(
            p for p in downloads.iterdir()
            if p.name.lower().replace("_", "-").startswith(stem) and p.name.endswith(".tar.gz")
        )  # fmt: skip
        with tarfile.open(archive) as tar:
            tar.extractall(root, filter="data")
        (top,) = list(root.iterdir())
        for item in top.iterdir():
            item.rename(root / item.name)
        top.rmdir()
    else:
        git_dir = mirrors / pin["repo"].replace("/", "+") / "repo"
        if not git_dir.is_dir():
            raise SystemExit(f"{name}: no mirror at {git_dir}; fetch github:{pin['repo']}")
        data = subprocess.run(
            ["git", "--git-dir", str(git_dir), "archive", pin["commit"]],
            check=True, capture_output=True,
        ).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(root)], input=data, check=True)
    (root / ".complete").write_text(json.dumps(pin))
    return root


def baseline_source(rev: str, workdir: Path) -> Path:
    """``src/`` of ``rev``, exported once into the workdir."""
    out = workdir / "systems" / f"baseline-{rev}"
    if (out / "src" / "codecite").is_dir():
        return out / "src"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    data = subprocess.run(
        ["git", "archive", rev, "src"], cwd=HERE.parent, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=data, check=True)
    return out / "src"


# --------------------------------------------------------------------------- one system


def run_system(args: argparse.Namespace) -> int:
    """In a child process (PYTHONPATH = the system's src): index each project into the
    system's own index folder, answer every question, print one JSON line each."""
    import codecite

    jobs = json.loads(Path(args.run_system).read_text())
    for job in jobs:
        root, index_dir = Path(job["root"]), Path(job["index"])
        started = time.perf_counter()
        with codecite.open_index(root, index_dir=index_dir) as idx:
            if job.get("static_only") or job.get("pending"):  # keyword + static
                from codecite.index.static_stage import update_static_tier

                idx.update(embed=False)
                update_static_tier(idx.store, idx.config, lambda _event: None)
            if job.get("pending"):
                # as `codecite index` leaves it before its background worker's first
                # batch: the model named, no vector yet (ask embeds its hits on the spot)
                from codecite.embed import get_embedder
                from codecite.index.model_stage import prepare_model_tier

                with idx.store.writer_lock():
                    embedder = get_embedder(idx.config.embed.embedder, idx.config)
                    prepare_model_tier(idx.store, embedder, idx.config)
            if not (job.get("static_only") or job.get("pending")):
                idx.update()
        log(f"{job['system']} {job['project']}: indexed in {time.perf_counter() - started:.0f} s")
        with codecite.open_index(root, index_dir=index_dir, create=False) as idx:
            idx.ask("warm up: where is the main entry point?", "extractive")
            # the floor (issue 38): the same answer, blocks in search's order, no model
            floor = None
            if job.get("search_order"):
                floor = codecite.open_index(
                    root, index_dir=index_dir, create=False, overrides={"answer_model": False}
                )
            for q in job["questions"]:
                if floor is not None:
                    print(json.dumps(search_chunks(idx, q)), flush=True)
                    print(json.dumps(answer_record(floor, q, job["search_order"])), flush=True)
                print(json.dumps(answer_record(idx, q, job["system"])), flush=True)
            if floor is not None:
                floor.close()
    return 0


def search_chunks(idx: Any, q: dict[str, Any]) -> dict[str, Any]:
    """``Index.search``'s top chunks, each cited whole (a class of 300 lines as one
    citation), in search's order: what ``search`` shows."""
    t0 = time.perf_counter()
    result = idx.search(q["question"], k=10)
    elapsed = time.perf_counter() - t0
    cited = [[h.chunk.path, h.chunk.start_line, h.chunk.end_line] for h in result.hits]
    return {"id": q["id"], "system": SEARCH_CHUNKS, "insufficient": False,
            "citations": cited[:5], "sources": cited, "confidence": None, "signals": None,
            "shape": "", "chars": 0, "lines": 0, "ms": round(elapsed * 1000, 1),
            "answer": ""}  # fmt: skip


def answer_record(idx: Any, q: dict[str, Any], system: str) -> dict[str, Any]:
    """One answer of ``Index.ask`` (extractive) as a record."""
    t0 = time.perf_counter()
    answer = idx.ask(q["question"], "extractive")
    elapsed = time.perf_counter() - t0
    data = answer.to_json()
    return {
        "id": q["id"],
        "system": system,
        "insufficient": bool(data["insufficient"]),
        "citations": [[c["path"], c["start_line"], c["end_line"]] for c in data["citations"]],
        "sources": [[h["path"], h["start_line"], h["end_line"]] for h in data["sources"]],
        "confidence": data.get("confidence"),
        "signals": data.get("signals"),
        "shape": data.get("shape", ""),
        "chars": len(data["answer"]),
        "lines": data["answer"].count("\n") + 1,
        "ms": round(elapsed * 1000, 1),
        "answer": data["answer"],
        "lead": data.get("lead", ""),
    }


def spawn(
    system: str, src: Path, jobs: list[dict[str, Any]], workdir: Path
) -> list[dict[str, Any]]:
    spec = workdir / f"jobs-{system}.json"
    spec.write_text(json.dumps(jobs))
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(
        [sys.executable, __file__, "--run-system", str(spec)],
        env=env, stdout=subprocess.PIPE, text=True, check=False,
    )  # fmt: skip
    if proc.returncode:
        raise SystemExit(f"{system} failed (exit {proc.returncode})")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def split_systems(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """A child's records by the system that made them (its answers; search order)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        out.setdefault(rec["system"], []).append(rec)
    return out


# --------------------------------------------------------------------------- scoring


def cited_blocks(record: dict[str, Any]) -> list[tuple[str, int, int]]:
    """The distinct places an answer cites, in order: a citation inside an earlier one
    is the same place (a line quoted from a block already cited), and one that holds an
    earlier one takes its place."""
    out: list[tuple[str, int, int]] = []
    for path, start, end in record["citations"]:
        inside = next((i for i, (p, s, e) in enumerate(out) if p == path and s <= start
                       and end <= e), None)  # fmt: skip
        if inside is not None:
            continue
        holds = next((i for i, (p, s, e) in enumerate(out) if p == path and start <= s
                      and e <= end), None)  # fmt: skip
        if holds is not None:
            out[holds] = (path, start, end)
            out = [b for i, b in enumerate(out) if i == holds or not (
                b[0] == path and start <= b[1] and b[2] <= end)]  # fmt: skip
        else:
            out.append((path, start, end))
    return out


def hits(refs: Iterable[Ref], blocks: list[tuple[str, int, int]]) -> bool:
    return any(r.overlaps(p, s, e) for r in refs for p, s, e in blocks)


def score(questions: dict[str, Question], records: list[dict[str, Any]]) -> dict[str, Any]:
    """Metrics of one system's records (see the module docstring)."""
    groups: dict[str, list[tuple[Question, dict[str, Any]]]] = {}
    for rec in records:
        q = questions[rec["id"]]
        key = q.persona if q.answerable else "out"
        groups.setdefault(key, []).append((q, rec))
        if q.answerable:
            groups.setdefault("all", []).append((q, rec))

    def rates(rows: list[tuple[Question, dict[str, Any]]]) -> dict[str, float]:
        n = len(rows) or 1
        ev = sum(hits(q.refs, cited_blocks(r)[:FIRST_BLOCKS]) for q, r in rows)
        lead = sum(hits(q.refs, cited_blocks(r)[:1]) for q, r in rows)
        declined = sum(r["insufficient"] for _, r in rows)
        return {
            "n": len(rows),
            "evidence@3": round(ev / n, 3),
            "lead_hit": round(lead / n, 3),
            "declined": round(declined / n, 3),
        }

    out: dict[str, Any] = {key: rates(rows) for key, rows in groups.items() if key != "out"}
    outs = groups.get("out", [])
    out["out_of_scope"] = {
        "n": len(outs),
        "declined": round(sum(r["insufficient"] for _, r in outs) / (len(outs) or 1), 3),
    }
    out["chars_p50"] = statistics.median(r["chars"] for r in records) if records else 0
    out["ms_p50"] = statistics.median(r["ms"] for r in records) if records else 0
    by_shape: dict[str, list[tuple[Question, dict[str, Any]]]] = {}
    for q, r in groups.get("all", []):
        by_shape.setdefault(q.shape, []).append((q, r))
    out["by_shape"] = {k: rates(v) for k, v in sorted(by_shape.items())}
    by_project: dict[str, list[tuple[Question, dict[str, Any]]]] = {}
    for q, r in groups.get("all", []):
        by_project.setdefault(q.project, []).append((q, r))
    out["by_project"] = {k: rates(v) for k, v in sorted(by_project.items())}
    return out


def targets(questions: dict[str, Question], records: dict[str, list[dict[str, Any]]]) -> str:
    """Issue 38's target figures per question set (the answer benchmark, sweqa-dev), a
    row per system: evidence@3, lead hit, answerable declined, out of scope declined,
    median cited blocks and fragment leads (a first line whose quote
    ``answer.compose.is_fragment`` calls a fragment; the current code's rule)."""
    from codecite.answer.compose import is_fragment, lead_quote

    rows = [
        "| set | system | n | evidence@3 | lead hit | answerable declined | out of scope "
        "declined | median blocks | fragment leads |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    pins = projects(sweqa=True)
    for name in ("answers", "sweqa"):
        for system, recs in records.items():
            mine = [r for r in recs if (pins[questions[r["id"]].project].get("set") ==
                                        "sweqa-dev") == (name == "sweqa")]  # fmt: skip
            if not mine:
                continue
            m = score(questions, mine)
            answered = [r for r in mine if not r["insufficient"] and r["citations"]]
            blocks = statistics.median(len(cited_blocks(r)) for r in answered) if answered else 0
            quotes = [lead_quote(r.get("lead") or "") for r in answered]
            fragments = sum(bool(q) and is_fragment(q) for q in quotes)
            out = m["out_of_scope"]
            rows.append(
                f"| {name} | {system} | {m['all']['n']} | {m['all']['evidence@3']:.3f} | "
                f"{m['all']['lead_hit']:.3f} | {m['all']['declined']:.1%} | "
                + (f"{out['declined']:.1%} ({out['n']})" if out["n"] else "-")
                + f" | {blocks:g} | "
                + ("-" if system == SEARCH_CHUNKS else str(fragments))
                + " |"
            )
    return "\n".join(rows)


def project_table(results: dict[str, dict[str, Any]]) -> str:
    """evidence@3 / lead hit / answerable declined per project, a column per system."""
    systems = list(results)
    projects_ = sorted({p for m in results.values() for p in m.get("by_project", {})})
    rows = ["| project | n | " + " | ".join(systems) + " |", "|---|---|" + "---|" * len(systems)]
    for p in projects_:
        cells = []
        for system in systems:
            m = results[system].get("by_project", {}).get(p)
            cells.append(f"{m['evidence@3']:.2f} / {m['lead_hit']:.2f} / {m['declined']:.2f}"
                         if m else "-")  # fmt: skip
        n = next(m["by_project"][p]["n"] for m in results.values() if p in m.get("by_project", {}))
        rows.append(f"| {p} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def table(results: dict[str, dict[str, Any]]) -> str:
    rows = [
        "| system | evidence@3 | lead hit | engineer e@3 / lead | QA e@3 / lead | PM e@3 / lead "
        "| answerable declined | out-of-scope declined | chars p50 | ms p50 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for system, m in results.items():
        per = " | ".join(
            f"{m.get(p, {}).get('evidence@3', 0):.2f} / {m.get(p, {}).get('lead_hit', 0):.2f}"
            for p in PERSONAS
        )
        rows.append(
            f"| {system} | {m['all']['evidence@3']:.3f} | {m['all']['lead_hit']:.3f} | {per} | "
            f"{m['all']['declined']:.3f} | {m['out_of_scope']['declined']:.3f} | "
            f"{m['chars_p50']:.0f} | {m['ms_p50']:.0f} |"
        )
    return "\n".join(rows)


def signal_report(questions: dict[str, Question], records: list[dict[str, Any]]) -> str:
    """The abstention signals of answerable vs out-of-scope questions (for calibrating
    the ``abstain_*`` settings)."""
    keys = (
        "literal",
        "missing_names",
        "rest_context",
        "absent",
        "context",
        "evidence",
        "similarity",
    )
    lines = ["id\tanswerable\tdeclined\t" + "\t".join(keys)]
    for rec in records:
        s = rec.get("signals") or {}
        q = questions[rec["id"]]
        lines.append(
            f"{rec['id']}\t{int(q.answerable)}\t{int(rec['insufficient'])}\t"
            + "\t".join(str(s.get(k, "")) for k in keys)
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def same_answers(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    """How many answers two systems gave alike: the same text, the same citations, the
    same retrieved sources (a refactoring must change none; a change says how many)."""
    old = {r["id"]: r for r in before}
    rows = [(old[r["id"]], r) for r in after if r["id"] in old]
    same = {
        key: sum(a[key] == b[key] for a, b in rows)
        for key in ("answer", "citations", "sources", "insufficient")
    }
    return f"alike in {len(rows)} answers: " + ", ".join(f"{k} {n}" for k, n in same.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default=str(WORKDIR), help="trees, indexes (kept)")
    parser.add_argument("--mirrors", default=str(MIRRORS), help="folder of OWNER+NAME/repo")
    parser.add_argument("--projects", help="comma-separated (default: every project of --set)")
    parser.add_argument(
        "--set",
        choices=("answers", "sweqa", "all"),
        default="all",
        help="the answer benchmark's projects, SWE-QA's development split (sqlfluff, reflex, "
        "streamlink: ../shared/bench-data/sweqa-dev), or both (default)",
    )
    parser.add_argument("--baseline", default=BASELINE_REV, help="git revision of the baseline")
    parser.add_argument("--no-baseline", action="store_true", help="only the current code")
    parser.add_argument("--signals", help="write the current system's signals (TSV) here")
    parser.add_argument(
        "--same-index",
        action="store_true",
        help="the current code reads the baseline's index (a refactoring's check: alike?)",
    )
    parser.add_argument(
        "--static-only",
        action="store_true",
        help="the current code answers from keyword + static indexes (no model vectors); "
        "with --baseline HEAD: the tiers compared on the same code",
    )
    parser.add_argument(
        "--first-answer",
        action="store_true",
        help="the current code answers as right after `codecite index`: keyword + static "
        "indexes, the model named but none of its vectors computed yet (its background "
        "worker's first batch not in; ask computes its hits' cosines on the spot)",
    )
    parser.add_argument("--check", action="store_true", help="check the references, then stop")
    parser.add_argument("--json", default=str(HERE / "results" / "answers.json"), help="output")
    parser.add_argument("--run-system", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_system:
        return run_system(args)
    if args.same_index and (args.static_only or args.first_answer):
        parser.error("--static-only and --first-answer need indexes of their own")
    if args.static_only and args.first_answer:
        parser.error("choose one of --static-only and --first-answer")
    workdir = Path(args.workdir).resolve()
    pins = projects(sweqa=True)
    in_set = [n for n, pin in pins.items() if args.set == "all"
              or (pin.get("set") == "sweqa-dev") == (args.set == "sweqa")]  # fmt: skip
    names = [p.strip() for p in args.projects.split(",")] if args.projects else in_set
    unknown = [n for n in names if n not in pins]
    if unknown:
        parser.error(f"unknown projects {unknown}; choose from {', '.join(pins)}")
    questions: dict[str, Question] = {}
    roots: dict[str, Path] = {}
    for name in names:
        roots[name] = tree(name, pins[name], workdir, Path(args.mirrors))
        problems = check(name, roots[name])
        if problems:
            raise SystemExit(f"{name}: references do not hold:\n" + "\n".join(problems))
        questions.update({q.id: q for q in load(name)})
    if args.check:
        print(f"{len(questions)} questions: every reference holds its text")
        return 0
    current = (
        "current (keyword + static)" if args.static_only
        else "current (right after index)" if args.first_answer else "current"
    )  # fmt: skip
    systems = {current: HERE.parent / "src"}
    if not args.no_baseline:
        systems = {
            f"baseline ({args.baseline})": baseline_source(args.baseline, workdir),
            **systems,
        }
    log(f"{len(questions)} questions on {len(names)} projects; systems: {', '.join(systems)}")
    results: dict[str, dict[str, Any]] = {}
    records: dict[str, list[dict[str, Any]]] = {}
    first_slug = ""
    for system, src in systems.items():
        # the baseline's index folder is its revision's own (another revision may not read it)
        static_only = args.static_only and system == current
        pending = args.first_answer and system == current
        slug = f"baseline-{args.baseline}" if system.startswith("baseline") else "current"
        slug += "-static" if static_only else "-first" if pending else ""
        # --same-index: every system reads the first one's index (a parallel parse writes
        # chunks in a different order each build, which reorders tied low-ranked hits)
        first_slug = first_slug or slug
        folder = first_slug if args.same_index else slug
        jobs = [
            {
                "system": system,
                "project": name,
                "root": str(roots[name]),
                "index": str(workdir / "index" / folder / name),
                "static_only": static_only,
                "pending": pending,
                "search_order": SEARCH_ORDER if system == current else "",
                "questions": [
                    {"id": q.id, "question": q.question}
                    for q in questions.values() if q.project == name
                ],
            }
            for name in names
        ]  # fmt: skip
        for name, rows in split_systems(spawn(slug, src, jobs, workdir)).items():
            records[name] = rows
            results[name] = score(questions, rows)
    print(table(results))
    print("\nper set (issue 38's targets):\n" + targets(questions, records))
    print("\nper project (evidence@3 / lead hit / answerable declined):\n" + project_table(results))
    for system, m in results.items():
        print(f"\n{system} by shape: " + ", ".join(
            f"{k} {v['evidence@3']:.2f}/{v['lead_hit']:.2f} (n={v['n']})"
            for k, v in m["by_shape"].items()
        ))  # fmt: skip
    answers = [rows for name, rows in records.items() if name not in (SEARCH_ORDER, SEARCH_CHUNKS)]
    if len(answers) == 2:
        print("\n" + same_answers(*answers))
    if args.signals:
        Path(args.signals).write_text(signal_report(questions, records[current]) + "\n")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"results": results, "records": records}, indent=1))
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
