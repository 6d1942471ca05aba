"""An answer's blocks: the lines of a chunk shown around its focus line, one citation
each, and the answer rendered as Markdown (the CLI, the web page, Slack and MCP show
the same blocks).

A function or method of at most :data:`CITE_WHOLE` lines is cited whole; a small one
is shown whole; else the focus line with the lines of its block around it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..graph.testmap import is_test_path
from ..picture.model import Neighbourhood
from ..types import LINE_EXACT_KINDS, Chunk
from .citations import Block, cite

#: Reads a file's lines as indexed (scrubbed); None when the file is gone.
LineSource = Callable[[str], list[str] | None]
#: A function or method up to this many lines is cited whole by the blocks shown of it.
CITE_WHOLE = 60
#: A function or class this short is shown whole; other code with its block around the
#: focus.
SMALL_CHUNK = 25
WIDE_LINES = 10
#: Lines of a block shown past a window that would end on the line opening it.
OPENED_LINES = 3
#: Lines shown past a window that would end inside brackets, to the one closing them.
CLOSING_LINES = 6
#: A window starting this few lines below a function's first line starts at it.
HEADER_GAP = 2
#: Lines of code a window inside a function shows at least, and the lines around its
#: line it then shows on each side (a lone statement between blank lines, a Go label
#: below it, its function's header far above: not one line alone).
MIN_SHOWN = 3
_TRAILING_COMMENT = re.compile(r"\s+(#|//).*$")
_CLOSE = ")]}"
#: Folders of docs, examples and benchmarks (``_examples``: Go's tools skip a folder
#: whose name starts with ``_``).
_DOC_PATH = re.compile(r"(^|/)_?(docs?|documentation|examples?|samples?|demo|benchmarks?)/", re.I)
_PROSE_FILE = re.compile(r"\.(md|rst|txt|adoc)$", re.I)
#: A doc comment's section headings: where its first paragraph ends.
DOC_SECTIONS = (
    r"args|arguments|params|parameters|returns?|yields?|raises|examples?|notes?|attributes"
)
#: Where a doc comment's summary paragraph ends: a blank line, a section heading
#: ("Args:"), or a tag or field line (JSDoc's "@param", Sphinx's ":param x:"), which may
#: be its first line: a doc of tags alone has no summary.
_PARAGRAPH_END = re.compile(
    rf"\n\s*\n|\n\s*:?({DOC_SECTIONS})::?\s*(\n|$)|(^|\n)\s*(@[a-zA-Z]+\b|:[a-z]+[^:\n]*:)",
    re.I,
)


def secondary_path(path: str) -> bool:
    """Tests, docs, examples and prose: listed after the code itself."""
    return is_test_path(path) or bool(_DOC_PATH.search(path) or _PROSE_FILE.search(path))


def chunk_lines(chunk: Chunk, source: LineSource | None) -> list[tuple[int, str]]:
    """(line number, text) of a chunk's lines. A class outline or module header is not
    the file's lines verbatim: its range is read from the file (as indexed)."""
    if chunk.kind in LINE_EXACT_KINDS:
        return [(chunk.start_line + i, line) for i, line in enumerate(chunk.content.split("\n"))]
    file_lines = source(chunk.path) if source is not None else None
    if not file_lines:
        return []
    last = min(chunk.end_line, len(file_lines))
    numbered = [(n, file_lines[n - 1]) for n in range(chunk.start_line, last + 1)]
    # a module header or class outline: its own lines (its definitions are chunks of
    # their own, elided in its content)
    return _module_lines(chunk, numbered) if chunk.kind in ("module", "class") else numbered


