"""The model tier in the background (issue 23): ``codecite index`` returns once the
keyword index, the graph and the static vectors are committed, and one detached
worker process per index computes the model's vectors::

    index run (writer lock) ─► start_worker ─► python -m codecite.index.background ROOT DIR CONFIG
                                                 │ holds embed.lock for its life
                                                 ▼
            fill_model_tier(shared=True): compute without the writer lock, write each
            batch under it ─► export the vectors snapshot ─► exit

Files in the index folder: ``embed.lock`` (an OS lock the worker holds while it
lives, so at most one runs per index; the OS releases it however the worker ends,
``kill -9`` included; it holds the worker's pid), ``embed.json`` (its progress,
rewritten atomically: :func:`read_state`, shown by ``codecite status``) and
``embed.log`` (its output). :func:`stop_worker` (SIGTERM, SIGKILL after a grace
period) is ``codecite index --stop``, and every run that embeds or rebuilds calls it
first, so a worker never competes with the run that replaces it. A stopped or killed
worker loses at most its batch in flight (whose vectors are in the embedding cache
already); the next ``codecite index`` starts a worker for what is left.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..store.locking import holder

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no background worker
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from ..config import Config
    from ..progress import Progress
    from ..store.protocols import Store

log = logging.getLogger(__name__)

WORKER_LOCK_NAME = "embed.lock"
STATE_NAME = "embed.json"
LOG_NAME = "embed.log"
#: ``embed.log`` is emptied when a worker starts past this size.
LOG_MAX_BYTES = 1 << 20
#: Seconds a worker gets to stop after SIGTERM (it stops after its embedding batch in
#: flight, ~32 chunks) before it is killed.
STOP_GRACE_SECONDS = 30.0
#: How long a new worker retries its lock (a status probe may hold it for a moment).
LOCK_RETRY_SECONDS = 2.0
#: A worker started this recently may not hold its lock yet (Python is starting).
START_SECONDS = 60.0
#: Seconds between two progress writes.
STATE_EVERY_SECONDS = 1.0
#: The worker's scheduling priority: queries and the user's work come first.
WORKER_NICENESS = 10
#: Starts the worker in a new session and prints its pid: the caller waits for this
#: launcher only, so the worker is nobody's child (no zombie in a long-lived caller).
_LAUNCHER = (
    "import subprocess, sys; print(subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, "
    "stdout=2, stderr=2, start_new_session=True).pid)"
)


@dataclass
class EmbeddingState:
    """The background worker of an index, as ``codecite status`` shows it.

    ``state``: "" (none ever ran), ``starting``, ``running``, ``done``, ``stopped``
    (asked to), ``failed`` (``error`` says why) or ``died`` (it ended without saying:
    killed, or the machine went down). Counts are of this worker's run."""

    state: str = ""
    pid: int = 0
    embedder: str = ""
    started_at: float = 0.0
    updated_at: float = 0.0
    #: Vectors written (model + embedding cache), of ``total`` chunks to embed.
    embedded: int = 0
    total: int = 0
    computed: int = 0
    from_cache: int = 0
    error: str = ""
    log: str = ""

    @property
    def running(self) -> bool:
        return self.state in ("starting", "running")

    @property
    def rate(self) -> float:
        """Chunks a second since the worker started."""
        seconds = self.updated_at - self.started_at
        return self.embedded / seconds if self.embedded and seconds > 0 else 0.0

    @property
    def eta_seconds(self) -> float:
        left = max(0, self.total - self.embedded)
        return left / self.rate if self.rate and self.running else 0.0

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.update(running=self.running, rate=self.rate, eta_seconds=self.eta_seconds)
        return data


def supported() -> bool:
    """Background workers need POSIX sessions and advisory locks."""
    return os.name == "posix" and fcntl is not None


