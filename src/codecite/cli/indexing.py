"""Commands that build and inspect an index: ``index``, ``status``, ``chunks``."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from ..errors import UserError
from ._messages import nothing_to_index
from ._shared import (
    IndexOpt,
    JsonOpt,
    RepoNameOpt,
    StoreOpt,
    app,
    emit_json,
    err,
    out,
    progress_bar,
    stage_lines,
    store_overrides,
)

if TYPE_CHECKING:  # the library loads when a command runs (start-up time)
    from .. import Index, IndexReport, IndexStatus


# --- index ------------------------------------------------------------------------
@app.command()
def index(
    path: Annotated[Path, typer.Argument(help="Repository folder to index.")] = Path("."),
    index_dir: IndexOpt = None,
    full: Annotated[bool, typer.Option("--full", help="Rebuild from scratch.")] = False,
    no_embed: Annotated[
        bool, typer.Option("--no-embed", help="Keyword index and graph only; no vectors.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Show what would be indexed and the embedding time; write nothing."
        ),
    ] = False,
    embedder: Annotated[
        str | None,
        typer.Option(
            "--embedder", help="Embedding model: minilm (default, bundled) or openai:MODEL."
        ),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="Compute the model's vectors before returning (scripts, CI); without it "
            "they are computed by a background worker once the rest is committed.",
        ),
    ] = False,
    stop: Annotated[
        bool,
        typer.Option(
            "--stop", help="Stop the background embedding of this index (resume: `index`)."
        ),
    ] = False,
    as_json: JsonOpt = False,
    store: StoreOpt = None,
    repo_name: RepoNameOpt = None,
) -> None:
    """Index a repository: chunks, code graph, keyword index and static vectors, then
    the model's vectors in the background (`codecite status` shows them; `--wait`).

    Re-running indexes only what changed. Ctrl-C keeps what was done; run again to resume.
    """
    from .. import open_index

    overrides: dict[str, object] = {"embedder": embedder, **store_overrides(store, repo_name)}
    if stop:
        _stop(path, index_dir, overrides, as_json)
        return

    def on_wait(pid: str) -> None:
        who = f" (pid {pid})" if pid else ""
        err.print(
            f"another codecite process{who} is writing this index; waiting for it to "
            "finish, then only what is left is done"
        )

    show = not as_json
    with (
        open_index(
            path, index_dir=index_dir, overrides=overrides, discard_damaged=full and not dry_run
        ) as idx,
        progress_bar(show and err.is_terminal) as on_bar,
        stage_lines(show and not err.is_terminal) as on_line,
    ):
        report = idx.update(
            full=full,
            embed=not no_embed,
            dry_run=dry_run,
            on_progress=on_bar or on_line,
            on_wait=on_wait,
            background=not wait,
        )
    if as_json:
        emit_json(_report_json(report))
    else:
        _print_report(report)
    if not report.files_seen:
        raise UserError(nothing_to_index(report))


def _stop(path: Path, index_dir: Path | None, overrides: dict[str, object], as_json: bool) -> None:
    """``index --stop``: stop the background worker, say what it left."""
    with _open(path, index_dir, overrides) as idx:
        pid = idx.stop_embedding()
        st = idx.status()
    if as_json:
        emit_json({"stopped": pid, "vectors": st.vectors, "chunks": st.chunks, **st.background})
        return
    if not pid:
        out.print(f"no background embedding runs for this index ({_background_line(st)})")
        return
    out.print(
        f"stopped the background embedding (pid {pid}): model vectors for {st.vectors:,} "
        f"of {st.chunks:,} chunks; `codecite index` resumes"
    )


def _report_json(report: IndexReport) -> dict[str, Any]:
    data = asdict(report)
    data["skipped"] = [asdict(s) for s in report.skipped]
    data["skipped_by_reason"] = report.skipped_by_reason()
    data["changed"] = report.changed
    return data


def _breakdown(counts: dict[str, int] | dict[str, float], unit: str = "") -> str:
    if not counts:
        return "-"
    total = sum(counts.values())
    parts = ", ".join(
        f"{k} {v:,.2f}{unit}" if isinstance(v, float) else f"{k} {v:,}" for k, v in counts.items()
    )
    return parts if unit else f"{total:,}: {parts}"


def _print_report(report: IndexReport) -> None:
    from rich.table import Table

    verb = "would index" if report.dry_run else "indexed"
    out.print(
        f"[bold]{escape(report.root)}[/bold]: {report.files_seen:,} files; "
        f"{report.changed:,} files changed ({len(report.added)} added, "
        f"{len(report.modified)} modified, {len(report.deleted)} deleted), "
        f"{report.unchanged:,} unchanged; {verb} {report.chunks_written:,} chunks",
        soft_wrap=True,
    )
    if report.rechunked:
        out.print(
            "Every file was cut again: this index was chunked by another version of "
            "codecite or other chunking settings (unchanged chunks keep their vectors).",
            soft_wrap=True,
        )
    table = Table(title="Summary", title_justify="left", show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    rows = (
        ("Files by language", _breakdown(report.files_by_language)),
        ("Chunks by kind", _breakdown(report.chunks_by_kind)),
        ("Skipped by reason", _breakdown(report.skipped_by_reason())),
        ("Secrets redacted", _breakdown(report.secrets_redacted)),
        ("Graph edges", _breakdown(report.edges_by_kind)),
        ("Time", _breakdown(report.seconds, "s")),
    )
    for label, value in rows:
        table.add_row(label, value)
    out.print(table)
    if report.fallback_files:
        out.print(f"[yellow]{len(report.fallback_files)} files fell back to line windows[/yellow]")
    if report.dry_run:
        out.print(
            f"Would embed about {report.embed_pending:,} chunks: "
            f"~{report.estimated_embed_seconds / 60:.1f} min on this machine (nothing written)."
        )
        return
    if report.static_model:
        out.print(
            f"Static vectors ({report.static_model}): {report.static_computed:,} computed, "
            f"{report.static_reused:,} reused from the index."
        )
    if report.embed_worker:
        out.print(
            f"Embeddings ({report.embedder}): {report.embed_pending:,} chunks are embedded "
            f"in the background (pid {report.embed_worker}); {report.embed_reused:,} reused "
            "from the index. Search works now and improves as they arrive: `codecite "
            "status` shows the progress, `codecite index --stop` stops it (`--wait`: "
            "embed before returning).",
            soft_wrap=True,
        )
        return
    out.print(
        f"Embeddings ({report.embedder or 'none'}): {report.embedded:,} vectors: "
        f"{report.embed_computed:,} computed by the model, "
        f"{report.embed_from_cache:,} from the machine-wide cache; "
        f"{report.embed_reused:,} reused from the index; {report.embed_pending:,} pending."
    )


# --- status -----------------------------------------------------------------------
@app.command()
def status(
    path: Annotated[
        Path | None, typer.Argument(help="Repository (default: nearest index).")
    ] = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
    store: StoreOpt = None,
    repo_name: RepoNameOpt = None,
) -> None:
    """Show what is indexed: files, chunks, model, embedded share and staleness."""
    with _open(path, index_dir, store_overrides(store, repo_name)) as idx:
        st = idx.status()
    if st.incomplete:
        err.print(f"[yellow]warning:[/yellow] {escape(st.incomplete)}", soft_wrap=True)
    if as_json:
        data = asdict(st)
        data["embedded_fraction"] = st.embedded_fraction
        data["static_fraction"] = st.static_fraction
        data["tiers"] = st.tiers()
        data["stale_files"] = st.stale_files
        emit_json(data)
        return
    _print_status(st)


def _open(path: Path | None, index_dir: Path | None, overrides: dict[str, object]) -> Index:
    from .. import open_existing, open_index

    if path is not None:
        return open_index(path, index_dir=index_dir, create=False, overrides=overrides)
    return open_existing(index_dir, overrides=overrides)


def _tiers_line(st: IndexStatus) -> str:
    """``static 950/1,000 (95%), model 120/1,000 (12%)``."""
    tiers = (
        ("static", st.static_vectors, st.static_fraction),
        ("model", st.vectors, st.embedded_fraction),
    )
    return ", ".join(f"{tier} {n:,}/{st.chunks:,} ({share:.0%})" for tier, n, share in tiers)


def _print_status(st: IndexStatus) -> None:
    from rich.table import Table

    table = Table(show_header=False, show_edge=False)
    table.add_column(style="bold")
    table.add_column()
    commit = st.indexed_commit[:12] or "-"
    if st.head_commit and st.head_commit != st.indexed_commit:
        commit += f" (HEAD is now {st.head_commit[:12]})"
    rows = [
        ("repository", st.root),
        ("index", st.index_dir),
        ("files", f"{st.files:,}" + (" (incomplete: `codecite index`)" if st.incomplete else "")),
        ("chunks", f"{st.chunks:,}"),
        ("embedded", f"{st.vectors:,} ({st.embedded_fraction:.0%})"),
        ("model", f"{st.embedder or 'none'}" + (f" ({st.embedding_dim}-d)" if st.embedder else "")),
        ("vector tiers", _tiers_line(st)),
        ("background", _background_line(st)),
        ("graph edges", ", ".join(f"{k} {v:,}" for k, v in st.edges_by_kind.items()) or "0"),
        ("indexed commit", commit),
        (
            "changed since",
            f"{st.stale_files} files ({len(st.added)} added, "
            f"{len(st.modified)} modified, {len(st.deleted)} deleted)",
        ),
    ]
    for key, value in rows:
        table.add_row(key, value)
    out.print(table)
    if st.stale_files:
        out.print("Run `codecite index` to bring the index up to date.")


def _background_line(st: IndexStatus) -> str:
    """The background worker's state in words, with what to do next."""
    b, left = st.background, st.chunks - st.vectors
    state, pid, log = b.get("state", ""), b.get("pid", 0), b.get("log", "")
    if state == "running":
        eta = float(str(b.get("eta_seconds", 0)))
        rate = float(str(b.get("rate", 0)))
        pace = f", {rate:,.1f} chunks/s, ~{eta / 60:.1f} min left" if rate else ""
        return (
            f"embedding (pid {pid}): {b.get('embedded', 0):,}/{b.get('total', 0):,} "
            f"chunks{pace}; `codecite index --stop` stops it"
        )
    if state == "starting":
        return f"starting (pid {pid})" if pid else "starting"
    if state == "failed":
        return f"failed: {b.get('error', '')} (log: {log}); `codecite index --wait` retries here"
    if state == "died":
        return f"ended without finishing (killed?), log: {log}; `codecite index` resumes"
    if left > 0:
        what = "stopped" if state == "stopped" else "not running"
        return f"{what}: {left:,} chunks without model vectors; `codecite index` resumes"
    if st.embedder:
        return "idle: every chunk has model vectors"
    return "none yet: `codecite index` computes the model's vectors (`--no-embed` skips them)"