def _module_lines(chunk: Chunk, numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The lines of a module chunk's range that are its own: its content's lines, in
    order (the functions and classes inside its range are chunks of their own, and
    its ``... `` markers stand for them). Lines are matched without their indentation:
    the outline of a long class's later part is dedented (``@property`` for the
    file's ``    @property``)."""
    where: dict[str, list[int]] = {}  # a line's text -> its indexes, in order
    for j, (_, text) in enumerate(numbered):
        where.setdefault(text.strip(), []).append(j)
    out: list[tuple[int, str]] = []
    at = 0
    for wanted in chunk.content.split("\n"):
        if not wanted.strip():  # a blank line of the content: the file's next, if blank
            if at < len(numbered) and not numbered[at][1].strip():
                out.append(numbered[at])
                at += 1
            continue
        places = where.get(wanted.strip(), [])  # a marker or a scrubbed line: in none
        k = bisect.bisect_left(places, at)
        if k < len(places):
            out.append(numbered[places[k]])
            at = places[k] + 1
    return out


def widen(chunk: Chunk, line: int, source: LineSource | None) -> tuple[int, int, tuple[str, ...]]:
    """The lines shown around ``line`` of ``chunk``: a small function or class whole (the
    class's methods too), else the line with the lines of its block around it (same
    indentation or deeper), up to :data:`WIDE_LINES`; a block shorter than that is shown
    with the block holding it, from its header (the ``if`` above a lone ``throw``), when
    that still fits."""
    lines = chunk_lines(chunk, source)
    numbers = [n for n, _ in lines]
    small = chunk.end_line - chunk.start_line < SMALL_CHUNK
    if chunk.kind == "class" and small and line in numbers:
        # a small class is read whole, its methods too (its outline elides them)
        whole = source(chunk.path) if source is not None else None
        if whole and chunk.end_line <= len(whole):
            body = tuple(whole[chunk.start_line - 1 : chunk.end_line])
            return chunk.start_line, chunk.end_line, body
    if line not in numbers:
        text = chunk.content.split("\n", 1)[0]
        return chunk.start_line, chunk.start_line, (text,)
    if chunk.kind in LINE_EXACT_KINDS and len(lines) <= SMALL_CHUNK:
        return numbers[0], numbers[-1], tuple(t for _, t in lines)
    at = numbers.index(line)
    # whether each line begins outside strings and brackets: one scan for the window
    states = line_states([t for _, t in lines], braces=False)
    clear = [starts for starts, _ in states]
    first, last = _grow(lines, at, at, _indent(lines[at][1]))
    while last - first + 1 < WIDE_LINES:
        head = _header(lines, clear, first)
        if head is None or last - head + 1 > WIDE_LINES:
            break
        first, last = _grow(lines, head, last, _indent(lines[head][1]))
    # a window never starts inside a string or a call begun above it (the middle of a
    # docstring, an argument): it starts where that begins, when the line still shows
    begins = _begins(clear, first)
    if at - begins < WIDE_LINES:
        first, last = begins, max(at, min(last, begins + WIDE_LINES - 1))
    if chunk.kind in ("function", "method") and _code_lines(lines, first, last) < MIN_SHOWN:
        # a lone statement between blank lines: the lines around it, from a clear one
        first = _begins(clear, max(0, at - MIN_SHOWN))
        last = min(len(lines) - 1, at + MIN_SHOWN)
    if chunk.kind in ("class", "module"):
        # an outline's line inside a definition's outline (a method's docstring): the
        # window starts at that definition's header, when near, so the reader sees whose
        head = _header(lines, clear, first)
        if head is not None and at - head < WIDE_LINES:
            first, last = head, max(at, min(last, head + WIDE_LINES - 1))
    while last > first and not lines[last][1].strip():
        last -= 1
    last = _opened(lines, _closed([ends for _, ends in states], last))
    if chunk.kind in ("function", "method") and 0 < first <= HEADER_GAP:
        first = 0  # a window just below a signature shows it (the docstring's owner)
    return numbers[first], numbers[last], tuple(t for _, t in lines[first : last + 1])


def _begins(clear: Sequence[bool], line: int) -> int:
    """The nearest line at or above ``line`` that begins outside strings and brackets
    (``line`` when none does)."""
    return next((j for j in range(line, -1, -1) if clear[j]), line)


def _code_lines(lines: Sequence[tuple[int, str]], first: int, last: int) -> int:
    return sum(1 for _, text in lines[first : last + 1] if text.strip())


def _closed(ends: Sequence[bool], last: int) -> int:
    """``last``, or, when that line leaves a bracket open (``if (``, a call's first
    line), the line that closes it, when that is at most :data:`CLOSING_LINES` below:
    a window never ends in the middle of a condition or a call."""
    end = last
    while not ends[end] and end + 1 < len(ends) and end - last < CLOSING_LINES:
        end += 1
    return end if ends[end] else last


def _opened(lines: Sequence[tuple[int, str]], last: int) -> int:
    """``last``, or, when that line opens a block (``except OSError as exc:``, ``if
    (err) {``), the last of the block's first :data:`OPENED_LINES` lines: a window never
    ends where the reader cannot see what the block does."""
    text = _TRAILING_COMMENT.sub("", lines[last][1]).rstrip()
    if not text.endswith((":", "{")):
        return last
    base, end = _indent(lines[last][1]), last
    while end + 1 < len(lines) and end - last < OPENED_LINES:
        following = lines[end + 1][1]
        if following.strip() and _indent(following) <= base:
            break
        end += 1
    while end > last and not lines[end][1].strip():
        end -= 1
    return end


def _grow(lines: Sequence[tuple[int, str]], first: int, last: int, base: int) -> tuple[int, int]:
    """``first``..``last`` grown, a line at a time below then above, by the lines at
    ``base`` indentation or deeper (below also blank lines and closing brackets), up to
    :data:`WIDE_LINES`."""

    def inside(j: int) -> bool:
        text = lines[j][1]
        return not text.strip() or _indent(text) >= base or text.strip()[:1] in _CLOSE

    while last - first + 1 < WIDE_LINES:
        grew = False
        if last + 1 < len(lines) and inside(last + 1):
            last, grew = last + 1, True
        if (
            last - first + 1 < WIDE_LINES
            and first > 0
            and lines[first - 1][1].strip()
            and (_indent(lines[first - 1][1]) >= base)
        ):
            first, grew = first - 1, True
        if not grew:
            break
    return first, last


_STRING = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")
_OPEN = "([{"


#: What opens or closes a string or a comment over lines: a triple quote, ``/*``, ``*/``.
_SPANNING = re.compile(r'"""|\'\'\'|/\*|\*/')


def line_states(
    lines: Sequence[str], braces: bool = True, blocks: bool = False
) -> list[tuple[bool, bool]]:
    """For each line of a piece of code, whether it starts and whether it ends outside
    any bracket or triple-quoted string opened on an earlier line (``braces=False``: a
    ``{`` is no bracket at all; ``blocks``: the code is Go, JavaScript, Rust or another
    language whose ``{`` opens a block of statements: a line inside one starts clear
    when no ``(`` or ``[`` is open inside it, a ``/* */`` comment over lines is no
    code, and a ``//`` comment's brackets count for nothing)."""
    opening, closing = (_OPEN, _CLOSE) if braces else (_OPEN[:2], _CLOSE[:2])
    out: list[tuple[bool, bool]] = []
    stack: list[str] = []
    inside = ""  # the triple quote or "/*" the scan is inside

    def clear() -> bool:
        return not inside and (not stack or (blocks and stack[-1] == "{"))

    for text in lines:
        starts_clear = clear()
        bare = _STRING.sub('""', text)
        at = 0
        for mark in [*_SPANNING.finditer(bare), None]:
            piece = bare[at : mark.start() if mark else len(bare)]
            if not inside:
                if blocks and "//" in piece:  # a line comment: the rest of the line
                    piece, mark = piece.split("//", 1)[0], None
                for c in piece:
                    if c in opening:
                        stack.append(c)
                    elif c in closing and stack:
                        stack.pop()
            if mark is None:
                break
            token, at = mark.group(0), mark.end()
            if not blocks and token in ("/*", "*/"):  # Python: a "/*" of a glob in a comment
                continue
            if not inside and token != "*/":
                inside = token
            elif (inside == "/*" and token == "*/") or (inside == token != "/*"):
                inside = ""
        out.append((starts_clear, clear()))
    return out


def _header(lines: Sequence[tuple[int, str]], clear: Sequence[bool], first: int) -> int | None:
    """The header of the definition holding line ``first``: the nearest line above it
    less indented than every line after it up to ``first``, beginning outside strings
    and brackets (``clear``; a docstring's ``Args:`` or its opening line is no header;
    the ``def`` above them is)."""
    inner = _indent(lines[first][1])
    for j in range(first - 1, -1, -1):
        text = lines[j][1]
        if not text.strip():
            continue
        if _indent(text) < inner and clear[j]:
            return j
        inner = min(inner, _indent(text))
    return None


@dataclass(frozen=True)
class AnswerBlock:
    """One supporting block of an answer: the definition it cites (``start_line`` to
    ``end_line``: a function or method whole when it is short, else the lines shown)
    and the lines of it shown, from ``shown_start``, the evidence among them from
    ``focus_start`` to ``focus_end``."""

    path: str
    start_line: int
    end_line: int
    qualname: str
    language: str
    lines: tuple[str, ...]
    #: Why it is here: "line" (it holds most of the question), "definition", "message"
    #: (it writes the message the question quotes), "caller", "raiser", "test".
    role: str
    #: The chunk's kind (function, method, class, ...).
    kind: str = ""
    #: Whether the citation was verified (set after the citation check).
    verified: bool = True
    #: The line number of ``lines[0]`` (0: ``start_line``).
    shown_start: int = 0
    #: The evidence lines (highlighted), 0 when none stands out.
    focus_start: int = 0
    focus_end: int = 0

    @property
    def citation(self) -> str:
        return cite(self.path, self.start_line, self.end_line)

    @property
    def first_shown(self) -> int:
        return self.shown_start or self.start_line

    @property
    def note(self) -> str:
        """What its role says to the reader ("raises it"), '' where nothing helps."""
        return ROLE_NOTES.get(self.role, "")

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "citation": self.citation,
            "qualname": self.qualname,
            "kind": self.kind,
            "language": self.language,
            "role": self.role,
            "note": self.note,
            "lines": list(self.lines),
            "shown_start_line": self.first_shown,
            "focus": [self.focus_start, self.focus_end] if self.focus_start else None,
            "verified": self.verified,
        }


