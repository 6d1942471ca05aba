"""Commands that query an index: ``search`` (one query or a ``--batch`` file) and
``eval`` (retrieval metrics on a golden set)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO

import typer
from rich.markup import escape

from .. import MAX_K
from ..errors import UserError
from ._shared import (
    IndexOpt,
    JsonOpt,
    KindOpt,
    KOpt,
    LangOpt,
    NoExpandOpt,
    NoRerankOpt,
    PathOpt,
    RepoArg,
    RepoNameOpt,
    StoreOpt,
    app,
    emit_json,
    open_for_query,
    out,
    parse_filters,
    store_overrides,
    text_arg,
    warn_incomplete,
)

if TYPE_CHECKING:  # the library loads when a command runs (start-up time)
    from .. import FileHit, Filters, Hit, Index
    from ..evaluate import EvalReport

#: Lines of code shown under each result in the terminal.
SHOWN_LINES = 12


@dataclass(frozen=True)
class SearchOptions:
    """Stage switches from the command line; None means the config's default."""

    expand: bool | None = None
    rerank: bool | None = None
    files: bool = False


@app.command()
def search(
    query: Annotated[str | None, typer.Argument(help="What to look for, in plain words.")] = None,
    path: RepoArg = None,
    index_dir: IndexOpt = None,
    k: KOpt = 10,
    lang: LangOpt = None,
    path_glob: PathOpt = None,
    kind: KindOpt = None,
    no_expand: NoExpandOpt = False,
    no_rerank: NoRerankOpt = False,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget", min=1, metavar="TOKENS", help="Pack the best results into this many tokens."
        ),
    ] = None,
    batch: Annotated[
        Path | None,
        typer.Option(
            "--batch",
            help='JSONL file of {"id", "query"} lines (\'-\' for stdin); '
            "prints one JSON line per query, in order.",
        ),
    ] = None,
    files: Annotated[
        bool,
        typer.Option(
            "--files",
            help="Rank files instead of chunks: the K best files, each with its best "
            'chunks (JSON: a "files" list). A pasted bug report\'s first question.',
        ),
    ] = False,
    as_json: JsonOpt = False,
    store: StoreOpt = None,
    repo_name: RepoNameOpt = None,
) -> None:
    """Find the code that answers a question: keyword + vector search, graph, rerank.

    The question may be a whole bug report (prose, code, a traceback, error messages):
    its parts are searched for what each is good at. `--files` ranks files.

    A query that starts with "-" goes after "--": codecite search -- -session --json
    """
    query = text_arg(query) if query is not None else None
    if batch is not None and query is not None and path is None:
        path = Path(query)  # `search --batch FILE REPO`: the one argument is REPO
        query = None
    if (query is None) == (batch is None):
        raise UserError("give a QUERY, or --batch FILE with one JSON query per line")
    filters = parse_filters(lang, path_glob, kind)
    options = SearchOptions(
        expand=False if no_expand else None, rerank=False if no_rerank else None, files=files
    )
    if files and budget is not None:
        raise UserError("--budget packs chunks; it does not combine with --files")
    with open_for_query(path, index_dir, store_overrides(store, repo_name)) as idx:
        incomplete = warn_incomplete(idx)
        if batch is not None:
            _run_batch(idx, batch, k, filters, options, budget)
            return
        assert query is not None
        result = idx.search(
            query,
            k=k,
            filters=filters,
            budget=budget,
            expand=options.expand,
            rerank=options.rerank,
            files=files,
        )
    if as_json:
        emit_json({**result.to_json(), "incomplete": incomplete})
        return
    if result.files is not None:
        _print_files(result.files)
        out.print(
            f"[dim]{len(result.files)} files · intent {result.intent} · "
            f"{result.timings_ms.get('total', 0):.0f} ms[/dim]"
        )
        print_freshness(result.refreshed_files, result.stale_files)
        return
    if not result.hits:
        out.print(
            "No results. Try other words, fewer filters, or `codecite status` to check "
            "what is indexed."
        )
    for rank, hit in enumerate(result.hits, start=1):
        _print_hit(rank, hit)
    out.print(
        f"[dim]{len(result.hits)} results · intent {result.intent} · "
        f"{result.timings_ms.get('total', 0):.0f} ms[/dim]"
    )
    print_freshness(result.refreshed_files, result.stale_files)


