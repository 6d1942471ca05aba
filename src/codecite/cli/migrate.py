"""``codecite migrate``: copy an embedded SQLite index into the shared PostgreSQL store
without re-embedding, or a server's SQLite state file (tokens, audit log) into a
PostgreSQL state database (docs/DESIGN.md §11, §13)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..types import INDEX_DIRNAME
from ._shared import JsonOpt, RepoNameOpt, app, emit_json, err, out


@app.command()
def migrate(
    source: Annotated[
        Path,
        typer.Option(
            "--from",
            help="The SQLite index folder to copy (e.g. REPO/.codecite), or a server's "
            "state file (codecite-state.db: tokens and audit log).",
        ),
    ] = Path(INDEX_DIRNAME),
    target: Annotated[
        str, typer.Option("--to", help="The PostgreSQL store: postgresql://USER@HOST/DB.")
    ] = "",
    repo_name: RepoNameOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Copy an existing index (files, chunks, graph, both vector tiers, metadata) into
    a PostgreSQL store; vectors are copied, not recomputed. The repository's rows in
    the target are replaced.

    Given a server's state file instead of an index folder, copy its tokens (they keep
    working) and its audit log into the PostgreSQL database of `state = "postgresql://..."`;
    tokens already there are kept, and the audit log is copied only into an empty one."""
    from ..api import migrate_index, redact_url

    folder = source.expanduser().resolve()
    if folder.is_file():
        _migrate_state(folder, target, as_json)
        return
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


def _migrate_state(path: Path, target: str, as_json: bool) -> None:
    from ..api import migrate_state, redact_url

    if not as_json:
        err.print(f"copying the state database {path} into {redact_url(target)}")
    counts = migrate_state(path, target)
    if as_json:
        emit_json(counts)
        return
    out.print(
        f"copied {counts['tokens_copied']:,} of {counts['tokens']:,} tokens "
        f"({counts['tokens'] - counts['tokens_copied']:,} already there) and "
        f"{counts['audit_rows_copied']:,} of {counts['audit_rows']:,} audit rows"
        + (
            " (the target's audit log is not empty)"
            if counts["audit_rows_copied"] == 0 and counts["audit_rows"]
            else ""
        )
    )
    out.print(f'point the servers at it with: state = "{redact_url(target)}"')
