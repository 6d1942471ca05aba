"""Evidence: the lines of the retrieved code that answer the question (docs/DESIGN.md §7).

Retrieval ranks chunks; an answer needs the one or two *lines* that answer: the
definition of a named constant or a default, the ``raise`` that writes a reported
message, the branch that handles the case, the docstring sentence that states the
behaviour. Every line of the top chunks is scored by

- the question's subject terms it holds (weighted by rarity in the index, stemmed),
  plus those of the symbol it lies in (its name, path, signature and docstring) — a
  line of the right function that names nothing still beats a wordy line elsewhere;
- what the question's shape wants (:mod:`.shape`): a number for "how long", a
  ``raise``/branch for "what happens when", a permission check for "who can", a
  definition or docstring for "does it support" / "where" / "how";
- literal evidence, strongest of all: a line holding the reported error message, the
  line a traceback frame names;
- the chunk's retrieval rank, and a path prior (tests, examples and docs last unless
  the question is about tests).

Each chosen line is widened to its statement (an unbalanced bracket continues it) and,
for a ``raise`` or ``return``, to the branch that controls it, so a block reads alone.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..chunking.grammars import is_code_language
from ..config import Config
from ..graph.testmap import is_test_path
from ..identifiers import tokenize
from ..retrieve.question import Question
from ..retrieve.types import Hit
from ..types import LINE_EXACT_KINDS, Chunk
from .shape import Shape
from .terms import TermWeights, stem, stems, without_contractions

#: Reads a file's lines as indexed (scrubbed); None when the file is gone.
LineSource = Callable[[str], list[str] | None]
#: Vectors of texts (one row a text) that add up: a text's is the sum of its tokens'
#: (the static model's, unnormalised), for lines' closeness to the question.
Embed = Callable[[Sequence[str]], np.ndarray]

_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_LINE_COMMENT = re.compile(r"(^|\s)(#|//)(?!\s*include).*$")
_OPEN, _CLOSE = "([{", ")]}"

ROLE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "raise",
        re.compile(
            r"^\s*(raise|throw)\b|\bpanic\(|\babort\(|errors\.New\(|fmt\.Errorf\(|"
            r"\bnew \w*(Error|Exception)\(|\bcreateError\(|\bsys\.exit\(|\bexit\(\d"
        ),
    ),
    (
        "import",
        re.compile(
            r"^\s*(import\b|from\s+\S+\s+import\b|#include\b|using\s+\w|package\s|"
            r"(var|let|const)\s+[\w${},\s]+=\s*require\(\s*['\"])"  # CommonJS: var x = require('x')
        ),
    ),
    (
        "definition",
        re.compile(
            r"^\s*(@\w|(export\s+)?(default\s+)?(async\s+)?(def|class|func|function|fn|"
            r"interface|struct|enum|impl|trait|module)\b|type\s+\w+\s+(struct|interface)\b|"
            r"(public|private|protected)\s)"
        ),
    ),
    (
        "branch",
        re.compile(
            r"^\s*(\}\s*)?(if|elif|else|except|catch|case|switch|when|match|guard|unless)\b"
        ),
    ),
    ("return", re.compile(r"^\s*return\b")),
    (
        "log",
        re.compile(
            r"\b(log(ger)?|logging|console|warnings)\.(warn\w*|error|info|debug|exception|"
            r"critical|log)\(|\bdebugPrint\w*\("
        ),
    ),
    (
        "value",
        re.compile(
            r"^\s*(const\s+|var\s+|let\s+|static\s+|final\s+)?[\w.\[\]\"']+\s*(:[^=]{1,60})?"
            r"(?<![=!<>])=(?!=)\s*\S|^\s*\w+\s*:\s*[-\d\"'(\[]|\b\w+\s*=\s*[-\d]"
        ),
    ),
)
#: A number of code: not an index into a sequence (``arguments[1]``, ``argv[-1]``).
_NUMBER = re.compile(
    r"(?<![\w.])(?<!\w\[)(?<!\w\[-)\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])|\btimedelta\(|\btime\.\w+"
)
_PERMISSION = re.compile(
    r"\b(permission\w*|scopes?|roles?|admin\w*|auth\w*|allowed|forbidden|unauthori[sz]ed|"
    r"403|401|has_perm\w*|is_(staff|superuser|authenticated)|requires?|owner|grant\w*|"
    r"access|acl|privilege\w*|can_\w+|trust\w*)\b",
    re.I,
)
#: The weight of each feature of a line (:meth:`EvidenceFinder._chunk_evidence`) in
#: its score, learnt on the answer benchmark by ``bench/answer_train.py`` (the numbers
#: and how well they carry to a project left out are in its output and BENCHMARKS.md).
EVIDENCE_WEIGHTS: dict[str, float] = {
    "own": 1.0, "near": 0.8, "about_symbol": 0.5, "about_body": 0.2, "rank": 0.5,
    "retrieval": 0.6, "secondary": -0.8, "test_for_tests": 0.3, "coarse": -0.1,
    "bridged": 0.0, "message": 3.0, "frame": 1.5, "tested": 1.0, "long_line": -0.2,
    "q_number": 0.3, "q_unit": 0.4, "q_no_number": -0.5, "wh_raise": 0.4, "wh_branch": 0.2,
    "who_check": 0.4, "how_logic": 0.1, "d_definition": 0.2, "d_doc": -0.6,
    "role_import": -0.5, "line_sim": 1.0, "chunk_sim": 0.3, "q_named": 0.5, "soft_own": 2.0,
    "q_default": 0.5, "trivial": -0.5,
    # not learnt (few questions quote values): a line holding all the values asked
    # about weighs as much as one holding its whole subject
    "q_values": 1.0,
    # not learnt, set on the answer benchmark: a limit's check (0.5 moved no answer,
    # 1.5 cost two leads)
    "q_bound": 1.0,
    # not learnt: an argument line of a call begun above (-0.2 to -0.3 give the same
    # answers, -0.5 loses a lead)
    "fragment": -0.25,
    # d_doc is not learnt either: a doc comment line answers a yes/no, where, how,
    # impact, tests or what-happens question less often than the code under it (as
    # lead 6 of 31, the lowest of any role); -0.4 to -0.8 give the same answers, 0 and
    # -0.2 fewer. A quantity's doc sentence ("The default is 31 days") is not touched
}  # fmt: skip
#: What a bridged hit's ``why`` starts with (:mod:`.context`).
BRIDGED = "code that"
_DOC_PATH = re.compile(r"(^|/)(docs?|documentation|examples?|samples?|demo|benchmarks?)/", re.I)
_PROSE_FILE = re.compile(r"\.(md|rst|txt|adoc)$", re.I)
#: At most this many lines in one piece of evidence (a statement and its branch).
MAX_BLOCK_LINES = 8
#: A function this short is shown whole; other evidence with its block around it.
SMALL_CHUNK = 25
WIDE_LINES = 10
#: Evidence this close to a better one of the same chunk is left to its block.
MERGE_GAP = 4
#: Blocks taken from one chunk.
PER_CHUNK = 2
#: A frame's weight falls by this much for each frame nearer where it failed that
#: also names a line of the context, down to the floor (0.25 let the line an outer
#: frame names lead the innermost one's ``raise``, on closeness to the report alone).
OUTER_FRAME = 0.5
OUTER_FRAME_FLOOR = 0.5
#: Lines around a line whose terms count for it, and how much.
NEAR = 4
NEAR_WEIGHT = 0.4
#: Pieces of evidence given their prose sentence and nearby value, and the lines of
#: prose read around a line for its sentence.
DESCRIBED = 2
PROSE_LINES = 6
#: How fast a chunk's retrieval rank lowers the score of its lines.
RANK_DECAY = 0.06
#: The cosine of a question term and a word of a line from which the word counts for it.
SOFT_FLOOR = 0.35
#: Lines on each side of a line embedded with it for its closeness to the question.
SIM_WINDOW = 1
#: Lines searched above a ``raise``/``return`` for the branch that controls it.
BRANCH_LOOKBACK = 6


@dataclass(frozen=True)
class Evidence:
    """Lines of one chunk chosen as evidence, with why."""

    path: str
    start_line: int
    end_line: int
    #: The displayed lines, verbatim (as indexed, secrets redacted).
    lines: tuple[str, ...]
    #: The line that earned the score.
    focus: int
    #: value, raise, branch, return, log, definition, doc, line, message, frame.
    role: str
    score: float
    chunk: Chunk
    #: The chunk's rank among the retrieved hits (0: the first).
    rank: int
    #: Share (0..1) of the question's subject weight this line and its symbol hold.
    coverage: float = 0.0
    #: What the score was computed from (:data:`EVIDENCE_WEIGHTS`).
    features: dict[str, float] = field(default_factory=dict, compare=False, repr=False)
    #: For the leading evidence (:meth:`EvidenceFinder.described`): the sentence of prose
    #: (docstring, comment, setting description) the focus line is part of, and the
    #: nearest line of the chunk that sets a number (a setting's ``default = 30``).
    sentence: str = ""
    value_line: int = 0
    value_text: str = ""
    #: In a class outline, the field the focus line sets or documents (``#: ...`` above
    #: ``permanent_session_lifetime = ...``), for the lead to name.
    member: str = ""

    @property
    def focus_text(self) -> str:
        return self.lines[self.focus - self.start_line].strip()

    @property
    def is_secondary(self) -> bool:
        """A test, an example, documentation, text: listed after the code itself."""
        return secondary(self.chunk)


def secondary_path(path: str) -> bool:
    return is_test_path(path) or bool(_DOC_PATH.search(path) or _PROSE_FILE.search(path))


def secondary(chunk: Chunk) -> bool:
    """Tests, docs, examples, and text that is not code (package metadata, data): listed
    after the code itself."""
    return secondary_path(chunk.path) or not is_code_language(chunk.language)


def line_role(text: str, chunk: Chunk) -> str:
    stripped = text.strip()
    if stripped and chunk.docstring and len(stripped) > 8:
        bare = stripped.strip("\"'/*#-! ").strip()
        if bare and bare in chunk.docstring:
            return "doc"
    if re.match(r"^\s*(#|//|/\*|\*|--)", text):
        return "doc"
    for role, pattern in ROLE_PATTERNS:
        if pattern.search(text):
            return role
    return "line"


def _depth_change(text: str) -> int:
    bare = _LINE_COMMENT.sub("", _STRINGS.sub('""', text))
    return sum(bare.count(c) for c in _OPEN) - sum(bare.count(c) for c in _CLOSE)


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
    return _module_lines(chunk, numbered) if chunk.kind == "module" else numbered


def _module_lines(chunk: Chunk, numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The lines of a module chunk's range that are its own: its content's lines, in
    order (the functions and classes inside its range are chunks of their own, and
    its ``... `` markers stand for them)."""
    where: dict[str, list[int]] = {}  # a line's text -> its indexes, in order
    for j, (_, text) in enumerate(numbered):
        where.setdefault(text, []).append(j)
    out: list[tuple[int, str]] = []
    at = 0
    for wanted in chunk.content.split("\n"):
        if not wanted.strip():  # a blank line of the content: the file's next, if blank
            if at < len(numbered) and not numbered[at][1].strip():
                out.append(numbered[at])
                at += 1
            continue
        places = where.get(wanted, [])  # a marker or a scrubbed line: in none
        k = bisect.bisect_left(places, at)
        if k < len(places):
            out.append(numbered[places[k]])
            at = places[k] + 1
    return out


