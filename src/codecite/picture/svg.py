"""The system map as SVG, laid out here (no script, no font or file fetched): boxes
sized and labelled by their code, arrows as wide as their weight; every box and arrow
carries its citations in a tooltip (``<title>``) and ``data-`` attributes, and links
where the caller gives a link."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from xml.sax.saxutils import escape, quoteattr

from .layout import Layout, Placed, Route, Size, layered_layout
from .model import Arrow, Box, SystemMap

#: Box widths (pixels): the label's room, plus up to EXTRA_WIDTH for the largest part.
MIN_WIDTH, MAX_LABEL_WIDTH, EXTRA_WIDTH = 112.0, 220.0, 60.0
BOX_HEIGHT = 54.0
#: Average glyph widths of the label (13 px bold) and detail (11 px) fonts.
LABEL_CHAR, DETAIL_CHAR = 7.6, 6.2
HEADER = 46.0
#: Arrow width: 1 px, plus this much per doubling of its weight, at most MAX_STROKE.
STROKE_PER_DOUBLING, MAX_STROKE = 1.2, 7.0
#: Fill colours, one per top-level part (outside parts are white, dashed).
PALETTE = (
    "#dbeafe",
    "#dcfce7",
    "#fef3c7",
    "#fce7f3",
    "#e0e7ff",
    "#ccfbf1",
    "#fee2e2",
    "#f3e8ff",
    "#ecfccb",
    "#ffedd5",
)
FONT = "font-family='system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif'"

#: A link for a box or an arrow (None: none).
BoxLink = Callable[[Box], str | None]
ArrowLink = Callable[[Arrow], str | None]


def detail(box: Box) -> str:
    """The second line of a box: how much code it holds (a file: and where)."""
    if box.kind == "file":
        return f"{box.lines:,} lines" + (f" · {box.folder}" if box.folder else "")
    files = f"{box.files:,} file{'s' if box.files != 1 else ''}"
    return f"{files} · {box.lines:,} lines"


def box_sizes(boxes: Sequence[Box]) -> list[Size]:
    """Each box's size: room for its label, wider the more code it holds."""
    largest = max((b.lines for b in boxes), default=1) or 1
    out = []
    for b in boxes:
        text = max(len(b.label) * LABEL_CHAR, len(detail(b)) * DETAIL_CHAR) + 20
        room = min(max(text, MIN_WIDTH), MAX_LABEL_WIDTH)
        out.append(Size(b.id, room + EXTRA_WIDTH * math.sqrt(b.lines / largest), BOX_HEIGHT))
    return out


def layout_map(system: SystemMap, reduce: bool = True) -> Layout:
    """The map's boxes and arrows laid out in rows (see :mod:`.layout`)."""
    arcs = [(a.src, a.dst, a.weight) for a in system.arrows if a.drawn]
    return layered_layout(box_sizes(system.boxes), arcs, reduce=reduce)


def fit(text: str, room: float, char: float) -> str:
    """``text`` cut from the left to fit ``room`` pixels (the end of a path says most)."""
    most = max(int(room / char), 4)
    return text if len(text) <= most else "…" + text[-(most - 1) :]


def _fitted_detail(box: Box, room: float) -> str:
    """A box's second line fitted to ``room``: a file's folder is cut, never its size."""
    text = detail(box)
    if box.kind != "file" or not box.folder or len(text) * DETAIL_CHAR <= room:
        return fit(text, room, DETAIL_CHAR)
    size, folder = text.split(" · ", 1)
    return f"{size} · {fit(folder, room - (len(size) + 3) * DETAIL_CHAR, DETAIL_CHAR)}"


def _colour(box: Box, groups: dict[str, str]) -> str:
    if box.outside:
        return "#ffffff"
    top_level = "/" not in box.id and box.kind in ("file", "files")
    group = "" if top_level else box.id.split("/")[0]  # top-level files: one colour
    return groups.setdefault(group, PALETTE[len(groups) % len(PALETTE)])


def _path(points: Sequence[tuple[float, float]]) -> str:
    """A smooth path through the points, leaving and arriving vertically."""
    (x, y), rest = points[0], points[1:]
    out = [f"M{x:.1f},{y:.1f}"]
    for nx, ny in rest:
        bend = (ny - y) / 2
        out.append(f"C{x:.1f},{y + bend:.1f} {nx:.1f},{ny - bend:.1f} {nx:.1f},{ny:.1f}")
        x, y = nx, ny
    return " ".join(out)


def _box_title(box: Box) -> str:
    langs = f" ({', '.join(box.languages)})" if box.languages else ""
    head = f"{box.id}: {detail(box)}, {box.chunks:,} chunks{langs}"
    more = (
        f"\nopen it: codecite map --focus {box.id}"
        if box.kind == "folder" and box.parts > 1
        else ""
    )
    return f"{head}\nlargest: {', '.join(box.evidence)}{more}"


def _arrow_title(arrow: Arrow, system: SystemMap) -> str:
    kinds = ", ".join(f"{n} {k}" for k, n in arrow.kinds)
    src, dst = system.box(arrow.src).label, system.box(arrow.dst).label
    cited = "\n".join(f"{e.citation} ({e.kind} {e.target})" for e in arrow.evidence)
    more = arrow.weight - len(arrow.evidence)
    return f"{src} → {dst}: {kinds}\n{cited}" + (f"\n… and {more} more" if more > 0 else "")


