"""What the Map view shows (:mod:`.map` serves it; the ask page shows the first
repository's map while its visitor has asked nothing yet): a repository's parts and the
imports and calls between them, laid out on the server as SVG (no script library,
nothing fetched), zoomable by the page's own script. A box opens that part's map (a
folder) or its code (a file); an arrow opens the first import or call that makes it.
Below the picture, the same parts as a list (what a phone or a screen reader reads)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from fastapi import Request
from markupsafe import Markup

from ... import Arrow, CodeciteError, SystemMap, draw_map
from ..errors import ApiError
from ..pictures import load_map
from .render import code_url


def map_url(repo: str, focus: str = "", tests: bool = False) -> str:
    params = {"repo": repo, **({"focus": focus} if focus else {})}
    return f"/web/map?{urlencode({**params, **({'tests': '1'} if tests else {})})}"


@dataclass(frozen=True)
class PartView:
    """One box as the list below the picture shows it."""

    label: str
    detail: str
    url: str
    opens: str  # "map", "code" or ""
    outside: bool


@dataclass(frozen=True)
class MapView:
    repo: str
    focus: str
    svg: Markup
    parts: list[PartView]
    crumbs: list[tuple[str, str]]
    note: str
    tests: bool


def _box_url(repo: str, system: SystemMap, box_id: str, tests: bool, back: str) -> tuple[str, str]:
    """Where a box leads: a folder (or a folder's loose files) to its map, a file to its
    code; a lump of small parts nowhere."""
    box = system.box(box_id)
    if box.kind == "file":
        return code_url(repo, box.id, 1, max(box.lines, 1), back=back), "code"
    if box.kind == "files":
        return map_url(repo, box.id.removesuffix("/*"), tests), "map"
    if box.kind == "folder" and box.parts > 1:
        return map_url(repo, box.id, tests), "map"
    if box.kind == "folder" and box.evidence:  # a folder of one file: that file
        path = box.evidence[0].rsplit(":", 1)[0]
        return code_url(repo, path, 1, max(box.lines, 1), back=back), "code"
    return "", ""


def _crumbs(repo: str, focus: str, tests: bool) -> list[tuple[str, str]]:
    """(label, url) from the repository down to the focus."""
    out = [(repo, map_url(repo, "", tests))]
    parts = focus.split("/") if focus else []
    for i in range(len(parts)):
        out.append((parts[i], map_url(repo, "/".join(parts[: i + 1]), tests)))
    return out


def map_view(system: SystemMap, repo: str, tests: bool) -> MapView:
    back = map_url(repo, system.focus, tests)
    links = {b.id: _box_url(repo, system, b.id, tests, back) for b in system.boxes}

    def arrow_link(arrow: Arrow) -> str | None:
        if not arrow.evidence:
            return None
        e = arrow.evidence[0]
        return code_url(repo, e.path, e.start_line, e.end_line, back=back)

    svg = draw_map(system, box_link=lambda b: links[b.id][0] or None, arrow_link=arrow_link)
    parts = []
    for b in system.boxes:
        size = f"{b.files:,} file{'s' if b.files != 1 else ''} · {b.lines:,} lines"
        url, opens = links[b.id]
        parts.append(PartView(b.label, size, url, opens, b.outside))
    s = system.stats
    note = f"{s.boxes} parts, {s.drawn} arrows drawn"
    if s.arrows > s.drawn:
        note += f" ({s.arrows - s.drawn} lighter ones only in the JSON)"
    if s.test_files:
        note += f"; {s.test_files} test files left out"
    return MapView(
        repo,
        system.focus,
        Markup(svg),  # built by draw_map, every text in it escaped
        parts,
        _crumbs(repo, system.focus, tests),
        note,
        tests,
    )


def landing_map(request: Request, repo: str) -> MapView | None:
    """The map shown on the ask page before a first question (None when it cannot be
    drawn: an index without code, a repository being re-indexed)."""
    try:
        return map_view(load_map(request, repo), repo, tests=False)
    except (ApiError, CodeciteError):
        return None
