"""Re-index jobs through a job queue in PostgreSQL (docs/DESIGN.md §13): when the server's
``store`` is a ``postgresql://`` URL, ``codecite serve`` defers jobs into the
`procrastinate <https://procrastinate.readthedocs.io>`_ queue in that database and any
number of ``codecite worker`` processes, on any machines that see the repositories'
checkouts, run them into the shared store.

One task, ``codecite.reindex``, deferred with ``lock = queueing_lock = repo``: at most one
job per repository runs at a time (procrastinate's ``lock``), and at most one waits (its
``queueing_lock``; deferring a duplicate returns the waiting job). Procrastinate keeps
the job's status; what a run did (worker, timings, counts, error) is written by the
worker into ``codecite_job_runs`` for the jobs API. The store holds the SQL of both
(:func:`codecite.open_job_runs`).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codecite import open_job_runs

from ..config import RepoConfig
from .local import Job

if TYPE_CHECKING:
    import procrastinate

#: The name its messages had before the module moved (issue 22): the logs read the same.
log = logging.getLogger("codecite.server.queue")

TASK = "codecite.reindex"
QUEUE = "codecite"
#: Workers' own upkeep (periodic, deferred once per tick whatever the number of workers):
#: re-queue re-index jobs of a worker that died (no heartbeat), drop old job rows.
MAINTENANCE_QUEUE = "codecite-maintenance"
RETRY_TASK = "codecite.retry_stalled"
CLEANUP_TASK = "codecite.cleanup"
#: Seconds without a heartbeat after which a worker counts as dead and its jobs re-run.
STALLED_AFTER_S = 30.0
#: Finished re-index jobs are kept this long for the jobs API; maintenance jobs 1 hour.
KEEP_HOURS = 7 * 24
#: procrastinate's status → the jobs API's (as :class:`codecite.server.jobs.Job`).
STATUS = {
    "todo": "queued",
    "doing": "running",
    "succeeded": "done",
    "failed": "failed",
    "cancelled": "failed",
    "aborting": "running",
    "aborted": "failed",
}
POSTGRES_EXTRA = "pip install 'codecite[postgres]'"


def _check_installed() -> None:
    try:
        import procrastinate  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the postgres extra installs it
        from codecite.errors import UserError

        raise UserError(f"the PostgreSQL job queue needs procrastinate: {POSTGRES_EXTRA}") from exc


def ensure_schema(url: str) -> None:
    """Create procrastinate's schema and the runs table unless present (idempotent; safe
    when several servers and workers start at once)."""
    from procrastinate.schema import SchemaManager

    open_job_runs(url).ensure_schema(SchemaManager.get_schema)


def build_app(
    url: str,
    *,
    worker: bool = False,
    overrides: dict[str, Any] | None = None,
    repos: dict[str, RepoConfig] | None = None,
    stalled_after: float = STALLED_AFTER_S,
) -> procrastinate.App:
    """The procrastinate app on ``url`` with the ``reindex`` task: with ``worker`` an
    async connector (for :meth:`App.run_worker`), else a synchronous one (to defer and
    look jobs up from a server's threads). ``overrides`` (codecite settings) and
    ``repos`` (checkouts by name, overriding the job's paths) apply when a worker runs
    a job."""
    _check_installed()
    import procrastinate as lib

    connector: lib.PsycopgConnector | lib.SyncPsycopgConnector = (
        lib.PsycopgConnector(conninfo=url, min_size=1, max_size=4)
        if worker
        else lib.SyncPsycopgConnector(conninfo=url, min_size=1, max_size=4)
    )
    app = lib.App(connector=connector)
    settings = dict(overrides or {})
    local = dict(repos or {})

    @app.task(name=TASK, queue=QUEUE, pass_context=True)
    def reindex(
        context: Any,
        repo: str,
        path: str,
        index: str = "",
        branch: str = "",
        full: bool = False,
        pull: bool = False,
    ) -> None:
        config = local.get(repo) or RepoConfig(
            repo, Path(path), Path(index) if index else Path(path) / ".codecite", branch
        )
        name = context.worker_name or "worker"
        run_reindex(url, context.job.id, name, config, full, pull, settings)

    if worker:
        every = max(1, min(59, int(stalled_after // 2)))

        @app.periodic(cron=f"* * * * * */{every}", periodic_id="stalled")
        @app.task(name=RETRY_TASK, queue=MAINTENANCE_QUEUE, queueing_lock=RETRY_TASK)
        async def retry_stalled(timestamp: int) -> None:
            stalled = await app.job_manager.get_stalled_jobs(
                task_name=TASK, seconds_since_heartbeat=stalled_after
            )
            for job in stalled:
                log.warning("job %s (%s): its worker died; queued again", job.id, job.lock)
                await app.job_manager.retry_job(job)

        @app.periodic(cron="17 * * * *", periodic_id="cleanup")
        @app.task(name=CLEANUP_TASK, queue=MAINTENANCE_QUEUE, queueing_lock=CLEANUP_TASK)
        async def cleanup(timestamp: int) -> None:
            await app.job_manager.delete_old_jobs(KEEP_HOURS, queue=QUEUE, include_failed=True)
            await app.job_manager.delete_old_jobs(1, queue=MAINTENANCE_QUEUE, include_failed=True)

    return app


def run_reindex(
    url: str,
    job_id: int,
    worker: str,
    repo: RepoConfig,
    full: bool,
    pull: bool,
    overrides: dict[str, Any],
) -> dict[str, Any]:
    """Index ``repo`` incrementally into the shared store at ``url``, recording the run
    in ``codecite_job_runs``; raises (failing the job) on errors."""
    from codecite import open_index

    from ..refresh import update_clone

    runs = open_job_runs(url)
    started = time.time()
    runs.started(job_id, repo.name, worker, started)
    log.warning("job %s: re-indexing %s at %s on %s", job_id, repo.name, repo.path, worker)
    summary: dict[str, Any] = {}
    error = ""
    try:
        if pull and repo.branch:
            old, new = update_clone(repo)
            summary["commits"] = {"before": old, "after": new}
        settings = {"repo_name": repo.name, **overrides, "store": url}
        with open_index(repo.path, index_dir=repo.index, overrides=settings) as index:
            report = index.update(full=full)
        summary |= {
            "files_seen": report.files_seen,
            "changed": report.changed,
            "chunks_written": report.chunks_written,
            "embedded": report.embedded,
            "embed_pending": report.embed_pending,
            "seconds": report.seconds,
        }
        return summary
    except Exception as exc:
        error = str(exc) or type(exc).__name__
        raise
    finally:
        runs.finished(job_id, time.time(), summary, error)
        log.warning("job %s: %s %s", job_id, repo.name, "failed: " + error if error else "done")


def worker_name() -> str:
    """A default worker name: host and process id."""
    return f"{socket.gethostname()}-{os.getpid()}"


class QueueJobs:
    """The server's re-index jobs in the PostgreSQL queue: the same calls as
    :class:`codecite.server.jobs.Jobs` (``start``, ``get``), run by ``codecite worker``."""

    def __init__(self, url: str, overrides: dict[str, object] | None = None) -> None:
        self.url = url
        self.overrides = dict(overrides or {})
        self._app: procrastinate.App | None = None
        self._lock = threading.Lock()

    @property
    def app(self) -> procrastinate.App:
        """The procrastinate app, opened (and the queue's schema applied) on first use;
        the server opens it at start."""
        with self._lock:
            if self._app is None:
                ensure_schema(self.url)
                self._app = build_app(self.url).open()
            return self._app

    def start(self, repo: RepoConfig, *, full: bool = False, pull: bool = False) -> Job:
        """Queue a re-index of ``repo``; a job already waiting for it is returned
        instead of a second one."""
        from procrastinate.exceptions import AlreadyEnqueued

        task = self.app.tasks[TASK]
        kwargs: dict[str, Any] = {
            "repo": repo.name,
            "path": str(repo.path),
            "index": str(repo.index),
            "branch": repo.branch,
            "full": full,
            "pull": pull,
        }
        try:
            job_id = task.configure(lock=repo.name, queueing_lock=repo.name).defer(**kwargs)
        except AlreadyEnqueued:
            waiting = self.app.job_manager.list_jobs(queueing_lock=repo.name, status="todo")
            if not waiting:  # taken by a worker meanwhile: queue again
                return self.start(repo, full=full, pull=pull)
            job_id = waiting[0].id or 0
        found = self.get(str(job_id))
        return found or Job(str(job_id), repo.name)

    def get(self, job_id: str) -> Job | None:
        """The job's status from procrastinate, with the run's record when it ran."""
        if not job_id.isdigit():
            return None
        found = self.app.job_manager.list_jobs(id=int(job_id), task=TASK)
        if not found:
            return None
        queued = found[0]
        job = Job(str(job_id), str(queued.task_kwargs.get("repo", "")))
        job = replace(job, status=STATUS.get(str(queued.status), str(queued.status)))
        deferred, row = open_job_runs(self.url).lookup(int(job_id))
        if deferred is not None:
            job.created_at = deferred
        if row is not None:
            worker, started, finished, summary, error = row
            job = replace(
                job,
                started_at=started,
                finished_at=finished,
                summary={**(summary or {}), "worker": worker},
                error=error or "",
            )
        return job

    def close(self) -> None:
        if self._app is not None:
            self._app.close()
            self._app = None