def widen(ev: Evidence, source: LineSource | None) -> tuple[int, int, tuple[str, ...]]:
    """The lines shown for a piece of evidence: a small function whole, else the
    evidence with the lines of its block around it (same indentation or deeper), up to
    :data:`WIDE_LINES`."""
    lines = chunk_lines(ev.chunk, source)
    numbers = [n for n, _ in lines]
    if ev.start_line not in numbers or ev.end_line not in numbers:
        return ev.start_line, ev.end_line, ev.lines
    if ev.chunk.kind in LINE_EXACT_KINDS and len(lines) <= SMALL_CHUNK:
        return numbers[0], numbers[-1], tuple(t for _, t in lines)
    first, last = numbers.index(ev.start_line), numbers.index(ev.end_line)
    base = _indent(lines[first][1])

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
    while last > first and not lines[last][1].strip():
        last -= 1
    return numbers[first], numbers[last], tuple(t for _, t in lines[first : last + 1])


class EvidenceFinder:
    """Scores the lines of retrieved chunks for one question."""

    def __init__(
        self,
        shape: Shape,
        question: Question,
        weights: TermWeights,
        config: Config,
        source: LineSource | None = None,
        tested: Sequence[str] = (),
        embed: Embed | None = None,
    ) -> None:
        """``tested``: messages the retrieved tests assert (their raise is evidence,
        but not the question's own literal evidence); ``embed``: the static model, to
        weigh each line's closeness to the question in meaning (None: not weighed)."""
        self.shape, self.question, self.weights = shape, question, weights
        self.config, self.source, self.embed = config, source, embed
        #: (chunk id, line number) → the line's closeness to the question, 0..1 (the
        #: best line of the context: 1), and each hit's model similarity, 0..1.
        self.closeness: dict[tuple[str, int], float] = {}
        self.soft: dict[tuple[str, int], float] = {}
        self.similar: dict[str, float] = {}
        #: Frame depth → the weight of a line that frame names (:func:`_frame_weights`).
        self.frame_weights: dict[int, float] = {}
        self.messages = _message_words([*question.messages, *quoted_messages(question)])
        self.tested = _message_words(tested)
        self.units = shape.units
        self.values = quoted_values(question)
        #: A quantity question asking for a limit ("a cap on how many", "the longest URL").
        self.limit = shape.kind == "quantity" and bool(_LIMIT_ASKED.search(question.text))

    def find(self, hits: Sequence[Hit], limit: int = 8) -> list[Evidence]:
        """The best evidence in ``hits``, best first: lines of one chunk close together
        are one block, at most :data:`PER_CHUNK` blocks a chunk."""
        scored: list[Evidence] = []
        top = max((h.score for h in hits), default=0.0)
        self.measure(hits)
        for rank, hit in enumerate(hits):
            scored += self._chunk_evidence(hit, rank, top)
        scored.sort(key=lambda e: (-e.score, e.rank, e.focus))
        chosen: list[Evidence] = []
        for ev in scored:
            same = [c for c in chosen if c.chunk.id == ev.chunk.id]
            if len(same) >= PER_CHUNK or any(_overlap(ev, c, slack=MERGE_GAP) for c in same):
                continue  # the block shown of the first holds the lines around it
            if any(_overlap(ev, c) for c in chosen):
                continue
            chosen.append(ev)
            if len(chosen) == limit:
                break
        chosen[:DESCRIBED] = [self.described(ev) for ev in chosen[:DESCRIBED]]
        return chosen

    def measure(self, hits: Sequence[Hit]) -> None:
        """How close in meaning each line of ``hits`` is to the question (the line with
        the lines around it and its symbol's name, by the static model), and each hit's
        model similarity, both relative to the best of the context. Each distinct line
        is embedded once; a window's vector is the sum of its lines' (a static model's
        vectors add up)."""
        if hits and all(h.chunk.id in self.similar for h in hits):
            return  # part of the context already measured (a file's hits): keep its scale
        self.frame_weights = _frame_weights(
            {d for h in hits for d in self._frame_lines(h.chunk).values()}
        )
        best = max((h.similarity or 0.0 for h in hits), default=0.0)
        self.similar = {h.chunk.id: (h.similarity or 0.0) / best if best > 0 else 0.0 for h in hits}
        if self.embed is None:
            return
        read = [(hit.chunk, chunk_lines(hit.chunk, self.source)) for hit in hits]
        names = {chunk.id: chunk.qualname or chunk.path.rpartition("/")[2] for chunk, _ in read}
        line_texts = {(c.path, n): text.strip() for c, lines in read for n, text in lines}
        if not line_texts:
            return
        question = self.question.prose if self.question.long else self.question.text
        distinct_names = list(dict.fromkeys(names.values()))
        vectors = self.embed([question[:2000], *distinct_names, *line_texts.values()])
        query = vectors[0] / (float(np.linalg.norm(vectors[0])) or 1.0)
        name_row = dict(zip(distinct_names, vectors[1 : 1 + len(distinct_names)], strict=True))
        row = dict(zip(line_texts, vectors[1 + len(distinct_names) :], strict=True))
        found: dict[tuple[str, int], float] = {}
        for chunk, lines in read:
            stack = np.array([row[(chunk.path, n)] for n, _ in lines], dtype=np.float32)
            if not len(stack):
                continue
            # each line with its neighbours: a running sum over the window
            padded = np.vstack(
                [
                    np.zeros((SIM_WINDOW + 1, stack.shape[1]), np.float32),
                    stack,
                    np.zeros((SIM_WINDOW, stack.shape[1]), np.float32),
                ]
            )
            running = np.cumsum(padded, axis=0)
            width = 2 * SIM_WINDOW + 1
            windows = running[width:] - running[:-width]
            windows += name_row[names[chunk.id]]
            norms = np.linalg.norm(windows, axis=1)
            cosines = (windows @ query) / np.where(norms > 0, norms, 1.0)
            for (number, _), c in zip(lines, cosines, strict=True):
                found[(chunk.id, number)] = float(c)
        top = max(found.values(), default=0.0)
        if top > 0:
            self.closeness = {k: max(0.0, c) / top for k, c in found.items()}
        self.soft = self._soft_matches(read)

    def _soft_matches(
        self, read: Sequence[tuple[Chunk, list[tuple[int, str]]]]
    ) -> dict[tuple[str, int], float]:
        """(chunk id, line) → the share of the question's subject weight its words hold
        *in meaning* though not in spelling: each subject term missing from the line
        counts by its best cosine with a word of the line (static word vectors) above
        :data:`SOFT_FLOOR` ("compress" ~ ``gzip``, "wide" ~ ``width``)."""
        assert self.embed is not None
        terms = [t for t in dict.fromkeys(self.shape.subject) if stem(t) in self.weights.by_stem]
        total = self.weights.total or 1.0
        if not terms:
            return {}
        line_words: dict[tuple[str, int], list[str]] = {}
        vocabulary: dict[str, int] = {}
        for chunk, lines in read:
            for number, text in lines:
                words = [w for w in dict.fromkeys(tokenize(text)) if len(w) > 2]
                line_words[(chunk.id, number)] = words
                for w in words:
                    vocabulary.setdefault(w, len(vocabulary))
        if not vocabulary:
            return {}
        vectors = self.embed([*terms, *vocabulary])
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms > 0, norms, 1.0)
        sims = vectors[len(terms) :] @ vectors[: len(terms)].T  # word x term
        gain = np.clip((sims - SOFT_FLOOR) / (1 - SOFT_FLOOR), 0.0, 1.0)
        weights = np.array([self.weights.by_stem[stem(t)] for t in terms])
        term_stems = [stem(t) for t in terms]
        out: dict[tuple[str, int], float] = {}
        for key, words in line_words.items():
            if not words:
                continue
            held = {stem(w) for w in words}
            missing = np.array([s not in held for s in term_stems])
            best = gain[[vocabulary[w] for w in words]].max(axis=0)
            out[key] = float((best * missing) @ weights) / total
        return out

    def described(self, ev: Evidence) -> Evidence:
        """``ev`` with the prose sentence its focus line belongs to and the nearest
        line of its chunk that sets a number (see :class:`Evidence`)."""
        lines = chunk_lines(ev.chunk, self.source)
        numbers = [n for n, _ in lines]
        if ev.focus not in numbers:
            return ev
        at = numbers.index(ev.focus)
        sentence = ""
        prose = _prose_lines(lines)
        if at in prose:
            first = last = at
            while first - 1 in prose and at - first < PROSE_LINES:
                first -= 1
            while last + 1 in prose and last - at < PROSE_LINES:
                last += 1
            sentence = _sentence_at(
                lines[first : last + 1],
                at - first,
                self.units if self.shape.kind == "quantity" else None,
            )
        value_line, value_text = 0, ""
        for j in sorted(range(len(lines)), key=lambda j: abs(j - at)):
            if abs(j - at) > NEAR:
                break
            text = lines[j][1]
            code = _LINE_COMMENT.sub("", _STRINGS.sub('""', text))
            if line_role(text, ev.chunk) == "value" and _NUMBER.search(code):
                value_line, value_text = lines[j][0], text.strip()
                break
        member = _member(lines, at) if ev.chunk.kind == "class" else ""
        return replace(
            ev, sentence=sentence, value_line=value_line, value_text=value_text, member=member
        )

    def with_handler(self, evidence: list[Evidence], hits: Sequence[Hit]) -> list[Evidence]:
        """When the best evidence raises an exception, the code among ``hits`` that
        catches it (what the caller sees: ``except MultiPartException: raise
        HTTPException(status_code=400)``) as the second piece of evidence."""
        if not evidence or evidence[0].role not in ("raise", "message"):
            return evidence
        raised = _RAISED.search(" ".join(evidence[0].lines))
        if raised is None:
            return evidence
        name = raised.group(1).rpartition(".")[2]
        catch = re.compile(
            rf"^\s*(\}}\s*)?(except\b[^:]*\b{re.escape(name)}\b|catch\s*\(\s*(\w+\s+)?"
            rf"[\w.]*{re.escape(name)}\b)"
        )
        for rank, hit in enumerate(hits):
            if secondary(hit.chunk):  # a test catching it is not what a caller sees
                continue
            lines = chunk_lines(hit.chunk, self.source)
            for i, (number, text) in enumerate(lines):
                if not catch.search(text):
                    continue
                end = i
                while end + 1 < len(lines) and end - i < 4:
                    end += 1
                    if ROLE_PATTERNS[0][1].search(lines[end][1]) or lines[end][
                        1
                    ].strip().startswith("return"):
                        break
                shown = tuple(t for _, t in lines[i : end + 1])
                handler = Evidence(
                    hit.chunk.path, number, lines[end][0], shown, lines[end][0], "handler",
                    evidence[0].score, hit.chunk, rank, evidence[0].coverage,
                )  # fmt: skip
                rest = [e for e in evidence[1:] if not _overlap(e, handler)]
                return [evidence[0], handler, *rest]
        return evidence

    def _chunk_evidence(self, hit: Hit, rank: int, top: float) -> list[Evidence]:
        chunk = hit.chunk
        lines = chunk_lines(chunk, self.source)
        if not lines:
            return []
        w = self.weights
        total = w.total or 1.0
        symbol = stems(
            f"{chunk.name} {chunk.qualname} {chunk.path.rpartition('/')[2]} "
            f"{chunk.signature} {chunk.docstring[:400]}"
        )
        body = stems(chunk.content)
        common = {
            "about_symbol": w.matched(symbol) / total,
            "about_body": w.matched(body - symbol) / total,
            "rank": 1 / (1 + RANK_DECAY * rank),
            "retrieval": hit.score / top if top > 0 else 0.0,
            "secondary": float(secondary(chunk) and self.shape.kind != "tests"),
            "test_for_tests": float(is_test_path(chunk.path) and self.shape.kind == "tests"),
            "coarse": float(chunk.kind not in LINE_EXACT_KINDS),
            "bridged": float(hit.why.startswith(BRIDGED)),
            "chunk_sim": self.similar.get(chunk.id, 0.0),
        }
        frames = self._frame_lines(chunk)
        line_stems = [stems(text) for _, text in lines]
        depths = [_depth_change(text) for _, text in lines]
        named = stems(chunk.name)  # a setting named by its unit: ``class Timeout(Setting)``
        open_before = list(itertools.accumulate(depths, initial=0))[:-1]
        out = []
        for i, (number, text) in enumerate(lines):
            bare = text.strip()
            if len(bare.strip("{}()[];,:\"'`*/#-=")) < 3 or _SECTION.match(bare):
                continue  # punctuation, a docstring's quotes, "Args:", "----------"
            role = line_role(text, chunk)
            found = line_stems[i]
            if role in _STATEMENT_ROLES and depths[i] > 0:
                # a statement over several lines is read whole: ``raise TypeError(`` and
                # the message written on the lines after it
                found = found.union(*line_stems[i + 1 : _statement_end(depths, i) + 1])
            near = frozenset().union(*line_stems[max(0, i - NEAR) : i + NEAR + 1]) - found
            features = dict(common)
            features.update(self._line_features(role, text, found, named))
            features["own"] = w.matched(found) / total
            features["line_sim"] = self.closeness.get((chunk.id, number), 0.0)
            features["soft_own"] = self.soft.get((chunk.id, number), 0.0)
            features["near"] = w.matched(near) / total
            literal = _message_match(lines, i, self.messages)
            features["message"] = literal
            features["frame"] = (
                self.frame_weights.get(frames[number], 1.0) if number in frames else 0.0
            )
            features["tested"] = self._tested(lines, i) if not is_test_path(chunk.path) else 0.0
            # an argument of a call begun on a line above (``data=data.decode("utf-8"),``)
            # is a fragment of its statement; a parameter of a signature is not
            features["fragment"] = float(
                self.shape.kind != "quantity"
                and open_before[i] > 0
                and text.rstrip().endswith(",")
                and role in ("value", "line")
                and not self._inside_signature(lines, i, depths)
            )
            if literal:
                role = "message"
            elif features["frame"]:
                role = "frame"
            elif features["tested"] >= 0.5 and role == "line":
                role = "raise"
            coverage = (
                1.0
                if literal or features["frame"]
                else min(1.0, features["own"] + 0.6 * w.matched(symbol - found) / total)
            )
            score = sum(EVIDENCE_WEIGHTS.get(k, 0.0) * v for k, v in features.items())
            first, last = self._block(lines, i, role, depths)
            start, end = lines[first][0], lines[last][0]
            shown = tuple(t for _, t in lines[first : last + 1])
            out.append(
                Evidence(
                    chunk.path,
                    start,
                    end,
                    shown,
                    number,
                    role,
                    score,
                    chunk,
                    rank,
                    coverage,
                    features,
                )
            )
        return out

    def _line_features(
        self, role: str, text: str, found: frozenset[str], named: frozenset[str] = frozenset()
    ) -> dict[str, float]:
        """What kind of line it is, and how that fits the question's shape (``named``:
        the stems of its symbol's name)."""
        kind = self.shape.kind
        code = _LINE_COMMENT.sub("", _STRINGS.sub('""', text))  # "01 Jan 1970" is no number
        # a comment's number is a quantity when a unit follows it ("# 14 days, in
        # seconds"), not a version or an issue ("# TODO remove this arg in 3.0")
        number = bool(_NUMBER.search(code)) or bool(_COMMENT_QUANTITY.search(text))
        unit = bool(found & self.units) or bool(found & _DEFAULT_STEMS)
        out = {
            f"role_{role}": 1.0,
            "long_line": float(len(text.strip()) > 200),
            "trivial": float(bool(_TRIVIAL.match(text))),
        }
        if self.values and role != "doc":  # the values quoted, as literals of code
            out["q_values"] = _held_values(text, self.values)
        if kind == "quantity":
            out["q_number"] = float(number)
            out["q_unit"] = float(number and unit)
            out["q_no_number"] = float(not number)
            # the number is set under a name of the unit asked: ``DEFAULT_RESULT_TTL = 500``,
            # ``default = 30`` in ``class Timeout``
            target = _ASSIGNED.match(code)
            assigned = stems(target.group(1)) if target else frozenset()
            out["q_named"] = float(number and bool((assigned | named) & self.units))
            # ... and that name says it is the default of that unit (``DEFAULT_RESULT_TTL =
            # 500``, ``default = 30`` in ``class Timeout``; ``self.default = 0`` in
            # ``Option.__init__`` names no unit)
            out["q_default"] = float(
                number and bool(assigned & _DEFAULT_STEMS) and bool((assigned | named) & self.units)
            )
            # a limit asked for ("a cap on how many", "the longest URL") is enforced where
            # a size is compared with its bound: ``assert1(finalSize < int(abortIndex), ...)``
            out["q_bound"] = float(self.limit and bool(_COMPARISON.search(code)))
            if out["q_bound"]:  # its bound is a name (``size < int(abortIndex)``): no lack
                out["q_no_number"] = 0.0
        elif kind in ("what-happens", "error"):
            out["wh_raise"] = float(role in ("raise", "log"))
            out["wh_branch"] = float(role in ("branch", "return"))
        elif kind == "who":
            out["who_check"] = float(bool(_PERMISSION.search(text)))
        elif kind == "how":
            out["how_logic"] = float(role in ("branch", "return", "line", "value"))
        if kind in ("yesno", "where", "how", "impact", "tests"):
            out["d_definition"] = float(role == "definition")
        if kind in ("yesno", "where", "how", "impact", "tests", "what-happens"):
            out["d_doc"] = float(role == "doc")
        return out

    def _frame_lines(self, chunk: Chunk) -> dict[int, int]:
        """Lines of this chunk that a traceback frame of the question names, each with
        the innermost such frame's depth."""
        out: dict[int, int] = {}
        for frame in self.question.frames:
            path = frame.path.replace("\\", "/").lstrip("./")
            if (chunk.path == path or path.endswith("/" + chunk.path)) and (
                chunk.start_line <= frame.line <= chunk.end_line
            ):
                out[frame.line] = min(out.get(frame.line, frame.depth), frame.depth)
        return out

    def _tested(self, lines: list[tuple[int, str]], i: int) -> float:
        """The share of a message the retrieved tests assert that line ``i`` writes."""
        return _message_match(lines, i, self.tested)

    # --- the block shown around a line ------------------------------------------------
    def _block(
        self, lines: list[tuple[int, str]], i: int, role: str, depths: Sequence[int]
    ) -> tuple[int, int]:
        """The indexes of the first and last line shown for line ``i`` (``depths``: each
        line's change of bracket depth)."""
        start, end = i, _statement_end(depths, i)
        signature = role == "value" and self._inside_signature(lines, i, depths)
        if not signature:  # a continuation line: start at its statement
            back, depth = i, 0
            while back > 0 and i - back < 3:
                depth += depths[back - 1]
                if depth <= 0:
                    break
                back -= 1
            start = back if depth > 0 else start
        if role in ("raise", "return", "message", "log"):
            indent = _indent(lines[start][1])
            for j in range(start - 1, max(-1, start - BRANCH_LOOKBACK - 1), -1):
                text = lines[j][1]
                if text.strip() and _indent(text) < indent:
                    if ROLE_PATTERNS[3][1].search(text) and end - j < MAX_BLOCK_LINES:
                        start = j
                    break
        return start, end

    @staticmethod
    def _inside_signature(lines: list[tuple[int, str]], i: int, depths: Sequence[int]) -> bool:
        """Whether line ``i`` is a parameter line of a definition that opened above."""
        depth = 0
        for j in range(i - 1, max(-1, i - 40), -1):
            depth += depths[j]
            if depth > 0:
                return bool(ROLE_PATTERNS[2][1].search(lines[j][1]))
        return False


