"""The tools' results: text for the model and the same facts as JSON for programs.

Every function here only formats what :class:`~.tools.CodeTools` found; none reads an
index or checks access."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ... import EXTRACTIVE, Chunk
from .spans import chunk_json, citation, cite

if TYPE_CHECKING:
    from ... import Answer, FileHit, FileLines, IndexStatus, RepoHit
    from ...errors import AmbiguousSymbolError
    from ..config import Limits
    from .symbols import Definition, Neighbour

#: Lines of each hit's code shown in ``search_code``'s text (the rest: ``read_code``).
HIT_LINES = 60
#: Stale file names listed by ``index_status`` (the counts are always complete).
STALE_LISTED = 20


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns: text for the model, the same facts as JSON for programs."""

    text: str
    data: dict[str, Any]


def label(chunk: Chunk) -> str:
    what = chunk.qualname or chunk.name or chunk.path
    return f"{chunk.kind} {what}" if chunk.kind else what


def fence(code: str, language: str, max_lines: int) -> str:
    lines = code.split("\n")
    shown = "\n".join(lines[:max_lines])
    more = len(lines) - max_lines
    tail = f"\n… {more} more lines (read_code shows them)" if more > 0 else ""
    ticks = "````" if "```" in shown else "```"
    return f"{ticks}{language}\n{shown}\n{ticks}{tail}"


def line_of(chunk: Chunk, line: int) -> str:
    """The text of ``line`` (a file line number) inside ``chunk``, if it holds it."""
    lines = chunk.content.split("\n")
    index = line - chunk.start_line
    return lines[index].strip() if 0 <= index < len(lines) and chunk.kind != "class" else ""


# --- search_code -------------------------------------------------------------------------
#: Characters of a query repeated in a result (a pasted bug report is not echoed whole).
QUERY_ECHO_CHARS = 120


def quoted(query: str) -> str:
    """The query as a result repeats it: its first line, cut at
    :data:`QUERY_ECHO_CHARS`, saying how many characters were left out."""
    stripped = query.strip()
    first = next((line.strip() for line in stripped.splitlines() if line.strip()), "")
    kept = first[:QUERY_ECHO_CHARS]
    left = len(stripped) - len(kept)
    return repr(kept + ("…" if len(first) > len(kept) else "")) + (
        f" (+{left:,} more characters)" if left > 0 else ""
    )


def hits_output(query: str, hits: list[RepoHit], several: bool) -> ToolOutput:
    """``search_code``'s result; ``several``: name each hit's repository."""
    return ToolOutput(_hits_text(query, hits, several), _hits_json(query, hits))


def _hits_text(query: str, hits: list[RepoHit], several: bool) -> str:
    if not hits:
        return (
            f"No indexed code matches {quoted(query)}. Try other words (names of functions, "
            "files or concepts), fewer filters, or list_repos / index_status."
        )
    out = [f"{len(hits)} results for {quoted(query)} (best first):"]
    for rank, item in enumerate(hits, 1):
        c = item.hit.chunk
        where = f" [{item.repo}]" if several else ""
        why = f" — {item.hit.why}" if item.hit.why else ""
        out.append(f"\n{rank}. {cite(c)}{where} {label(c)} ({c.language}){why}")
        out.append(fence(c.content, c.language, HIT_LINES))
    return "\n".join(out)


def _hits_json(query: str, hits: list[RepoHit]) -> dict[str, Any]:
    results = []
    for item in hits:
        data = chunk_json(item.hit.chunk, item.repo)
        data.update(
            score=round(item.score, 6),
            source=item.hit.source,
            why=item.hit.why,
            content=item.hit.chunk.content,
        )
        results.append(data)
    return {"query": query, "results": results}


def files_output(query: str, files: list[FileHit], several: bool) -> ToolOutput:
    """``search_code`` with ``files``: ranked files, each with its best chunks."""
    if not files:
        text = (
            f"No indexed files match {quoted(query)}. Try other words, fewer filters, or "
            "list_repos / index_status."
        )
    else:
        lines = [f"{len(files)} files for {quoted(query)} (best first):"]
        for rank, entry in enumerate(files, 1):
            where = f" [{entry.repo}]" if several else ""
            lines.append(f"\n{rank}. {entry.path}{where} (score {entry.score:.3f})")
            lines += [f"   - {cite(h.chunk)} {label(h.chunk)}" for h in entry.hits]
        text = "\n".join(lines)
    return ToolOutput(text, {"query": query, "files": [f.to_json() for f in files]})


# --- ask_codebase ------------------------------------------------------------------------


