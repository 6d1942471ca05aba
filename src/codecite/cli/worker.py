"""``codecite worker``: take re-index jobs from the PostgreSQL job queue (docs/DESIGN.md §13)
and run them into the shared store. Run one per machine (or more) to scale out; every
machine must see the repositories' checkouts at the paths the jobs (or ``--config``)
name."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated

import typer

from ..errors import UserError
from ._shared import app, err


@app.command()
def worker(
    store: Annotated[
        str,
        typer.Option(
            "--store",
            help="The shared store: postgresql://USER@HOST/DB (default: $CODECITE_STORE, "
            "or the config's store).",
        ),
    ] = "",
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="A server configuration: its codecite settings apply to every job, its "
            "repositories' paths replace the ones a job names (checkouts at other paths on "
            "this machine).",
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", min=1, max=64, help="Jobs run at once (different repositories)."
        ),
    ] = 1,
    name: Annotated[
        str, typer.Option("--name", help="This worker's name in logs and job records.")
    ] = "",
    stalled_after: Annotated[
        float,
        typer.Option(
            "--stalled-after",
            min=1.0,
            help="Seconds without a heartbeat after which a worker counts as dead and its "
            "running job is queued again.",
        ),
    ] = 30.0,
    once: Annotated[
        bool,
        typer.Option("--once", help="Stop when the queue is empty instead of waiting."),
    ] = False,
) -> None:
    """Run re-index jobs queued by `codecite serve` (store = "postgresql://...") until
    stopped (Ctrl-C / SIGTERM finish the running jobs first). One job per repository runs
    at a time across all workers."""
    from .. import is_shared_store
    from ..api import redact_url
    from ..server.config import load_server_config
    from ..server.jobs.queue import MAINTENANCE_QUEUE, QUEUE, build_app, ensure_schema, worker_name

    settings: dict[str, object] = {}
    repos = None
    if config is not None:
        server = load_server_config(config)
        settings = dict(server.overrides)
        repos = server.repos
        store = store or server.store
    store = store or os.environ.get("CODECITE_STORE", "")
    if not is_shared_store(store):
        raise UserError("codecite worker needs --store postgresql://USER@HOST/DATABASE")
    settings.pop("store", None)
    label = name or worker_name()
    logging.getLogger("codecite.server.queue").setLevel(logging.INFO)
    ensure_schema(store)
    queue_app = build_app(
        store, worker=True, overrides=settings, repos=repos, stalled_after=stalled_after
    )
    err.print(
        f"codecite worker {label}: taking re-index jobs from {redact_url(store)} "
        f"(concurrency {concurrency})"
    )
    queue_app.run_worker(
        queues=[QUEUE, MAINTENANCE_QUEUE],
        name=label,
        concurrency=concurrency,
        wait=not once,
        install_signal_handlers=True,
        update_heartbeat_interval=max(0.5, stalled_after / 3),
        stalled_worker_timeout=stalled_after,
    )
