"""Keep an index fresh while files change (``codecite watch``)::

    watchfiles (a thread) ─► the walker's rules ─► inbox of changed paths
    main loop ─► batch quiet for ``settle`` s and git idle ─► update(embed=False)
              ─► quiet for ``embed_delay`` s more         ─► update() for vectors

The keyword index and the graph follow a save within about a second; vectors come
after, when nothing changes, and new changes interrupt them (what was embedded stays,
the rest waits for the next quiet moment). A ``git checkout`` of thousands of files
is one batch: a batch is held while git holds its ``index.lock``. The loop stops
when ``stop`` is set; an update in progress then finishes (keyword stage) or stops
between committed batches (vectors), so the index is always consistent. Nothing
here prints: each update is reported through ``on_update``.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..config import load_config
from ..errors import ConfigError, EmbeddingError, Interrupted, UserError
from ..progress import Progress
from ..types import IndexReport
from ..walk import ALWAYS_SKIPPED_DIRS, _Rules, folder_prefix
from .protocols import Updatable

log = logging.getLogger(__name__)

#: Files whose change alters what is indexed: the rules are read again.
CONFIG_FILES = frozenset({".codeciteignore", "codecite.toml", "pyproject.toml"})
#: Seconds between looks at the inbox (and at ``stop``).
POLL_SECONDS = 0.05
#: Milliseconds watchfiles groups raw events over (the inbox then waits for quiet).
RAW_DEBOUNCE_MS = 500
RAW_STEP_MS = 50
#: Seconds to wait for the file watcher to start.
START_TIMEOUT = 60.0


@dataclass(frozen=True)
class WatchOptions:
    """How :func:`watch` batches (``codecite watch`` has flags for all but ``max_wait``)."""

    #: Seconds without a new change before a batch is indexed.
    settle: float = 0.3
    #: A batch is indexed after this many seconds even if changes go on.
    max_wait: float = 30.0
    #: Compute vectors (after the keyword index) when the batch is quiet.
    embed: bool = True
    #: Seconds without a change, after a keyword update, before vectors are computed.
    embed_delay: float = 2.0
    #: Config overrides (``--embedder``), kept when the config files are read again.
    overrides: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class UpdateLog:
    """One update: ``stage`` "index" (keyword index + graph) or "vectors"."""

    stage: Literal["index", "vectors"]
    at: float  # time.time() when it finished
    paths: int  # changed paths the watcher saw (0: the update at start)
    report: IndexReport
    seconds: float
    interrupted: bool = False  # vectors stopped by new changes or by stop
    error: str = ""  # vectors failed (the embedding backend); retried after the next change

    @property
    def files(self) -> int:
        return self.report.changed

    @property
    def chunks(self) -> int:
        return self.report.chunks_written if self.stage == "index" else self.report.embedded


@dataclass
class WatchSummary:
    """What a :func:`watch` session did, for the line printed when it stops."""

    updates: int = 0
    files: int = 0
    chunks: int = 0
    embedded: int = 0
    pending: int = 0  # chunks without a vector when it stopped


class _Preempted(KeyboardInterrupt):
    """Raised from the progress callback to stop embedding between committed batches:
    the indexer's interrupt path keeps everything committed (see :mod:`indexer`)."""


