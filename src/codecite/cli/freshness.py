"""Commands that keep an index fresh without an explicit ``codecite index``:
``watch`` (follow saves) and ``hooks install|uninstall`` (index after git commands)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ._help import CLI
from ._shared import IndexOpt, app, err, out

if TYPE_CHECKING:  # the library loads when a command runs (start-up time)
    from ..index.hooks import HookChange
    from ..index.watch import UpdateLog, WatchSummary

#: ``WatchOptions.settle`` and ``.embed_delay`` (a test keeps them equal): written out
#: here so that the CLI's start-up does not import the watcher.
SETTLE_DEFAULT, EMBED_DELAY_DEFAULT = 0.3, 2.0

hooks_app = CLI(
    name="hooks",
    help="Git hooks that re-index in the background after commit, merge, checkout, rebase.",
    no_args_is_help=True,
)
app.add_typer(hooks_app)

PathArg = Annotated[Path, typer.Argument(help="Repository folder (default: here).")]


# --- watch ------------------------------------------------------------------------
@app.command(name="watch")
def watch_command(
    path: PathArg = Path("."),
    index_dir: IndexOpt = None,
    no_embed: Annotated[
        bool, typer.Option("--no-embed", help="Keyword index and graph only; no vectors.")
    ] = False,
    settle: Annotated[
        float,
        typer.Option(min=0.0, help="Seconds without a change before a batch is indexed."),
    ] = SETTLE_DEFAULT,
    embed_delay: Annotated[
        float,
        typer.Option(min=0.0, help="Seconds without a change before vectors are computed."),
    ] = EMBED_DELAY_DEFAULT,
    embedder: Annotated[
        str | None, typer.Option("--embedder", help="Embedding model: minilm or openai:MODEL.")
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also log updates that changed nothing.")
    ] = False,
) -> None:
    """Keep the index up to date while you edit: one line per update.

    A save is searchable (keyword index, code graph) within a second or two;
    vectors follow once nothing has changed for a moment (new changes pause
    them). A git checkout of thousands of files is one batch. Files that
    `codecite index` skips (.gitignore, .codeciteignore, vendored) are ignored.
    Ctrl-C (exit 130) or SIGTERM (exit 0) stops it; the index stays consistent
    and `codecite index` or the next `watch` adds the vectors still missing.
    """
    from .. import open_index
    from ..index.watch import WatchOptions, watch

    overrides: dict[str, object] = {"embedder": embedder}
    options = WatchOptions(
        settle=settle,
        embed=not no_embed,
        embed_delay=embed_delay,
        overrides={k: v for k, v in overrides.items() if v is not None},
    )
    stop = threading.Event()
    with (
        open_index(path, index_dir=index_dir, overrides=overrides) as idx,
        _stop_on_signals(stop) as received,
    ):

        def on_ready() -> None:
            out.print(
                f"watching [bold]{escape(str(idx.root))}[/bold] for changes (Ctrl-C to stop)",
                soft_wrap=True,
            )

        summary = watch(
            idx,
            stop,
            options,
            on_update=lambda entry: _print_update(entry, verbose),
            on_ready=on_ready,
            on_wait=_say_waiting,
        )
    _print_summary(summary)
    if received and received[0] == signal.SIGINT:
        sys.exit(130)  # typer.Exit's code is dropped by main() (standalone_mode=False)


@contextlib.contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[list[int]]:
    """SIGINT/SIGTERM set ``stop`` (the update in progress ends cleanly); a second
    Ctrl-C stops at once. Yields the signals received."""
    received: list[int] = []
    if hasattr(os, "register_at_fork"):  # POSIX: the parse pool forks
        os.register_at_fork(after_in_child=_worker_signals)

    def handler(signum: int, _frame: FrameType | None) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        received.append(signum)
        stop.set()
        err.print("stopping after the current step (Ctrl-C again to stop at once)")

    before = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, old in before.items():
            signal.signal(sig, old)


def _worker_signals() -> None:
    """In a forked parse worker: Ctrl-C reaches the whole process group, but the
    parent decides (its pool must finish the update), and the pool's terminate()
    (SIGTERM) must kill at once, not wait for this handler in a blocked worker."""
    with contextlib.suppress(ValueError):  # forked from a thread other than main
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _say_waiting(pid: str) -> None:
    who = f" (pid {pid})" if pid else ""
    err.print(
        f"another codecite process{who} is writing this index; waiting for it", soft_wrap=True
    )


def _print_update(entry: UpdateLog, verbose: bool) -> None:
    stamp = time.strftime("%H:%M:%S", time.localtime(entry.at))
    r = entry.report
    if entry.error:
        out.print(f"{stamp} vectors failed: {escape(entry.error)}", soft_wrap=True)
    elif entry.stage == "vectors":
        state = "paused: files changed" if entry.interrupted else "done"
        out.print(
            f"{stamp} vectors: {r.embedded:,} chunks embedded, {r.embed_pending:,} pending "
            f"({state}), {entry.seconds:.2f}s",
            soft_wrap=True,
        )
    elif entry.files or verbose:
        seen = f" ({entry.paths:,} paths seen changing)" if entry.paths else " (since last run)"
        out.print(
            f"{stamp} index: {entry.files:,} files{seen}: {len(r.added)} added, "
            f"{len(r.modified)} modified, {len(r.deleted)} deleted; "
            f"{entry.chunks:,} chunks, {entry.seconds:.2f}s",
            soft_wrap=True,
        )


def _print_summary(s: WatchSummary) -> None:
    line = (
        f"stopped: {s.updates:,} updates, {s.files:,} files and {s.chunks:,} chunks "
        f"re-indexed, {s.embedded:,} chunks embedded; the index is consistent"
    )
    if s.pending:
        line += f" ({s.pending:,} chunks wait for vectors: `codecite index` adds them)"
    err.print(line, soft_wrap=True)


# --- hooks ------------------------------------------------------------------------
@hooks_app.command("install")
def hooks_install(
    path: PathArg = Path("."),
    no_embed: Annotated[
        bool, typer.Option("--no-embed", help="The hooks refresh keywords and graph only.")
    ] = False,
) -> None:
    """Re-index PATH in the background after each commit, merge, checkout, rebase.

    Installs post-commit, post-merge, post-checkout and post-rewrite hooks in
    the folder git runs hooks from (core.hooksPath honoured; worktrees share
    it). Each gets a marked block that starts `codecite hooks run` detached,
    output in .codecite/hooks.log, so git never waits. They run this codecite
    (the Python running it now), else `codecite` on PATH.

    Existing hooks keep working: a shell hook gets the block after its #! line;
    any other hook (another language, a symlink, not executable) is chained.
    Runs take the index's lock; in a burst (a rebase) one indexer runs and the
    other hook runs exit at once. Only an existing index is refreshed: run
    `codecite index` once first. `codecite hooks uninstall` takes out exactly
    what this added.
    """
    from .. import index_exists
    from ..index import hooks as git_hooks

    changes = git_hooks.install(path, embed=not no_embed)
    _print_changes(changes)
    root = path.resolve()
    if not index_exists(root / ".codecite"):
        out.print(
            f"no index at {escape(str(root / '.codecite'))} yet: the hooks only refresh one; "
            f"build it with `codecite index {escape(str(path))}`",
            soft_wrap=True,
        )


@hooks_app.command("uninstall")
def hooks_uninstall(path: PathArg = Path(".")) -> None:
    """Remove what `codecite hooks install` added for PATH.

    Its blocks come out, hook files it created are deleted, chained hooks are
    put back: every hook file is again byte for byte what it was.
    """
    from ..index import hooks as git_hooks

    _print_changes(git_hooks.uninstall(path))


@hooks_app.command("run", hidden=True)
def hooks_run(
    path: PathArg = Path("."),
    hook: Annotated[str, typer.Option("--hook", help="The git hook running this.")] = "",
    no_embed: Annotated[bool, typer.Option("--no-embed")] = False,
) -> None:
    """What the hooks run (in the background): an incremental index under the lock."""
    from .. import open_index
    from ..index import hooks as git_hooks

    with contextlib.suppress(OSError, AttributeError):  # AttributeError: Windows
        os.setsid()  # not killed with the terminal or git's process group

    def log(text: str) -> None:
        sys.stdout.write(git_hooks.log_line(f"{hook or 'run'}: {text}") + "\n")
        sys.stdout.flush()

    git_hooks.run_hook(path, open_index, embed=not no_embed, on_log=log)


def _print_changes(changes: list[HookChange]) -> None:
    for change in changes:
        note = f" ({change.note})" if change.note else ""
        out.print(f"{change.action:>8} {escape(str(change.path))}{escape(note)}", soft_wrap=True)
