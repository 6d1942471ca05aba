"""``codecite migrate``: copy an embedded SQLite index into the shared PostgreSQL store
without re-embedding (DESIGN.md §13)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..api import INDEX_DIRNAME, migrate_index, redact_url
from ._shared import JsonOpt, RepoNameOpt, app, emit_json, err, out


@app.command()
def migrate(
    source: Annotated[
        Path,
        typer.Option("--from", help="The SQLite index folder to copy (e.g. REPO/.codecite)."),
    ] = Path(INDEX_DIRNAME),
    target: Annotated[
        str, typer.Option("--to", help="The PostgreSQL store: postgresql://USER@HOST/DB.")
    ] = "",
    repo_name: RepoNameOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Copy an existing index (files, chunks, graph, both vector tiers, metadata) into
    a PostgreSQL store; vectors are copied, not recomputed. The repository's rows in
    the target are replaced."""
    folder = source.expanduser().resolve()
    if not as_json:
        err.print(f"copying {folder} into {redact_url(target)}")
    report = migrate_index(folder, target, repo_name)
    if as_json:
        emit_json(report)
        return
    counts = report["counts"]
    assert isinstance(counts, dict)
    summary = ", ".join(f"{n:,} {what.replace('_', ' ')}" for what, n in counts.items())
    name = report["repo"]
    out.print(f"migrated repository [bold]{name}[/]: {summary}")
    out.print(
        f"search it with: codecite search QUERY --store {redact_url(target)} --repo-name {name}"
    )