#: Roles whose line may open a statement continued on the lines after it.
_STATEMENT_ROLES = frozenset({"raise", "log", "return"})


def _statement_end(depths: Sequence[int], i: int) -> int:
    """The index of the last line of the statement that line ``i`` opens (its brackets
    closed), at most :data:`MAX_BLOCK_LINES` lines on."""
    depth, end = depths[i], i
    while depth > 0 and end + 1 < len(depths) and end - i < MAX_BLOCK_LINES - 1:
        end += 1
        depth += depths[end]
    return end


def _frame_weights(landed: set[int]) -> dict[int, float]:
    """Frame depth → its weight among the frames that name lines of the context
    (``landed``): 1 for the innermost (where it failed), :data:`OUTER_FRAME` less for
    each frame further out, down to :data:`OUTER_FRAME_FLOOR`."""
    return {d: max(OUTER_FRAME_FLOOR, 1.0 - OUTER_FRAME * n) for n, d in enumerate(sorted(landed))}


_DEFAULT_STEMS = frozenset(stems("default defaults DEFAULT"))
_LIMIT_ASKED = re.compile(
    r"\b(limit\w*|caps?|capped|ceiling|max\w*|longest|largest|biggest|at most|too (many|much|"
    r"long|big|large)|how (many|much|big|large) .{0,50}\bcan)\b",
    re.I,
)
#: A comparison written with spaces around it (not ``List<String>``, ``<-``, ``=>``).
_COMPARISON = re.compile(r"\s(<|<=|>|>=)\s")
#: Lines that say next to nothing alone: a parameter stored under its own name
#: (``self.app = app``), a bare decorator (``@t.overload``), ``pass``.
_TRIVIAL = re.compile(
    r"^\s*((self|this)\.(?P<name>\w+)\s*=\s*(?P=name)\s*;?|@[\w.]+|pass|return;?|super\(\)\.__init__\(\))\s*$"
)
#: The headings of a docstring's sections ("Args:", "Returns", "Parameters").
DOC_SECTIONS = (
    r"args|arguments|params|parameters|returns?|yields?|raises|examples?|notes?|attributes"
)
#: A docstring's section heading (and "See also", "Todo", ":Example:"...): it says
#: nothing by itself.
_SECTION = re.compile(rf"^[\"'#*/ ]*:?({DOC_SECTIONS}|see also|todo|usage|warning)::?\s*$", re.I)
#: A number with its unit in a line comment (``# 14 days``, ``// 32 MB``).
_COMMENT_QUANTITY = re.compile(
    r"(#|//).*?(?<![\w.])\d+(?:\.\d+)?\s*(?:ms|s|secs?|seconds?|minutes?|mins?|hours?|h|"
    r"days?|weeks?|years?|bytes?|[kmgt]i?b|kilobytes?|megabytes?|gigabytes?|%|percent|"
    r"times|retries|attempts|workers|threads|connections|requests|items|entries|lines|"
    r"characters|chars|columns)\b",
    re.I,
)
#: The name a line assigns to (``self.max_age = ...``, ``TTL: int = ...``).
_ASSIGNED = re.compile(
    r"^\s*(?:const\s+|var\s+|let\s+)?([\w.]+)\s*(?::[^=]{1,60})?(?<![=!<>])=(?!=)"
)


