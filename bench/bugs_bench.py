"""Bug-report benchmark (issue 13; run by hand, not by CI): "here is a bug report,
where is the code?" on the 225 SWE-bench dev instances of ``shared/bench-data``::

    python bench/bugs_bench.py --no-embed --workdir /work/bugs-run/work   # ~6 min
    python bench/bugs_bench.py --workdir /work/bugs-run/work              # + MiniLM vectors
    python bench/bugs_bench.py --projects marshmallow --limit 3 --verify  # quick check

Side by side, on the same instances and the same trees:

- ``bm25-files``: BM25 over whole non-test source files (``baselines.BM25Files``,
  ``\\w+`` lower-cased tokens of the question, no stop words);
- ``codecite <mode>``: ``Index.search(question, k=30)`` (the public API only) on a
  codecite index of the instance's tree, one row per entry of :data:`MODES`
  (``keyword``: vector search off; ``static``: keyword + the static tier;
  ``static-alone``: the static tier's list alone; ``full``: hybrid with MiniLM vectors).
  ``--modes static-ceiling`` adds an upper bound, not a system: keyword + static with
  the static list replaced by the chunks of the files the fix changed (what a perfect
  static model could add at the static list's weight).

The question is the issue text as reported. Per project there is ONE working tree
and ONE codecite index (``--workdir``, kept between runs): instances run in commit
date order, the tree is moved to each base commit (``bugs_trees.Tree``: exactly the
commit's files, as ``git archive``; ``--verify`` checks that) and ``Index.update()``
re-indexes only what changed; vectors come from the machine-wide embedding cache
when the same text was embedded before.

Metrics (per project and overall): file Acc@k = ALL changed files among the top k
distinct files (codecite's chunks reduced to distinct files in result order; a
files API of the index is used when it has one), file MRR@10 of the first changed
file, chunk hit@5 = a top-5 chunk overlaps a line range the fix replaced. The
changed files are the instance's ``files`` that exist at the base commit (files the
fix created cannot be found; an instance with none left is not scored).
Writes ``bench/results/bugs.json`` (every question, every system's top results).
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import hashlib
import inspect
import json
import multiprocessing
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from itertools import groupby
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from baselines import BM25Files, tokenize  # noqa: E402
from bugs_report import BASELINE, print_report, score, summarise  # noqa: E402
from bugs_trees import Mirror, Tree  # noqa: E402
from static_models import SHIPPED, register  # noqa: E402

import codecite  # noqa: E402
from codecite.errors import ModelMismatchError  # noqa: E402
from codecite.retrieve import Searcher  # noqa: E402

#: The instances: ``shared/`` beside the checkout (a git worktree elsewhere: /work/shared).
DATA = next(
    (
        p / "bench-data" / "swebench-dev.jsonl"
        for p in (HERE.parent.parent / "shared", Path("/work/shared"))
        if (p / "bench-data" / "swebench-dev.jsonl").exists()
    ),
    HERE.parent.parent / "shared" / "bench-data" / "swebench-dev.jsonl",
)
MIRRORS = Path("/work/.mirror")
WORKDIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "codecite-bugs-bench"
#: Where a project's commits live when its upstream is not mirrored itself.
MIRROR_OF = {"pyvista/pyvista": "giiyms/pyvista"}
#: Chunks asked of codecite (enough for 10 distinct files), more when 30 give fewer.
CHUNKS_K, MORE_CHUNKS_K, FILES_K = 30, 100, 10
TEST_DIRS = frozenset({"test", "tests", "testing"})
SOURCE_SUFFIXES = frozenset(
    ".py .pyi .pyx .pxd .c .h .cc .cpp .hpp .java .js .jsx .ts .tsx .go .rs .rb .php .cs".split()
)
#: Settings of every index: no query log in the index folder, no freshness check
#: before each query (the bench updates the index itself before asking).
OVERRIDES: dict[str, object] = {"query_log": False, "refresh": False}


@dataclass(frozen=True)
class Mode:
    """One codecite configuration measured: the vector tiers its index needs and the
    extra keyword arguments of its search call (passed to ``Index.search`` when it
    takes them, else to ``Index.searcher.search``)."""

    tiers: tuple[str, ...] = ()
    search: dict[str, Any] = field(default_factory=dict)
    #: Config settings of this mode's searches (a Searcher of its own).
    config: dict[str, Any] = field(default_factory=dict)
    #: The Searcher class of this mode's searches (its own, when not the plain one).
    searcher: type[Searcher] = Searcher


#: The codecite modes, by name (the system is called "codecite NAME"). A later tier
#: is one more entry, e.g. ``"static": Mode(("static",), {...})`` plus its build
#: arguments in :data:`TIER_UPDATE`.
MODES: dict[str, Mode] = {
    "keyword": Mode((), {"tiers": ()}),
    # keyword + the static tier, as an index is seconds after `codecite index` starts,
    # before the model's vectors exist (the model tier unused, built or not)
    "static": Mode(("static",), {"tiers": ("static",)}),
    "full": Mode(("model",), {}),
    # keyword + static + model, the static list fused even once every model vector exists
    "full+static": Mode(("model",), {}, {"static_weight_full": 1.0}),
    # keyword + static with the vector lists' weight for bug reports at 1 and 0.5 (not 2)
    "static@q1": Mode(("static",), {"tiers": ("static",)}, {"question_vector_weight": 1.0}),
    "static@q0.5": Mode(("static",), {"tiers": ("static",)}, {"question_vector_weight": 0.5}),
    # the static tier's list alone (no keyword lists): the model's own ranking
    "static-alone": Mode(("static",), {"tiers": ("static",), "keyword": False}),
}


class CeilingSearcher(Searcher):
    """keyword + static with the static list replaced by the chunks of the files the
    fix changed (each file's chunks in the static tier's own order, the files taking
    turns): what a perfect static model could add through fusion at the static list's
    weight. An upper bound for the model, not a system."""

    gold: tuple[str, ...] = ()

    def _static(self, text: str, filters: Any) -> list[str]:
        found = super()._static(text, filters)
        order = {chunk_id: i for i, chunk_id in enumerate(found)}
        per_file = [
            sorted(self.store.chunk_ids_by_path([path]), key=lambda c: order.get(c, len(order)))
            for path in self.gold
        ]
        n = self.config.search.candidates
        return [ids[i] for i in range(n) for ids in per_file if i < len(ids)][:n]


#: Upper bounds (``--modes static-ceiling``): not systems, never in the default run.
MODES["static-ceiling"] = Mode(("static",), {"tiers": ("static",)}, searcher=CeilingSearcher)
DEFAULT_MODES = [m for m in MODES if m != "static-ceiling"]

#: ``Index.update()`` arguments that build each vector tier (the static tier alone:
#: no model vectors, the static stage run after the update).
TIER_UPDATE: dict[str, dict[str, Any]] = {"model": {"embed": True}, "static": {}}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def is_test_path(path: str) -> bool:
    """Tests by the usual conventions: a ``test``/``tests``/``testing`` folder,
    ``test_*.py``, ``*_test.py``, ``*_tests.py``, ``conftest.py``."""
    *folders, name = path.split("/")
    return (
        any(f in TEST_DIRS for f in folders)
        or name.startswith("test_")
        or name.endswith(("_test.py", "_tests.py"))
        or name == "conftest.py"
    )


def is_source_path(path: str) -> bool:
    return Path(path).suffix in SOURCE_SUFFIXES and not is_test_path(path)


def short_name(repo: str) -> str:
    return repo.split("/")[-1]


# --------------------------------------------------------------------------- one project


@dataclass
class Job:
    project: str
    repo: str
    mirror: str
    workdir: str
    instances: list[dict[str, Any]]
    modes: list[str]
    verify: bool = False
    rebuild: bool = False
    static_model: str = ""
    #: Also answer each report with ``Index.ask`` (extractive) and rank the files its
    #: citations name, in order (issue 20: ask is never worse than search --files).
    ask: bool = False


#: The system of ``--ask``: the files an extractive answer cites, in order.
ASK = "codecite ask"


class Baseline:
    """BM25Files over the non-test source files of the current tree, with token counts
    cached by blob id across commits."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[str, Counter[str]]] = {}

    def build(self, tree: Tree) -> BM25Files:
        texts, counts = {}, {}
        for path, (_mode, blob) in sorted(tree.current.items()):
            if not is_source_path(path) or path in tree.absent or _mode == "120000":
                continue
            if blob not in self.cache:
                text = (tree.root / path).read_bytes().decode("utf-8", "replace")
                self.cache[blob] = (text, Counter(tokenize(text)))
            texts[path], counts[path] = self.cache[blob]
        return BM25Files(texts, counts=counts)