class PathFilter:
    """Which changed paths can matter to the index, by the walker's own rules: never
    ``.git``/``.codecite``/the index folder, excluded or vendored folders, lockfiles,
    binaries; files git ignores are dropped per batch of events (:meth:`drop_ignored`)."""

    def __init__(self, index: Updatable) -> None:
        self.root, self.index_dir = index.root, index.dir
        self._root_prefix = folder_prefix(index.root)
        self._index_prefix = folder_prefix(index.dir)
        self.rules = _Rules.for_root(index.root, index.config)
        self.is_git = _git(index.root, "rev-parse", "--is-inside-work-tree") is not None
        git_dir = _git(index.root, "rev-parse", "--absolute-git-dir")
        self.git_lock = Path(git_dir.strip(), "index.lock") if git_dir else None

    def relative(self, path: str) -> str | None:
        """``path`` relative to the root ("/"-separated) if it may be indexed, else None."""
        if not path.startswith(self._root_prefix) or path.startswith(self._index_prefix):
            return None
        rel = path[len(self._root_prefix) :].replace(os.sep, "/")
        parts = rel.split("/")
        if any(part in ALWAYS_SKIPPED_DIRS for part in parts):
            return None
        if rel in CONFIG_FILES or parts[-1] == ".gitignore":
            return rel
        for depth in range(1, len(parts)):
            if self.rules.dir_reason("/".join(parts[:depth])) is not None:
                return None
        return None if self.rules.name_reason(rel) is not None else rel

    def __call__(self, _change: object, path: str) -> bool:
        return self.relative(path) is not None

    def drop_ignored(self, paths: set[str]) -> set[str]:
        """``paths`` less those git ignores (tracked files are never ignored)."""
        if not self.is_git or not paths:
            return paths
        try:
            proc = subprocess.run(
                ["git", "-c", "core.quotePath=false", "check-ignore", "-z", "--stdin"],
                cwd=self.root,
                input="\0".join(sorted(paths)).encode("utf-8", "surrogateescape"),
                capture_output=True,
                check=False,
            )
        except OSError:
            return paths
        if proc.returncode not in (0, 1):  # 1: none ignored; else git failed: keep all
            return paths
        ignored = set(proc.stdout.decode("utf-8", "surrogateescape").split("\0"))
        return paths - ignored

    def git_busy(self) -> bool:
        """Is git changing the work tree right now (checkout, merge, rebase step)?"""
        return self.git_lock is not None and self.git_lock.exists()


