"""The offline answer, built from the retrieved code without a generative model, so it
is grounded by construction (DESIGN.md §7): evidence first.

1. a lead sentence of the question's shape (:mod:`.lead`) citing the line(s) that
   answer;
2. at most :data:`MAX_BLOCKS` supporting blocks — a few lines of code each, one
   citation per block, grouped by file, tests and examples last unless the question is
   about tests;
3. for impact and test questions, the code graph's facts (callers with their call
   sites, the tests that exercise the code), each cited.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..filters import Filters
from ..graph.testmap import is_test_path, subject_stem
from ..picture.mermaid import neighbourhood_mermaid
from ..picture.neighbourhood import neighbourhood
from ..retrieve.expand import GraphStore
from ..retrieve.types import Hit
from ..types import Chunk
from .citations import Block, cite
from .evidence import Evidence, LineSource, chunk_lines, secondary_path, widen
from .lead import first_sentence, lead_sentence
from .shape import Shape
from .terms import stem, stems

#: Supporting blocks after the lead.
MAX_BLOCKS = 5
#: Supporting blocks shown at least, and the share of the best evidence's score a
#: further one needs (weaker evidence is noise to a reader).
MIN_BLOCKS = 2
BLOCK_FLOOR = 0.4
#: A function or method up to this many lines is cited whole by the blocks shown of it.
CITE_WHOLE = 60
#: Lines a block may grow to when evidence next to it joins it.
MERGED_LINES = 16
#: A tests question is led by the tests retrieved for it when one is among the first
#: this many pieces of evidence.
TESTS_FIRST = 3
#: The parts of a split function looked up to find its first.
PARTS_LOOKUP = 20
#: Callers or tests named in a graph sentence.
MAX_FACTS = 4
DEFINITION_KINDS = frozenset({"function", "method", "class"})


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
    #: Why it is here: "raise", "message", "caller", "test", ... (the evidence's role).
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
    #: Mermaid diagram ("" for other questions).
    picture: str = ""


def describe(chunk: Chunk) -> str:
    """What a chunk is, in one line: its docstring's first sentence, else its signature."""
    if chunk.docstring.strip():
        return first_sentence(chunk.docstring)
    if chunk.signature.strip():
        return f"`{' '.join(chunk.signature.split())}`"
    first = next((ln.strip() for ln in chunk.content.split("\n") if ln.strip()), "")
    return f"`{first[:160]}`"


#: What a block's role says of it, where that helps the reader.
ROLE_NOTES = {
    "raise": "raises",
    "message": "writes the message",
    "frame": "the line in the traceback",
    "log": "logs",
    "caller": "calls it",
    "test": "tests it",
}


