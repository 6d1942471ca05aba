"""A symbol's neighbourhood as SVG, laid out here with the map's layered layout (no
script, no font or file fetched): who calls it and the tests that exercise it above,
what it calls and inherits from below, the symbol itself highlighted. Each node and
arrow carries its citation in a tooltip (``<title>``) and ``data-`` attributes, and a
node links where the caller gives a link."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from xml.sax.saxutils import escape, quoteattr

from .layout import Placed, Route, Size, layered_layout
from .model import Link, Neighbourhood, Node
from .svg import DETAIL_CHAR, FONT, LABEL_CHAR, _path, fit

#: Node widths (pixels) and height.
MIN_WIDTH, MAX_WIDTH = 120.0, 260.0
NODE_HEIGHT = 46.0
#: Nodes a row holds at most: a row of the widest fits a laptop's frame.
MAX_ROW = 6
#: The header's width (title, note, legend): what a phone shows of the picture at once.
#: It stands above the symbol, so that a frame scrolled to the symbol shows it too.
HEADER_WIDTH = 300.0
MARGIN = 16.0
#: Height of the title, of a line of the note below it and of a line of the legend.
TITLE_HEIGHT, NOTE_LINE, LEGEND_LINE = 30.0, 14.0, 20.0
#: Each role: fill, stroke, what the legend says of it.
ROLES: dict[str, tuple[str, str, str]] = {
    "self": ("#fde68a", "#92400e", "this symbol"),
    "caller": ("#dbeafe", "#1e40af", "calls it"),
    "test": ("#fce7f3", "#9d174d", "tests it"),
    "callee": ("#dcfce7", "#166534", "it calls"),
    "base": ("#f3e8ff", "#6b21a8", "it inherits from"),
}
#: What the title says of each role present, in this order.
TITLE_WORDS = {
    "caller": "who calls it",
    "callee": "what it calls",
    "base": "what it inherits from",
    "test": "the tests that exercise it",
}
#: What a link says, in a tooltip (``A calls B``).
VERBS = {"calls": "calls", "tests": "tests", "inherits": "inherits from"}
#: Links drawn dashed (not calls).
DASHED = frozenset({"tests", "inherits"})

NodeLink = Callable[[Node], str | None]


def _where(node: Node) -> str:
    return f"{node.path}:{node.start_line}"


def node_sizes(nodes: Sequence[Node]) -> list[Size]:
    """Each node's size: room for its name and place, within MIN_WIDTH..MAX_WIDTH."""
    out = []
    for n in nodes:
        text = max(len(n.label) * LABEL_CHAR, len(_where(n)) * DETAIL_CHAR) + 20
        out.append(Size(n.id, min(max(text, MIN_WIDTH), MAX_WIDTH), NODE_HEIGHT))
    return out


def fit_name(name: str, room: float, char: float = LABEL_CHAR) -> str:
    """``name`` fitted to ``room`` pixels: a dotted name keeps its last part
    (``…Order.validate``); a last part too long for the room keeps its start
    (``test_checkout_rejects_…``), which says most of a long function name."""
    most = max(int(room / char), 4)
    if len(name) <= most:
        return name
    last = name.rsplit(".", 1)[-1]
    if len(last) < most:
        return "…" + name[-(most - 1) :]
    return last[: most - 1] + "…"


def _says(hood: Neighbourhood) -> str:
    """What the picture shows, by the roles in it."""
    present = {n.role for n in hood.nodes}
    said = [words for role, words in TITLE_WORDS.items() if role in present]
    if not said:
        return "nothing in the index calls it, is called by it or tests it"
    return "shows " + ", ".join(said[:-1]) + (" and " if len(said) > 1 else "") + said[-1]


def _role_words(node: Node) -> str:
    words = ROLES.get(node.role, ROLES["caller"])[2]
    if node.hops >= 2:
        return f"{words} (two hops out)" if node.role != "test" else "tests one of them"
    return words


def _node(node: Node, at: Placed, top: float, href: str | None) -> str:
    fill, stroke, _ = ROLES.get(node.role, ROLES["caller"])
    x, y, w, h = at.x, at.y + top, at.width, at.height
    centre = node.role == "self"
    thick = "3" if centre else "1.3"
    dash = " stroke-dasharray='5 3'" if node.hops >= 2 else ""
    title = f"{node.label}: {_role_words(node)}\n{node.citation}"
    inner = (
        f"<title>{escape(title)}</title>"
        f"<rect x='{x:.1f}' y='{y:.1f}' width='{w:.1f}' height='{h:.1f}' rx='8' fill='{fill}' "
        f"stroke='{stroke}' stroke-width='{thick}'{dash}/>"
        f"<text x='{x + w / 2:.1f}' y='{y + 19:.1f}' text-anchor='middle' font-size='13' "
        f"font-weight='{700 if centre else 600}' fill='#0f172a'>"
        f"{escape(fit_name(node.label, w - 14))}</text>"
        f"<text x='{x + w / 2:.1f}' y='{y + 35:.1f}' text-anchor='middle' font-size='11' "
        f"fill='#334155'>{escape(fit(_where(node), w - 12, DETAIL_CHAR))}</text>"
    )
    body = f"<a href={quoteattr(href)}>{inner}</a>" if href else inner
    data = (
        f"data-id={quoteattr(node.id)} data-label={quoteattr(node.label)} "
        f"data-role='{escape(node.role)}' data-hops='{node.hops}' "
        f"data-citation={quoteattr(node.citation)}"
    )
    return f"<g class='node{' self' if centre else ''}' {data}>{body}</g>"


