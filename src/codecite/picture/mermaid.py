"""Pictures as Mermaid flowcharts (Markdown that GitHub and GitLab draw): the system
map, and a symbol's neighbourhood. Each arrow's citations follow it as a ``%%``
comment; boxes link with ``click`` where the caller gives links."""

from __future__ import annotations

import re
from collections.abc import Callable

from .model import Box, Neighbourhood, Node, SystemMap
from .svg import detail

#: Arrows drawn thick (``==>``): this share of the heaviest.
THICK_SHARE = 0.25
#: Citations written after each arrow.
CITED_PER_ARROW = 3
#: Node shapes by neighbourhood role.
SHAPES = {"self": ('[["', '"]]'), "test": ('(["', '"])'), "base": ('{{"', '"}}')}
ROLE_CLASSES = {
    "self": "fill:#fde68a,stroke:#92400e,stroke-width:2px",
    "caller": "fill:#dbeafe,stroke:#1e40af",
    "callee": "fill:#dcfce7,stroke:#166534",
    "base": "fill:#f3e8ff,stroke:#6b21a8",
    "test": "fill:#fce7f3,stroke:#9d174d",
}


def text(value: str) -> str:
    """A label safe inside Mermaid's ``"..."`` (quotes and markup as entities)."""
    value = value.replace("&", "#amp;").replace('"', "#quot;")
    return value.replace("<", "#lt;").replace(">", "#gt;").replace("|", "#124;")


def _comment(value: str) -> str:
    return re.sub(r"[\r\n]+", " ", value)


def map_mermaid(system: SystemMap, link: Callable[[Box], str | None] | None = None) -> str:
    """The system map as a ``flowchart TB`` (no code fence)."""
    ids = {b.id: f"p{i}" for i, b in enumerate(system.boxes)}
    where = f" ({system.focus})" if system.focus else ""
    lines = [
        "flowchart TB",
        f"  %% codecite map of {_comment(system.repo)}{_comment(where)}: "
        f"{len(system.boxes)} parts; A --> B: code in A imports or calls code in B",
    ]
    for b in system.boxes:
        label = f"{text(b.label)}<br/><small>{text(detail(b))}</small>"
        lines.append(f'  {ids[b.id]}["{label}"]')
    drawn = [a for a in system.arrows if a.drawn]
    heaviest = max((a.weight for a in drawn), default=0)
    for a in drawn:
        thick = len(drawn) > 4 and a.weight >= heaviest * (1 - THICK_SHARE)
        lines.append(f'  {ids[a.src]} {"==>" if thick else "-->"}|"{a.weight}"| {ids[a.dst]}')
        cited = ", ".join(e.citation for e in a.evidence[:CITED_PER_ARROW])
        more = f" and {a.weight - CITED_PER_ARROW} more" if a.weight > CITED_PER_ARROW else ""
        lines.append(f"  %% {_comment(cited)}{more}")
    outside = [ids[b.id] for b in system.boxes if b.outside]
    if outside:
        lines.append("  classDef outside fill:#fff,stroke-dasharray:4 4")
        lines.append(f"  class {','.join(outside)} outside")
    for b in system.boxes:
        href = link(b) if link else None
        if href:
            lines.append(f'  click {ids[b.id]} href "{text(href)}"')
    return "\n".join(lines) + "\n"


def _node(node: Node, ident: str) -> str:
    open_, close = SHAPES.get(node.role, ('["', '"]'))
    return f"  {ident}{open_}{text(node.label)}{close}"


def neighbourhood_mermaid(
    hood: Neighbourhood, link: Callable[[Node], str | None] | None = None
) -> str:
    """A symbol's neighbourhood as a ``flowchart LR``: callers and tests on the left,
    what it calls and inherits from on the right (no code fence)."""
    ids = {n.id: f"n{i}" for i, n in enumerate(hood.nodes)}
    lines = ["flowchart LR"]
    lines += [_node(n, ids[n.id]) for n in hood.nodes]
    verbs = {"calls": "-->", "inherits": "-.->|inherits|", "tests": "-.->|tests|"}
    for lk in hood.links:
        if lk.src in ids and lk.dst in ids:
            lines.append(f"  {ids[lk.src]} {verbs.get(lk.kind, '-->')} {ids[lk.dst]}")
    for role, style in ROLE_CLASSES.items():
        members = [ids[n.id] for n in hood.nodes if n.role == role]
        if members:
            lines.append(f"  classDef r_{role} {style}")
            lines.append(f"  class {','.join(members)} r_{role}")
    for n in hood.nodes:
        href = link(n) if link else None
        if href:
            lines.append(f'  click {ids[n.id]} href "{text(href)}"')
    return "\n".join(lines) + "\n"
