"""Metrics and markdown tables of the bug-report benchmark (``bugs_bench.py``)."""

from __future__ import annotations

import statistics
from typing import Any

ACC_AT = (1, 3, 5, 10)
MRR_AT = 10
BASELINE = "bm25-files"
#: Longest chunk that counts for the precise chunk hit@5 (the function size limit).
PRECISE_LINES = 150


def score(
    ranking: list[str],
    gold: list[str],
    top: list[list[Any]] | None,
    targets: dict[str, list[list[int]]],
) -> dict[str, Any]:
    """File ranks of the changed files, first rank, and chunk hit@5 (None for a
    file-level system); ``hit5_precise`` counts only chunks of at most
    :data:`PRECISE_LINES` lines (a module or class chunk spanning a whole file
    overlaps every target of that file)."""
    position = {p: i for i, p in enumerate(ranking, start=1)}
    ranks = {g: position.get(g) for g in gold}
    found = [r for r in ranks.values() if r is not None]
    out: dict[str, Any] = {"ranks": ranks, "first": min(found) if found else None}
    out["hit5"] = out["hit5_precise"] = None
    if top is not None:
        overlapping = [
            e - s + 1
            for path, s, e, *_ in top[:5]
            if any(s <= e2 and s2 <= e for s2, e2 in targets.get(path, []))
        ]
        out["hit5"] = bool(overlapping)
        out["hit5_precise"] = any(n <= PRECISE_LINES for n in overlapping)
    return out