# --- chunks -----------------------------------------------------------------------
@app.command()
def chunks(
    target: Annotated[
        Path | None,
        typer.Argument(help="File or folder whose chunks to show (default: the whole repository)."),
    ] = None,
    index_dir: IndexOpt = None,
    content: Annotated[
        bool, typer.Option("--content/--no-content", help="Show each chunk's code.")
    ] = True,
    as_json: JsonOpt = False,
    store: StoreOpt = None,
    repo_name: RepoNameOpt = None,
) -> None:
    """Show how files were cut into chunks (read a few to check the chunking)."""
    from rich.syntax import Syntax

    from .. import open_existing

    start = (
        target
        if target is not None and target.is_dir()
        else (target.parent if target is not None else Path("."))
    )
    with open_existing(index_dir, start=start, overrides=store_overrides(store, repo_name)) as idx:
        rel = _relative(target, idx.root) if target is not None else None
        found = list(idx.chunks(rel))
    if target is not None and not found:
        raise UserError(
            f"{target}: nothing indexed there (is it skipped, or new since the last "
            "`codecite index`? `codecite index --json` lists skipped files)"
        )
    if as_json:
        emit_json({"chunks": [asdict(c) for c in found]})
        return
    for c in found:
        header = f"[bold cyan]{escape(c.path)}:{c.start_line}-{c.end_line}[/]  "
        header += f"[bold]{escape(c.qualname)}[/] "
        header += f"({c.kind}{f', part {c.part}' if c.part else ''}, {c.language})"
        out.print(header, soft_wrap=True)
        if content:
            lexer = (
                c.language
                if c.language not in ("config", "text", "c_sharp")
                else ("csharp" if c.language == "c_sharp" else "text")
            )
            out.print(
                Syntax(c.content, lexer, line_numbers=True, start_line=c.start_line, word_wrap=True)
            )
    out.print(f"{len(found)} chunks")


def _relative(target: Path, root: Path) -> str:
    full = target.resolve()
    try:
        rel = full.relative_to(root)
    except ValueError:
        raise UserError(f"{target}: not inside the indexed repository {root}") from None
    return "" if str(rel) == "." else rel.as_posix()
