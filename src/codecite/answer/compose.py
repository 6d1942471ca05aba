"""The offline answer from ordered hits (issue 38): a first line that reads, then the
blocks in the order the answer model chose (search's, unless the model's word moved one).

- Each block shows one chunk: a function or method of at most ``CITE_WHOLE`` lines is
  cited whole, else the lines around its *focus*: the line writing a message the
  question quotes, else the line (a whole statement, never a fragment) holding most of
  the question's rarity-weighted terms.
- The first line names the first block's symbol with its summary: its docstring's first
  sentence, else its focus statement quoted whole (one written over a few lines on one
  line: :func:`whole_statements`), never a lone ``self,``, ``)`` or ``error.``
  (:func:`is_fragment`). A quantity question ("what is the default port?") is led by the
  first of the first three blocks quoting a statement that holds a number past 0 and 1
  (``port=5000``), that statement its first line.
- An impact question ("what breaks if I change X") leads with X's callers at their call
  sites, code before tests (the code graph's ``calls`` edges), then the blocks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..graph.testmap import is_test_path
from ..identifiers import split_identifier
from ..picture.mermaid import neighbourhood_mermaid
from ..question.parts import VARYING
from ..question.terms import Terms, stems
from ..retrieve.types import Hit
from ..types import Chunk
from .blocks import (
    AnswerBlock,
    Extract,
    LineSource,
    block_of,
    chunk_lines,
    first_sentence,
    line_states,
    render_text,
    secondary_path,
    sentence_spans,
)
from .citations import Block, cite
from .facts import GraphFacts

if TYPE_CHECKING:
    import numpy as np

#: Definitions whose callers an impact answer shows.
DEFINITION_KINDS = frozenset({"function", "method", "class"})
#: Blocks an answer shows.
MAX_BLOCKS = 5
#: Other definitions of an impact question's name, said after the blocks.
MAX_NAMESAKES = 3
#: Callers an impact answer shows before the rest.
MAX_CALLERS = 3
#: Places shown (as blocks) where an exception class that leads is raised; its sentence
#: names more.
MAX_RAISERS = 1
#: Languages of prose: a line of them is quoted as a sentence, not as code.
PROSE_LANGUAGES = frozenset({"markdown", "text", "rst"})
#: A quoted statement longer than this is cut (with "…").
QUOTE_CHARS = 160

_OPEN, _CLOSE = "([{", ")]}"
_WORD = re.compile(r"[A-Za-z_]\w*")
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+")
#: Statements that are whole with a single word (``return``, ``break``, ``pass``, ...).
_BARE = frozenset({"return", "break", "continue", "pass", "raise", "yield", "else", "try",
                   "finally", "default", "end", "fi", "done"})  # fmt: skip
_DANGLING = (",", "(", "[", "{", "\\", "+", "-", "*", "/", "=", " and", " or", "&&", "||")


def is_fragment(line: str) -> bool:
    """Whether a line of code is a piece of a statement that reads as nothing alone: a
    lone ``self,`` or ``)``, the tail of a signature (``) -> t.IO[t.AnyStr]:``), a
    word of a sentence (``error.``), a line ending inside an expression."""
    text = line.strip()
    if not text or text.startswith(("#", "//", "/*", "*", '"""', "'''")):
        return True
    if text[0] in _CLOSE or text[0] in ",.:;+=&|?" or text.split()[0] in ("and", "or"):
        return True
    cut = text.endswith("…")  # a whole statement shortened for the first line
    if not cut and any(text.count(o) != text.count(c) for o, c in zip(_OPEN, _CLOSE, strict=True)):
        return True
    if text.endswith(_DANGLING):
        return True
    words = _TOKEN.findall(text)
    return len(words) < 2 and not (words and words[0] in _BARE)


def whole_lines(lines: Sequence[str], blocks: bool = False) -> list[bool]:
    """For each line of a piece of code, whether it reads alone: it starts and ends
    outside any bracket or triple-quoted string opened on an earlier line (an argument
    of a call begun above, a line of a docstring, are parts), and it is no fragment.
    ``blocks``: a ``{`` opens a block of statements (:func:`braces_open_blocks`)."""
    return _single(whole_statements(lines, blocks), len(lines))