def _message_match(lines: list[tuple[int, str]], i: int, messages: list[list[str]]) -> float:
    """The best share of a message's three-word runs that line ``i`` (with the next two
    lines: a message may continue) writes in a string."""
    if not messages or not _STRINGS.search(lines[i][1]):
        return 0.0
    text = " ".join(t for _, t in lines[i : i + 3])
    words = re.findall(r"[a-z]+", text.lower())
    grams = {tuple(words[j : j + 3]) for j in range(len(words) - 2)}
    best = 0.0
    for message in messages:
        own = [tuple(message[j : j + 3]) for j in range(len(message) - 2)]
        if own:
            best = max(best, sum(g in grams for g in own) / len(own))
    return best


_RAISED = re.compile(r"(?:raise|throw)\s+(?:new\s+)?([\w.]+)")
_QUOTED = re.compile(r"[\"'“‘`]([^\"'”’`\n]{12,})[\"'”’`]")
_ASSERTS = re.compile(r"\b(assert\w*|raises|match|expect\w*|==|toThrow|Equal|message|error)", re.I)


def quoted_messages(question: Question) -> list[str]:
    """Messages a short question quotes ("why do I get 'Headers were already written'")."""
    if question.long:
        return []
    text = without_contractions(question.text)  # "don't ... it's" quotes nothing
    return [m.group(1) for m in _QUOTED.finditer(text) if len(m.group(1).split()) >= 3]


