"""What the CLI's command modules share: the typer app, the consoles, common options,
progress drawing, JSON output, the ``--`` rule for text arguments, and opening an
index for a query. Private to :mod:`codecite.cli`.

Start-up (issue 23): importing the CLI imports typer, rich's console and the light
modules (errors, types) only; each command imports the library (``api``: numpy, the
retrieval and answer stages) when it runs, so ``--version``, ``--help`` and a bad
flag answer at once (``tests/test_cli_startup.py`` pins it)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from .. import CHUNK_KINDS, MAX_K
from ._help import CLI

if TYPE_CHECKING:
    from rich.progress import TaskID

    from .. import Filters, Index
    from .. import Progress as ProgressEvent

app = CLI(
    name="codecite",
    help="Ask questions about a codebase; answers cite the code as path:start-end.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

STAGE_LABELS = {
    "parse": "Parsing files",
    "graph": "Resolving graph",
    "static": "Static vectors",
    "embed": "Embedding chunks",
}
STAGE_UNITS = {
    "parse": "files",
    "graph": "steps",
    "static": "chunks",
    "embed": "chunks",
}

#: Stage names in the one-line-per-stage output (no terminal: a log, CI).
STAGE_LINES = {
    "parse": "parsed",
    "graph": "graph",
    "distil": "static model built (once per machine)",
    "static": "static vectors",
    "embed": "model vectors",
}

IndexOpt = Annotated[
    Path | None,
    typer.Option("--index", metavar="DIR", help="Index folder (default: PATH/.codecite)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]
StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Where the index lives: a postgresql://USER@HOST/DB URL selects the shared "
        "PostgreSQL store (default: config `store` / $CODECITE_STORE, else SQLite in --index).",
    ),
]
RepoNameOpt = Annotated[
    str | None,
    typer.Option(
        "--repo-name", help="The repository's name in a shared store (default: its folder name)."
    ),
]


def store_overrides(store: str | None, repo_name: str | None) -> dict[str, object]:
    """The --store/--repo-name options as config overrides (only those given)."""
    return {key: value for key, value in (("store", store), ("repo_name", repo_name)) if value}


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Any]:
    """A rich progress bar driven by the library's progress events."""
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, transient=False) as bar:
        tasks: dict[str, TaskID] = {}

        def on_event(event: ProgressEvent) -> None:
            if event.stage not in tasks:
                tasks[event.stage] = bar.add_task(
                    STAGE_LABELS.get(event.stage, event.stage), total=event.total or None, rate=""
                )
            task = bar.tasks[tasks[event.stage]]
            speed = task.speed
            rate = f"{speed:,.0f} {STAGE_UNITS.get(event.stage, '')}/s" if speed else ""
            bar.update(
                tasks[event.stage], completed=event.done, total=event.total or None, rate=rate
            )

        yield on_event


@contextmanager
def stage_lines(enabled: bool) -> Iterator[Any]:
    """Progress without a terminal (output redirected, CI): one line on stderr as each
    stage finishes, with its count and seconds, so a log shows the run advancing."""
    if not enabled:
        yield None
        return
    started: dict[str, float] = {}
    last: dict[str, ProgressEvent] = {}
    printed: set[str] = set()

    def finish(stage: str) -> None:
        if stage in printed:
            return
        printed.add(stage)
        event, seconds = last[stage], time.perf_counter() - started[stage]
        count = "resolved" if stage == "graph" else f"{event.done:,} {STAGE_UNITS.get(stage, '')}"
        err.print(
            f"{STAGE_LINES.get(stage, stage)}: {count} in {seconds:.1f}s",
            highlight=False,
            soft_wrap=True,
        )

    def on_event(event: ProgressEvent) -> None:
        if event.stage not in started:
            for stage in list(last):  # a new stage: the ones before it are done
                finish(stage)
            started[event.stage] = time.perf_counter()
        last[event.stage] = event
        if event.total and event.done >= event.total:
            finish(event.stage)

    try:
        yield on_event
    finally:
        for stage in list(last):
            finish(stage)


def emit_json(data: object) -> None:
    """Machine output: plain JSON on stdout, one document, no colours or wrapping."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")


#: The optional repository argument of query commands.
RepoArg = Annotated[
    Path | None,
    typer.Argument(help="Repository (default: the nearest index above the current folder)."),
]
KOpt = Annotated[int, typer.Option("-k", "--top", min=1, max=MAX_K, help="Number of results.")]
LangOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--lang",
        metavar="LANG",
        help="Only these languages (repeatable): python, ts, go, java, ...",
    ),
]
PathOpt = Annotated[
    str | None,
    typer.Option(
        "--path", metavar="GLOB", help="Only paths matching this glob (src/**, *.ts, billing/)."
    ),
]
KindOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--kind",
        metavar="KIND",
        help=f"Only these chunk kinds (repeatable): {', '.join(CHUNK_KINDS)}.",
    ),
]
NoExpandOpt = Annotated[
    bool, typer.Option("--no-expand", help="Do not add callers/callees/tests from the code graph.")
]
NoRerankOpt = Annotated[
    bool, typer.Option("--no-rerank", help="Keep the fused order (no symbol/graph/path signals).")
]


def warn_incomplete(idx: Index) -> str:
    """Say on stderr, at every search and ask, that the index is incomplete (an index
    run stopped before its files and graph were committed); returns the note or ""."""
    from rich.markup import escape

    note = idx.incomplete
    if note:
        err.print(f"[yellow]warning:[/yellow] {escape(note)}", soft_wrap=True)
    return note


def open_for_query(
    path: Path | None, index_dir: Path | None, overrides: dict[str, object] | None = None
) -> Index:
    """The index of ``path`` (a repository folder; anything else is an error), else of
    ``--index``, else the nearest one above the current folder; opened read-only."""
    from .. import open_existing, open_index

    if path is not None:
        return open_index(path, index_dir=index_dir, create=False, overrides=overrides)
    return open_existing(index_dir, overrides=overrides)


def parse_filters(lang: list[str] | None, path: str | None, kind: list[str] | None) -> Filters:
    """The --lang/--path/--kind options as validated filters."""
    from .. import Filters

    return Filters.parse(lang, path, kind)


#: Commands whose first argument is free text, which may start with "-".
TEXT_COMMANDS = frozenset({"search", "ask"})
#: Marks a text argument given after ``--`` (see :func:`protect_text_argument`).
TEXT_MARK = "\x1e"


def protect_text_argument(args: list[str]) -> list[str]:
    """``codecite search -- -session --json``: the word after ``--`` is the query even
    when it starts with "-", and the options after it still count. (Plain ``--`` would
    make every later word an argument.) The command strips the mark: :func:`text_arg`."""
    if "--" not in args:
        return args
    cut = args.index("--")
    command = next((a for a in args[:cut] if not a.startswith("-")), "")
    if command not in TEXT_COMMANDS or cut + 1 >= len(args):
        return args
    return [*args[:cut], TEXT_MARK + args[cut + 1], *args[cut + 2 :]]


def text_arg(value: str) -> str:
    return value.removeprefix(TEXT_MARK)
