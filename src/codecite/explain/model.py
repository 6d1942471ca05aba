"""The values of an explanation: each fact with its citation (:class:`Cited`), and
:class:`Explanation`, which gathers them and presents them as JSON or markdown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..answer.citations import Block, Citation, cite, covered_ranges
from ..answer.llm import EXTRACTIVE
from ..picture.model import Neighbourhood
from ..types import Chunk
from .limits import MAX_USAGES, ROLE_SELF
from .scan import excerpt


@dataclass(frozen=True)
class Cited:
    """A statement and the lines that support it (``code``: those lines, quoted)."""

    text: str
    path: str
    start_line: int
    end_line: int
    code: str = ""

    @property
    def citation(self) -> str:
        return cite(self.path, self.start_line, self.end_line)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"text": self.text, "citation": self.citation}
        data.update(path=self.path, start_line=self.start_line, end_line=self.end_line)
        if self.code:
            data["code"] = self.code
        return data


def quoted(text: str, path: str, lines: dict[int, str], start: int, end: int) -> Cited:
    """``text`` cited at lines ``start``-``end`` of ``path``, those lines quoted from
    ``lines`` (file line number → text)."""
    return Cited(text, path, start, end, excerpt(lines, start, end))


def whole(chunk: Chunk) -> Cited:
    """A chunk's qualified name, cited at its whole range."""
    return Cited(chunk.qualname, chunk.path, chunk.start_line, chunk.end_line)


def _citations(*items: Cited | None) -> list[str]:
    return [c.citation for c in items if c is not None]


def _place(where: Cited) -> dict[str, Any]:
    """The path and citation of a definition, as JSON."""
    return {"path": where.path, "citation": where.citation}


@dataclass(frozen=True)
class Param:
    """A parameter (or, named ``return``, the return value): where the signature
    says it (``where``) and where the doc comment describes it (``doc``)."""

    name: str
    type: str = ""
    default: str = ""
    description: str = ""
    where: Cited | None = None
    doc: Cited | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "description": self.description,
            "citations": _citations(self.where, self.doc),
        }


@dataclass(frozen=True)
class Exit:
    """An exception raised (``kind`` "raises") or a value returned early ("returns"),
    found in the code. ``guard``: what it sits under — "if" (``condition`` holds the
    test), "else", "catch" (``condition``: what is caught), "case", "" (nothing:
    always), or for exceptions not seen in the code "declared" (``throws`` in the
    signature) and "documented" (only the doc comment says so)."""

    kind: str
    what: str
    condition: str
    guard: str
    where: Cited
    description: str = ""
    doc: Cited | None = None
    #: The first line of the ``raise``/``return`` statement.
    statement: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "what": self.what,
            "guard": self.guard,
            "condition": self.condition,
            "description": self.description,
            "statement": self.statement,
            "code": self.where.code,
            "citations": _citations(self.where, self.doc),
        }


@dataclass(frozen=True)
class Link:
    """Another definition: a callee (``at``: the lines of the calls) or a member."""

    qualname: str
    kind: str
    summary: str
    where: Cited
    at: tuple[Cited, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "qualname": self.qualname,
            "kind": self.kind,
            "summary": self.summary,
            **_place(self.where),
            "at": [c.citation for c in self.at],
        }


@dataclass(frozen=True)
class Usage:
    """A caller, and the calling line(s) quoted from its code when they could be."""

    caller: str
    kind: str
    is_test: bool
    where: Cited
    call: Cited | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "caller": self.caller,
            "kind": self.kind,
            "is_test": self.is_test,
            **_place(self.where),
            "call": self.call.to_json() if self.call else None,
        }


@dataclass(frozen=True)
class TestCase:
    """A test that exercises the symbol and the lines where it asserts."""

    name: str
    where: Cited
    asserts: tuple[Cited, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            **_place(self.where),
            "asserts": [a.to_json() for a in self.asserts],
        }


