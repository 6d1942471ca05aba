"""Citations in an answer: parse every ``path:start-end`` / ``path:line`` and check
it against the context the answer was built from. A citation is verified when it
names a context block's file and overlaps its line range; anything else is
flagged, never silently kept."""

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

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line,
                "verified": self.verified}


@dataclass(frozen=True)
class Block:
    """A piece of context an answer may cite."""

    path: str
    start_line: int
    end_line: int


def parse_citations(text: str) -> list[tuple[str, int, int, str]]:
    """(path, start, end, as written) for each citation, in order, repeats removed."""
    seen: set[tuple[str, int, int]] = set()
    out = []
    for m in _CITATION.finditer(text):
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


def check_citations(text: str, blocks: Sequence[Block]) -> list[Citation]:
    """Every citation of ``text``, each marked verified or not against ``blocks``."""
    paths = {b.path for b in blocks}
    out = []
    for path, start, end, written in parse_citations(text):
        full = _resolve_path(path, paths)
        verified = full is not None and any(
            b.path == full and b.start_line <= end and start <= b.end_line for b in blocks
        )
        out.append(Citation(full or path, start, end, verified, written))
    return out


def cite(path: str, start: int, end: int) -> str:
    """The citation text for a range (``path:start-end``, or ``path:line``)."""
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"
