"""Following the graph: callees, callers with their calling lines quoted (the usage
examples), tests with their asserting lines, and a class's members."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..graph.readers import name_pattern
from ..graph.testmap import is_test_path
from ..types import Chunk
from .doc_comment import summary_of
from .limits import DEFINITION_KINDS, MAX_ASSERTS, MAX_EDGES, MAX_LISTED
from .model import Cited, Link, TestCase, Usage, quoted, whole
from .scan import COMMENT, STRING, balanced_end, indent_of, verbatim

if TYPE_CHECKING:
    from .source import Source

_IT = re.compile(r"^\s*(?:it|test|specify|scenario)(?:\.\w+)?\s*\(?\s*([\"'`])(?P<name>.*?)\1")
_DESCRIBE = re.compile(r"^\s*(?:describe|context|suite)(?:\.\w+)?\s*\(?\s*([\"'`])(?P<name>.*?)\1")
_IMPORT = re.compile(r"^\s*(?:import|from|using|require|#include|use)\b")
_ASSERT = re.compile(
    r"^\s*assert\b|\bassert\w*\s*[(!]|\bassert_\w+\s*\(|\bexpect\s*\(|\bpytest\.raises\b|"
    r"\bself\.assert\w+\(|\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b|"
    r"\b(?:assert|require|should)\.\w+\(|\.should\b|\bXCTAssert\w*\(|\bverify\s*\("
)


def _related(
    index: Source, chunks: Sequence[Chunk], relation: str
) -> list[tuple[Chunk, tuple[int, ...]]]:
    """Chunks at the other end of ``relation`` from any part of the definition, each
    with the lines of the links, in the order of the first link."""
    own = {c.id for c in chunks}
    found: dict[str, Chunk] = {}
    lines: dict[str, set[int]] = {}
    for c in chunks:
        for other, line in index.related(c, relation, limit=MAX_EDGES):
            if other.id not in own:
                found[other.id] = other
                lines.setdefault(other.id, set()).update([line] if line else [])
    out = [(found[i], tuple(sorted(ls))) for i, ls in lines.items()]
    return sorted(out, key=lambda o: (o[1][:1], o[0].path, o[0].start_line))


def callees_of(
    index: Source, chunks: Sequence[Chunk], lines: dict[int, str]
) -> list[tuple[Link, Chunk]]:
    head = chunks[0]
    out = []
    for callee, at in _related(index, chunks, "callees")[:MAX_LISTED]:
        where = whole(callee)
        calls = tuple(quoted("called here", head.path, lines, n, n) for n in at)
        link = Link(callee.qualname, callee.kind, summary_of(callee), where, calls)
        out.append((link, callee))
    return out


def call_site(caller: Chunk, at: tuple[int, ...], name: str) -> Cited | None:
    """The calling line(s) in ``caller``, quoted from its code."""
    lines = verbatim(caller)
    starts = [n for n in at if n in lines]
    if not starts:  # no line on the edge: the first line that names it
        word = name_pattern(name)
        starts = [n for n in sorted(lines) if word.search(lines[n]) and not COMMENT.match(lines[n])]
        starts = [n for n in starts if n > caller.start_line] or starts
    if not starts:
        return None
    start = starts[0]
    end = balanced_end(lines, start)
    return quoted(f"call in {caller.qualname}", caller.path, lines, start, end)


def callers_of(
    index: Source, chunks: Sequence[Chunk], test_ids: set[str]
) -> tuple[list[tuple[Usage, Chunk]], int]:
    """Callers (source before tests), each with its call quoted, and how many there are."""
    head = chunks[0]
    found = _related(index, chunks, "callers")
    usages: list[tuple[Usage, Chunk]] = []
    for caller, at in found:
        is_test = caller.id in test_ids or is_test_path(caller.path)
        name, start, end = caller.qualname, caller.start_line, caller.end_line
        if caller.kind == "module" and at:
            block, start, end = _test_block(caller, at[0])
            name = block or name
        where = Cited(name, caller.path, start, end)
        usage = Usage(name, caller.kind, is_test, where, call_site(caller, at, head.name))
        usages.append((usage, caller))
    usages.sort(key=lambda u: (u[0].is_test, u[0].call is None, u[1].path, u[1].start_line))
    return usages[:MAX_LISTED], len(found)


def _test_block(chunk: Chunk, line: int) -> tuple[str, int, int]:
    """(name, first line, last line) of the ``it(...)``/``test(...)`` block around
    ``line`` in a test module ("", the chunk's range, when there is none); the name is
    prefixed with the enclosing ``describe(...)`` names."""
    lines = verbatim(chunk)
    opened = next(
        (
            (n, m)
            for n in range(line, chunk.start_line - 1, -1)
            if (m := _IT.match(lines.get(n, "")))
        ),
        None,
    )
    if opened is None:
        return "", chunk.start_line, chunk.end_line
    start, name = opened[0], opened[1]["name"]
    indent = own = indent_of(lines[start])
    for n in range(start - 1, chunk.start_line - 1, -1):
        outer = _DESCRIBE.match(lines.get(n, ""))
        if outer and indent_of(lines[n]) < indent:
            name, indent = f"{outer['name']} › {name}", indent_of(lines[n])
    end = start
    for n in range(start + 1, chunk.end_line + 1):
        if n not in lines:
            break
        end = n
        if lines[n].strip() and indent_of(lines[n]) <= own:
            break
    if end < line:  # the block closed before the line: it is not inside one
        return "", chunk.start_line, chunk.end_line
    return name, start, end


def _asserts(chunk: Chunk, start: int, end: int, after: int, name: str) -> tuple[Cited, ...]:
    """The asserting lines of a test between ``start`` and ``end``: those that name
    the symbol, else those after the call (``after``)."""
    lines = verbatim(chunk)
    found = []
    for n in range(start, end + 1):
        text = lines.get(n, "")
        if not _ASSERT.search(text) or COMMENT.match(text):
            continue
        above = lines.get(n - 1, "").strip()
        go = re.match(r"^\s*t\.", text) and above.startswith("if ") and n > start
        first, last = (n - 1 if go else n), balanced_end(lines, n)  # Go: if got != want {
        found.append(quoted("asserts", chunk.path, lines, first, last))
    word = name_pattern(name)
    naming = [a for a in found if word.search(a.code)]
    chosen = naming or [a for a in found if a.end_line >= after] or found
    return tuple(chosen[:MAX_ASSERTS])


def tests_of(
    index: Source, chunks: Sequence[Chunk], name: str
) -> tuple[list[tuple[TestCase, Chunk]], int, set[str]]:
    """Tests of the definition (for a class: of its members too) with their asserting
    lines, how many there are, and their chunk ids."""
    cases: dict[tuple[str, int], tuple[TestCase, Chunk]] = {}
    ids: set[str] = set()
    for test, at in _related(index, chunks, "tests"):
        ids.add(test.id)
        places = [(test.qualname, test.start_line, test.end_line, at[0] if at else 0)]
        if test.kind == "module":  # JS/Ruby test files: each it(...) block that names it
            blocks = [(*_test_block(test, n), n) for n in sorted({*at, *_mentions(test, name)})]
            places = [b for b in blocks if b[0]] or places
        for title, start, end, line in places:
            if (test.id, start) not in cases:
                where = Cited(title, test.path, start, end)
                case = TestCase(title, where, _asserts(test, start, end, line, name))
                cases[test.id, start] = (case, test)
    word = name_pattern(name)

    def rank(item: tuple[TestCase, Chunk]) -> tuple[bool, bool, str, int]:
        """Tests named after the symbol, then those asserting on it, then by place."""
        case = item[0]
        asserting = any(word.search(a.code) for a in case.asserts)
        return (
            name.lower() not in case.name.lower(),
            not asserting,
            case.where.path,
            case.where.start_line,
        )

    ordered = sorted(cases.values(), key=rank)
    return ordered[:MAX_LISTED], len(ordered), ids


def _mentions(chunk: Chunk, name: str) -> list[int]:
    """Lines of ``chunk`` that name ``name`` in code (not in an import or a comment)."""
    word = name_pattern(name)
    return [
        n
        for n, text in verbatim(chunk).items()
        if word.search(STRING.sub("", text)) and not COMMENT.match(text) and not _IMPORT.match(text)
    ]


def members_of(index: Source, head: Chunk) -> list[Chunk]:
    """The methods of a class, in the order of the file."""
    if head.kind != "class":
        return []
    return [
        c
        for c in index.chunks(head.path)
        if c.path == head.path
        and c.parent == head.qualname
        and c.kind in DEFINITION_KINDS
        and c.part <= 1
    ]