#: A short value a question quotes: 'on', "y", '1', `strict routing` (not a message).
_QUOTED_VALUE = re.compile(r"(?<![\w'\"`])['\"“‘`]([^'\"”’`\n]{1,20})['\"”’`](?![\w'\"`])")


def quoted_values(question: Question) -> frozenset[str]:
    """The short values a short question quotes, lower-cased ("Will a yes/no setting
    accept 'on', 'off', 'y' or '1'?"): the line whose string literals hold them is the
    one that decides."""
    if question.long:
        return frozenset()
    text = without_contractions(question.text)
    return frozenset(
        m.group(1).strip().lower()
        for m in _QUOTED_VALUE.finditer(text)
        if m.group(1).strip() and len(m.group(1).split()) <= 2
    )


def _held_values(text: str, values: frozenset[str]) -> float:
    """The share of ``values`` written as string literals of a line."""
    literals = {m.group(0)[1:-1].strip().lower() for m in _STRINGS.finditer(text)}
    return len(values & literals) / len(values)


def tested_messages(hits: Sequence[Hit]) -> dict[str, list[str]]:
    """Hit id → the messages its test asserts (string literals of three words or more
    on assertion lines), for the test hits among ``hits``."""
    out: dict[str, list[str]] = {}
    for hit in hits:
        if not is_test_path(hit.chunk.path):
            continue
        found = []
        for line in hit.chunk.content.split("\n"):
            if _ASSERTS.search(line):
                found += [
                    m.group(1) for m in _QUOTED.finditer(line) if len(m.group(1).split()) >= 3
                ]
        if found:
            out[hit.chunk.id] = list(dict.fromkeys(found))[:3]
    return out