class Ticker:
    """An ``on_progress`` callback that logs the embedding stage once a minute."""

    def __init__(self, label: str, every: float = 60.0) -> None:
        self.label, self.every, self.last = label, every, time.monotonic()

    def __call__(self, event: Any) -> None:
        now = time.monotonic()
        if getattr(event, "stage", "") == "embed" and now - self.last >= self.every:
            self.last = now
            log(f"{self.label}: embedding {event.done}/{event.total}")


def search_hits(index: Any, question: str, k: int, kwargs: dict[str, Any]) -> list[Any]:
    if isinstance(index, Searcher):
        return list(index.search(question, k=k, **kwargs).hits)
    params = inspect.signature(index.search).parameters
    if all(name in params for name in kwargs):
        return list(index.search(question, k=k, **kwargs).hits)
    return list(index.searcher.search(question, k=k, **kwargs).hits)


def _path_of(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        return item.get("path")
    path = getattr(item, "path", None) or getattr(getattr(item, "chunk", None), "path", None)
    return path if isinstance(path, str) else None


def search_files(index: Any, question: str, kwargs: dict[str, Any]) -> list[str] | None:
    """Ranked files from the index's files API when it has one (feature-detected:
    ``Index.search_files`` or ``Index.search(..., files=True)``), else None."""
    if isinstance(index, Searcher):
        found = index.search(question, k=FILES_K, files=True, **kwargs)
        return list(dict.fromkeys(p for p in (_path_of(i) for i in found.files) if p))
    call = getattr(index, "search_files", None)
    extra: dict[str, Any] = {}
    if call is None and "files" in inspect.signature(index.search).parameters:
        call, extra = index.search, {"files": True}
    if call is None:
        return None
    params = inspect.signature(call).parameters
    if not all(name in params for name in kwargs):
        return None
    result = call(question, k=FILES_K, **extra, **kwargs)
    items = getattr(result, "files", None) or getattr(result, "hits", None) or result
    paths = [p for p in (_path_of(i) for i in items) if p]
    return list(dict.fromkeys(paths))


def static_only(modes: list[str]) -> bool:
    """True when the modes need the static tier and not the model's."""
    tiers = {t for m in modes for t in MODES[m].tiers}
    return "static" in tiers and "model" not in tiers


def update_kwargs(modes: list[str]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"embed": False}
    for mode in modes:
        for tier in MODES[mode].tiers:
            kwargs.update(TIER_UPDATE[tier])
    return kwargs


def run_project(job: Job) -> dict[str, Any]:
    """Every instance of one project, in commit order, in one tree and one index; the
    project's folders in the workdir are locked meanwhile (one run at a time)."""
    locks = Path(job.workdir) / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{job.project}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SystemExit(
                f"{job.project}: another bugs_bench run uses {job.workdir}; wait for it "
                "or give --workdir another folder"
            ) from None
        return _run_project(job)


def _run_project(job: Job) -> dict[str, Any]:
    name, workdir = job.project, Path(job.workdir)
    os.environ["GIT_CEILING_DIRECTORIES"] = str(workdir / "trees")  # no repository above
    mirror = Mirror(Path(job.mirror))
    tree = Tree(mirror, workdir / "trees" / name)
    # one index folder per static model, so two models' runs do not rebuild each other
    register(job.static_model or SHIPPED)
    model = Path(job.static_model).stem if job.static_model.endswith(".npy") else job.static_model
    folder = "indexes" if model in ("", SHIPPED) else f"indexes-{model}"
    index_dir = workdir / folder / name
    if job.rebuild and index_dir.exists():
        shutil.rmtree(index_dir)
    when = {c: mirror.commit_time(c) for c in {i["base_commit"] for i in job.instances}}
    instances = sorted(job.instances, key=lambda i: (when[i["base_commit"]], i["instance_id"]))
    commits = [c for c, _ in groupby(i["base_commit"] for i in instances)]
    stats: dict[str, Any] = {
        "project": name,
        "instances": len(instances),
        "commits": len(commits),
        "tree_s": 0.0,
        "index_first_s": 0.0,
        "index_incremental_s": 0.0,
        "updates": 0,
        "index_new": not (index_dir / "index.db").exists(),
        "files_reindexed": 0,
        "embedded": 0,
        "embed_computed": 0,
        "embed_reused": 0,
        "baseline_build_s": 0.0,
        "search_ms": {},
        "verify": {},
    }
    baseline, rows = Baseline(), []
    index: codecite.Index | None = None
    build = update_kwargs(job.modes)
    for n, (commit, group) in enumerate(groupby(instances, key=lambda i: i["base_commit"])):
        move = tree.checkout(commit)
        stats["tree_s"] += move.seconds
        if job.verify and n in (0, len(commits) - 1):
            problems = tree.verify()
            stats["verify"][commit] = problems
            log(
                f"{name}: verify {commit[:8]}: "
                + ("identical" if not problems else f"{len(problems)} differences: {problems[:5]}")
            )
        if index is None:
            index = codecite.open_index(
                tree.root,
                index_dir=index_dir,
                overrides={**OVERRIDES, "repo_name": name, "static_model": job.static_model},
            )
        started = time.perf_counter()
        ticker = Ticker(f"{name} {commit[:8]}")
        try:
            report = index.update(**build, on_progress=ticker)
        except ModelMismatchError as exc:  # vectors of another model (or embedding text)
            log(f"{name}: {exc}; rebuilding the index")
            report = index.update(**build, full=True, on_progress=ticker)
            stats["index_new"] = True
        if static_only(job.modes):
            from codecite.index.static_stage import update_static_tier

            update_static_tier(index.store, index.config, lambda _event: None)
        took = time.perf_counter() - started
        stats["index_first_s" if n == 0 else "index_incremental_s"] += took
        stats["updates"] += 1
        if n:
            stats["files_reindexed"] += len(report.added) + len(report.modified)
        for key in ("embedded", "embed_computed", "embed_reused"):
            stats[key] += getattr(report, key)
        started = time.perf_counter()
        bm25 = baseline.build(tree)
        stats["baseline_build_s"] += time.perf_counter() - started
        questions = list(group)
        for inst in questions:
            rows.append(
                run_instance(inst, tree, index, bm25, job.modes, stats["search_ms"], job.ask)
            )
        log(
            f"{name} {n + 1}/{len(commits)} {commit[:8]}: tree +{move.written} -{move.deleted} "
            f"{move.seconds:.1f}s, update {took:.1f}s ({len(report.added)}+ "
            f"{len(report.modified)}~ {len(report.deleted)}- files, "
            f"{report.embedded} vectors, {report.embed_computed} computed), "
            f"{len(questions)} questions"
        )
    if index is not None:
        index.close()
    for key in ("tree_s", "index_first_s", "index_incremental_s", "baseline_build_s"):
        stats[key] = round(stats[key], 1)
    stats["search_ms"] = {
        system: {"p50": round(statistics.median(ms), 1), "mean": round(statistics.fmean(ms), 1)}
        for system, ms in stats["search_ms"].items()
    }
    return {"stats": stats, "rows": rows}


def run_instance(
    inst: dict[str, Any],
    tree: Tree,
    index: codecite.Index,
    bm25: BM25Files,
    modes: list[str],
    latencies: dict[str, list[float]],
    ask: bool = False,
) -> dict[str, Any]:
    question = inst["problem_statement"]
    gold = [f for f in inst["files"] if f in tree.current]
    targets = {t["path"]: t["ranges"] for t in inst["targets"]}
    row: dict[str, Any] = {
        "id": inst["instance_id"],
        "project": short_name(inst["repo"]),
        "commit": inst["base_commit"],
        "question": question,
        "gold": gold,
        "not_in_tree": [f for f in inst["files"] if f not in tree.current],
        "systems": {},
    }
    started = time.perf_counter()
    files = [r.path for r in bm25.search(question, k=len(bm25.paths))]
    latencies.setdefault(BASELINE, []).append((time.perf_counter() - started) * 1000)
    row["systems"][BASELINE] = {"files": files[:FILES_K], **score(files, gold, None, targets)}
    for mode in modes:
        system, kwargs = f"codecite {mode}", MODES[mode].search
        target: Any = index
        own = MODES[mode].searcher
        if MODES[mode].config or own is not Searcher or "keyword" in kwargs:
            target = own(index.store, replace(index.config, **MODES[mode].config))
            if isinstance(target, CeilingSearcher):
                target.gold = tuple(gold)
        started = time.perf_counter()
        try:
            hits = search_hits(target, question, CHUNKS_K, kwargs)
            ranking = list(dict.fromkeys(h.chunk.path for h in hits))
            if len(ranking) < FILES_K and len(hits) >= CHUNKS_K:
                hits = search_hits(target, question, MORE_CHUNKS_K, kwargs)
                ranking = list(dict.fromkeys(h.chunk.path for h in hits))
            by_api = search_files(target, question, kwargs)
            error = ""
        except Exception as exc:  # one failing question must not stop the run
            hits, ranking, by_api, error = [], [], None, f"{type(exc).__name__}: {exc}"
            log(f"{row['id']}: {system} failed: {error}")
        latencies.setdefault(system, []).append((time.perf_counter() - started) * 1000)
        top = [
            [
                h.chunk.path,
                h.chunk.start_line,
                h.chunk.end_line,
                h.chunk.kind,
                h.chunk.qualname,
                h.source,
                round(h.score, 4),
                getattr(h, "why", ""),
            ]
            for h in hits[:10]
        ]
        file_ranking = by_api if by_api is not None else ranking
        row["systems"][system] = {
            "files": file_ranking[:FILES_K],
            "file_ranking": "files-api" if by_api is not None else "chunks",
            "chunks": top,
            "error": error,
            **score(file_ranking, gold, top, targets),
        }
    if ask:
        started = time.perf_counter()
        answer = index.ask(question, "extractive")
        latencies.setdefault(ASK, []).append((time.perf_counter() - started) * 1000)
        cited = list(dict.fromkeys(c.path for c in answer.citations if c.verified))
        row["systems"][ASK] = {
            "files": cited[:FILES_K],
            "file_ranking": "ask citations",
            "chunks": [],
            "error": "declined" if answer.insufficient else "",
            **score(cited, gold, None, targets),
        }
    return row


# --------------------------------------------------------------------------- main


def load_jobs(args: argparse.Namespace, modes: list[str]) -> list[Job]:
    rows = [json.loads(line) for line in Path(args.data).read_text().splitlines() if line.strip()]
    wanted = {p.strip() for p in args.projects.split(",")} if args.projects else None
    ids = {i.strip() for i in args.instances.split(",")} if args.instances else None
    by_repo: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if wanted and not ({row["repo"], short_name(row["repo"])} & wanted):
            continue
        if ids and row["instance_id"] not in ids:
            continue
        by_repo.setdefault(row["repo"], []).append(row)
    jobs = []
    for repo, items in by_repo.items():
        mirror = Path(args.mirrors) / MIRROR_OF.get(repo, repo).replace("/", "+") / "repo"
        jobs.append(
            Job(
                short_name(repo),
                repo,
                str(mirror),
                str(Path(args.workdir).resolve()),
                items[: args.limit] if args.limit else items,
                modes,
                args.verify,
                args.rebuild,
                args.static_model,
                args.ask,
            )
        )
    return sorted(jobs, key=lambda j: -len(j.instances))


def run_jobs(jobs: list[Job], n: int) -> Iterator[dict[str, Any]]:
    """Each project's results as soon as it is done."""
    if n <= 1 or len(jobs) <= 1:
        yield from (run_project(job) for job in jobs)
        return
    with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield from (f.result() for f in as_completed([pool.submit(run_project, j) for j in jobs]))


def code_version() -> str:
    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=HERE.parent, capture_output=True, text=True)
        return proc.stdout.strip()

    """The commit of the code measured, and a digest of uncommitted changes to src/."""
    changes = git("status", "--porcelain", "src")
    if not changes:
        return git("rev-parse", "--short", "HEAD")
    digest = hashlib.sha1((git("diff", "HEAD", "--", "src") + changes).encode()).hexdigest()
    return f"{git('rev-parse', '--short', 'HEAD')} + uncommitted src changes {digest[:8]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DATA), help="the instances (JSONL)")
    parser.add_argument("--mirrors", default=str(MIRRORS), help="folder of OWNER+NAME/repo")
    parser.add_argument("--workdir", default=str(WORKDIR), help="trees and indexes (kept)")
    parser.add_argument("--projects", help="comma-separated: sqlfluff,pvlib-python,...")
    parser.add_argument("--instances", help="comma-separated instance ids")
    parser.add_argument("--limit", type=int, default=0, help="at most N instances per project")
    parser.add_argument(
        "--modes",
        default=",".join(DEFAULT_MODES),
        help=f"codecite modes to run, of: {', '.join(MODES)} (default: all but static-ceiling)",
    )
    parser.add_argument("--no-embed", action="store_true", help="only modes without vectors")
    parser.add_argument("--jobs", type=int, default=1, help="projects in parallel processes")
    parser.add_argument("--verify", action="store_true", help="check trees against git archive")
    parser.add_argument("--rebuild", action="store_true", help="start the indexes afresh")
    parser.add_argument(
        "--ask", action="store_true", help=f"also rank the files {ASK} cites (issue 20)"
    )
    parser.add_argument(
        "--static-model", default="", help=f"the static tier's model ({SHIPPED} by default)"
    )
    parser.add_argument("--worst", type=int, default=10, help="worst questions shown")
    parser.add_argument("--json", default=str(HERE / "results" / "bugs.json"), help="output")
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown modes {unknown}; choose from {', '.join(MODES)}")
    if args.no_embed:
        modes = [m for m in modes if not MODES[m].tiers]
    jobs = load_jobs(args, modes)
    if not jobs:
        parser.error("no instances selected")
    for job in jobs:
        if not Path(job.mirror).is_dir():
            parser.error(f"{job.repo}: no mirror at {job.mirror} (see --mirrors)")
    os.environ["GIT_CEILING_DIRECTORIES"] = str(Path(args.workdir).resolve() / "trees")
    log(
        f"{sum(len(j.instances) for j in jobs)} questions, {len(jobs)} projects, "
        f"systems: {BASELINE}, " + ", ".join(f"codecite {m}" for m in modes)
    )
    started = time.perf_counter()
    result: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": "python bench/bugs_bench.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "codecite": code_version(),
        "machine": {"cores": os.cpu_count(), "platform": platform.platform()},
        "systems": [BASELINE, *(f"codecite {m}" for m in modes), *([ASK] if args.ask else [])],
        "static_model": args.static_model or SHIPPED,
        "chunks_k": CHUNKS_K,
        "projects": [],
        "questions": [],
    }
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    for done in run_jobs(jobs, args.jobs):  # the JSON is rewritten as projects finish
        result["projects"].append(done["stats"])
        result["questions"] += done["rows"]
        result["complete"] = len(result["projects"]) == len(jobs)
        result["runtime_s"] = round(time.perf_counter() - started)
        result["summary"] = summarise(result)
        out.write_text(json.dumps(result, indent=1) + "\n")
        project = done["stats"]["project"]
        log(
            f"{project} done: Acc@5 "
            + ", ".join(
                f"{s} {100 * result['summary'][s]['by_project'][project].get('acc_at_5', 0):.1f}"
                for s in result["systems"]
            )
            + f"; {out} updated"
        )
    print_report(result, args.worst)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
