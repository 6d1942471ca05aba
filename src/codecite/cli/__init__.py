"""The ``codecite`` command: the only place that prints, exits and draws progress.

Exit codes: 0 success, 1 user error (message, no traceback), 2 internal error,
130 interrupted (what was committed stays usable).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

try:  # typer >= 0.26 vendors click; older releases use the click package
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover
    from click.exceptions import (  # type: ignore[assignment]
        ClickException,
        NoArgsIsHelpError,
        UsageError,
    )

from .. import __version__
from ..errors import CodeciteError, IndexCorruptError, UserError
from ..indexer import Interrupted
from ..pipeline import Progress as ProgressEvent
from ..store.sqlite import is_damage

app = typer.Typer(
    name="codecite",
    help="Ask questions about a codebase; answers cite the code as path:start-end.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

STAGE_LABELS = {"parse": "Parsing files", "graph": "Resolving graph", "embed": "Embedding chunks"}
STAGE_UNITS = {"parse": "files", "graph": "steps", "embed": "chunks"}

IndexOpt = Annotated[
    Path | None, typer.Option("--index", help="Index folder (default: PATH/.codecite).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]


def _version(value: bool) -> None:
    if value:
        out.print(f"codecite {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log details to stderr.")
    ] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Any]:
    """A rich progress bar driven by the library's progress events."""
    if not enabled:
        yield None
        return
    columns = (
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"),
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
            bar.update(tasks[event.stage], completed=event.done, total=event.total or None,
                       rate=rate)

        yield on_event


def _emit_json(data: object) -> None:
    """Machine output: plain JSON on stdout, one document, no colours or wrapping."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")


def _exit_for(exc: BaseException) -> int:
    if isinstance(exc, UserError):
        err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        return 1
    err.print(f"[red]internal error:[/red] {escape(str(exc))}", soft_wrap=True)
    logging.getLogger(__name__).debug("traceback", exc_info=exc)
    return 2


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
    return [*args[:cut], TEXT_MARK + args[cut + 1], *args[cut + 2:]]


def text_arg(value: str) -> str:
    return value.removeprefix(TEXT_MARK)


def main() -> None:
    """Entry point: run the app, turning errors into exit codes."""
    try:
        app(args=protect_text_argument(sys.argv[1:]), standalone_mode=False)
    except Interrupted as exc:
        r = exc.report
        err.print(
            f"[yellow]interrupted[/yellow]: {r.embedded:,} chunks embedded this run, "
            f"{r.embed_pending:,} pending; the index is usable, run `codecite index` to resume"
        )
        sys.exit(130)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]")
        sys.exit(130)
    except CodeciteError as exc:
        sys.exit(_exit_for(exc))
    except sqlite3.DatabaseError as exc:  # a damaged index found after it was opened
        if not is_damage(exc):
            sys.exit(_exit_for(exc))
        sys.exit(_exit_for(IndexCorruptError(
            f"the index database is damaged ({exc}); rebuild it with `codecite index --full`")))
    except (typer.Exit, SystemExit) as exc:
        code = exc.exit_code if isinstance(exc, typer.Exit) else exc.code
        sys.exit(code)
    except NoArgsIsHelpError as exc:
        exc.show()
        sys.exit(0)
    except ClickException as exc:  # bad flags or arguments: a user error
        exc.show()
        sys.exit(1 if isinstance(exc, UsageError) else exc.exit_code)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:  # a bug: short message, traceback with CODECITE_DEBUG=1
        if os.environ.get("CODECITE_DEBUG"):
            raise
        sys.exit(_exit_for(exc))


# Commands register themselves on ``app`` when imported.
from . import answer, indexing, query  # noqa: E402, F401