def scored(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Questions with at least one changed file present at the base commit."""
    return [r for r in rows if r["gold"]]


def metrics(rows: list[dict[str, Any]], system: str) -> dict[str, Any]:
    runs = [r["systems"][system] for r in scored(rows) if system in r["systems"]]
    if not runs:
        return {"n": 0}
    out: dict[str, Any] = {"n": len(runs)}
    for k in ACC_AT:
        out[f"acc_at_{k}"] = statistics.fmean(
            all(rank is not None and rank <= k for rank in run["ranks"].values()) for run in runs
        )
    out["mrr"] = statistics.fmean(
        1.0 / run["first"] if run["first"] and run["first"] <= MRR_AT else 0.0 for run in runs
    )
    for key, name in (("hit5", "chunk_hit_at_5"), ("hit5_precise", "precise_hit_at_5")):
        hits = [run.get(key) for run in runs]
        out[name] = None if None in hits else statistics.fmean(hits)
    return out


def projects_of(result: dict[str, Any]) -> list[str]:
    return [p["project"] for p in result["projects"]]


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    rows = result["questions"]
    out: dict[str, Any] = {"unscored": [r["id"] for r in rows if not r["gold"]]}
    for system in result["systems"]:
        out[system] = {
            "overall": metrics(rows, system),
            "by_project": {
                p: metrics([r for r in rows if r["project"] == p], system)
                for p in projects_of(result)
            },
        }
    return out


def _cells(m: dict[str, Any]) -> str:
    if not m.get("n"):
        return " | ".join(["n/a"] * (len(ACC_AT) + 3)) + " | 0"
    accs = " | ".join(f"{100 * m[f'acc_at_{k}']:.1f}" for k in ACC_AT)
    hits = " | ".join(
        "n/a" if m[key] is None else f"{100 * m[key]:.1f}"
        for key in ("chunk_hit_at_5", "precise_hit_at_5")
    )
    return f"{accs} | {m['mrr']:.3f} | {hits} | {m['n']}"


def head(*first: str) -> str:
    names = [
        *first,
        *(f"Acc@{k}" for k in ACC_AT),
        f"MRR@{MRR_AT}",
        "chunk hit@5",
        "precise hit@5",
        "n",
    ]
    align = ["---"] * len(first) + ["---:"] * (len(names) - len(first))
    return f"| {' | '.join(names)} |\n| {' | '.join(align)} |"


def tables(result: dict[str, Any]) -> str:
    summary, systems = result["summary"], result["systems"]
    parts = [
        "Overall (percent; MRR of the first changed file; precise hit@5: only chunks of "
        "at most 150 lines count):\n"
    ]
    parts.append(head("system"))
    for system in systems:
        parts.append(f"| {system} | {_cells(summary[system]['overall'])} |")
    parts.append("\nBy project:\n")
    parts.append(head("project", "system"))
    for project in [*projects_of(result), "overall"]:
        for system in systems:
            m = (
                summary[system]["overall"]
                if project == "overall"
                else summary[system]["by_project"][project]
            )
            name = f"**{project}**" if project == "overall" else project
            parts.append(f"| {name} | {system} | {_cells(m)} |")
    parts.append("\nAcc@5 side by side:\n")
    parts.append("| project | n | " + " | ".join(systems) + " |")
    parts.append("| --- | ---: |" + " ---: |" * len(systems))
    for project in [*projects_of(result), "overall"]:
        ms = [
            summary[s]["overall"] if project == "overall" else summary[s]["by_project"][project]
            for s in systems
        ]
        cells = " | ".join(f"{100 * m['acc_at_5']:.1f}" if m.get("n") else "n/a" for m in ms)
        parts.append(f"| {project} | {ms[0].get('n', 0)} | {cells} |")
    return "\n".join(parts)


def timing_table(result: dict[str, Any]) -> str:
    systems = result["systems"]
    rows = [
        "| project | questions | commits | first index s | incremental s (updates) "
        "| files re-indexed | vectors reused / cached / computed | tree s | "
        + " | ".join(f"{s} ms p50" for s in systems)
        + " |",
        "| --- |" + " ---: |" * (7 + len(systems)),
    ]
    for p in result["projects"]:
        lat = " | ".join(str(p["search_ms"].get(s, {}).get("p50", "n/a")) for s in systems)
        cached = p["embedded"] - p["embed_computed"]
        first = f"{p['index_first_s']}" + (" (new)" if p["index_new"] else " (kept)")
        rows.append(
            f"| {p['project']} | {p['instances']} | {p['commits']} | {first} "
            f"| {p['index_incremental_s']} ({p['updates'] - 1}) | {p['files_reindexed']} "
            f"| {p['embed_reused']} / {cached} / {p['embed_computed']} "
            f"| {p['tree_s']} | {lat} |"
        )
    return "\n".join(rows)


def best_codecite(result: dict[str, Any]) -> str | None:
    candidates: list[str] = [s for s in result["systems"] if s != BASELINE]
    if not candidates:
        return None
    overall: dict[str, dict[str, Any]] = {s: result["summary"][s]["overall"] for s in candidates}
    return max(candidates, key=lambda s: (overall[s].get("acc_at_5", 0), overall[s].get("mrr", 0)))


def worst(result: dict[str, Any], n: int, system: str | None = None) -> str:
    system = system or best_codecite(result)
    if not system or n <= 0:
        return ""
    rows = [r for r in scored(result["questions"]) if system in r["systems"]]

    def badness(row: dict[str, Any]) -> tuple[int, int, int]:
        mine, base = row["systems"][system]["first"], row["systems"][BASELINE]["first"]
        return (mine is not None, -(mine or 0), base or 10**6)

    out = [f"Worst {n} questions of {system} (changed file ranked lowest; ties: BM25 best):"]
    for i, row in enumerate(sorted(rows, key=badness)[:n], start=1):
        run, base = row["systems"][system], row["systems"][BASELINE]
        head = " ".join(row["question"].split())[:300]
        ranks = ", ".join(
            f"{g} (#{r or '-'} / bm25 #{base['ranks'][g] or '-'})" for g, r in run["ranks"].items()
        )
        out.append(f"\n{i}. {row['id']} @ {row['commit'][:8]}: changed {ranks}")
        out.append(f"   > {head}")
        for j, (path, start, end, kind, qualname, source, score, *why) in enumerate(
            run["chunks"][:5], start=1
        ):
            reason = f", {why[0]}" if why and why[0] else ""
            out.append(
                f"   {j}. {path}:{start}-{end} {kind} {qualname or '-'} "
                f"({end - start + 1} lines, {source}, {score}{reason})"
            )
        if run.get("error"):
            out.append(f"   error: {run['error']}")
        out.append(f"   bm25 top 3: {', '.join(base['files'][:3])}")
    return "\n".join(out)


def print_report(result: dict[str, Any], n_worst: int = 10) -> None:
    n = len(result["questions"])
    unscored = result["summary"]["unscored"]
    print(
        f"\nBug reports: {n} questions ({len(unscored)} not scored: every changed file "
        f"was created by the fix), codecite {result['codecite']}, "
        f"{result['machine']['cores']} cores, run {result['runtime_s']} s\n"
    )
    print(tables(result), end="\n\n")
    print(
        "Timing (seconds; first index: the first update of this run, on a new or a kept "
        "index; files re-indexed by the incremental updates; vectors: reused from the "
        "index by content / from the machine-wide cache / computed by the model; "
        "query ms: one question):\n"
    )
    print(timing_table(result), end="\n\n")
    ranking = {
        s: sorted({q["systems"][s].get("file_ranking", "") for q in result["questions"]})
        for s in result["systems"][1:]
    }
    print(
        "File rankings: "
        + "; ".join(f"{s} from {', '.join(r) or '-'}" for s, r in ranking.items())
        + "\n"
    )
    text = worst(result, n_worst)
    if text:
        print(text)