@dataclass
class Explanation:
    """What :func:`explain` found about a symbol; ``markdown`` and :meth:`to_json`
    present it. Each fact carries its citation; ``blocks`` are the
    chunks they come from, against which every citation is checked."""

    target: str
    repo: str
    symbol: Chunk
    end_line: int
    summary: Cited
    #: The rest of the doc comment's prose (after the summary sentence).
    details: Cited | None = None
    signature: Cited | None = None
    params: list[Param] = field(default_factory=list)
    returns: Param | None = None
    raises: list[Exit] = field(default_factory=list)
    early_returns: list[Exit] = field(default_factory=list)
    calls: list[Link] = field(default_factory=list)
    callers: list[Usage] = field(default_factory=list)
    callers_total: int = 0
    tests: list[TestCase] = field(default_factory=list)
    tests_total: int = 0
    members: list[Link] = field(default_factory=list)
    #: Callers, callees, bases and tests one or two hops out, for a diagram.
    neighbourhood: Neighbourhood | None = None
    blocks: list[Block] = field(default_factory=list)
    #: The chunks the facts come from, and their role (for an LLM's context).
    sources: list[tuple[Chunk, str]] = field(default_factory=list)
    llm: str = EXTRACTIVE
    llm_reason: str = ""
    #: Prose written by an LLM from the facts ("" offline).
    prose: str = ""
    citations: list[Citation] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: The explanation as markdown: the LLM's prose when there is some, else the facts
    #: (:func:`codecite.explain.explain` renders it with :func:`.markdown.render`; this
    #: module holds data and imports no renderer).
    markdown: str = ""

    @property
    def citation(self) -> str:
        return cite(self.symbol.path, self.symbol.start_line, self.end_line)

    @property
    def defined(self) -> list[Cited]:
        """Where the definition is: its range, or the ranges of its parts when the
        chunker left lines (blank ones) between them."""
        own = [c for c, role in self.sources if role == ROLE_SELF]
        ranges = covered_ranges([Block(c.path, c.start_line, c.end_line) for c in own])
        return [Cited("defined", p, s, e) for p, spans in ranges.items() for s, e in spans]

    @property
    def usages(self) -> list[Usage]:
        """The quoted call sites shown as usage examples: source before tests."""
        return [u for u in self.callers if u.call is not None][:MAX_USAGES]

    def paths(self) -> list[str]:
        return sorted({b.path for b in self.blocks})

    def to_json(self) -> dict[str, Any]:
        s = self.symbol
        return {
            "target": self.target,
            "repo": self.repo,
            "symbol": {
                "qualname": s.qualname,
                "name": s.name,
                "kind": s.kind,
                "language": s.language,
                "path": s.path,
                "start_line": s.start_line,
                "end_line": self.end_line,
                "citation": self.citation,
                "signature": s.signature,
            },
            "summary": self.summary.to_json(),
            "details": self.details.to_json() if self.details else None,
            "signature": self.signature.to_json() if self.signature else None,
            "parameters": [p.to_json() for p in self.params],
            "returns": self.returns.to_json() if self.returns else None,
            "raises": [e.to_json() for e in self.raises],
            "early_returns": [e.to_json() for e in self.early_returns],
            "calls": [c.to_json() for c in self.calls],
            "callers_total": self.callers_total,
            "callers": [u.to_json() for u in self.callers],
            "usages": [u.to_json() for u in self.usages],
            "tests_total": self.tests_total,
            "tests": [t.to_json() for t in self.tests],
            "members": [m.to_json() for m in self.members],
            "neighbourhood": self.neighbourhood.to_json() if self.neighbourhood else None,
            "llm": self.llm,
            "llm_reason": self.llm_reason,
            "prose": self.prose,
            "markdown": self.markdown,
            "citations": [c.to_json() for c in self.citations],
            "flags": list(self.flags),
            "timings_ms": self.timings_ms,
        }
