"""Drawing a picture in one of its formats (what the CLI, docs and the web page call)."""

from __future__ import annotations

import json
from collections.abc import Callable

from ..errors import UserError
from .hoodsvg import render_neighbourhood_svg
from .mermaid import map_mermaid, neighbourhood_mermaid
from .model import Arrow, Box, Neighbourhood, Node, SystemMap
from .svg import render_svg

#: The formats of ``codecite map``: SVG (default), Mermaid text, JSON.
MAP_FORMATS = ("svg", "mermaid", "json")


def draw_map(
    system: SystemMap,
    fmt: str = "svg",
    *,
    box_link: Callable[[Box], str | None] | None = None,
    arrow_link: Callable[[Arrow], str | None] | None = None,
) -> str:
    """The map as text: ``svg`` (a standalone document laid out in rows, arrows pointing
    down from a part to the parts it uses, every citation in tooltips and
    ``data-citations`` attributes), ``mermaid`` (a ``flowchart``, no fence, each arrow's
    first citations in a comment after it) or ``json`` (:meth:`SystemMap.to_json`).
    ``box_link``/``arrow_link`` give a box's or an arrow's link (None: none)."""
    if fmt == "svg":
        return render_svg(system, box_link=box_link, arrow_link=arrow_link)
    if fmt == "mermaid":
        return map_mermaid(system, box_link)
    if fmt == "json":
        return json.dumps(system.to_json(), ensure_ascii=False, indent=1) + "\n"
    raise UserError(f"unknown map format {fmt!r}; choose from: {', '.join(MAP_FORMATS)}")


def draw_neighbourhood(
    hood: Neighbourhood, link: Callable[[Node], str | None] | None = None, fmt: str = "mermaid"
) -> str:
    """A symbol's neighbourhood as text: ``mermaid`` (a ``flowchart LR``, no fence),
    ``svg`` (a standalone document laid out here: callers and tests above, what it
    calls and inherits from below, the symbol highlighted, every citation in tooltips
    and ``data-citation`` attributes) or ``json`` (:meth:`Neighbourhood.to_json`).
    ``link`` gives a node's link (None: none)."""
    if fmt == "mermaid":
        return neighbourhood_mermaid(hood, link)
    if fmt == "svg":
        return render_neighbourhood_svg(hood, link)
    if fmt == "json":
        return json.dumps(hood.to_json(), ensure_ascii=False, indent=1) + "\n"
    raise UserError(f"unknown picture format {fmt!r}; choose from: {', '.join(MAP_FORMATS)}")