def _message_words(texts: Sequence[str]) -> list[list[str]]:
    """Messages' literal words (quoted values and numbers vary: dropped)."""
    out = []
    for text in texts:
        literal = re.sub(r"'[^']*'|\"[^\"]*\"|<[^>]*>|\{[^}]*\}|\S*\d\S*", " ", text)
        words = re.findall(r"[a-z]+", literal.lower())
        if len(words) >= 3:
            out.append(words)
    return out


#: A line that is a comment (or a line of a block comment).
_COMMENT_LINE = re.compile(r"^\s*(#|//|/\*|\*)")


def _prose_lines(lines: list[tuple[int, str]]) -> set[int]:
    """Indexes of the lines that are prose: inside a triple-quoted string (a docstring,
    a setting's description) or a comment, with three words or more."""
    out: set[int] = set()
    inside = False
    for i, (_, text) in enumerate(lines):
        quotes = text.count('"""') + text.count("'''")
        in_string = inside or quotes > 0
        comment = bool(_COMMENT_LINE.match(text))
        words = re.findall(r"[A-Za-z]{2,}", text)
        if (in_string or comment) and len(words) >= 3:
            out.add(i)
        if quotes % 2:
            inside = not inside
    return out


#: Words whose period ends no sentence.
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


_DOC_MARK = re.compile(r"^(#|//)(:|/|!)\s?")


