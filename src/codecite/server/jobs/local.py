"""Re-index jobs started through the API (``POST /api/v1/repos/{repo}/reindex``): one
background thread per job, a numbered record per job, at most one running job per
repository (the index's own writer lock would make a second one wait anyway).

A running job leaves a marker (:data:`MARKER`) in its index folder, removed when it
ends: a job killed with the server (kill -9, a crash, a reboot) still has one when the
server starts again, which resumes it (:meth:`Jobs.resume`: an incremental run does
what is left, embeddings included), so an index is never left half-built. The resumed
job keeps the id the marker names, so the status URL the re-index request returned
still answers after the restart (``resumed`` says it was)."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from codecite import open_index

from ..config import RepoConfig
from ..refresh import update_clone

#: The name its messages had before the module moved (issue 22): the logs read the same.
log = logging.getLogger("codecite.server.jobs")

#: The marker of a running job in its index folder (see the module's docstring).
MARKER = "server-job.json"
#: A job id (12 hex characters), as a marker may name one.
JOB_ID = re.compile(r"[0-9a-f]{12}")


@dataclass
class Job:
    id: str
    repo: str
    status: str = "queued"  # queued, running, done, failed
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    #: What the run did (files changed, chunks written, embedded), when done.
    summary: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    #: Started again by a new server process after the one that ran it stopped.
    resumed: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Jobs:
    """Re-index jobs of one server process."""

    #: Finished jobs kept for status look-ups.
    KEEP = 200

    def __init__(self, overrides: dict[str, object] | None = None) -> None:
        self.overrides = dict(overrides or {})
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def start(self, repo: RepoConfig, *, full: bool = False, pull: bool = False) -> Job:
        """A job re-indexing ``repo`` (incrementally), or the one already running. With
        ``pull``, the clone is first fast-forwarded to its configured branch."""
        return self._start(repo, Job(uuid.uuid4().hex[:12], repo.name), full, pull)

    def _start(self, repo: RepoConfig, new: Job, full: bool, pull: bool) -> Job:
        with self._lock:
            for job in self._jobs.values():
                if job.repo == repo.name and job.status in ("queued", "running"):
                    return job
            job = new
            self._jobs[job.id] = job
            self._trim()
        threading.Thread(
            target=self._run,
            args=(job, repo, full, pull),
            daemon=True,
            name=f"codecite-reindex-{repo.name}",
        ).start()
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def resume(self, repos: Iterable[RepoConfig]) -> list[Job]:
        """Start again the jobs a previous server process left unfinished (their marker
        is still there): an incremental run completes what the killed one began."""
        resumed = []
        for repo in repos:
            marker = repo.index / MARKER
            if not marker.is_file():
                continue
            try:
                left = json.loads(marker.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                left = {}
            log.warning(
                "resuming the re-index of %s that job %s began at %s and did not finish "
                "(the server stopped during it)",
                repo.name,
                left.get("job", "?"),
                time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(left.get("started_at", 0))),
            )
            resumed.append(self._start(repo, _resumed_job(repo.name, left), False, False))
        return resumed

    def _run(self, job: Job, repo: RepoConfig, full: bool, pull: bool) -> None:
        job.status, job.started_at = "running", time.time()
        marker = repo.index / MARKER
        try:
            marker.write_text(
                json.dumps({"job": job.id, "full": full, "started_at": job.started_at}),
                encoding="utf-8",
            )
        except OSError as exc:  # the run itself will say what is wrong with the folder
            log.warning("cannot write the job marker %s: %s", marker, exc)
        try:
            if pull and repo.branch:
                old, new = update_clone(repo)
                job.summary["commits"] = {"before": old, "after": new}
            overrides = {"repo_name": repo.name, **self.overrides}
            with open_index(repo.path, index_dir=repo.index, overrides=overrides) as index:
                report = index.update(full=full)
            job.summary |= {
                "files_seen": report.files_seen,
                "changed": report.changed,
                "chunks_written": report.chunks_written,
                "embedded": report.embedded,
                "embed_pending": report.embed_pending,
                "seconds": report.seconds,
            }
            job.status = "done"
        except Exception as exc:  # reported through the job's status, not raised
            job.status, job.error = "failed", str(exc) or type(exc).__name__
        finally:
            job.finished_at = time.time()
            marker.unlink(missing_ok=True)

    def _trim(self) -> None:
        done = [j for j in self._jobs.values() if j.status in ("done", "failed")]
        for job in sorted(done, key=lambda j: j.created_at)[: max(0, len(done) - self.KEEP)]:
            del self._jobs[job.id]


def _resumed_job(repo: str, marker: dict[str, Any]) -> Job:
    """The job a marker names, to run again under its id (a new id if it names none)."""
    job_id = str(marker.get("job", ""))
    started = marker.get("started_at")
    return Job(
        job_id if JOB_ID.fullmatch(job_id) else uuid.uuid4().hex[:12],
        repo,
        created_at=float(started) if isinstance(started, int | float) else time.time(),
        resumed=True,
    )
