"""The re-index job queue's tables in PostgreSQL (docs/DESIGN.md §13): the jobs are
`procrastinate <https://procrastinate.readthedocs.io>`_'s (its schema, ``procrastinate_*``,
applied here once); what a worker's run did (worker, timings, counts, error) is in
``codecite_job_runs``, for the jobs API. Both are in the database of the server's
``store``, beside (not in) the index's schema. The queue's logic is the server's
(:mod:`codecite.server.jobs.queue`); this module holds its SQL.

psycopg is imported when used.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: Advisory-lock key under which the queue's schema is created (once, under concurrency).
SCHEMA_LOCK = 0x636F646563697465  # "codecite"
RUNS_TABLE = """
CREATE TABLE IF NOT EXISTS codecite_job_runs (
    job_id bigint PRIMARY KEY,
    repo text NOT NULL,
    worker text NOT NULL,
    started_at double precision NOT NULL,
    finished_at double precision,
    summary jsonb NOT NULL DEFAULT '{}'::jsonb,
    error text NOT NULL DEFAULT ''
)
"""


def open_job_runs(url: str) -> JobRuns:
    """The job queue's tables in the database at ``url``."""
    return JobRuns(url)


class JobRuns:
    """The queue's schema and the runs' records in the database at ``url``: one short
    connection per call (a worker records a run's start and end; the server looks one
    up per request)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def ensure_schema(self, queue_schema: Callable[[], str]) -> None:
        """Create the queue's schema (``queue_schema()``: procrastinate's SQL) and the
        runs table unless present (idempotent; safe when several servers and workers
        start at once)."""
        import psycopg

        with psycopg.connect(self.url) as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if row is None or row[0] is None:
                conn.execute(queue_schema())
            conn.execute(RUNS_TABLE)

    def started(self, job_id: int, repo: str, worker: str, started_at: float) -> None:
        """Record that ``worker`` began the job (again, when it was retried)."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO codecite_job_runs (job_id, repo, worker, started_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (job_id) DO UPDATE SET worker = "
                "EXCLUDED.worker, started_at = EXCLUDED.started_at, finished_at = NULL",
                (job_id, repo, worker, started_at),
            )

    def finished(
        self, job_id: int, finished_at: float, summary: dict[str, Any], error: str
    ) -> None:
        """Record the end of the job's run: what it did, or its error."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(
                "UPDATE codecite_job_runs SET finished_at = %s, summary = %s, error = %s "
                "WHERE job_id = %s",
                (finished_at, json.dumps(summary), error, job_id),
            )

    def lookup(self, job_id: int) -> tuple[float | None, tuple[Any, ...] | None]:
        """When the job was queued (epoch seconds; None when unknown) and its run's
        record ``(worker, started_at, finished_at, summary, error)`` (None: not run)."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            deferred = conn.execute(
                "SELECT extract(epoch FROM min(at)) FROM procrastinate_events "
                "WHERE job_id = %s AND type = 'deferred'",
                (job_id,),
            ).fetchone()
            row = conn.execute(
                "SELECT worker, started_at, finished_at, summary, error "
                "FROM codecite_job_runs WHERE job_id = %s",
                (job_id,),
            ).fetchone()
        queued = float(deferred[0]) if deferred is not None and deferred[0] is not None else None
        return queued, (tuple(row) if row is not None else None)