def _single(statements: Sequence[tuple[int, int, str]], n: int) -> list[bool]:
    """For each of ``n`` lines, whether it is a statement of one line of ``statements``."""
    single = {a for a, b, _ in statements if a == b}
    return [i in single for i in range(n)]


#: Languages whose ``{`` opens a value (a dict, a set), not a block of statements.
_BRACED_VALUES = frozenset({"python"})


def braces_open_blocks(language: str) -> bool:
    """Whether a ``{`` of ``language`` opens a block of statements (Go, JavaScript,
    Rust, Java, ...): the lines inside it are statements that may read alone."""
    return language not in _BRACED_VALUES


#: A statement written over several lines (a call's arguments one a line) is quoted
#: whole when it has at most this many lines and reads in :data:`QUOTE_CHARS`.
STATEMENT_LINES = 8
_TRIPLE_QUOTES = ('"""', "'''")
_AFTER_OPEN = re.compile(r"([(\[{]) ")
_BEFORE_CLOSE = re.compile(r",? ([)\]}])")


def whole_statements(lines: Sequence[str], blocks: bool = False) -> list[tuple[int, int, str]]:
    """The statements of a piece of code that read alone, as ``(first, last, text)``
    (indexes into ``lines``; ``text`` on one line): a line that is one (:func:`whole_lines`),
    or the lines from one starting outside any bracket to the one closing them
    (``@click.option("--ws-max-size", type=int, default=16777216)``) when they are few
    and short (:data:`STATEMENT_LINES`, :data:`QUOTE_CHARS`). ``blocks``: as
    :func:`whole_lines`'s."""
    states = line_states(lines, blocks=blocks)
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(lines):
        if not states[i][0]:  # inside a statement begun above
            i += 1
            continue
        last = i
        while not states[last][1] and last + 1 < len(lines) and last - i < STATEMENT_LINES:
            last += 1
        if not states[last][1]:  # still open: too long, or cut off
            i = last + 1
            continue
        if last == i:
            if not is_fragment(lines[i]):
                out.append((i, i, lines[i]))
        elif not any(q in t for t in lines[i : last + 1] for q in _TRIPLE_QUOTES):
            # (a string of prose over lines is no statement: doc_sentence reads it)
            flat = " ".join(t.strip() for t in lines[i : last + 1])
            flat = _BEFORE_CLOSE.sub(r"\1", _AFTER_OPEN.sub(r"\1", flat))
            if len(flat) <= QUOTE_CHARS and not is_fragment(flat):
                out.append((i, last, flat))
        i = last + 1
    return out