def _linked(inner: str, href: str | None) -> str:
    return f"<a href={quoteattr(href)}>{inner}</a>" if href else inner


def _box(box: Box, at: Placed, fill: str, largest: int, href: str | None) -> str:
    x, y, w, h = at.x, at.y + HEADER, at.width, at.height
    dash = " stroke-dasharray='5 4'" if box.outside else ""
    bar = max(w - 16, 1.0) * math.sqrt(box.lines / largest) if largest else 0.0
    label = escape(fit(box.label, w - 16, LABEL_CHAR))
    inner = (
        f"<title>{escape(_box_title(box))}</title>"
        f"<rect x='{x:.1f}' y='{y:.1f}' width='{w:.1f}' height='{h:.1f}' rx='8' fill='{fill}' "
        f"stroke='#475569' stroke-width='1.2'{dash}/>"
        f"<text x='{x + w / 2:.1f}' y='{y + 21:.1f}' text-anchor='middle' font-size='13' "
        f"font-weight='600' fill='#0f172a'>{label}</text>"
        f"<text x='{x + w / 2:.1f}' y='{y + 37:.1f}' text-anchor='middle' font-size='11' "
        f"fill='#334155'>{escape(_fitted_detail(box, w - 12))}</text>"
        f"<rect x='{x + 8:.1f}' y='{y + h - 9:.1f}' width='{bar:.1f}' height='3' rx='1.5' "
        f"fill='#64748b' opacity='0.6'/>"
    )
    data = f"data-id={quoteattr(box.id)} data-kind='{box.kind}' data-lines='{box.lines}'"
    cites = quoteattr(" ".join(box.evidence))
    return f"<g class='box' {data} data-citations={cites}>{_linked(inner, href)}</g>"


def _arrow(arrow: Arrow, route: Route, system: SystemMap, href: str | None) -> str:
    width = min(1.0 + STROKE_PER_DOUBLING * math.log2(arrow.weight), MAX_STROKE)
    points = [(x, y + HEADER) for x, y in route.points]
    inner = (
        f"<title>{escape(_arrow_title(arrow, system))}</title>"
        f"<path d='{_path(points)}' fill='none' stroke='#475569' stroke-opacity='0.55' "
        f"stroke-width='{width:.1f}' marker-end='url(#head)'/>"
        f"<path d='{_path(points)}' fill='none' stroke='transparent' stroke-width='12'/>"
    )
    cites = quoteattr(" ".join(e.citation for e in arrow.evidence))
    data = f"data-source={quoteattr(arrow.src)} data-target={quoteattr(arrow.dst)}"
    return (
        f"<g class='arrow' {data} data-weight='{arrow.weight}' data-citations={cites}>"
        f"{_linked(inner, href)}</g>"
    )


def render_svg(
    system: SystemMap,
    layout: Layout | None = None,
    *,
    box_link: BoxLink | None = None,
    arrow_link: ArrowLink | None = None,
) -> str:
    """The map as a standalone SVG document (laid out with :func:`layout_map` unless
    ``layout`` is given)."""
    layout = layout or layout_map(system)
    placed = {p.id: p for p in layout.boxes}
    routes = {(r.src, r.dst): r for r in layout.routes}
    width, height = max(layout.width, 360.0), layout.height + HEADER
    where = f" — {system.focus}" if system.focus else ""
    title = f"{system.repo}{where}: {len(system.boxes)} parts"
    note = "an arrow A → B: code in A imports or calls code in B (wider: more)"
    hidden = system.stats.arrows - system.stats.drawn
    if hidden:
        note += f"; {hidden} lighter arrows not drawn (see --format json)"
    if system.stats.test_files:
        note += f"; {system.stats.test_files} test files left out (--tests)"
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width:.0f} {height:.0f}' "
        f"width='{width:.0f}' height='{height:.0f}' {FONT} class='codecite-map' "
        f"data-repo={quoteattr(system.repo)} data-focus={quoteattr(system.focus)}>",
        "<defs><marker id='head' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='7' "
        "markerHeight='7' markerUnits='userSpaceOnUse' orient='auto-start-reverse'>"
        "<path d='M0,0 L10,5 L0,10 z' fill='#475569'/></marker></defs>",
        f"<rect width='{width:.0f}' height='{height:.0f}' fill='#ffffff'/>",
        f"<text x='16' y='22' font-size='15' font-weight='700' fill='#0f172a'>"
        f"{escape(title)}</text>",
        f"<text x='16' y='38' font-size='11' fill='#475569'>{escape(note)}</text>",
    ]
    for arrow in system.arrows:
        route = routes.get((arrow.src, arrow.dst)) if arrow.drawn else None
        if route is not None:
            href = arrow_link(arrow) if arrow_link else None
            parts.append(_arrow(arrow, route, system, href))
    groups: dict[str, str] = {}
    largest = max((b.lines for b in system.boxes), default=0)
    for box in system.boxes:
        href = box_link(box) if box_link else None
        parts.append(_box(box, placed[box.id], _colour(box, groups), largest, href))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