def _arrow(link: Link, route: Route, top: float, labels: dict[str, str]) -> str:
    points = [(x, y + top) for x, y in route.points]
    dash = " stroke-dasharray='6 4'" if link.kind in DASHED else ""
    verb = VERBS.get(link.kind, link.kind)
    title = f"{labels[link.src]} {verb} {labels[link.dst]}"
    title += f"\n{link.citation}" if link.citation else ""
    data = (
        f"data-source={quoteattr(link.src)} data-target={quoteattr(link.dst)} "
        f"data-kind='{escape(link.kind)}' data-citation={quoteattr(link.citation)}"
    )
    return (
        f"<g class='arrow' {data}><title>{escape(title)}</title>"
        f"<path d='{_path(points)}' fill='none' stroke='#475569' stroke-opacity='0.7' "
        f"stroke-width='1.6'{dash} marker-end='url(#hood-head)'/></g>"
    )


def _legend(hood: Neighbourhood, left: float, top: float) -> tuple[list[str], float]:
    """A swatch and words per role drawn, in lines HEADER_WIDTH wide from ``left``,
    ``top``; where it ends."""
    present = {n.role for n in hood.nodes}
    out, x, y = [], left, top + 4
    for role, (fill, stroke, words) in ROLES.items():
        if role not in present:
            continue
        room = 22 + len(words) * DETAIL_CHAR + 14
        if x > left and x + room > left + HEADER_WIDTH:
            x, y = left, y + LEGEND_LINE
        out.append(
            f"<rect x='{x:.1f}' y='{y:.1f}' width='14' height='12' rx='3' fill='{fill}' "
            f"stroke='{stroke}'/><text x='{x + 20:.1f}' y='{y + 10:.1f}' font-size='11' "
            f"fill='#334155'>{escape(words)}</text>"
        )
        x += room
    return out, y + LEGEND_LINE


def _note(hood: Neighbourhood, linked: bool) -> list[str]:
    """What the picture's arrows mean, in lines that fit HEADER_WIDTH."""
    said = [
        "A → B: A calls B",
        "dashed arrow: tests or inherits from",
        "dashed box: two hops away",
    ]
    if linked:
        said.append("click a box to open it")
    left = sum(n for _, n in hood.left_out)
    if left:
        said.append(f"{left} more not drawn")
    most = int(HEADER_WIDTH / DETAIL_CHAR)
    return textwrap.wrap(_says(hood), most) + textwrap.wrap("; ".join(said), most)


def render_neighbourhood_svg(hood: Neighbourhood, link: NodeLink | None = None) -> str:
    """The neighbourhood as a standalone SVG document; ``link`` gives a node's link."""
    arcs = [(lk.src, lk.dst, 1) for lk in hood.links]
    layout = layered_layout(node_sizes(hood.nodes), arcs, max_row=MAX_ROW)
    placed = {p.id: p for p in layout.boxes}
    routes = {(r.src, r.dst): r for r in layout.routes}
    centre = next((placed[n.id] for n in hood.nodes if n.role == "self"), None)
    middle = centre.x + centre.width / 2 if centre else 0.0
    width = max(layout.width, HEADER_WIDTH + 2 * MARGIN)
    left = min(max(middle - HEADER_WIDTH / 2, MARGIN), width - HEADER_WIDTH - MARGIN)
    note = _note(hood, link is not None)
    legend, top = _legend(hood, left, TITLE_HEIGHT + NOTE_LINE * len(note))
    height = layout.height + top
    labels = {n.id: n.label for n in hood.nodes}
    title = hood.centre
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width:.0f} {height:.0f}' "
        f"width='{width:.0f}' height='{height:.0f}' {FONT} class='codecite-hood' "
        f"role='img' aria-label={quoteattr(title)} data-centre={quoteattr(hood.centre)}>",
        "<defs><marker id='hood-head' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='8' "
        "markerHeight='8' markerUnits='userSpaceOnUse' orient='auto-start-reverse'>"
        "<path d='M0,0 L10,5 L0,10 z' fill='#475569'/></marker></defs>",
        f"<rect width='{width:.0f}' height='{height:.0f}' fill='#ffffff'/>",
        f"<text x='{left:.1f}' y='22' font-size='15' font-weight='700' fill='#0f172a'>"
        f"{escape(fit_name(title, HEADER_WIDTH, 8.4))}</text>",
        *(
            f"<text x='{left:.1f}' y='{TITLE_HEIGHT + 8 + NOTE_LINE * i:.0f}' font-size='11' "
            f"fill='#475569'>{escape(line)}</text>"
            for i, line in enumerate(note)
        ),
        *legend,
    ]
    for lk in hood.links:
        route = routes.get((lk.src, lk.dst))
        if route is not None and lk.src in labels and lk.dst in labels:
            parts.append(_arrow(lk, route, top, labels))
    for n in hood.nodes:
        parts.append(_node(n, placed[n.id], top, link(n) if link else None))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