def statement(text: str) -> str:
    """A line quoted as code, cut at :data:`QUOTE_CHARS` (a header's closing ``:`` or
    ``{`` left out: the sentence ends there)."""
    flat = " ".join(text.split()).rstrip(":{ ")
    if len(flat) <= QUOTE_CHARS:
        return flat
    return flat[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: The shortest constant part of a message that identifies the line writing it.
MESSAGE_PART = 12


def constant_part(message: str) -> str:
    """The longest part of a message's first sentence that a line writing it holds
    verbatim (quoted values and numbers vary; a report goes on after the message),
    lower-cased; '' when none is long enough to tell."""
    first = _SENTENCE_END.split(message.strip(), maxsplit=1)[0]
    parts = [" ".join(p.split()) for p in VARYING.split(first)]
    best = max(parts, key=len, default="").strip(" :,.-").lower()
    return best if len(best) >= MESSAGE_PART else ""


@dataclass(frozen=True)
class Focus:
    """The line of a block to highlight, and the whole statements to quote of it."""

    line: int
    text: str
    #: "message" (a line writing what the question quotes) or "line".
    role: str
    #: (first line, last line, text) of the whole statements holding some of the
    #: question, best first (none: nothing of the block is quoted).
    #: The first line quotes the first of them that the block shows whole.
    quotes: tuple[tuple[int, int, str], ...] = ()


#: A learnt score of each line of a block (:mod:`.focus`): its texts and whether each
#: reads alone -> one score a line.
LineScore = Callable[[Sequence[str], Sequence[bool]], "np.ndarray"]


def focus_of(
    chunk: Chunk,
    source: LineSource | None,
    terms: Terms,
    messages: Sequence[str],
    score: LineScore | None = None,
) -> Focus | None:
    """The line of ``chunk`` to highlight and the statements to quote (None: no line
    in it): the line writing a quoted message; else the line holding most of the
    question's words (the floor's line: on people's questions it finds the answering
    lines more often than the learnt line score, BENCHMARKS.md stop 48), or, when no line
    holds any, the best by ``score``; the statements quoted are ranked by ``score``
    (learnt: the answer model's line score), else by the share of the question."""
    lines = chunk_lines(chunk, source)
    texts = [text for _, text in lines]
    statements = whole_statements(texts, braces_open_blocks(chunk.language))
    wanted = [p for p in (constant_part(m) for m in messages) if p]
    for at, text in enumerate(texts if wanted else ()):
        low = text.lower()
        if any(p in low for p in wanted):
            # the statement writing it, whole when it reads alone (a raise over two lines)
            writing = tuple(
                (lines[a][0], lines[b][0], stmt) for a, b, stmt in statements if a <= at <= b
            )
            return Focus(lines[at][0], text, "message", writing[:1])
    if not any(text.strip() for text in texts):
        return None
    whole = _single(statements, len(texts))
    shares = [terms.share(stems(text)) if text.strip() else -1.0 for text in texts]
    # the highlight: the line holding most of the question (the first of them), a part
    # of a statement too ('"gold": 0.10,' in a table); a block shows the lines around it
    most = max(range(len(texts)), key=lambda i: shares[i])
    # the quotes: whole statements holding some of the question, best first by the
    # learnt score (a statement over lines: its lines' mean, so no length wins by having
    # more lines to score; without it: by the share of the question each holds)
    held = [(a, b, text, terms.share(stems(text))) for a, b, text in statements]
    quotable = [(a, b, text, share) for a, b, text, share in held if share > 0]
    scores = score(texts, whole) if score is not None else None

    def rank(statement: tuple[int, int, str, float]) -> float:
        a, b, _, share = statement
        return -float(scores[a : b + 1].mean()) if scores is not None else -share

    quotes = tuple((lines[a][0], lines[b][0], text) for a, b, text, _ in sorted(quotable, key=rank))
    if shares[most] > 0:
        return Focus(lines[most][0], texts[most], "line", quotes)
    if scores is not None:  # none holds a word of it: the learnt score's line
        best = int(scores.argmax())
        return Focus(lines[best][0], texts[best], "line", quotes)
    return Focus(0, texts[most], "line", quotes)


@dataclass
class Composed:
    extract: Extract
    #: Whether the question's own literal evidence (a message it quotes) is cited.
    literal: bool = False


@dataclass(frozen=True)
class _Shown:
    block: AnswerBlock
    chunk: Chunk
    focus: Focus | None


def compose(
    kind: str,
    hits: Sequence[Hit],
    terms: Terms,
    messages: Sequence[str],
    graph: GraphFacts,
    source: LineSource | None,
    max_blocks: int = MAX_BLOCKS,
    score: LineScore | None = None,
    tests_first: bool = False,
    failures: Sequence[str] = (),
) -> Composed:
    """The extractive answer over ``hits`` in their (already chosen) order; ``score``:
    the learnt focus line's (None: the line holding most of the question's words);
    ``tests_first``: the question asks for tests (:attr:`Kind.wants_tests`);
    ``failures``: of ``messages``, those of what failed (:attr:`Parts.failures`)."""
    out = Composed(Extract(""))
    hits = _message_first(code_first(hits, kind, tests_first), source, terms, messages, failures)
    shown: list[_Shown] = []
    for hit in hits:
        if len(shown) >= max_blocks:
            break
        focus = focus_of(hit.chunk, source, terms, messages, score)
        member = None
        if focus is not None and focus.line and hit.chunk.kind == "class":
            member = graph.member_at(hit.chunk, focus.line)
        if member is not None:  # an outline's method: shown as the method itself
            hit = replace(hit, chunk=member)
            focus = focus_of(member, source, terms, messages, score)
            out.extract.context.append(Block(member.path, member.start_line, member.end_line))
        block = _block(hit, focus, source)
        if not any(_same(block, s.block) for s in shown):
            shown.append(_Shown(block, hit.chunk, focus))
    out.literal = any(s.focus is not None and s.focus.role == "message" for s in shown[:3])
    blocks = [s.block for s in shown]
    if kind == "quantity":  # the block quoting a value of what is asked leads
        valued = next((j for j, x in enumerate(shown[:3]) if _valued_quote(x)), None)
        if valued:
            shown.insert(0, shown.pop(valued))
            blocks = [x.block for x in shown]
    lead = _lead(shown[0], terms, kind == "quantity") if shown else ""
    facts: list[str] = []
    subject, namesakes = _subject(hits, terms, graph.called) if kind == "impact" else (None, [])
    if subject is not None:
        found = graph.impact(subject, hits, terms)
        out.extract.context += found.context
        hood = graph.picture(subject)
        if hood is not None:
            out.extract.neighbourhood = hood
            out.extract.picture = neighbourhood_mermaid(hood)
        facts = found.sentences
        if namesakes:  # the name is ambiguous: the other definitions are said after
            out.extract.context += [Block(c.path, c.start_line, c.end_line) for c in namesakes]
            named = ", ".join(
                f"`{c.qualname}` ({cite(c.path, c.start_line, c.end_line)})" for c in namesakes
            )
            one = "Another definition" if len(namesakes) == 1 else "Other definitions"
            facts = [*facts, f"{one} of `{subject.name}`: {named}."]
        callers = found.callers[:MAX_CALLERS]
        if callers or found.uncalled:
            # the callers at their call sites lead, code before tests (or, when no code
            # calls it, the sentence saying so and its tests)
            tests = found.tests[:1]
            kept = [b for b in blocks if not any(_same(b, c) for c in [*callers, *tests])]
            blocks = [*callers, *kept][: max_blocks - len(tests)] + tests
            lead = facts[0]
    elif shown and (raised := graph.raisers(shown[0].chunk, hits, terms)).callers:
        # an exception class leads: where it is raised comes next (the question's words
        # were in its docstring; what happens is where the code raises it)
        out.extract.context += raised.context
        sites = [b for b in raised.callers[:MAX_RAISERS] if not any(_same(b, x) for x in blocks)]
        blocks = [blocks[0], *sites, *blocks[1:]][:max_blocks]
        facts = raised.sentences
    elif kind == "how" and shown and shown[0].chunk.kind in DEFINITION_KINDS:
        found = graph.callees(shown[0].chunk)
        out.extract.context += found.context
        facts = found.sentences
    rest = [f for f in facts if f != lead]  # after the blocks: the blocks come first
    out.extract.lead, out.extract.blocks, out.extract.notes = lead, blocks, rest
    out.extract.text = render_text(lead, (), blocks, rest)
    return out


def code_first(hits: Sequence[Hit], kind: str, tests_first: bool = False) -> list[Hit]:
    """The hits with the code before tests (in their order otherwise): an answer shows
    what the code does before what checks it (on SWE-QA's projects, which this was not
    written from: lead +1.7 to +3.3 points); a question that asks for tests ("which
    tests check ...", ``tests_first``) is answered by the tests, so they come first; one
    about tests otherwise ("how does the test client send cookies") keeps its order. Of
    the tests, the test cases come before the helpers of test files (fastify's
    ``handler`` of a test file led "Which tests cover the 404 handler?")."""
    if kind == "tests":
        return (
            sorted(hits, key=lambda h: (not is_test_path(h.chunk.path), not _test_case(h.chunk)))
            if tests_first
            else list(hits)
        )
    return sorted(hits, key=lambda h: is_test_path(h.chunk.path))


def _test_case(chunk: Chunk) -> bool:
    """A test itself: a test function or method (``test_*``, ``Test*``, Go's ``Test*``),
    a test class, or a test file's module lines (JavaScript's ``it(...)`` blocks)."""
    return chunk.kind == "module" or bool(_TEST_CASE.match(chunk.name))


#: The name of a test: ``test_x``, ``TestX``, RSpec/Jest ``should ...``.
_TEST_CASE = re.compile(r"^(?:test|Test|should|it_|spec)")


def _message_first(
    hits: Sequence[Hit],
    source: LineSource | None,
    terms: Terms,
    messages: Sequence[str],
    failures: Sequence[str] = (),
) -> Sequence[Hit]:
    """Literal evidence leads: the first hit with a line writing the message the
    question quotes goes first (the line that writes a reported error is where it comes
    from; no score decides that), the code's before a doc page's or a test's (they
    quote it: flask's "Working outside of application context" is written by
    ``globals.py`` and quoted by a page of its docs). A message of what failed is
    looked for first: a pasted console's panic, not the warning printed before it."""
    for wanted in (failures, messages) if failures and failures != messages else (messages,):
        first = _writer(hits, source, terms, wanted) if wanted else None
        if first is not None:
            return [hits[first], *hits[:first], *hits[first + 1 :]]
    return hits


def _writer(
    hits: Sequence[Hit], source: LineSource | None, terms: Terms, messages: Sequence[str]
) -> int | None:
    """The index of the first hit with a line writing one of ``messages``, the first
    code hit's when there is one (None: no hit writes any)."""
    first = None
    for i, hit in enumerate(hits):
        focus = focus_of(hit.chunk, source, terms, messages)
        if focus is None or focus.role != "message":
            continue
        if not secondary_path(hit.chunk.path):
            return i  # the code's: no need to read further
        first = i if first is None else first
    return first


def _block(hit: Hit, focus: Focus | None, source: LineSource | None) -> AnswerBlock:
    c = hit.chunk
    if focus is None or not focus.line:  # nothing of it holds the question: its head
        return block_of(c, c.start_line, "definition", source)
    return block_of(c, focus.line, focus.role, source)


def _same(a: AnswerBlock, b: AnswerBlock) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def _subject(
    hits: Sequence[Hit], terms: Terms, called: Callable[[Chunk], int]
) -> tuple[Chunk | None, list[Chunk]]:
    """The definition an impact question is about: one whose name it writes (a
    documented constant too: "what breaks if I change DEFAULT_RESULT_TTL"; of several
    definitions of that name, the one the code graph ties most calls to, ``called``:
    ``make_response`` the method the app calls, not the helper only tests call), else
    the first definition outside tests. With it, when the question writes the bare
    name and not a qualified one, the other definitions of that name (its namesakes),
    so the answer can say the name is ambiguous."""
    named = [
        h.chunk for h in hits
        if h.chunk.kind in (*DEFINITION_KINDS, "constant") and not is_test_path(h.chunk.path)
    ]  # fmt: skip
    written = [c for c in named if {c.name.lower(), c.qualname.lower()} & terms.written]
    if written:  # the first of the most called (a constant is read, not called), of
        # those whose class the question names when it names one ("the type checker's
        # is_type": ``TypeChecker.is_type``, not the protocol's ``Validator.is_type``)
        subject = max(
            written,
            key=lambda c: (_owner_named(c, terms), called(c) if c.kind != "constant" else 0),
        )
        if subject.qualname.lower() in terms.written or _owner_named(subject, terms):
            return subject, []  # "Context.invoke": no other
        others = {c.qualname: c for c in written if c.qualname != subject.qualname}
        return subject, list(others.values())[:MAX_NAMESAKES]
    definitions = [c for c in named if c.kind in DEFINITION_KINDS]
    return (definitions[0] if definitions else None), []


def _owner_named(chunk: Chunk, terms: Terms) -> bool:
    """Whether the question writes every word of the name of the class a method is of."""
    owner = split_identifier(chunk.parent.rpartition(".")[2]) if chunk.parent else []
    return bool(owner) and all(word in terms.words for word in owner)


#: A number written in code, past 0 and 1 (an index, a count step, a flag): what a
#: quantity question asks for (``default=5000``, ``14 * 24 * 60 * 60``).
_NUMBER = re.compile(r"(?<![\w.])(\d{2,}|[2-9])(?![\w])")


def _valued_quote(shown: _Shown) -> str:
    """The first statement the block shows whole that holds some of the question and a
    number ('' when none)."""
    b, focus = shown.block, shown.focus
    if focus is None or focus.role == "message" or shown.chunk.language in PROSE_LANGUAGES:
        return ""
    lines = range(b.first_shown, b.first_shown + len(b.lines))
    return next(
        (t for a, z, t in focus.quotes if a in lines and z in lines and _NUMBER.search(t)), ""
    )


def _lead(first: _Shown, terms: Terms, valued: bool = False) -> str:
    """The first line: the first block's symbol and what it is or does (the message
    line it writes; for a quantity question, ``valued``, the statement holding a number
    when its docstring's summary holds none; its docstring's summary; its focus
    statement, whole; else the sentence of a comment or doc text among the lines shown
    that holds most of the question; else such a string of words it writes, a test's
    name or an option's help; else its signature)."""
    b, focus = first.block, first.focus
    where = cite(b.path, b.start_line, b.end_line)
    name = f"`{b.qualname}`" if b.qualname else f"`{b.path}`"
    if focus is not None and focus.role == "message":
        said = focus.quotes[0][2] if focus.quotes else _cut(focus.text)
        return f"{name} ({where}) writes it: `{statement(said)}`."
    summary = doc_summary(first.chunk)
    value = _valued_quote(first) if valued and not _NUMBER.search(summary) else ""
    if value:  # a quantity question: the value, before a summary that does not say it
        return f"{name} ({where}): `{statement(value).replace('`', chr(39))}`."
    if summary:
        return f"{name} ({where}): {summary}."
    # a statement is quoted only from the lines the block shows, and not the block's
    # own signature while a line of its body, a comment or a string it writes holds the
    # question (the name already says which definition it is; the signature comes last)
    shown = range(b.first_shown, b.first_shown + len(b.lines))
    quote = next(
        (
            text
            for a, b, text in (focus.quotes if focus else ())
            if a in shown and b in shown and not _is_signature(first.chunk, text)
        ),
        "",
    )
    if quote and first.chunk.language in PROSE_LANGUAGES:
        said = doc_markup(first_sentence(statement(quote).lstrip("#>*- ")))
        return f"{name} ({where}): {said}"
    if quote:
        return f"{name} ({where}): `{statement(quote).replace('`', chr(39))}`."
    said = doc_sentence(b.lines, terms)
    if said:
        return f"{name} ({where}): {said}"
    # a string of prose it writes: a test's name (``it('should error missing path')``),
    # an option's help, a warning printed
    text = prose_string(b.lines, terms)
    if text:
        return f'{name} ({where}): "{text}"' + ("" if text[-1] in ".!?" else ".")
    # else its signature, when the block shows it: what it takes and returns
    head = _signature(first.chunk) if first.chunk.start_line in shown else ""
    if head and not is_fragment(head) and first.chunk.language not in PROSE_LANGUAGES:
        return f"{name} ({where}): `{head.replace('`', chr(39))}`."
    return f"{name} ({where})."


def _cut(line: str) -> str:
    """A line of a statement that goes on below it, marked so (``f(a,`` → ``f(a, …``)."""
    flat = line.rstrip()
    return f"{flat} …" if flat.endswith((",", "(", "[", "{", "+", "\\", "&&", "||")) else flat


def _is_signature(chunk: Chunk, text: str) -> bool:
    """Whether ``text`` is (the first line of) the chunk's own signature."""
    head, said = " ".join(chunk.signature.split()), " ".join(text.split()).rstrip(":{ ")
    return bool(head and said) and head.startswith(said)


def _signature(chunk: Chunk) -> str:
    """A definition's signature on one line, as written on one: ``def f(a, b=1)``."""
    flat = " ".join(chunk.signature.split())
    flat = re.sub(r",?\s*([)\]])", r"\1", re.sub(r"([(\[])\s+", r"\1", flat))
    return statement(flat)


#: A line of a comment: its marker (``#``, ``//``, ``/*``, ``*``, ``*/``; a doc
#: comment's ``#:``, ``///`` or ``//!``), then its text.
_COMMENT_LINE = re.compile(r"^\s*(?:#+:?|//+!?|/\*+!?|\*/|\*)\s?(.*)$")
_RST_LITERAL = re.compile(r"``([^`]+)``")
#: A reStructuredText role: ``:class:`Name```, ``:py:meth:`~a.b.name```, ``:class:`Text
#: <a.b.Target>```.
_RST_ROLE = re.compile(
    r":(?:\w+:)?\w+:`(?:(?P<title>[^`<]*?)\s*<[^`>]*>|(?P<tilde>~)?(?P<target>[^`]*))`"
)


def doc_markup(text: str) -> str:
    """A doc text's reStructuredText inline markup as Markdown's: ``x`` and
    ``:class:`x``` as `x` (a role's shown text: its title, or a target's last part
    after ``~``)."""

    def role(m: re.Match[str]) -> str:
        shown = m["title"]
        if shown is None:
            shown = m["target"].rsplit(".", 1)[-1] if m["tilde"] else m["target"]
        return f"`{shown}`"

    return _RST_LITERAL.sub(r"`\1`", _RST_ROLE.sub(role, text))


#: A doc sentence quoted by a first line: at least this many words.
SENTENCE_WORDS = 4


def doc_sentence(lines: Sequence[str], terms: Terms) -> str:
    """The whole sentence of the comments and doc strings in ``lines`` (a paragraph's
    lines joined: a wrapped line is no sentence) that holds most of the question's
    words; '' when none holds any."""
    paragraphs: list[list[str]] = [[]]
    inside = ""
    for line in lines:
        text, prose = line.strip(), bool(inside)
        for quote in ('"""', "'''"):
            if (not inside or inside == quote) and text.count(quote) % 2:
                inside, prose = ("" if inside else quote), True
        comment = None if prose else _COMMENT_LINE.match(line)
        words = text.replace('"""', " ").replace("'''", " ").strip(" \\") if prose else (
            comment.group(1).strip(" */") if comment else "")  # fmt: skip
        if (prose or comment) and words:
            paragraphs[-1].append(words)
        elif paragraphs[-1]:
            paragraphs.append([])
    best, share = "", 0.0
    for paragraph in paragraphs:
        joined = " ".join(paragraph)
        for start, end in sentence_spans(joined):
            sentence = joined[start:end].strip()
            words = sentence.split()
            if sentence[-1:] not in (".", "!", "?"):
                # a comment's last words with no stop ("# Read argument from the
                # configuration file") end their thought when they end the paragraph
                if end < len(joined.rstrip()) or sum(w.isalpha() for w in words) * 2 < len(words):
                    continue
                sentence += "."
            held = terms.share(stems(sentence))
            if held > share and len(words) >= SENTENCE_WORDS:
                best, share = sentence, held
    best = doc_markup(best)
    if len(best) > QUOTE_CHARS:
        best = best[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return best


#: A string literal on one line: quoted by ", ' or `, escapes allowed.
_STRING = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'|`([^`]*)`")


def prose_string(lines: Sequence[str], terms: Terms) -> str:
    """The string literal in ``lines`` written in words (at least
    :data:`SENTENCE_WORDS`, letters and spaces mostly) that holds most of the question's
    words; '' when none holds any."""
    best, share = "", 0.0
    for line in lines:
        for m in _STRING.finditer(line):
            text = " ".join(next(g for g in m.groups() if g is not None).split())
            words = text.split()
            if len(words) < SENTENCE_WORDS or sum(w.isalpha() for w in words) * 2 < len(words):
                continue
            held = terms.share(stems(text))
            if held > share:
                best, share = text, held
    if len(best) > QUOTE_CHARS:
        best = best[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return best


#: A first line's quote: "`Name` (path:lines): `statement`." (not a message's line,
#: which says "writes it:" before its quote).
_QUOTE = re.compile(r"\): `(.*)`\.$")


def lead_quote(lead: str) -> str:
    """The statement a first line (:func:`_lead`) quotes of its block ('' when it
    quotes none, or quotes the line writing the question's message)."""
    found = _QUOTE.search(lead)
    return found.group(1) if found and "writes it" not in lead else ""


def doc_summary(chunk: Chunk) -> str:
    """The first sentence of a chunk's docstring ('' when it has none that reads)."""
    doc = chunk.docstring.strip()
    if not doc:
        return ""
    sentence = doc_markup(first_sentence(doc)).strip().rstrip(".")
    return sentence if len(_WORD.findall(sentence)) >= 2 else ""


__all__ = ["Composed", "compose", "doc_summary", "focus_of", "is_fragment", "statement"]
