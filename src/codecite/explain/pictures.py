"""The pictures ``codecite docs`` puts on its pages, as Mermaid: the map of the
documented part at the top of the index page, and each module's neighbourhood (the
files it uses and those that use it) at the top of its page. Each box links to its
module's page when it has one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..answer.prompt import fence_for
from ..errors import UserError
from ..graph.testmap import is_test_path
from ..picture.mermaid import map_mermaid, neighbourhood_mermaid
from ..picture.neighbourhood import file_neighbourhood
from ..picture.system import MAP_EDGE_KINDS, system_map

if TYPE_CHECKING:
    from .source import Source

#: A module's page, relative to the page being written (None: it has none).
PageLink = Callable[[str], str | None]
#: (source path, target path, kind, line) of every import and call between files.
FileEdges = list[tuple[str, str, str, int]]


def _fenced(text: str) -> list[str]:
    body = text.rstrip("\n")
    fence = fence_for(body)
    return [f"{fence}mermaid", body, fence]


def map_section(index: Source, scope: str, is_file: bool, page_link: PageLink) -> list[str]:
    """The "Map" section of the index page: the parts of ``scope`` (a folder; a file's
    folder) and the imports and calls between them ([] when there is one part only)."""
    folder = scope.rsplit("/", 1)[0] if is_file and "/" in scope else ("" if is_file else scope)
    try:
        in_tests = is_test_path(folder + "/x")  # documenting a tests folder: draw its tests
        system = system_map(index.store, index.repo, folder, tests=in_tests)
    except UserError:  # no code the map draws there
        return []
    if len(system.boxes) < 2:
        return []
    text = map_mermaid(system, lambda box: page_link(box.id) if box.kind == "file" else None)
    note = (
        f"The parts of {f'`{system.focus}`' if system.focus else 'the repository'} and the "
        "imports and calls between them (an arrow A → B: code in A uses code in B; its "
        "label: how many). `codecite map` draws it as SVG; each arrow's first citations "
        "follow it in the diagram's source."
    )
    return ["## Map", "", note, "", *_fenced(text), ""]


def file_edges(index: Source) -> FileEdges:
    """Every import and call between files, read once for all module pages."""
    return [
        (e.src_path, e.dst_path, e.kind, e.line) for e in index.store.path_edges(MAP_EDGE_KINDS)
    ]


def neighbourhood_section(module: str, edges: FileEdges, page_link: PageLink) -> list[str]:
    """A module's neighbourhood for the top of its page ([] when it has none)."""
    hood = file_neighbourhood(module, edges)
    if len(hood.nodes) < 2:
        return []
    text = neighbourhood_mermaid(hood, lambda node: page_link(node.id))
    left = ", ".join(
        f"{n} more {'used' if r == 'callee' else 'using it'}" for r, n in hood.left_out
    )
    more = [f"Not drawn: {left}.", ""] if left else []
    return [
        "Neighbourhood: the files it imports or calls (right) and those that use it (left).",
        "",
        *_fenced(text),
        "",
        *more,
    ]
