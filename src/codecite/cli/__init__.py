"""The ``codecite`` command: the only place that prints, exits and draws progress.

Exit codes: 0 success, 1 user error (message, no traceback), 2 internal error,
130 interrupted (what was committed stays usable).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Annotated

import typer
from rich.markup import escape

try:  # typer >= 0.26 vendors click; older releases use the click package
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover
    from click.exceptions import (  # type: ignore[assignment]
        ClickException,
        NoArgsIsHelpError,
        UsageError,
    )

from .. import __version__
from ..errors import CodeciteError, Interrupted, UserError
from ._shared import app, err, out, protect_text_argument


def _version(value: bool) -> None:
    if value:
        out.print(f"codecite {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log details to stderr.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


def _exit_for(exc: BaseException) -> int:
    if isinstance(exc, UserError):
        err.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        return 1
    err.print(f"[red]internal error:[/red] {escape(str(exc))}", soft_wrap=True)
    logging.getLogger(__name__).debug("traceback", exc_info=exc)
    return 2


def main() -> None:
    """Entry point: run the app, turning errors into exit codes."""
    try:
        app(args=protect_text_argument(sys.argv[1:]), standalone_mode=False)
    except Interrupted as exc:
        from ._messages import interrupted_message

        err.print(interrupted_message(exc.report), soft_wrap=True)
        sys.exit(130)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]")
        sys.exit(130)
    except CodeciteError as exc:
        sys.exit(_exit_for(exc))
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
from . import (  # noqa: E402, F401
    answer,
    explain,
    freshness,
    indexing,
    mcp,
    migrate,
    picture,
    query,
    serve,
    tokens,
    worker,
)