def _git(root: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    except OSError:
        return None
    return proc.stdout if proc.returncode == 0 else None


class _Inbox:
    """Changed paths gathered by the watcher thread, taken by the main loop."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.paths: set[str] = set()
        self.first = self.last = 0.0
        self.ready = threading.Event()
        self.error: BaseException | None = None

    def put(self, paths: Iterable[str]) -> None:
        items = set(paths)
        if not items:
            return
        with self.cond:
            now = time.monotonic()
            self.paths |= items
            self.first = self.first or now
            self.last = now
            self.cond.notify_all()

    def pending(self) -> bool:
        with self.cond:
            return bool(self.paths)

    def quiet_for(self) -> float:
        with self.cond:
            return time.monotonic() - self.last if self.last else float("inf")

    def take(self, options: WatchOptions, busy: Callable[[], bool]) -> set[str]:
        """The batch when it is quiet and git is idle (or it waited ``max_wait``), else
        an empty set."""
        with self.cond:
            self.cond.wait(POLL_SECONDS)
            if not self.paths:
                return set()
            now = time.monotonic()
            overdue = now - self.first >= options.max_wait
            if not overdue and (now - self.last < options.settle or busy()):
                return set()
            batch, self.paths, self.first = self.paths, set(), 0.0
            return batch


class Watcher:
    """One ``watch`` session over an open, writable index (see the module docstring)."""

    def __init__(
        self,
        index: Updatable,
        options: WatchOptions | None = None,
        *,
        on_update: Callable[[UpdateLog], None] | None = None,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.index, self.options = index, options or WatchOptions()
        self.on_update = on_update or (lambda _log: None)
        self.on_wait = on_wait
        self.filter = PathFilter(index)
        self.inbox = _Inbox()
        self.summary = WatchSummary()
        self._closing = threading.Event()

    def run(
        self, stop: threading.Event, on_ready: Callable[[], None] | None = None
    ) -> WatchSummary:
        """Index what changed since the last run, call ``on_ready``, then follow changes
        until ``stop`` is set."""
        thread = threading.Thread(target=self._listen, name="codecite-watch", daemon=True)
        thread.start()
        try:
            if not self.inbox.ready.wait(START_TIMEOUT) or self.inbox.error is not None:
                raise _start_error(self.inbox.error)
            self._keyword(0)
            vectors_due = self.options.embed
            if on_ready is not None:
                on_ready()
            while not stop.is_set():
                if self.inbox.error is not None:
                    raise _start_error(self.inbox.error)
                batch = self.inbox.take(self.options, self.filter.git_busy)
                if batch & CONFIG_FILES:
                    self._reload_rules()
                if batch:
                    self._keyword(len(batch))
                    vectors_due = self.options.embed
                elif vectors_due and self._quiet(self.options.embed_delay):
                    vectors_due = self._vectors(stop)
        finally:
            self._closing.set()
            thread.join(timeout=5)
        return self.summary

    # --- the watcher thread ----------------------------------------------------
    def _listen(self) -> None:
        from watchfiles import watch as watch_files

        try:
            for changes in watch_files(
                self.index.root,
                watch_filter=self.filter,
                debounce=RAW_DEBOUNCE_MS,
                step=RAW_STEP_MS,
                stop_event=self._closing,
                rust_timeout=200,
                yield_on_timeout=True,
            ):
                self.inbox.ready.set()
                rels = {self.filter.relative(path) for _change, path in changes}
                self.inbox.put(self.filter.drop_ignored({r for r in rels if r is not None}))
        except Exception as exc:  # the watcher failed (too many folders to watch, ...)
            self.inbox.error = exc
        finally:
            self.inbox.ready.set()
            with self.inbox.cond:
                self.inbox.cond.notify_all()

    # --- updates ---------------------------------------------------------------
    def _quiet(self, seconds: float) -> bool:
        """No batch waiting, and no change for ``seconds``."""
        return not self.inbox.pending() and self.inbox.quiet_for() >= seconds

    def _reload_rules(self) -> None:
        """A config file changed: read the config and the walker's rules again (a file
        being edited may be invalid for a moment: the old config stays until it is not)."""
        try:
            self.index.config = load_config(self.index.root, overrides=self.options.overrides)
        except ConfigError as exc:
            log.warning("%s; keeping the previous settings", exc)
            return
        self.filter.rules = _Rules.for_root(self.index.root, self.index.config)

    def _keyword(self, paths: int) -> None:
        started = time.perf_counter()
        report = self.index.update(embed=False, on_wait=self.on_wait)
        self._report(UpdateLog("index", time.time(), paths, report, _since(started)))

    def _vectors(self, stop: threading.Event) -> bool:
        """Embed what is missing; True when vectors are still due (interrupted)."""
        preempted = False

        def on_progress(event: Progress) -> None:
            nonlocal preempted
            if event.stage == "embed" and (stop.is_set() or self.inbox.pending()):
                preempted = True
                raise _Preempted

        started = time.perf_counter()
        try:
            report = self.index.update(on_progress=on_progress, on_wait=self.on_wait)
        except Interrupted as exc:
            if not preempted:
                raise
            self._report(UpdateLog("vectors", time.time(), 0, exc.report, _since(started), True))
            return True
        except EmbeddingError as exc:
            log.warning("embedding failed: %s", exc)
            error = UpdateLog("vectors", time.time(), 0, IndexReport("", ""), 0.0, error=str(exc))
            self._report(error)
            return False
        if report.embedded or report.changed:
            self._report(UpdateLog("vectors", time.time(), 0, report, _since(started)))
        self.summary.pending = report.embed_pending
        return False

    def _report(self, entry: UpdateLog) -> None:
        s = self.summary
        if entry.stage == "index":
            s.updates += bool(entry.files)
            s.files += entry.files
            s.chunks += entry.chunks
        else:
            s.embedded += entry.report.embedded
        if not entry.error:
            s.pending = entry.report.embed_pending
        self.on_update(entry)


def _since(started: float) -> float:
    return time.perf_counter() - started


def _start_error(exc: BaseException | None) -> UserError:
    detail = f": {exc}" if exc is not None else ""
    return UserError(
        f"could not watch the files{detail}. On Linux, raise the limit of watched folders "
        "(sysctl fs.inotify.max_user_watches=524288), or set WATCHFILES_FORCE_POLLING=1"
    )


def watch(
    index: Updatable,
    stop: threading.Event,
    options: WatchOptions | None = None,
    *,
    on_update: Callable[[UpdateLog], None] | None = None,
    on_ready: Callable[[], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> WatchSummary:
    """Follow the files of ``index``'s repository until ``stop`` is set (a signal
    handler sets it), keeping the index up to date; see :class:`Watcher`."""
    watcher = Watcher(index, options, on_update=on_update, on_wait=on_wait)
    return watcher.run(stop, on_ready)