def answer_output(repo: str, where: str, question: str, answer: Answer) -> ToolOutput:
    """``ask_codebase``'s result; ``where``: `` [repo]`` or nothing."""
    data = {
        "repo": repo,
        "question": question,
        "answer": answer.answer,
        "lead": answer.lead,
        "blocks": [b.to_json() for b in answer.blocks],
        "confidence": answer.confidence,
        "shape": answer.shape,
        "citations": [{**c.to_json(), "citation": cite(c)} for c in answer.citations],
        "sources": [chunk_json(h.chunk, repo) for h in answer.sources],
        "insufficient": answer.insufficient,
        "llm": answer.llm,
        "flags": list(answer.flags),
    }
    return ToolOutput(_answer_text(where, answer), data)


#: What each confidence level tells an agent (``Answer.confidence``).
CONFIDENCE = {
    "high": "the cited lines hold what the question asks about",
    "medium": "the cited lines cover part of the question; read them before relying on it",
    "low": "related code only; it may not answer the question",
    "none": "declined: the indexed code does not seem to answer this",
}


def _answer_text(where: str, answer: Answer) -> str:
    lines = [answer.answer.strip()]
    meaning = CONFIDENCE.get(answer.confidence, "")
    lines.append(f"\nConfidence: {answer.confidence}" + (f" ({meaning})" if meaning else ""))
    if answer.citations:
        lines.append("\nCitations (each checked once):")
        for c in answer.citations:
            state = "verified" if c.verified else "NOT in the retrieved code"
            lines.append(f"- {cite(c)} ({state})")
    cited = [(c.path, c.start_line, c.end_line) for c in answer.citations]
    rest = [
        h for h in answer.sources
        if not any(p == h.chunk.path and s <= h.chunk.end_line and h.chunk.start_line <= e
                   for p, s, e in cited)
    ]  # fmt: skip
    if rest:
        lines.append(f"\nAlso looked at{where}:")
        lines += [f"- {cite(hit.chunk)} {label(hit.chunk)}" for hit in rest[:10]]
    if answer.flags:
        lines.append("\nFlags: " + "; ".join(answer.flags))
    if answer.llm in ("", EXTRACTIVE):
        mode = "extractive answer: the lines of the code that answer, no model"
    else:
        mode = f"answered by {answer.llm}"
    if answer.insufficient:
        mode += "; the index does not hold enough to answer this well"
    lines.append(f"\n({mode})")
    return "\n".join(lines)


# --- read_code ---------------------------------------------------------------------------


def lines_output(repo: str, where: str, shown: FileLines, limits: Limits) -> ToolOutput:
    """``read_code``'s result: the lines of ``shown``, numbered; a range cut at the
    limits says so and where to read on."""
    start, last = shown.start_line, shown.end_line
    note = ""
    if shown.truncated:
        note = (
            f"\n… cut at the server's limit ({limits.max_code_lines:,} lines or "
            f"{limits.max_code_chars:,} characters); read on with start_line={last + 1}"
        )
    width = len(str(last))
    body = "\n".join(
        f"{n:>{width}}  {line.rstrip(chr(13))}" for n, line in enumerate(shown.lines, start)
    )
    cited = citation(shown.path, start, last)
    header = f"{cited}{where} ({shown.total_lines} lines in the file)"
    data = {
        "repo": repo,
        "path": shown.path,
        "start_line": start,
        "end_line": last,
        "citation": cited,
        "total_lines": shown.total_lines,
        "truncated": shown.truncated,
        "content": "\n".join(shown.lines),
    }
    return ToolOutput(f"{header}\n{body}{note}", data)


# --- find_callers / find_callees / find_tests ----------------------------------------------


def graph_output(
    repo: str, where: str, symbol: str, target: Definition, what: str, found: list[Neighbour]
) -> ToolOutput:
    """The ``what`` (callers, callees, tests) of ``target``, the definition ``symbol``
    names."""
    data = {
        "repo": repo,
        "symbol": symbol,
        "definition": target.to_json(repo),
        what: [
            {**chunk_json(n.chunk, repo), "lines": list(n.lines), "is_test": n.is_test}
            for n in found
        ],
    }
    return ToolOutput(_graph_text(where, target, what, found), data)


def _graph_text(where: str, target: Definition, what: str, found: list[Neighbour]) -> str:
    head = f"{what.capitalize()} of {target.qualname} ({target.citation}){where}"
    if not found:
        text = f"{head}: none found in the index."
        if what == "tests":
            text += " No indexed test calls it directly; search_code may find indirect tests."
        return text
    rows = [f"{head}: {len(found)}"]
    for n in found:
        c = n.chunk
        test = ", test" if n.is_test or what == "tests" else ""
        row = f"- {cite(c)} {label(c)}{test}"
        if n.lines:
            at = {"callers": "calls it at", "callees": "called at"}.get(what, "at")
            row += f" — {at} line {', '.join(map(str, n.lines))}"
            code = line_of(c, n.lines[0]) if what != "callees" else ""
            if code:
                row += f": `{code}`"
        rows.append(row)
    return "\n".join(rows)


