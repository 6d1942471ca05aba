"""Pack ranked hits into a token budget: best first, overlapping or adjacent
ranges of the same file merged, hits that do not fit skipped (a smaller one
further down may still fit), rank order kept."""

from __future__ import annotations

from dataclasses import replace

from ..types import LINE_EXACT_KINDS
from .types import Hit


def estimate_tokens(text: str, chars_per_token: float) -> int:
    return int(len(text) / chars_per_token) + 1


def _lines(hit: Hit) -> dict[int, str]:
    return {hit.chunk.start_line + i: line for i, line in enumerate(hit.chunk.content.split("\n"))}


def _merge(a: Hit, b: Hit) -> Hit:
    """One hit covering both ranges (both line-exact, same file, touching)."""
    lines = _lines(b) | _lines(a)
    start, end = min(lines), max(lines)
    content = "\n".join(lines.get(n, "") for n in range(start, end + 1))
    names = (
        a.chunk.qualname
        if b.chunk.qualname == a.chunk.qualname
        else (f"{a.chunk.qualname} + {b.chunk.qualname}")
    )
    chunk = replace(a.chunk, start_line=start, end_line=end, content=content, qualname=names)
    return replace(a, chunk=chunk, why=f"{a.why}; merged with {b.chunk.qualname}")


def _touches(a: Hit, b: Hit) -> bool:
    return (
        a.chunk.path == b.chunk.path
        and a.chunk.kind in LINE_EXACT_KINDS
        and b.chunk.kind in LINE_EXACT_KINDS
        and a.chunk.start_line <= b.chunk.end_line + 1
        and b.chunk.start_line <= a.chunk.end_line + 1
    )


def pack(hits: list[Hit], budget: int, chars_per_token: float = 3.5) -> list[Hit]:
    """The best hits that fit in ``budget`` tokens, merged where they touch."""
    packed: list[Hit] = []
    used = 0
    for hit in hits:
        host = next((i for i, p in enumerate(packed) if _touches(p, hit)), None)
        if host is not None:
            merged = _merge(packed[host], hit)
            extra = estimate_tokens(merged.chunk.content, chars_per_token) - estimate_tokens(
                packed[host].chunk.content, chars_per_token
            )
            if used + extra <= budget:
                packed[host], used = merged, used + extra
            continue
        cost = estimate_tokens(hit.chunk.content, chars_per_token)
        if used + cost <= budget:
            packed.append(hit)
            used += cost
    return packed