class ExtractiveAnswerer:
    """Builds evidence-first answers from hits, with graph facts from the store."""

    def __init__(
        self, store: GraphStore, source: LineSource | None = None, max_blocks: int = MAX_BLOCKS
    ) -> None:
        self.store, self.source, self.max_blocks = store, source, max_blocks

    def answer(
        self,
        shape: Shape,
        hits: Sequence[Hit],
        evidence: Sequence[Evidence],
        written: Sequence[str] = (),
    ) -> Extract:
        """The extractive answer (``written``: the qualified names the question writes,
        ``Context.invoke``: an impact question is about the one it names)."""
        out = Extract("")
        facts: list[str] = []
        graph_blocks: list[AnswerBlock] = []
        subject = self._subject(hits, evidence)
        if shape.kind == "impact":
            subject = next(
                (
                    h.chunk
                    for h in hits
                    if "." in h.chunk.qualname
                    and h.chunk.qualname in written
                    and h.chunk.kind in DEFINITION_KINDS
                    and not is_test_path(h.chunk.path)
                ),
                subject,
            )
        if shape.kind == "how" and evidence and subject is not evidence[0].chunk:
            subject = None  # what the lead's own definition calls, or nothing
        if subject is not None and shape.kind in ("impact", "tests", "how"):
            facts, graph_blocks = self._graph(subject, shape, hits, out)
        if subject is not None and shape.kind == "impact":
            hood = neighbourhood(self.store, [subject], impact=True)
            out.picture = neighbourhood_mermaid(hood) if len(hood.nodes) > 1 else ""
        if shape.kind == "tests":  # the tests found for the question's words lead
            found = self._retrieved_tests(evidence, out, shape)
            if found:
                named = ", ".join(f"`{b.qualname}` ({b.citation})" for b in found)
                facts.insert(0, f"Tests that check it: {named}.")
                graph_blocks = [
                    *found,
                    *(b for b in graph_blocks if not any(_overlaps(b, f) for f in found)),
                ]
        lead = lead_sentence(shape, evidence, facts)
        blocks = self._blocks(shape, evidence, graph_blocks)
        out.lead = lead
        out.blocks = blocks
        rest = [f for f in facts if f != lead]
        out.text = render_text(lead, rest, blocks)
        return out

    # --- blocks ----------------------------------------------------------------------
    def _blocks(
        self, shape: Shape, evidence: Sequence[Evidence], graph: Sequence[AnswerBlock]
    ) -> list[AnswerBlock]:
        chosen: list[AnswerBlock] = []
        if shape.kind in ("impact", "tests") and graph:
            chosen += graph[: self.max_blocks]
        floor = BLOCK_FLOOR * max((ev.score for ev in evidence[:1]), default=0.0)
        for n, ev in enumerate(evidence):
            if len(chosen) >= self.max_blocks or (n >= MIN_BLOCKS and ev.score < floor):
                break
            block = _block_of(ev, self.source)
            clash = next(
                (i for i, b in enumerate(chosen) if _overlaps(block, b) or _same_place(block, b)),
                None,
            )
            if clash is None:
                chosen.append(block)
            else:  # lines next to a better block's: that block grows to show them
                chosen[clash] = _merged(chosen[clash], block)
        if shape.kind not in ("impact", "tests") and len(chosen) < self.max_blocks:
            chosen += [b for b in graph if not any(_overlaps(b, c) for c in chosen)][
                : self.max_blocks - len(chosen)
            ]
        return group_blocks(chosen, tests_first=shape.kind == "tests")

    # --- graph facts -------------------------------------------------------------------
    @staticmethod
    def _subject(hits: Sequence[Hit], evidence: Sequence[Evidence]) -> Chunk | None:
        """The definition the question is about: the best evidence's, else the first
        retrieved definition outside tests."""
        for ev in evidence[:2]:
            if ev.chunk.kind in DEFINITION_KINDS and not is_test_path(ev.chunk.path):
                return ev.chunk
        for hit in hits:
            if hit.chunk.kind in DEFINITION_KINDS and not is_test_path(hit.chunk.path):
                return hit.chunk
        return None

    def _graph(
        self, subject: Chunk, shape: Shape, hits: Sequence[Hit], out: Extract
    ) -> tuple[list[str], list[AnswerBlock]]:
        """Sentences and blocks from the code graph: callers (with their call sites)
        and tests for impact; tests for tests; callees for how. Tests come in the
        order that fits the question: those retrieved for it first (in their rank),
        then by how much of its subject their names and code hold."""
        kind = shape.kind
        name = f"`{subject.qualname}`"
        testers = {e.src for e in self.store.edges_to(subject.id, "tests")}
        facts: list[str] = []
        blocks: list[AnswerBlock] = []
        if kind == "impact":
            edges = [e for e in self.store.edges_to(subject.id, "calls") if e.src not in testers]
            callers = self._sites([(e.src, e.line) for e in edges], "caller", out)
            # the code that depends on it before the tests that happen to call it
            callers.sort(key=lambda b: secondary_path(b.path))
            if callers:
                named = ", ".join(f"`{b.qualname}` ({b.citation})" for b in callers[:MAX_FACTS])
                more = f" and {len(callers) - MAX_FACTS} more" if len(callers) > MAX_FACTS else ""
                facts.append(
                    f"Changing {name} affects {len(callers)} caller"
                    f"{'s' if len(callers) != 1 else ''}: {named}{more}."
                )
                blocks += callers
        if kind in ("impact", "tests"):
            tests = self._sites([(t, 0) for t in self._fitting(testers, shape, hits)], "test", out)
            if tests:
                named = ", ".join(f"`{b.qualname}` ({b.citation})" for b in tests[:MAX_FACTS])
                more = f" and {len(tests) - MAX_FACTS} more" if len(tests) > MAX_FACTS else ""
                verb = "test exercises" if len(tests) == 1 else "tests exercise"
                facts.append(f"{len(tests)} {verb} {name}: {named}{more}.")
                blocks += tests
            elif kind == "impact" and facts:
                facts.append(f"No test in the index calls {name} directly.")
        if kind == "how":
            edges = self.store.edges_from(subject.id, "calls")[:MAX_FACTS]
            found = self.store.get_chunks([e.dst for e in edges])
            callees = [found[e.dst] for e in edges if e.dst in found]
            if callees:
                for c in callees:
                    out.context.append(Block(c.path, c.start_line, c.end_line))
                named = ", ".join(
                    f"`{c.qualname}` ({cite(c.path, c.start_line, c.end_line)})" for c in callees
                )
                facts.append(f"{name} calls {named}.")
        return facts, blocks

    def _retrieved_tests(
        self, evidence: Sequence[Evidence], out: Extract, shape: Shape
    ) -> list[AnswerBlock]:
        """Blocks of the best evidence in tests (one a test), at most :data:`MAX_FACTS`,
        when a test is among the first :data:`TESTS_FIRST` pieces of evidence; the tests
        of a file named after the question's subject first ("the retry behaviour":
        ``tests/test_retry.py``). A test function's block is cited from the test's first
        line (its name, where a reader looks for it) to the lines shown, a later part of
        a split one's from its head."""
        if not any(is_test_path(ev.path) for ev in evidence[:TESTS_FIRST]):
            return []
        subject = {stem(t) for t in shape.subject}
        named = {ev.path for ev in evidence if stems(subject_stem(ev.path)) & subject}
        blocks: list[AnswerBlock] = []
        for ev in sorted(evidence, key=lambda ev: ev.path not in named):
            if (
                not is_test_path(ev.path)
                or ev.role == "import"  # a test module's imports test nothing
                or any(b.qualname == ev.chunk.qualname for b in blocks)
            ):
                continue
            block = _block_of(ev, self.source)
            if ev.chunk.kind in ("function", "method"):
                head = self._head_part(ev.chunk) if ev.chunk.part > 1 else ev.chunk
                if head is not ev.chunk:
                    out.context.append(Block(head.path, head.start_line, head.end_line))
                block = replace(block, start_line=min(block.start_line, head.start_line))
            blocks.append(replace(block, role="test"))
            if len(blocks) == MAX_FACTS:
                break
        return blocks

    def _head_part(self, chunk: Chunk) -> Chunk:
        """The first part of a function split into parts (``chunk`` when not found)."""
        ids = self.store.find_symbols(
            chunk.qualname, "qualname", Filters(repo=chunk.repo, path=chunk.path), PARTS_LOOKUP
        )
        parts = [c for c in self.store.get_chunks(ids).values() if c.path == chunk.path]
        return min(parts, key=lambda c: c.start_line, default=chunk)

    def _fitting(self, ids: set[str], shape: Shape, hits: Sequence[Hit]) -> list[str]:
        """``ids`` (chunks), those among ``hits`` first in their rank, then by the share
        of the question's subject terms their name and code hold, then by id."""
        rank = {h.chunk.id: n for n, h in enumerate(hits)}
        subject = {stem(t) for t in shape.subject}
        found = self.store.get_chunks([i for i in ids if i not in rank])

        def held(chunk_id: str) -> float:
            chunk = found.get(chunk_id)
            if chunk is None or not subject:
                return 0.0
            return len(subject & stems(f"{chunk.qualname} {chunk.content}")) / len(subject)

        return sorted(ids, key=lambda i: (rank.get(i, len(rank)), -held(i), i))

    def _sites(self, ends: list[tuple[str, int]], role: str, out: Extract) -> list[AnswerBlock]:
        """A block per graph neighbour: its call-site line when known, else its head."""
        found = self.store.get_chunks([i for i, _ in ends])
        blocks: list[AnswerBlock] = []
        seen: set[str] = set()
        for chunk_id, line in ends:
            chunk = found.get(chunk_id)
            if chunk is None or chunk_id in seen:
                continue
            seen.add(chunk_id)
            out.context.append(Block(chunk.path, chunk.start_line, chunk.end_line))
            lines = dict(chunk_lines(chunk, self.source))
            if line and line in lines:
                start = end = line
            else:
                start = chunk.start_line
                end = min(chunk.end_line, start + 2)
            shown = tuple(lines.get(n, "") for n in range(start, end + 1))
            blocks.append(
                AnswerBlock(
                    chunk.path, start, end, chunk.qualname, chunk.language, shown, role, chunk.kind
                )
            )
        return blocks


