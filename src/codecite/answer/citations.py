"""Citations in an answer: parse every ``path:start-end`` / ``path:line`` and check
it against the context the answer was built from. A citation is verified only when
it names a context block's file and its WHOLE range lies inside the context: inside
one block, or inside blocks of that file that overlap or touch so they cover it
without a gap. A citation that overlaps the context only in part is not verified
and is marked ``partial``; anything unverified is flagged (:func:`citation_flags`),
never silently kept."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

#: ``shop/orders.py:91-102``, ``orders.py:14``, ``web/src/cart.ts:17–27`` (en dash too),
#: optionally wrapped in backticks, brackets or parentheses.
_CITATION = re.compile(
    r"(?<![\w/.-])(?P<path>(?:[\w@+-]+/)*[\w@+.-]*[\w@+-]\.[A-Za-z][A-Za-z0-9_+-]{0,9}|"
    r"(?:[\w@+-]+/)+[\w@+.-]+)"
    r":(?P<start>\d{1,7})(?:\s*[-–—]\s*(?P<end>\d{1,7}))?(?![\d])"
)


@dataclass(frozen=True)
class Citation:
    path: str
    start_line: int
    end_line: int
    verified: bool
    #: The citation as written in the answer.
    text: str = ""
    #: Not verified, but part of its range is in the context (``evil.py:13-400`` when
    #: only lines 1-13 were): it reaches beyond what the model was shown.
    partial: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "verified": self.verified,
            "partial": self.partial,
        }


@dataclass(frozen=True)
class Block:
    """A piece of context an answer may cite."""

    path: str
    start_line: int
    end_line: int


#: A fenced code block (```` ``` ```` or ``~~~``, possibly indented in a list item):
#: what it quotes is code, never a claim, so nothing in it is read as a citation.
_FENCED = re.compile(r"^([ \t]*)(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\2[`~]*[ \t]*$", re.M | re.S)


def without_code(text: str) -> str:
    """``text`` with its fenced code blocks blanked (their lines kept, emptied)."""
    return _FENCED.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def parse_citations(text: str) -> list[tuple[str, int, int, str]]:
    """(path, start, end, as written) for each citation outside fenced code, in order,
    repeats removed."""
    seen: set[tuple[str, int, int]] = set()
    out = []
    for m in _CITATION.finditer(without_code(text)):
        start = int(m.group("start"))
        end = int(m.group("end") or start)
        path = m.group("path").removeprefix("./")
        key = (path, min(start, end), max(start, end))
        if key not in seen:
            seen.add(key)
            out.append((*key, m.group(0)))
    return out


def _resolve_path(path: str, paths: set[str]) -> str | None:
    """The context path a cited path means: exact, or an unambiguous suffix at a ``/``."""
    if path in paths:
        return path
    matches = [p for p in paths if p.endswith("/" + path)]
    return matches[0] if len(matches) == 1 else None


def covered_ranges(blocks: Sequence[Block]) -> dict[str, list[tuple[int, int]]]:
    """For each path, the line ranges its blocks cover, sorted, with overlapping or
    touching blocks (1-13 and 14-20) merged into one range (1-20)."""
    by_path: dict[str, list[tuple[int, int]]] = {}
    for b in sorted(blocks, key=lambda b: (b.path, b.start_line, b.end_line)):
        ranges = by_path.setdefault(b.path, [])
        start, end = min(b.start_line, b.end_line), max(b.start_line, b.end_line)
        if ranges and start <= ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], end))
        else:
            ranges.append((start, end))
    return by_path


def check_citations(text: str, blocks: Sequence[Block]) -> list[Citation]:
    """Every citation of ``text``, each marked verified (its whole range is in the
    context), partial (only part of it is) or neither, against ``blocks``."""
    covered = covered_ranges(blocks)
    out = []
    for path, start, end, written in parse_citations(text):
        full = _resolve_path(path, set(covered))
        ranges = covered.get(full or "", [])
        verified = any(s <= start and end <= e for s, e in ranges)
        partial = not verified and any(s <= end and start <= e for s, e in ranges)
        out.append(Citation(full or path, start, end, verified, written, partial))
    return out


def citation_flags(citations: Sequence[Citation]) -> list[str]:
    """The warnings an answer carries for its unverified citations: those outside
    the retrieved context, then those only partly inside it."""

    def written(c: Citation) -> str:
        return c.text or cite(c.path, c.start_line, c.end_line)

    outside = [written(c) for c in citations if not c.verified and not c.partial]
    partial = [written(c) for c in citations if c.partial]
    flags = []
    if outside:
        flags.append(
            f"{len(outside)} citation(s) not in the retrieved context: " + ", ".join(outside)
        )
    if partial:
        flags.append(
            f"{len(partial)} citation(s) only partly inside the retrieved context: "
            + ", ".join(partial)
        )
    return flags


def cite(path: str, start: int, end: int) -> str:
    """The citation text for a range (``path:start-end``, or ``path:line``)."""
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"