def _sentence_at(block: list[tuple[int, str]], at: int, units: frozenset[str] | None = None) -> str:
    """The sentence of a paragraph (lines of prose) that holds line ``at``: the one it
    starts in, or with ``units`` (the stems of the unit a question asks how much or how
    long of) the first sentence of that line that states a number with a unit or as a
    default ("... of a permanent session.  The default is 31 days ...", not "... a 413
    error is raised")."""
    # "#: text" is a documentation comment (Sphinx), its colon no part of the text
    parts = [" ".join(_DOC_MARK.sub("", t.strip()).strip("\"'#/*").split()) for _, t in block]
    before = " ".join(parts[:at])
    text = " ".join(p for p in parts if p)
    start = len(before) + (1 if before else 0)
    end = start + len(parts[at])
    spans = [(s, e) for s, e in sentence_spans(text) if e > start and (s < end or s >= start)]
    if units is not None:
        stated = [(s, e) for s, e in spans if s < end and _states_quantity(text[s:e], units)]
        spans = stated[:1] or spans
    for s, e in spans[:1]:
        found = text[s:e].strip()
        return found if len(found) <= 300 else found[:299] + "…"
    return parts[at]


#: A field of a class body: ``name = ...``, ``name: T = ...``, ``public int name = ...``.
_FIELD = re.compile(r"^(\s*)(?:(?:public|private|protected|static|final|readonly)\s+)*"
                    r"(?:[\w.<>\[\]]+\s+)?([A-Za-z_]\w*)\s*(?::[^=]{1,80})?=(?![=>])")  # fmt: skip