def print_freshness(refreshed: list[str], stale: list[str]) -> None:
    """Say once what the freshness check before the query did."""
    if refreshed:
        out.print(f"[dim]re-indexed {len(refreshed)} changed file(s) first[/dim]")
    if stale:
        out.print(
            f"[yellow]{len(stale)} file(s) changed since indexing and were not re-indexed: "
            "results from them are marked \\[stale]; run `codecite index`[/yellow]",
            soft_wrap=True,
        )


def _print_files(files: list[FileHit]) -> None:
    if not files:
        out.print("No files found. Try other words or fewer filters.")
    for rank, entry in enumerate(files, start=1):
        out.print(
            f"[bold]{rank:>2}.[/bold] [bold cyan]{escape(entry.path)}[/]  "
            f"[dim]score {entry.score:.3f}[/dim]",
            soft_wrap=True,
        )
        for hit in entry.hits:
            c = hit.chunk
            out.print(
                f"     {c.start_line}-{c.end_line}  [bold]{escape(c.qualname)}[/]  "
                f"[dim]({c.kind}, {escape(hit.source)})[/dim]"
                + ("  [yellow]\\[stale][/yellow]" if hit.stale else ""),
                soft_wrap=True,
            )


def _print_hit(rank: int, hit: Hit) -> None:
    from rich.syntax import Syntax

    c = hit.chunk
    out.print(
        f"[bold]{rank:>2}.[/bold] [bold cyan]{escape(c.path)}:{c.start_line}-{c.end_line}[/]  "
        f"[bold]{escape(c.qualname)}[/]  [dim]({c.kind}, {escape(hit.source)}: "
        f"{escape(hit.why)})[/dim]" + ("  [yellow]\\[stale][/yellow]" if hit.stale else ""),
        soft_wrap=True,
    )
    lines = c.content.split("\n")
    shown = "\n".join(lines[:SHOWN_LINES]) + ("\n…" if len(lines) > SHOWN_LINES else "")
    lexer = {"c_sharp": "csharp", "config": "text", "text": "text"}.get(c.language, c.language)
    out.print(Syntax(shown, lexer, line_numbers=True, start_line=c.start_line, word_wrap=True))


def _batch_lines(source: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) of the non-blank lines; each is decoded on its own, so
    one undecodable line cannot stop the batch."""
    stream: BinaryIO
    if str(source) == "-":
        stream = sys.stdin.buffer
    else:
        if not source.is_file():
            raise UserError(f"{source}: no such file; --batch takes a JSONL file of queries")
        stream = source.open("rb")
    with stream:
        for number, line in enumerate(stream, start=1):
            if line.strip():
                yield number, line


def batch_k(value: object, default: int) -> int:
    """A query line's ``k``: a whole number from 1 to :data:`MAX_K` (else ValueError)."""
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
        raise ValueError(f'"k" must be a whole number from 1 to {MAX_K}, got {value!r}')
    return value


def _run_batch(
    idx: Index, source: Path, k: int, filters: Filters, options: SearchOptions, budget: int | None
) -> None:
    """One output line per input line, in order; a bad line gets an ``error`` field
    (and its ``id`` when it could be read, its ``line`` number always)."""
    for number, raw in _batch_lines(source):
        record: dict[str, Any] = {"id": None, "results": []}
        try:
            item = json.loads(raw.decode("utf-8"))
            if not isinstance(item, dict):
                raise ValueError('expected a JSON object {"id": ..., "query": ...}')
            record["id"] = item.get("id", number)
            if not isinstance(item.get("query"), str) or not item["query"].strip():
                raise ValueError('expected a non-empty string "query"')
            result = idx.search(
                item["query"],
                k=batch_k(item.get("k"), k),
                filters=filters,
                budget=budget,
                expand=options.expand,
                rerank=options.rerank,
                files=options.files,
            )
            record["results"] = [h.to_json() for h in result.hits]
            if result.files is not None:
                record["files"] = [f.to_json() for f in result.files]
        except UnicodeDecodeError:
            record["error"] = f"line {number}: not valid UTF-8"
        except (ValueError, TypeError, UserError) as exc:
            record["error"] = f"line {number}: {exc}"
        if "error" in record:
            record["line"] = number
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        sys.stdout.flush()