@dataclass
class Extract:
    """An extractive answer: its text, lead, blocks, and the context it cites."""

    text: str
    lead: str = ""
    blocks: list[AnswerBlock] = field(default_factory=list)
    #: Chunks beyond the hits the answer drew on (graph neighbours), for the check.
    context: list[Block] = field(default_factory=list)
    #: "What breaks if I change X": X, its callers (two hops) and its tests, as a
    #: Mermaid diagram ("" for other questions), and as data (None for others).
    picture: str = ""
    neighbourhood: Neighbourhood | None = None
    #: Sentences after the blocks naming further places to read, each cited (the other
    #: sites that raise an exception, what a function calls, further callers).
    notes: list[str] = field(default_factory=list)


#: What a block's role says of it, where that helps the reader.
ROLE_NOTES = {
    "message": "writes the message",
    "caller": "calls it",
    "raiser": "raises it",
    "test": "tests it",
}


def block_of(chunk: Chunk, line: int, role: str, source: LineSource | None) -> AnswerBlock:
    """The block showing ``line`` of ``chunk``: its lines widened (:func:`widen`),
    citing the whole definition when it is a function or method of at most
    :data:`CITE_WHOLE` lines, else the lines shown."""
    shown_start, shown_end, lines = widen(chunk, line, source)
    start, end = shown_start, shown_end
    if chunk.kind in ("function", "method") and chunk.end_line - chunk.start_line < CITE_WHOLE:
        start, end = chunk.start_line, chunk.end_line
    focus = line if shown_start <= line <= shown_end else 0
    return AnswerBlock(
        chunk.path, start, end, chunk.qualname, chunk.language, lines, role, chunk.kind,
        shown_start=shown_start, focus_start=focus, focus_end=focus,
    )  # fmt: skip


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def first_sentence(text: str, limit: int = 240) -> str:
    """The first sentence of a doc comment (of its first paragraph: a summary line with
    no period does not run on into its "Args:")."""
    flat = " ".join(_PARAGRAPH_END.split(text.strip(), maxsplit=1)[0].split())
    spans = sentence_spans(flat)
    sentence = flat[spans[0][0] : spans[0][1]] if spans else flat
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "approx", "no", "fig"})


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``: one ends at ``.``, ``!`` or ``?``
    followed by white space or the end, outside backticks and brackets and not after an
    abbreviation, so ``codecite.scrub``, ``(:func:`~x.y`)``, "e.g. this" and "3.11"
    stay inside their sentence."""
    spans: list[tuple[int, int]] = []
    start, depth, quoted = 0, 0, False
    for i, char in enumerate(text):
        if char == "`":
            quoted = not quoted
        elif quoted:
            continue
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char in ".!?" and depth == 0 and (i + 1 == len(text) or text[i + 1].isspace()):
            word = text[start:i].rsplit(None, 1)[-1].lower() if text[start:i].strip() else ""
            if char == "." and word.lstrip("(") in _ABBREVIATIONS:
                continue
            spans.append((start, i + 1))
            start = i + 1
    if text[start:].strip():
        spans.append((start, len(text)))
    return [(s + len(text[s:e]) - len(text[s:e].lstrip()), e) for s, e in spans]


def render_text(
    lead: str,
    facts: Sequence[str],
    blocks: Sequence[AnswerBlock],
    notes: Sequence[str] = (),
) -> str:
    """The answer as Markdown: the lead, further facts, then each block under its file,
    its citation once, its lines in a fence with their line numbers; ``notes`` (further
    places to read, each cited) after the blocks."""
    parts = [lead] if lead else []
    parts += list(facts)
    if blocks:
        parts.append("Evidence:")
    for b in blocks:
        head = f"- `{b.qualname}` ({b.citation})" + (f" — {b.note}" if b.note else "")
        width = len(str(b.end_line))
        body = "\n".join(
            f"  {n:>{width}}  {line.rstrip()}"
            for n, line in zip(
                range(b.first_shown, b.first_shown + len(b.lines)), _dedent(b.lines), strict=False
            )
        )
        fence = "```"
        while fence in body:
            fence += "`"
        parts.append(f"{head}\n  {fence}{_lang(b.language)}\n{body}\n  {fence}")
    if notes:
        parts.append("See also: " + " ".join(notes))
    return "\n\n".join(parts).rstrip() + "\n"


def _dedent(lines: Sequence[str]) -> list[str]:
    indents = [len(x) - len(x.lstrip()) for x in lines if x.strip()]
    cut = min(indents, default=0)
    return [x[cut:] if len(x) >= cut else x.lstrip() for x in lines]


def _lang(language: str) -> str:
    return {"c_sharp": "csharp", "config": "", "text": "", "markdown": "md"}.get(language, language)
