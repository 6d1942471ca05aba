"""What ``codecite index`` says about a run that found no file or was interrupted.
Private to :mod:`codecite.cli`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .. import IndexReport


def nothing_to_index(report: IndexReport) -> str:
    """Why an index run found no file to index, what it looked for, what to do."""
    looked = (
        "the files git tracks and untracked files git does not ignore"
        if report.is_git
        else "every file in the folder except those .gitignore ignores"
    )
    skipped = report.skipped_by_reason()
    held = (
        "; skipped: " + ", ".join(f"{n:,} {reason}" for reason, n in skipped.items())
        if skipped
        else ""
    )
    return (
        f"nothing to index in {report.root}: no file found (looked for {looked}, minus "
        ".codeciteignore, the `exclude` setting and the default excludes: lock files, "
        f"vendored, build, minified and generated files{held}). Run it in a repository's "
        "folder or name one: `codecite index PATH`"
    )


def interrupted_message(report: IndexReport) -> str:
    """What Ctrl-C during ``codecite index`` left, by the stage it stopped."""
    stage = report.interrupted_in
    if stage in ("parse", "graph"):
        doing = "parsing files" if stage == "parse" else "resolving the code graph"
        held = (
            f"{report.files_indexed:,} of {report.files_seen:,} files are in the index, "
            if report.files_indexed < report.files_seen
            else ""
        )
        return (
            f"[yellow]interrupted[/yellow] while {doing}: {held}the index is incomplete. "
            "Searches and answers say so until `codecite index` completes it (it redoes "
            "only what is left)."
        )
    if stage == "static":
        return (
            "[yellow]interrupted[/yellow] while computing the static vectors: the keyword "
            "index and the graph are complete and searchable; `codecite index` finishes "
            "the vectors."
        )
    if stage == "embed":
        return (
            f"[yellow]interrupted[/yellow]: {report.embedded:,} chunks embedded this run, "
            f"{report.embed_pending:,} pending; the index is usable, run `codecite index` "
            "to resume"
        )
    return "[yellow]interrupted[/yellow]: run `codecite index` again to resume"
