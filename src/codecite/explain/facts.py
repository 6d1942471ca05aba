"""Assembling an :class:`Explanation`: the summary, signature, parameters, return
value, exits and graph facts of one definition, each cited."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..answer.citations import Block
from ..graph.readers import name_pattern, readers
from ..graph.testmap import is_test_path
from ..picture.neighbourhood import neighbourhood
from ..types import Chunk
from .doc_comment import DocInfo, parse_doc, plain_name, split_summary, summary_of
from .graph import call_site, callees_of, callers_of, members_of, tests_of
from .limits import MAX_CALL_LINES, MAX_LISTED, ROLE_SELF
from .model import Cited, Exit, Explanation, Link, Param, Usage, quoted, whole
from .scan import (
    excerpt,
    find_exits,
    find_line,
    lines_of,
    norm,
    signature_span,
    text_span,
    verbatim,
)
from .signature import TYPE_FIRST, SigParam, parse_signature

if TYPE_CHECKING:
    from .source import Source

_THROWS = re.compile(r"\bthrows\s+(?P<names>[\w.]+(?:\s*,\s*[\w.]+)*)")
_CONSTRUCTORS = frozenset({"__init__", "constructor", "new", "init"})


def build(index: Source, chunks: Sequence[Chunk], target: str = "") -> Explanation:
    """The facts about the definition made of ``chunks`` (from :func:`resolve`), each
    cited; nothing checked or written by a model yet (see :func:`explain`)."""
    head = chunks[0]
    if head.kind == "constant":
        return _constant(index, head, target)
    lines = lines_of(chunks)
    doc = parse_doc(head.docstring)
    span = signature_span(chunks)
    members = members_of(index, head)
    summary, details = _summary(head, doc, lines, span)
    tests, tests_total, test_ids = tests_of(index, [*chunks, *members], head.name)
    # a class is used where it is constructed and where its methods are called
    called = [*chunks, *members] if head.kind == "class" else chunks
    callers, callers_total = callers_of(index, called, test_ids)
    calls = callees_of(index, chunks, lines)
    listed = members[: MAX_LISTED * 3]
    expl = Explanation(
        target=target or head.qualname,
        repo=index.repo,
        symbol=head,
        end_line=max(c.end_line for c in chunks),
        summary=summary,
        details=details,
        calls=[link for link, _ in calls],
        callers=[usage for usage, _ in callers],
        callers_total=callers_total,
        tests=[case for case, _ in tests],
        tests_total=tests_total,
        members=[Link(m.qualname, m.kind, summary_of(m), whole(m)) for m in listed],
        neighbourhood=neighbourhood(index.store, chunks, members),
    )
    _add_signature_facts(expl, chunks, members, doc, lines, span)
    expl.sources = [
        *((c, ROLE_SELF) for c in chunks),
        *((m, "a member of it") for m in listed),
        *((chunk, "called by it") for _, chunk in calls),
        *((chunk, "calls it") for _, chunk in callers),
        *((chunk, "tests it") for _, chunk in tests),
    ]
    expl.blocks = [Block(c.path, c.start_line, c.end_line) for c, _ in expl.sources]
    return expl


def _constant(index: Source, head: Chunk, target: str) -> Explanation:
    """A documented constant: its doc, its value (the declaration's lines) and the code
    that reads it, each reading line quoted (reading a value is no graph edge: the
    places are the chunks writing its name, :func:`graph.readers.readers`)."""
    lines = lines_of([head])
    summary, details = _summary(head, parse_doc(head.docstring), lines, None)
    found = readers(index.store, head)
    usages = [
        (Usage(c.qualname, c.kind, is_test_path(c.path), whole(c), call_site(c, (), head.name)), c)
        for c in found
    ]
    usages = [u for u in usages if u[0].call is not None]  # its name only in a comment
    usages.sort(key=lambda u: u[0].is_test)  # code first, else the keyword index's order
    shown = usages[:MAX_LISTED]
    expl = Explanation(
        target=target or head.qualname,
        repo=index.repo,
        symbol=head,
        end_line=head.end_line,
        summary=summary,
        details=details,
        callers=[usage for usage, _ in shown],
        callers_total=len(usages),
    )
    value = [n for n, text in sorted(lines.items()) if head.name in text]
    if value:
        expl.signature = quoted("value", head.path, lines, value[0], head.end_line)
    expl.sources = [(head, ROLE_SELF), *((chunk, "reads it") for _, chunk in shown)]
    expl.blocks = [Block(c.path, c.start_line, c.end_line) for c, _ in expl.sources]
    return expl


def _add_signature_facts(
    expl: Explanation,
    chunks: Sequence[Chunk],
    members: list[Chunk],
    doc: DocInfo,
    lines: dict[int, str],
    span: tuple[int, int] | None,
) -> None:
    """The signature, and the parameters (a class: its constructor's), return value
    and exits."""
    head = chunks[0]
    if span:
        expl.signature = quoted("signature", head.path, lines, *span)
    if head.kind == "class":
        constructor = next((m for m in members if m.name in {*_CONSTRUCTORS, head.name}), None)
        if constructor is not None:
            expl.params = _params(constructor, parse_doc(constructor.docstring), None)
    else:
        expl.params = _params(head, doc, span)
        expl.returns = _returns(head, doc, lines, span)
        expl.raises, expl.early_returns = _exits(chunks, doc, lines, span)


def _signature_of(chunk: Chunk) -> tuple[list[SigParam], str]:
    """The parameters and return type written in ``chunk``'s signature."""
    return parse_signature(chunk.signature, chunk.name, chunk.language)


def _doc_cite(head: Chunk, lines: dict[int, str], raw: str, text: str) -> Cited:
    """Where the doc comment says ``raw``: its line(s), else the whole definition."""
    first = find_line(lines, raw) if raw else None
    if first is None:
        return Cited(text, head.path, head.start_line, head.end_line)
    return Cited(text, head.path, first, first)


def _summary(
    head: Chunk, doc: DocInfo, lines: dict[int, str], span: tuple[int, int] | None
) -> tuple[Cited, Cited | None]:
    """The one-line summary, and the rest of the doc comment's prose when there is more."""
    if doc.summary:
        sentence, rest = split_summary(doc.summary)
        at = text_span(lines, sentence) or (head.start_line, head.end_line)
        more = text_span(lines, rest.removesuffix(" …"), at[1]) if rest else None
        details = Cited(rest, head.path, *more) if more else None
        return Cited(sentence, head.path, *at), details
    params, returns = _signature_of(head)
    what = {"method": "Method", "function": "Function", "class": "Class"}.get(head.kind, "Symbol")
    text = f"{what} {head.qualname}"
    if params:
        text += " taking " + ", ".join(p.name + (f" ({p.type})" if p.type else "") for p in params)
    if returns and head.kind != "class":
        text += f"{',' if params else ''} returning {returns}"
    start, end = span or (head.start_line, head.end_line)
    return Cited(text + " (it has no doc comment).", head.path, start, end), None


def _params(head: Chunk, doc: DocInfo, span: tuple[int, int] | None) -> list[Param]:
    lines = verbatim(head)
    span = span or signature_span([head]) or (head.start_line, head.start_line)
    sig_params, _ = _signature_of(head)
    out = []
    named: set[str] = set()
    for p in sig_params:
        key = plain_name(p.name)
        named.add(key)
        entry = doc.params.get(key)
        word = name_pattern(key) if key else None
        at = next(
            (n for n in range(span[0], span[1] + 1) if word and word.search(lines.get(n, ""))),
            None,
        )
        where = Cited(p.name, head.path, at or span[0], at or span[1])
        doc_at = _doc_cite(head, lines, entry.raw, p.name) if entry else None
        kind = p.type or (entry.type if entry else "")
        out.append(
            Param(p.name, kind, p.default, entry.description if entry else "", where, doc_at)
        )
    for key, entry in doc.params.items():  # documented, not in the signature (untyped JS)
        if key not in named:
            doc_at = _doc_cite(head, lines, entry.raw, key)
            out.append(Param(key, entry.type, "", entry.description, None, doc_at))
    return out


def _returns(
    head: Chunk, doc: DocInfo, lines: dict[int, str], span: tuple[int, int] | None
) -> Param | None:
    if head.name in _CONSTRUCTORS:
        return None
    _, kind = _signature_of(head)
    entry = doc.returns
    if not kind and entry is None:
        return None
    where = None
    if kind and span:
        line = span[0] if head.language in TYPE_FIRST else span[1]
        where = Cited("returns", head.path, line, line)
    doc_at = _doc_cite(head, lines, entry.raw, "returns") if entry else None
    return Param(
        "return",
        kind or (entry.type if entry else ""),
        "",
        entry.description if entry else "",
        where,
        doc_at,
    )


def _exits(
    chunks: Sequence[Chunk], doc: DocInfo, lines: dict[int, str], span: tuple[int, int] | None
) -> tuple[list[Exit], list[Exit]]:
    head = chunks[0]
    after = span[1] if span else head.start_line
    raises: list[Exit] = []
    early: list[Exit] = []
    for kind, what, guard, condition, at, start, end in find_exits(chunks, after, head.language):
        first = at if at and start - at <= MAX_CALL_LINES else start
        code = excerpt(lines, start, end)
        if first < start:
            code = excerpt(lines, first, first) + ("\n" if first == start - 1 else "\n...\n") + code
        where = Cited(kind, head.path, first, end, code)
        statement = lines[start].strip()
        found = Exit(kind, what, condition, guard, where, statement=statement)
        (raises if kind == "raises" else early).append(found)
    declared = _THROWS.search(norm(head.signature))
    if declared and span:
        for name in declared["names"].split(","):
            if any(e.what == name.strip() for e in raises):
                continue
            where = quoted("declared", head.path, lines, *span)
            raises.append(Exit("raises", name.strip(), "", "declared", where))
    for entry in doc.raises:  # the doc comment's words for an exception found in the code
        known = [e for e in raises if e.what.rsplit(".", 1)[-1] == entry.name.rsplit(".", 1)[-1]]
        doc_at = _doc_cite(head, lines, entry.raw, entry.name)
        if known:
            i = raises.index(known[0])
            raises[i] = replace(known[0], description=entry.description, doc=doc_at)
        else:
            raises.append(Exit("raises", entry.name, "", "documented", doc_at, entry.description))
    return raises, early