def _member(lines: list[tuple[int, str]], at: int) -> str:
    """The field of a class body that line ``at`` sets, or documents as a comment block
    above it (read down to the first line of code at its indentation)."""
    text = lines[at][1]
    indent = _indent(text)
    for _, line in lines[at : at + PROSE_LINES + 2]:
        if not line.strip():
            continue
        if _indent(line) != indent:
            return ""
        if _COMMENT_LINE.match(line):
            continue
        m = _FIELD.match(line)
        statement = re.match(r"\s*(def|class|if|for|while|return)\b", line)
        return m.group(2) if m and not statement else ""
    return ""


def _states_quantity(sentence: str, units: frozenset[str]) -> bool:
    """Whether a sentence states a quantity: a number with a word of its unit next to
    it ("31 days", "days=31") or after "default" ("the default is 30"); not any number
    ("a 413 error is raised")."""
    words = re.findall(r"\w+", sentence)
    for i, word in enumerate(words):
        if not word.isdigit():
            continue
        beside = {stem(w) for w in words[max(0, i - 2) : i + 3]} - {stem(word)}
        before = {stem(w) for w in words[max(0, i - 3) : i]}
        if beside & units or before & _DEFAULT_STEMS:
            return True
    return False


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _overlap(a: Evidence, b: Evidence, slack: int = 0) -> bool:
    return (
        a.path == b.path
        and a.start_line <= b.end_line + slack
        and b.start_line <= a.end_line + slack
    )
