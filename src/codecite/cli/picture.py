"""``codecite map``: the system map of a repository (SVG, Mermaid or JSON)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ..errors import PathError
from ._shared import IndexOpt, RepoArg, app, emit_json, err, open_for_query

if TYPE_CHECKING:
    from .. import Arrow, Box


class MapFormat(StrEnum):
    svg = "svg"
    mermaid = "mermaid"
    json = "json"


@app.command("map")
def map_command(
    path: RepoArg = None,
    index_dir: IndexOpt = None,
    focus: Annotated[
        str,
        typer.Option(
            "--focus",
            help="Open one folder (e.g. src/app/billing): its parts as boxes, with the parts "
            "beyond it that it uses or is used by (dashed).",
        ),
    ] = "",
    fmt: Annotated[
        MapFormat,
        typer.Option(
            "--format",
            "-f",
            help="svg (a picture, laid out here), mermaid (Markdown that GitHub and GitLab "
            "draw) or json (nodes, edges, weights, citations).",
        ),
    ] = MapFormat.svg,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Write to this file (default: standard output)."),
    ] = None,
    tests: Annotated[
        bool,
        typer.Option("--tests", help="Draw test files too (left out by default)."),
    ] = False,
    max_boxes: Annotated[
        int,
        typer.Option("--max-boxes", min=2, max=200, help="Parts drawn at most."),
    ] = 25,
    links: Annotated[
        str,
        typer.Option(
            "--links",
            help="Link boxes and arrows to the code under this address (e.g. "
            "https://github.com/ORG/REPO/blob/main, or a path relative to the output): "
            "a box to its folder or file, an arrow to its first import or call (#Lstart-Lend).",
        ),
    ] = "",
) -> None:
    """Draw the system map: the repository's parts (folders, files) as boxes sized by
    their code, and the imports and calls between them as arrows (wider: more). Deeper
    folders are collapsed to keep about 25 boxes; --focus opens one. Every box and arrow
    carries its citations (path:start-end of the imports and calls that make it): in
    the SVG's tooltips, as comments in Mermaid, in the JSON.

    Examples: codecite map -o map.svg; codecite map --focus src/app/billing -f mermaid"""
    with open_for_query(path, index_dir) as idx:
        system = idx.map(focus=focus, max_boxes=max_boxes, tests=tests)
    if fmt is MapFormat.json and output is None:
        emit_json(system.to_json())
        return
    from .. import draw_map

    base = links.rstrip("/")
    text = draw_map(
        system,
        fmt.value,
        box_link=(lambda b: _box_link(base, b)) if base else None,
        arrow_link=(lambda a: _arrow_link(base, a)) if base else None,
    )
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise PathError(
            f"{output}: cannot write the map ({exc.strerror}); give another -o"
        ) from exc
    s = system.stats
    err.print(
        f"wrote {escape(str(output))}: {s.boxes} parts and {s.drawn} arrows "
        f"(from {s.files:,} files and {s.file_edges:,} file-to-file dependencies"
        + (
            f"; {s.arrows - s.drawn} lighter arrows in --format json only"
            if s.arrows > s.drawn
            else ""
        )
        + (f"; {s.test_files} test files left out, --tests draws them" if s.test_files else "")
        + ")",
        soft_wrap=True,
    )
    inner = [b.id for b in system.boxes if b.kind == "folder" and b.parts > 1 and not b.outside]
    inner = inner[:6]
    if inner:
        err.print(
            f"[dim]open a part: codecite map --focus {escape(inner[0])} "
            f"(also: {escape(', '.join(inner[1:]))})[/dim]"
            if len(inner) > 1
            else f"[dim]open a part: codecite map --focus {escape(inner[0])}[/dim]",
            soft_wrap=True,
        )


def _box_link(base: str, box: Box) -> str | None:
    """A box's folder or file under ``base`` (a lump of small parts: none)."""
    if box.kind == "other":
        return None
    return f"{base}/{box.id.removesuffix('/*')}"


def _arrow_link(base: str, arrow: Arrow) -> str | None:
    if not arrow.evidence:
        return None
    e = arrow.evidence[0]
    return f"{base}/{e.path}#L{e.start_line}-L{e.end_line}"
