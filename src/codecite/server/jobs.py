"""Re-index jobs started through the API (``POST /api/v1/repos/{repo}/reindex``): one
background thread per job, a numbered record per job, at most one running job per
repository (the index's own writer lock would make a second one wait anyway)."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from ..api import open_index
from .config import RepoConfig
from .refresh import update_clone


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
        with self._lock:
            for job in self._jobs.values():
                if job.repo == repo.name and job.status in ("queued", "running"):
                    return job
            job = Job(uuid.uuid4().hex[:12], repo.name)
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

    def _run(self, job: Job, repo: RepoConfig, full: bool, pull: bool) -> None:
        job.status, job.started_at = "running", time.time()
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

    def _trim(self) -> None:
        done = [j for j in self._jobs.values() if j.status in ("done", "failed")]
        for job in sorted(done, key=lambda j: j.created_at)[: max(0, len(done) - self.KEEP)]:
            del self._jobs[job.id]