def ambiguous_definitions(
    symbol: str, repo: str, where: str, definitions: list[Definition]
) -> ToolOutput:
    """The candidates when ``symbol`` names several definitions (the graph tools)."""
    candidates = [{**d.to_json(repo), "symbol": f"{d.path}::{d.qualname}"} for d in definitions]
    return _ambiguous(symbol, repo, where, candidates)


def ambiguous_explain(symbol: str, repo: str, where: str, exc: AmbiguousSymbolError) -> ToolOutput:
    """The candidates when ``symbol`` names several definitions (``explain_symbol``)."""
    candidates = [
        {"repo": repo, "symbol": f"{path}::{qualname}", "path": path, "start_line": start,
         "end_line": end, "citation": citation(path, start, end), "qualname": qualname,
         "kind": kind}
        for path, start, end, qualname, kind in exc.candidates
    ]  # fmt: skip
    return _ambiguous(symbol, repo, where, candidates)


def _ambiguous(symbol: str, repo: str, where: str, candidates: list[dict[str, Any]]) -> ToolOutput:
    rows = [
        f"{symbol!r} is ambiguous in {repo}{where}: {len(candidates)} definitions. "
        "Call again with symbol set to one of these (path::qualname):"
    ]
    rows += [f"- {c['symbol']}  ({c['citation']}, {c['kind']})" for c in candidates]
    data = {"repo": repo, "symbol": symbol, "ambiguous": True, "candidates": candidates}
    return ToolOutput("\n".join(rows), data)


# --- list_repos / index_status ---------------------------------------------------------------


def repos_output(repos: list[dict[str, Any]]) -> ToolOutput:
    """``list_repos``'s result: ``repos`` as ``{"name", "indexed"}``."""
    if not repos:
        return ToolOutput("No repositories are available to you.", {"repos": []})
    rows = [f"{len(repos)} {'repository' if len(repos) == 1 else 'repositories'}:"]
    rows += [f"- {r['name']}" + ("" if r["indexed"] else " (not indexed yet)") for r in repos]
    return ToolOutput("\n".join(rows), {"repos": repos})


def status_output(repo: str, st: IndexStatus) -> ToolOutput:
    """``index_status``'s result."""
    data = {
        "repo": repo,
        "files": st.files,
        "chunks": st.chunks,
        "vectors": st.vectors,
        "edges": st.edges,
        "embedder": st.embedder,
        "embedded_fraction": round(st.embedded_fraction, 4),
        "indexed_commit": st.indexed_commit,
        "head_commit": st.head_commit,
        "files_by_language": st.files_by_language,
        "chunks_by_kind": st.chunks_by_kind,
        "edges_by_kind": st.edges_by_kind,
        "stale_files": st.stale_files,
        "added": st.added[:STALE_LISTED],
        "modified": st.modified[:STALE_LISTED],
        "deleted": st.deleted[:STALE_LISTED],
    }
    return ToolOutput(_status_text(repo, st), data)


def _status_text(repo: str, st: IndexStatus) -> str:
    languages = ", ".join(f"{k} {v}" for k, v in sorted(st.files_by_language.items()))
    fresh = (
        "up to date with the files"
        if not st.stale_files
        else f"{st.stale_files} files changed since indexing "
        f"({len(st.added)} added, {len(st.modified)} modified, {len(st.deleted)} deleted)"
    )
    rows = [
        f"{repo}: {st.files} files, {st.chunks} chunks, {st.edges} graph edges; {fresh}.",
        f"Languages: {languages or 'none'}.",
        f"Embedder: {st.embedder or 'none'} ({st.embedded_fraction:.0%} of chunks embedded).",
    ]
    if st.indexed_commit or st.head_commit:
        same = st.indexed_commit == st.head_commit
        rows.append(
            f"Indexed commit {st.indexed_commit[:12] or '-'}, current commit "
            f"{st.head_commit[:12] or '-'}" + (" (same)." if same else ".")
        )
    stale = [*st.added, *st.modified, *st.deleted]
    if stale:
        listed = ", ".join(stale[:STALE_LISTED])
        more = f" and {len(stale) - STALE_LISTED} more" if len(stale) > STALE_LISTED else ""
        rows.append(f"Changed: {listed}{more}.")
    return "\n".join(rows)