def _block_of(ev: Evidence, source: LineSource | None) -> AnswerBlock:
    """The block of a piece of evidence: its lines widened (:func:`widen`), citing the
    whole definition when it is a function or method of at most :data:`CITE_WHOLE`
    lines (where the evidence lives), else the lines shown."""
    c = ev.chunk
    shown_start, shown_end, lines = widen(ev, source)
    start, end = shown_start, shown_end
    if c.kind in ("function", "method") and c.end_line - c.start_line < CITE_WHOLE:
        start, end = c.start_line, c.end_line
    return AnswerBlock(
        ev.path, start, end, c.qualname, c.language, lines, ev.role, c.kind,
        shown_start=shown_start, focus_start=ev.start_line, focus_end=ev.end_line,
    )  # fmt: skip


def _overlaps(a: AnswerBlock, b: AnswerBlock) -> bool:
    """Two blocks showing some of the same lines."""
    a_end, b_end = a.first_shown + len(a.lines) - 1, b.first_shown + len(b.lines) - 1
    return a.path == b.path and a.first_shown <= b_end and b.first_shown <= a_end


def _merged(kept: AnswerBlock, other: AnswerBlock) -> AnswerBlock:
    """``kept`` widened to show the evidence of ``other``, an overlapping block of the
    same file, when that evidence is not shown yet and the two fit in
    :data:`MERGED_LINES`; else ``kept`` as it is. The citation spans both."""
    last_kept = kept.first_shown + len(kept.lines) - 1
    focus = (other.focus_start or other.first_shown, other.focus_end or other.first_shown)
    if kept.path != other.path or (kept.first_shown <= focus[0] and focus[1] <= last_kept):
        return kept
    shown = {kept.first_shown + i: text for i, text in enumerate(kept.lines)}
    for i, text in enumerate(other.lines):
        shown.setdefault(other.first_shown + i, text)
    first, last = min(shown), max(shown)
    if last - first + 1 > MERGED_LINES or len(shown) != last - first + 1:
        return kept
    return replace(
        kept,
        start_line=min(kept.start_line, other.start_line),
        end_line=max(kept.end_line, other.end_line),
        lines=tuple(shown[n] for n in range(first, last + 1)),
        shown_start=first,
    )