@app.command(name="eval")
def eval_command(
    golden: Annotated[
        Path | None,
        typer.Argument(
            help='Golden JSONL: {"query", "relevant": [{"path", "start_line", "end_line"}]} '
            "lines (with --mine: the repository instead)."
        ),
    ] = None,
    path: Annotated[
        Path | None, typer.Argument(help="Repository (default: nearest index).")
    ] = None,
    index_dir: IndexOpt = None,
    k: KOpt = 10,
    no_expand: NoExpandOpt = False,
    no_rerank: NoRerankOpt = False,
    worst: Annotated[int, typer.Option("--worst", min=0, help="Show the N worst queries.")] = 5,
    mine: Annotated[
        bool,
        typer.Option(
            "--mine",
            help="Build the golden set from this repository's git history (commit subjects "
            "as questions, the definitions they changed as answers), then evaluate it.",
        ),
    ] = False,
    n: Annotated[
        int, typer.Option("-n", min=1, help="With --mine: questions to mine, newest first.")
    ] = 50,
    mine_out: Annotated[
        Path | None, typer.Option("--out", help="With --mine: also write the set here (JSONL).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure retrieval on a golden set: Recall@1/5/10, Precision@5, MRR, nDCG@10.

    `codecite eval --mine [PATH]` measures on your own history: see the README for its bias.
    """
    from ..evaluate import Retrieved, evaluate, load_golden

    expand, rerank = (False if no_expand else None), (False if no_rerank else None)
    if mine:
        if path is not None:
            raise UserError("with --mine give only the repository PATH, not a golden file")
        from ..evaluate.mine import run_mine

        with open_for_query(golden, index_dir) as idx:
            run = run_mine(idx, n=n, out=mine_out, k=k, expand=expand, rerank=rerank)
        if as_json:
            emit_json(run.to_json())
            return
        out.print(escape(run.mined.summary()), soft_wrap=True)
        if mine_out is not None:
            out.print(f"golden set written to {escape(str(mine_out))}")
        _print_eval(run.report, worst)
        return
    if golden is None:
        raise UserError("give a golden JSONL file, or --mine to build one from the git history")
    queries = load_golden(golden)
    with open_for_query(path, index_dir) as idx:
        results = [
            [
                Retrieved(h.chunk.path, h.chunk.start_line, h.chunk.end_line)
                for h in idx.search(q.query, k=k, expand=expand, rerank=rerank).hits
            ]
            for q in queries
        ]
    report = evaluate(queries, results, k=k)
    if as_json:
        emit_json(report.to_json())
        return
    _print_eval(report, worst)


def _print_eval(report: EvalReport, worst: int) -> None:
    from rich.table import Table

    table = Table(title=f"{report.overall.count} queries, k={report.k}", title_justify="left")
    table.add_column("level")
    for name in ("R@1", "R@5", "R@10", "P@5", "MRR", "nDCG@10"):
        table.add_column(name, justify="right")
    for level, m in (("file", report.file), ("chunk", report.chunk)):
        table.add_row(
            level,
            *(
                f"{v:.3f}"
                for v in (
                    m.recall_at_1,
                    m.recall_at_5,
                    m.recall_at_10,
                    m.precision_at_5,
                    m.mrr,
                    m.ndcg_at_10,
                )
            ),
        )
    out.print(table)
    if report.by_kind:
        out.print(
            "By question kind (file R@5 / chunk R@5): "
            + ", ".join(
                f"{kind} {s.file.recall_at_5:.2f}/{s.chunk.recall_at_5:.2f} (n={s.count})"
                for kind, s in report.by_kind.items()
            ),
            soft_wrap=True,
        )
    for row in report.worst(worst):
        out.print(
            f"[yellow]worst[/yellow] {escape(row.id)}: {escape(row.query)} — file MRR "
            f"{row.file.mrr:.2f}; got {escape(', '.join(row.top_paths[:3]) or 'nothing')}",
            soft_wrap=True,
        )
