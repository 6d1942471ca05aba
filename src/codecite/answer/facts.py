"""The code graph's facts about an answer's subject, each cited (DESIGN.md §4): its
callers at their call sites and the tests that exercise it (what breaks if it
changes), and what it calls (how it works). Facts come from the edges resolved at
index time, never from the question's words."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..filters import Filters
from ..graph.readers import by_name, call_pattern, calls, name_pattern, readers
from ..graph.resolve import common_name
from ..graph.testmap import is_test_path
from ..picture.model import Neighbourhood
from ..picture.neighbourhood import neighbourhood
from ..question.terms import Terms, stems
from ..retrieve.expand import GraphStore
from ..retrieve.types import Hit
from ..store.protocols import KeywordIndex
from ..types import Chunk, Edge
from .blocks import AnswerBlock, LineSource, block_of, chunk_lines, secondary_path
from .citations import Block, cite

#: Callers or tests named in a sentence.
MAX_FACTS = 4
#: The kinds of chunk a class outline's member is.
MEMBER_KINDS = frozenset({"function", "method"})
#: The parts of a split function looked up to find its first.
PARTS_LOOKUP = 20


class FactStore(GraphStore, KeywordIndex, Protocol):
    """What the facts read: edges, the chunks at their ends, and the keyword index (a
    constant's uses are the lines that write its name: reading a value is no edge)."""


#: A class is an exception when it, a base it names or a class it inherits from (the
#: graph's edges, a few generations up) is named so.
_EXCEPTION = re.compile(r"(Error|Exception|Warning)$")
_BASES = re.compile(r"\bclass\s+\w+\s*(?:\(([^)]*)\)|extends\s+([\w.]+))")
ANCESTORS = 4


@dataclass
class Facts:
    """Sentences and blocks from the graph, and the chunks they cite (for the check)."""

    sentences: list[str] = field(default_factory=list)
    callers: list[AnswerBlock] = field(default_factory=list)
    tests: list[AnswerBlock] = field(default_factory=list)
    context: list[Block] = field(default_factory=list)
    #: No code calls it (by the graph, nor by its name); only tests do.
    uncalled: bool = False


class GraphFacts:
    def __init__(self, store: FactStore, source: LineSource | None) -> None:
        self.store, self.source = store, source

    def impact(self, subject: Chunk, hits: Sequence[Hit], terms: Terms) -> Facts:
        """Who calls ``subject`` (code before tests) and which tests exercise it. When
        the graph tied no call to it (an untyped receiver, an interface), the calls of
        its name (unless the name is too common to tell); when none is code, the answer
        says that no indexed code calls it."""
        out = Facts()
        if subject.kind == "constant":
            return self._uses(subject, out)
        name = f"`{subject.qualname}`"
        testers, edges = self._calls(subject)
        unresolved = not edges and not common_name(subject.name)
        # the chunks of code writing its name (a call of it writes it too)
        named = by_name(self.store, subject, name_pattern(subject.name)) if unresolved else []
        if unresolved:
            self._calls_by_name(subject, named, out)
            if out.callers:
                return out
        else:
            out.callers = self._sites([(e.src, e.line) for e in edges], "caller", out)
            out.callers.sort(key=lambda b: secondary_path(b.path))
        if out.callers:
            callers = _counted(len(out.callers), "caller", "callers")
            out.sentences.append(f"Changing {name} affects {callers}: {_named(out.callers)}.")
        if not out.tests:
            fitting = self._fitting(testers, hits, terms)
            out.tests = self._sites([(t, 0) for t in fitting], "test", out)
        if out.tests:
            tests = _counted(len(out.tests), "test exercises", "tests exercise")
            # no code calls it by name, and none even names it (a property is read, not
            # called: ``request.cookies``)
            out.uncalled = unresolved and all(is_test_path(c.path) for c in named)
            said = f"No indexed code outside the tests calls {name}; {tests} it"
            said = said if out.uncalled else f"{tests} {name}"
            out.sentences.append(f"{said}: {_named(out.tests)}.")
        elif out.callers:
            out.sentences.append(f"No test in the index calls {name} directly.")
        return out

    def _calls(self, subject: Chunk) -> tuple[set[str], list[Edge]]:
        """The chunks that test ``subject``, and the graph's calls of it from others."""
        testers = {e.src for e in self.store.edges_to(subject.id, "tests")}
        calls = self.store.edges_to(subject.id, "calls")
        return testers, [e for e in calls if e.src not in testers]

    def called(self, subject: Chunk) -> int:
        """How many calls of ``subject`` the graph ties to it, tests' calls left out."""
        return len(self._calls(subject)[1])

    def _calls_by_name(self, subject: Chunk, named: Sequence[Chunk], out: Facts) -> None:
        """Where ``subject`` may be called when the graph tied no call to it: the line
        of each chunk of ``named`` (those writing its name) that calls it by name
        (``.invoke(`` for a method), code before tests, said to be found by name
        (another definition of the name may be the one called)."""
        call = call_pattern(subject)
        found = {c.id: c for c in named if call.search(c.content)}
        self._found_at(found, lambda text: calls(text, call), out)
        name, called = f"`{subject.qualname}`", f"`{subject.name}`"
        if out.callers:  # (with none, impact says what the tests do)
            places = _counted(len(out.callers), "place calls", "places call")
            out.sentences.append(
                f"The code graph ties no call to {name}; {places} a {called} by name: "
                f"{_named(out.callers)}."
            )
            if out.tests:
                tests = _counted(len(out.tests), "test calls", "tests call")
                out.sentences.append(f"{tests} a {called} by name: {_named(out.tests)}.")

    def _found_at(self, found: dict[str, Chunk], says: Callable[[str], bool], out: Facts) -> None:
        """Each chunk of ``found`` at its first line that ``says``: code as callers,
        tests as tests."""
        code: list[tuple[str, int]] = []
        tests: list[tuple[str, int]] = []
        for chunk_id, chunk in found.items():
            at = next((n for n, text in chunk_lines(chunk, self.source) if says(text)), 0)
            if at:
                (tests if is_test_path(chunk.path) else code).append((chunk_id, at))
        out.callers = self._sites(code, "caller", out, found)
        out.tests = self._sites(tests, "test", out, found)

    def _uses(self, constant: Chunk, out: Facts) -> Facts:
        """Where a documented constant is read: the line of each other chunk of code
        writing its name (:func:`graph.readers.readers`), code before tests."""
        word = name_pattern(constant.name)
        found = {c.id: c for c in readers(self.store, constant)}
        self._found_at(found, lambda text: bool(word.search(text)), out)
        name = f"`{constant.qualname}`"
        if out.callers:
            places = _counted(len(out.callers), "place that reads", "places that read")
            out.sentences.append(f"Changing {name} affects {places} it: {_named(out.callers)}.")
        if out.tests:
            tests = _counted(len(out.tests), "test reads", "tests read")
            out.sentences.append(f"{tests} {name}: {_named(out.tests)}.")
        return out

    def picture(self, subject: Chunk) -> Neighbourhood | None:
        """``subject``, its callers two hops out and its tests (None when the graph
        knows no neighbour of it)."""
        hood = neighbourhood(self.store, [subject], impact=True)
        return hood if len(hood.nodes) > 1 else None

    def member_at(self, outline: Chunk, line: int) -> Chunk | None:
        """The definition of a class outline's member (a method) whose lines hold
        ``line``: the innermost, None when ``line`` is the class's own."""
        prefix = outline.qualname + "."
        inside = [
            c for c in self.store.chunks(outline.path)
            if c.path == outline.path and c.kind in MEMBER_KINDS
            and c.qualname.startswith(prefix) and c.start_line <= line <= c.end_line
        ]  # fmt: skip
        return min(inside, key=lambda c: c.end_line - c.start_line) if inside else None

    def raisers(self, subject: Chunk, hits: Sequence[Hit], terms: Terms) -> Facts:
        """Where an exception class is raised: the code (not tests) that constructs
        it, at those lines, the places among ``hits`` first, then those holding more of
        the question (:meth:`_fitting`); nothing when ``subject`` is no exception class."""
        out = Facts()
        if subject.kind != "class" or not self._exception(subject):
            return out
        edges = self.store.edges_to(subject.id, "calls")
        # the code that raises it, read once (tests raise it too: not where it happens)
        found = {
            i: c for i, c in self.store.get_chunks(list({e.src for e in edges})).items()
            if not is_test_path(c.path)
        }  # fmt: skip
        rank = {i: n for n, i in enumerate(self._fitting(set(found), hits, terms, found))}
        ends = sorted(
            ((e.src, e.line) for e in edges if e.src in found),
            key=lambda end: (rank[end[0]], end[1]),
        )
        # the raise lines, for the sentence
        sites = sorted(
            self._sites(ends, "raiser", out, found), key=lambda b: secondary_path(b.path)
        )
        if sites:
            out.sentences.append(f"`{subject.qualname}` is raised by {_named(sites)}.")
        # shown with the block holding each raise (the `except` or `if` above it)
        shown: dict[str, AnswerBlock] = {}
        for chunk_id, line in ends:
            c = found[chunk_id]
            if chunk_id not in shown:
                shown[chunk_id] = block_of(c, line or c.start_line, "raiser", self.source)
        out.callers = sorted(shown.values(), key=lambda b: secondary_path(b.path))
        return out

    def _exception(self, subject: Chunk) -> bool:
        """Whether ``subject`` (a class) is an exception: its name, the bases its header
        names, or a class it inherits from in the index is named ``...Error``,
        ``...Exception`` or ``...Warning``."""
        seen: set[str] = set()
        todo = [subject]
        for _ in range(ANCESTORS):
            names: list[str] = []
            for c in todo:
                seen.add(c.id)
                names.append(c.name)
                found = _BASES.search(c.content[:200])  # the header, its bases
                if found:
                    names += re.split(r"[\s,]+", found.group(1) or found.group(2) or "")
            if any(_EXCEPTION.search(n.rsplit(".", 1)[-1]) for n in names if n):
                return True
            ids = {e.dst for c in todo for e in self.store.edges_from(c.id, "inherits")} - seen
            todo = list(self.store.get_chunks(list(ids)).values())
            if not todo:
                return False
        return False

    def callees(self, subject: Chunk) -> Facts:
        """What ``subject`` calls (a "how does it work" answer's next places to read)."""
        out = Facts()
        edges = self.store.edges_from(subject.id, "calls")[:MAX_FACTS]
        found = self.store.get_chunks([e.dst for e in edges])
        callees = [found[e.dst] for e in edges if e.dst in found]
        if callees:
            for c in callees:
                out.context.append(Block(c.path, c.start_line, c.end_line))
            named = ", ".join(
                f"`{c.qualname}` ({cite(c.path, c.start_line, c.end_line)})" for c in callees
            )
            out.sentences.append(f"`{subject.qualname}` calls {named}.")
        return out

    def _fitting(
        self,
        ids: set[str],
        hits: Sequence[Hit],
        terms: Terms,
        found: dict[str, Chunk] | None = None,
    ) -> list[str]:
        """``ids`` (chunks), those among ``hits`` first in their rank, then by the share
        of the question's terms their name and code hold, then by id. ``found``: those
        chunks, when the caller has read them."""
        rank = {h.chunk.id: n for n, h in enumerate(hits)}
        if found is None:
            found = self.store.get_chunks([i for i in ids if i not in rank])

        def held(chunk_id: str) -> float:
            chunk = found.get(chunk_id)
            return terms.share(stems(f"{chunk.qualname} {chunk.content}")) if chunk else 0.0

        return sorted(ids, key=lambda i: (rank.get(i, len(rank)), -held(i), i))

    def _sites(
        self,
        ends: list[tuple[str, int]],
        role: str,
        out: Facts,
        found: dict[str, Chunk] | None = None,
    ) -> list[AnswerBlock]:
        """A block per graph neighbour: its call-site line when known, else its head.
        ``found``: the neighbours' chunks, when the caller has read them."""
        if found is None:
            found = self.store.get_chunks([i for i, _ in ends])
        blocks: list[AnswerBlock] = []
        seen: set[str] = set()
        for chunk_id, line in ends:
            chunk = found.get(chunk_id)
            if chunk is None or chunk_id in seen:
                continue
            seen.add(chunk_id)
            if role == "test" and chunk.part > 1:
                chunk = self._head_part(chunk)
            out.context.append(Block(chunk.path, chunk.start_line, chunk.end_line))
            lines = dict(chunk_lines(chunk, self.source))
            if line and line in lines:
                start = end = line
            else:
                start, end = chunk.start_line, min(chunk.end_line, chunk.start_line + 2)
            shown = tuple(lines.get(n, "") for n in range(start, end + 1))
            blocks.append(
                AnswerBlock(
                    chunk.path, start, end, chunk.qualname, chunk.language, shown, role, chunk.kind
                )
            )
        return blocks

    def _head_part(self, chunk: Chunk) -> Chunk:
        """The first part of a function split into parts (``chunk`` when not found)."""
        ids = self.store.find_symbols(
            chunk.qualname, "qualname", Filters(repo=chunk.repo, path=chunk.path), PARTS_LOOKUP
        )
        parts = [c for c in self.store.get_chunks(ids).values() if c.path == chunk.path]
        return min(parts, key=lambda c: c.start_line, default=chunk)


def _counted(n: int, one: str, many: str) -> str:
    """``n`` with its noun (and verb) in the number it takes: "1 test calls", "2 tests call"."""
    return f"{n} {one if n == 1 else many}"


def _named(blocks: Sequence[AnswerBlock]) -> str:
    """The first :data:`MAX_FACTS` blocks named and cited, then how many more."""
    more = f" and {len(blocks) - MAX_FACTS} more" if len(blocks) > MAX_FACTS else ""
    return ", ".join(f"`{b.qualname}` ({b.citation})" for b in blocks[:MAX_FACTS]) + more