def _same_place(a: AnswerBlock, b: AnswerBlock) -> bool:
    """Two blocks citing the same range (two excerpts of one short function)."""
    return (a.path, a.start_line, a.end_line) == (b.path, b.start_line, b.end_line)


def group_blocks(blocks: Sequence[AnswerBlock], tests_first: bool = False) -> list[AnswerBlock]:
    """Blocks grouped by file (files in the order of their first block), code before
    tests, examples and docs unless the question is about tests; the first block (the
    lead's evidence) stays first."""
    if not blocks:
        return []
    order: dict[str, int] = {}
    for b in blocks:
        order.setdefault(b.path, len(order))

    def secondary(b: AnswerBlock) -> bool:
        return is_test_path(b.path) if tests_first else secondary_path(b.path)

    head, rest = blocks[0], list(blocks[1:])
    rest.sort(
        key=lambda b: (
            b.path != head.path,
            (not secondary(b)) if tests_first else secondary(b),
            order[b.path],
            b.start_line,
        )
    )
    return [head, *rest]


def render_text(lead: str, facts: Sequence[str], blocks: Sequence[AnswerBlock]) -> str:
    """The answer as Markdown: the lead, further facts, then each block under its file,
    its citation once, its lines in a fence with their line numbers."""
    parts = [lead] if lead else []
    parts += list(facts)
    if blocks:
        parts.append("Evidence:")
    current = ""
    for b in blocks:
        if b.path != current:
            current = b.path
        note = ROLE_NOTES.get(b.role, "")
        head = f"- `{b.qualname}` ({b.citation})" + (f" — {note}" if note else "")
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
    return "\n\n".join(parts).rstrip() + "\n"


def _dedent(lines: Sequence[str]) -> list[str]:
    indents = [len(x) - len(x.lstrip()) for x in lines if x.strip()]
    cut = min(indents, default=0)
    return [x[cut:] if len(x) >= cut else x.lstrip() for x in lines]


def _lang(language: str) -> str:
    return {"c_sharp": "csharp", "config": "", "text": "", "markdown": "md"}.get(language, language)
