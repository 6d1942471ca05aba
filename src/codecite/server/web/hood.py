"""A symbol's neighbourhood as the page draws it (the code view of a function, method
or class, and an impact answer): the SVG of :func:`codecite.draw_neighbourhood`, laid
out on the server (no script library, nothing fetched), each box a link to its code
view. It scrolls inside its frame, never the page."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from ... import Neighbourhood, draw_neighbourhood
from .render import code_url

#: A neighbour that is a file's top-level code, not a definition (no symbol to open).
TOP_LEVEL = " (top level)"


def hood_svg(hood: Neighbourhood | None, repo: str, back: str = "") -> Markup | None:
    """The neighbourhood as SVG, each box linked to its code view (None when there is
    none to draw: nothing around the symbol)."""
    if hood is None or len(hood.nodes) < 2:
        return None

    def link(node: Any) -> str:
        symbol = "" if node.label.endswith(TOP_LEVEL) else node.label
        return code_url(repo, node.path, node.start_line, node.end_line, symbol=symbol, back=back)

    return Markup(draw_neighbourhood(hood, link, fmt="svg"))  # every text in it escaped


def answer_hood(answer: dict[str, Any], back: str = "") -> Markup | None:
    """An impact answer's picture (its callers two hops out and its tests), drawn from
    the neighbourhood the answer carries (None for other answers)."""
    data = answer.get("neighbourhood")
    if not isinstance(data, dict):
        return None
    return hood_svg(Neighbourhood.from_json(data), str(answer.get("repo", "")), back)