# --- state ---------------------------------------------------------------------
def _write_state(folder: Path, state: EmbeddingState) -> None:
    state.updated_at = time.time()
    target = folder / STATE_NAME
    tmp = target.with_name(f"{STATE_NAME}.tmp{os.getpid()}")
    try:
        tmp.write_text(json.dumps(dataclasses.asdict(state)), encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:  # progress is a nicety: never stop embedding for it
        log.warning("cannot write %s: %s", target, exc)
        tmp.unlink(missing_ok=True)


def _read_file(folder: Path) -> EmbeddingState:
    try:
        data = json.loads((folder / STATE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return EmbeddingState()
    state = EmbeddingState()
    if not isinstance(data, dict):
        return state
    for name, default in dataclasses.asdict(state).items():
        value = data.get(name)
        with contextlib.suppress(TypeError, ValueError):  # a damaged file: keep defaults
            if value is not None:
                setattr(state, name, type(default)(value))
    return state


def read_state(folder: Path) -> EmbeddingState:
    """The background worker of the index in ``folder``: what it last wrote, with
    ``state`` corrected by whether it holds its lock (a worker that was killed never
    says so)."""
    state = _read_file(folder)
    pid = worker_pid(folder)
    if pid:
        if not state.running:  # a new worker, before its first write
            state = EmbeddingState("starting", pid)
        return state
    if state.running:
        again = _read_file(folder)  # it may have finished between the two reads
        if again.running and not (
            again.state == "starting" and time.time() - again.updated_at < START_SECONDS
        ):
            again.state = "died"
        return again
    return state


# --- the lock ------------------------------------------------------------------
def worker_pid(folder: Path) -> int:
    """The pid of the worker holding the index's worker lock; 0 when none does."""
    if fcntl is None:  # pragma: no cover
        return 0
    path = folder / WORKER_LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # no worker ever ran here
        return 0
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder_pid(path)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return 0
    finally:
        os.close(fd)


def _holder_pid(path: Path) -> int:
    """The pid a lock holder wrote (it writes it right after taking the lock)."""
    deadline = time.monotonic() + 1.0
    while True:
        text = holder(path)
        if text.isdigit() or time.monotonic() > deadline:
            return int(text) if text.isdigit() else -1
        time.sleep(0.02)


@contextlib.contextmanager
def _worker_lock(folder: Path) -> Iterator[bool]:
    """Hold the worker lock (True), retrying for a moment; False when another worker
    holds it."""
    assert fcntl is not None
    path = folder / WORKER_LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + LOCK_RETRY_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    yield False
                    return
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        try:
            yield True
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# --- start and stop --------------------------------------------------------------
def start_worker(root: Path, folder: Path, config: Config) -> int:
    """Start the index's background worker (detached: it outlives this process) with
    exactly ``config``; returns its pid. It exits at once if another holds the lock."""
    argv = [
        sys.executable,
        "-m",
        "codecite.index.background",
        str(root),
        str(folder),
        json.dumps(config.settings()),
    ]
    log_path = folder / LOG_NAME
    with contextlib.suppress(OSError):
        if log_path.stat().st_size > LOG_MAX_BYTES:
            os.truncate(log_path, 0)
    _write_state(folder, EmbeddingState("starting", log=str(log_path)))
    with log_path.open("ab") as output:
        launched = subprocess.run(
            [sys.executable, "-c", _LAUNCHER, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=output,
            timeout=60,
            check=False,
        )
    pid = launched.stdout.decode("ascii", "replace").strip()
    if launched.returncode or not pid.isdigit():
        _write_state(folder, EmbeddingState("failed", error="could not start", log=str(log_path)))
        raise OSError(f"could not start the background worker (see {log_path})")
    state = _read_file(folder)
    if state.state == "starting" and not state.pid:  # the worker has not written yet
        state.pid = int(pid)
        _write_state(folder, state)
    return int(pid)


def _starting_pid(folder: Path) -> int:
    """The pid of a worker launched moments ago that does not hold its lock yet."""
    state = _read_file(folder)
    recent = time.time() - state.updated_at < START_SECONDS
    if state.state == "starting" and state.pid and recent and _is_worker(state.pid):
        return state.pid
    return 0


def _is_worker(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) background worker process."""
    proc = Path("/proc") / str(pid)
    if not proc.parent.is_dir():  # no /proc: ask the kernel only
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    try:
        stat = (proc / "stat").read_text(encoding="ascii", errors="replace")
        command = (proc / "cmdline").read_bytes()
    except OSError:
        return False
    return (
        stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")
        and b"codecite.index.background" in command
    )


def stop_worker(folder: Path, grace: float = STOP_GRACE_SECONDS) -> int:
    """Stop the index's background worker, if one runs or is starting: SIGTERM (it
    stops after its batch in flight), SIGKILL after ``grace`` seconds. Returns its pid
    (0: none ran)."""
    pid = worker_pid(folder) or _starting_pid(folder)
    if pid <= 0:
        return 0
    log.info("stopping the background embedding of %s (pid %d)", folder, pid)

    def gone() -> bool:
        return not worker_pid(folder) and not _is_worker(pid)

    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):  # gone (or in another pid namespace)
            os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while not gone() and time.monotonic() < deadline:
            time.sleep(0.05)
        if gone():
            if sig == signal.SIGKILL or _read_file(folder).state == "starting":
                _write_state(folder, dataclasses.replace(_read_file(folder), state="stopped"))
            return pid
    raise UserError(
        f"the background embedding (pid {pid}) of {folder} did not stop; stop it "
        f"(`kill {pid}`, as the user running it) and run the command again"
    )


# --- the worker ----------------------------------------------------------------------
def run_worker(root: Path, folder: Path, settings: dict[str, Any]) -> int:
    """The worker process: embed what the index lacks, then exit (0 done or stopped,
    1 failed). ``settings``: every config value of the run that started it."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(WORKER_NICENESS)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda _signum, _frame: stop.set())
    with _worker_lock(folder) as held:
        if not held:
            log.info("another background worker holds %s; nothing to do", folder)
            return 0
        state = EmbeddingState("running", os.getpid(), started_at=time.time())
        state.log = str(folder / LOG_NAME)
        try:
            from ..config import load_config
            from ..store import open_repository_store

            # the store the run wrote: its folder, or the shared database of its settings
            config = load_config(root, overrides=settings)
            repo = config.repo_name or root.name
            with closing(open_repository_store(config.store, repo, folder)) as store:
                _embed_all(store, config, folder, state, stop.is_set)
        except Exception as exc:
            log.exception("background embedding failed")
            state.state, state.error = "failed", str(exc) or type(exc).__name__
            _write_state(folder, state)
            return 1
        return 0


def _embed_all(
    store: Store,
    config: Config,
    folder: Path,
    state: EmbeddingState,
    should_stop: Callable[[], bool],
) -> None:
    from ..embed import get_embedder
    from .model_stage import ModelCounts, StopRequested, fill_model_tier, prepare_model_tier

    embedder = get_embedder(config.embed.embedder, config)
    with store.writer_lock():
        prepare_model_tier(store, embedder, config)
    state.embedder, state.total = embedder.name, store.count_missing_vectors()
    _write_state(folder, state)
    counts, last = ModelCounts(), [0.0]

    def on_progress(event: Progress) -> None:
        if event.stage != "embed":
            return
        # the first computed vectors are shown at once (a small index can finish its
        # whole batch within STATE_EVERY_SECONDS); later ones at most once a period
        first = event.done > 0 and state.embedded == 0
        if not first and time.monotonic() - last[0] < STATE_EVERY_SECONDS:
            return
        last[0] = time.monotonic()
        state.embedded, state.total = event.done, max(state.total, event.total)
        state.computed, state.from_cache = counts.computed, counts.from_cache
        _write_state(folder, state)

    log.info("embedding %d chunks with %s", state.total, embedder.name)
    try:
        fill_model_tier(
            store, embedder, config, counts, on_progress, shared=True, should_stop=should_stop
        )
        state.state = "done"
    except StopRequested:
        state.state = "stopped"
    with store.writer_lock():
        store.export_vectors(embedder.dim)
    state.embedded, state.computed, state.from_cache = (
        counts.embedded,
        counts.computed,
        counts.from_cache,
    )
    log.info(
        "%s: %d vectors (%d computed, %d from the cache); %d chunks still without one",
        state.state,
        counts.embedded,
        counts.computed,
        counts.from_cache,
        store.count_missing_vectors(),
    )
    _write_state(folder, state)


def main(argv: list[str] | None = None) -> int:
    """``python -m codecite.index.background ROOT INDEX_DIR CONFIG_JSON`` (what
    :func:`start_worker` runs)."""
    root, folder, settings = argv if argv is not None else sys.argv[1:]
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s [%(process)d] %(levelname)s %(name)s: %(message)s",
    )
    return run_worker(Path(root), Path(folder), json.loads(settings))


if __name__ == "__main__":
    sys.exit(main())
