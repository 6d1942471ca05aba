"""Answering, wired from its stages (stated once, on :meth:`Answerer.prepare`)::

    question read once ─► search (the hits ``search`` returns) ─► learnt order
        ─► learnt abstention ─► first line + blocks | prompt ─► LLM ─► citation check

A question the model judges not to be about the indexed code says "not enough
information in the indexed code" before any model is asked. Every citation in the final
text is checked against the context; unverified ones are flagged, never silently kept.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Generator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..chunking.grammars import GRAMMARS
from ..embed.static import LINE_MODEL_NAME, named_embedder
from ..errors import EmbeddingError
from ..filetext import display_text
from ..graph.paths import is_declaration_file
from ..identifiers import split_identifier
from ..picture.model import Neighbourhood
from ..question import read
from ..question.terms import Terms
from ..retrieve import Searcher
from ..retrieve.pack import pack
from ..retrieve.parts import framed_files
from ..retrieve.querylog import append_query_log
from ..retrieve.types import Filters, Hit, mark_stale
from ..types import LINE_EXACT_KINDS, Chunk
from .blocks import AnswerBlock
from .citations import Block, Citation, check_citations, citation_flags
from .compose import compose
from .facts import GraphFacts
from .features import CANDIDATES, EVIDENCE_HITS, Embed, code_holds, observe, question_features
from .focus import line_scores
from .llm import EXTRACTIVE, LLM
from .model import answer_model
from .prompt import INSUFFICIENT, build_messages
from .streaming import stream_pieces
from .wording import join_hyphenated

log = logging.getLogger(__name__)

#: Hits an answer is composed from and lists as its sources (what ``search`` lists by
#: default).
SEARCH_K = 10
#: Hits an answer asks search for: those, and those the answer model reads.
ASKED_K = max(SEARCH_K, CANDIDATES, EVIDENCE_HITS)
#: While the model tier fills (right after ``codecite index``), search's first
#: candidates embedded now and ranked by the model's cosine, as the complete tier ranks
#: them (``Searcher.search``'s ``spot``; BENCHMARKS.md stop 52: 16 and 32 measured).
SPOT = 32


@dataclass
class Answer:
    question: str
    answer: str
    citations: list[Citation]
    sources: list[Hit]
    insufficient: bool
    llm: str
    intent: str = "locate"
    #: How sure the answer is: "high", "medium", "low", or "none" (declined); see
    #: :mod:`codecite.answer.model` (levels ordered by measured accuracy on held-out projects).
    confidence: str = "low"
    #: The numbers behind ``confidence`` and abstention.
    signals: dict[str, float | bool | list[str] | None] = field(default_factory=dict)
    #: Problems found by the citation check ("2 citations not in the context", ...).
    flags: list[str] = field(default_factory=list)
    #: Why this LLM was used (for ``--llm auto``).
    llm_reason: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: The question's shape (yesno, quantity, where, how, what-happens, impact, tests,
    #: error, who) and, for extractive answers, its lead sentence and evidence blocks.
    shape: str = ""
    lead: str = ""
    blocks: list[AnswerBlock] = field(default_factory=list)
    #: For "what breaks if I change X" (extractive): X, its callers two hops out and
    #: its tests, as a Mermaid diagram; "" otherwise. ``neighbourhood``: the same as
    #: data (what the web page draws as SVG); None otherwise.
    picture: str = ""
    neighbourhood: Neighbourhood | None = None
    #: Extractive: sentences after the blocks naming further places to read, each cited
    #: (the other sites that raise an exception, what the lead calls, more callers).
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``ask --json`` (DESIGN.md section 8), plus the answer's shape, lead, blocks,
        confidence and its signals, and flags."""
        return {
            "question": self.question,
            "answer": self.answer,
            "lead": self.lead,
            "blocks": [b.to_json() for b in self.blocks],
            "notes": list(self.notes),
            "citations": [c.to_json() for c in self.citations],
            "sources": [h.to_json() for h in self.sources],
            "insufficient": self.insufficient,
            "confidence": self.confidence,
            "signals": self.signals,
            "shape": self.shape,
            "picture": self.picture,
            "neighbourhood": self.neighbourhood.to_json() if self.neighbourhood else None,
            "llm": self.llm,
            "llm_reason": self.llm_reason,
            "intent": self.intent,
            "flags": self.flags,
            "timings_ms": self.timings_ms,
        }


@dataclass
class Draft:
    """An answer between retrieval and generation: ``messages`` is the prompt still to
    send to a model, or None when the answer is already complete."""

    answer: Answer
    started: float
    messages: list[dict[str, str]] | None = None


class Answerer:
    """Answers questions over one index with one searcher (models loaded once)."""

    def __init__(
        self, searcher: Searcher, log_dir: Path | None = None, root: Path | None = None
    ) -> None:
        """``log_dir``: where the query log is appended (None: no log); ``root``: the
        repository on disk, to check that cited lines still say what was indexed."""
        self.searcher, self.config, self.log_dir = searcher, searcher.config, log_dir
        self.root = root

    def ask(
        self,
        question: str,
        *,
        llm: LLM | None = None,
        llm_reason: str = "",
        filters: Filters | None = None,
        on_token: Callable[[str], None] | None = None,
        stale: Sequence[str] = (),
    ) -> Answer:
        """Answer ``question`` with ``llm`` (None: the extractive answer, no model);
        ``llm_reason`` says why that one was chosen (``--llm auto``); sources from the
        files in ``stale`` (changed on disk, not re-indexed) are marked stale."""
        steps = answer_steps(
            self,
            lambda: self.prepare(
                question, llm=llm, llm_reason=llm_reason, filters=filters, stale=stale
            ),
            llm,
            on_token=on_token,
        )
        return run_steps(steps)

    # The three steps of ``ask``, for callers that run the model elsewhere (a stream
    # in another thread): only ``generate`` is slow, and it touches no store.
    def prepare(
        self,
        question: str,
        *,
        llm: LLM | None = None,
        llm_reason: str = "",
        filters: Filters | None = None,
        stale: Sequence[str] = (),
    ) -> Draft:
        """The stages of an answer (DESIGN.md §7), in order:

        1. **read** the question once (its parts, its shape, its terms weighed by rarity);
        2. **search**: the hits ``search`` returns for it, in search's order;
        3. **order**: the answer model (:mod:`.model`, learnt from open data) orders
           search's first hits of code (what it learnt to judge; docs and documented
           constants keep their places in search's order, its pick leads unless search
           put a documented constant first: :func:`learnt_order`), where the hits
           carry the search model's cosine it learnt with (an index with no model tier:
           search's order, the floor every answer figure is reported beside); code
           before tests, tests first when the question asks which tests check it;
        4. **abstain**: the model's probability that the indexed code answers the
           question at all, and its probability that the first block is right (the
           confidence), read from search's first ``EVIDENCE_HITS`` hits; a question
           whose quoted message a cited line writes, or whose pasted trace runs through
           indexed files, is never declined;
        5. **compose**: the first line and the blocks (:mod:`.compose`), or the prompt
           for a model (the ordered hits, packed to a budget);

        then :meth:`finish` checks every citation. A model's answer comes between."""
        started = time.perf_counter()
        asked = read(question)
        result = self.searcher.search(asked, k=ASKED_K, filters=filters, spot=SPOT)
        hits = mark_stale(result.hits, list(stale))
        top = self.searcher.fill_similarity(question, hits[:EVIDENCE_HITS])
        stats = self.searcher.term_stats
        holds = code_holds(self.searcher.store, stats.df)
        seen = observe(asked, top, stats.df, stats.documents, line_embedder(), holds)
        model = answer_model() if self.config.answer.answer_model else None
        ordered = model.order(seen.features) if model is not None else None
        shown = tuple(range(min(len(top), CANDIDATES)))  # search's order: the floor
        if ordered is not None and any(top[i].similarity is not None for i in shown):
            judged = [judged_by_model(top[i].chunk) for i in shown]
            # a documented constant search put first (by its doc's words: "how long are
            # results kept") stays first: the model never learnt to judge one; so does a
            # definition whose name the question writes as words (its written_name
            # feature sees identifiers only)
            first_kept = top[0].chunk.kind == "constant" or name_in_words(top[0].chunk, asked.text)
            shown = learnt_order(ordered.order, self.config.answer.answer_order, judged, first_kept)
        hits = [*(top[i] for i in shown), *top[len(shown) :], *hits[len(top) :]][:SEARCH_K]
        lines = _LineCache(self._disk_lines if self.root is not None else None)
        score = None
        if model is not None and model.line_weights is not None:
            score = _line_score(model.line_weights, asked.subject, seen.terms)
        composed = compose(
            asked.kind.name, hits, seen.terms, asked.parts.messages,
            GraphFacts(self.searcher.store, lines), lines, self.config.answer.answer_max_blocks,
            score, asked.kind.wants_tests, asked.parts.failures,
        )  # fmt: skip
        # a pasted trace through indexed files: the question is about this code
        framed = framed_files(self.searcher.store, asked.parts, filters)
        signals: dict[str, Any] = {"literal": composed.literal, "unknown": round(seen.unknown, 4)}
        if framed:
            signals["framed"] = framed[:3]
        confidence = "low"
        declined = not hits
        if model is not None and ordered is not None and hits:
            features = question_features(
                seen.evidence,
                ordered.probs,
                shown,
                seen.unknown,
                len(seen.terms.stems),
                seen.soft_unknown,
                seen.absent,
            )
            signals["answers"] = round(model.answers(features), 4)
            signals["right_first"] = round(model.right_first(features), 4)
            declined = not composed.literal and not framed and model.declines(features)
            confidence = "high" if composed.literal else model.level(features)
        answer = Answer(
            question, "", [], hits, declined, llm.name if llm else EXTRACTIVE, asked.info.intent,
            "none" if declined else confidence, signals, llm_reason=llm_reason,
            timings_ms=dict(result.timings_ms), shape=asked.kind.name,
        )  # fmt: skip
        answer.timings_ms["order"] = round((time.perf_counter() - started) * 1000, 3)
        draft = Draft(answer, started)
        if declined:
            answer.answer = self._abstain(hits, seen.unknown_names, seen.terms.words, question)
        elif llm is None:
            extract = composed.extract
            answer.answer, answer.lead, answer.blocks = extract.text, extract.lead, extract.blocks
            answer.picture, answer.neighbourhood = extract.picture, extract.neighbourhood
            answer.notes = extract.notes
            self._check(answer, [*_blocks(hits), *extract.context])
        else:  # the model sees the ordered hits, packed to the answer's budget
            answer.sources = pack(
                hits, self.config.answer.answer_context_tokens, self.config.search.chars_per_token
            )
            draft.messages = build_messages(
                question, answer.sources, asked.info.intent, composed.extract.blocks,
                asked.kind.name,
            )  # fmt: skip
        return draft

    def generate(
        self, draft: Draft, llm: LLM, on_token: Callable[[str], None] | None = None
    ) -> str:
        """The model's answer to the draft's prompt (streamed to ``on_token``)."""
        assert draft.messages is not None, "nothing to generate: the draft is answered"
        return llm.complete(
            draft.messages, max_tokens=self.config.answer.answer_max_tokens, on_token=on_token
        )

    def finish(self, draft: Draft, text: str | None) -> Answer:
        """The answer with ``text`` (a generated answer; None: the draft's own) checked:
        citations verified against the context, flags set, the query logged."""
        answer = draft.answer
        if text is not None:
            answer.answer = text
            answer.insufficient = INSUFFICIENT in text.lower()
            self._check(answer, _blocks(answer.sources))
        answer.timings_ms["answer_total"] = round((time.perf_counter() - draft.started) * 1000, 3)
        self._log(answer)
        return answer

    def _abstain(
        self, hits: Sequence[Hit], names: Sequence[str], words: Sequence[str], question: str
    ) -> str:
        """Declining: the names no indexed code mentions, what was searched for, and the
        closest code (ordinary words missing from the code are not listed: they say
        nothing about whether the code answers; a hyphenated word is listed whole)."""
        text = "Not enough information in the indexed code to answer this."
        # a name's parts ("graph", "ql" of "graphql") are not listed beside it
        words = [w for w in words if not any(w in n for n in names)]
        names, words = join_hyphenated(question, names, words)
        if names:
            text += f" No indexed code mentions {_listed(names)}."
        if words:
            text += f" Searched for {_listed(words)}."
        if hits:
            text += " The closest code found, which does not appear to answer it:\n"
            text += "\n".join(
                f"- {h.chunk.path}:{h.chunk.start_line}-{h.chunk.end_line} {h.chunk.qualname}"
                for h in hits[:3]
            )
        return text + "\n"

    def _check(self, answer: Answer, blocks: Sequence[Block]) -> None:
        answer.citations = self._on_disk(check_citations(answer.answer, blocks), answer.flags)
        answer.flags.extend(citation_flags(answer.citations))
        verified = {(c.path, c.start_line, c.end_line) for c in answer.citations if c.verified}
        answer.blocks = [
            replace(b, verified=(b.path, b.start_line, b.end_line) in verified)
            for b in answer.blocks
        ]
        if any(h.stale for h in answer.sources):
            answer.flags.append(
                "some sources come from files changed since indexing (marked stale); "
                "run `codecite index` to refresh them"
            )
        if not answer.citations and not answer.insufficient and answer.sources:
            answer.flags.append("the answer cites nothing although context was retrieved")

    def _on_disk(self, citations: list[Citation], flags: list[str]) -> list[Citation]:
        """A verified citation whose lines no longer say on disk what was indexed (the
        file changed or is gone) is not verified any more."""
        if self.root is None:
            return citations
        changed: list[str] = []
        files: dict[str, tuple[dict[int, str], list[str] | None]] = {}
        out = []
        for c in citations:
            if c.verified:
                if c.path not in files:
                    files[c.path] = (self._indexed_lines(c.path), self._disk_lines(c.path))
                indexed, disk = files[c.path]
                if disk is None or any(
                    n > len(disk) or disk[n - 1] != line
                    for n, line in indexed.items()
                    if c.start_line <= n <= c.end_line
                ):
                    changed.append(c.text)
                    c = replace(c, verified=False)
            out.append(c)
        if changed:
            flags.append(
                f"{len(changed)} citation(s) point at lines that changed on disk since "
                f"indexing: {', '.join(changed)}"
            )
        return out

    def _indexed_lines(self, path: str) -> dict[int, str]:
        """Line number → text as indexed, from the chunks that hold exact lines."""
        lines: dict[int, str] = {}
        for chunk in self.searcher.store.chunks(path):
            if chunk.path == path and chunk.kind in LINE_EXACT_KINDS:
                for i, line in enumerate(chunk.content.split("\n")):
                    lines.setdefault(chunk.start_line + i, line)
        return lines

    def _disk_lines(self, path: str) -> list[str] | None:
        """The file's lines now, scrubbed as indexing scrubs them (None: gone), read by
        the one reader of file text for display (:mod:`codecite.filetext`)."""
        assert self.root is not None
        text = display_text(self.root, path, self.config)
        return None if text is None else text.split("\n")

    def _log(self, answer: Answer) -> None:
        if self.config.query_log and self.log_dir is not None:
            append_query_log(
                self.log_dir,
                {
                    "type": "ask",
                    "query": answer.question,
                    "intent": answer.intent,
                    "chunk_ids": [h.chunk.id for h in answer.sources],
                    "answer": answer.answer,
                    "llm": answer.llm,
                    "insufficient": answer.insufficient,
                    "timings_ms": answer.timings_ms,
                },
            )


def answer_steps(
    answerer: Answerer,
    prepare: Callable[[], Draft],
    llm: LLM | None,
    *,
    hold: Callable[[], AbstractContextManager[Any]] = nullcontext,
    stream: bool = False,
    on_token: Callable[[str], None] | None = None,
) -> Generator[str, None, Answer]:
    """The one ask driver: ``prepare()`` (retrieval, evidence, abstention; an answer
    that needs no model is complete there) → :meth:`Answerer.generate` (the model
    writes the answer: the only slow step, and it touches no index) →
    :meth:`Answerer.finish` (citations checked, the query logged).

    ``hold()`` is entered around each step that reads the index (a server's
    per-repository lock; store damage reporting), never around the model call. With
    ``stream`` the model runs in a worker thread and its pieces are yielded as they
    arrive; else it runs here, passing them to ``on_token``. Returns the checked
    :class:`Answer` (``answer = yield from answer_steps(...)``; :func:`run_steps`)."""
    with hold():
        draft = prepare()
    text: str | None = None
    if draft.messages is not None and llm is not None:
        model = llm
        if stream:
            text = yield from stream_pieces(lambda piece: answerer.generate(draft, model, piece))
        else:
            text = answerer.generate(draft, model, on_token)
    with hold():
        return answerer.finish(draft, text)


def run_steps(steps: Generator[str, None, Answer]) -> Answer:
    """The answer :func:`answer_steps` returns, its pieces (if any) dropped."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            answer: Answer = done.value
            return answer


def learnt_order(
    order: Sequence[int], how: str, judged: Sequence[bool] | None = None, first_kept: bool = False
) -> tuple[int, ...]:
    """The blocks' order (indexes into search's first hits) from the model's ``order``.
    ``judged``: the hits the model learnt to judge (code: its training indexes held only
    code files, no docs, no config); the others keep their places in search's order and
    are never its pick. "model": the model's pick first, then its order among the hits
    it judges, the others in their places; "lead": its pick first, then search's order
    (a variant: 3.7 points less of the right definition in the first three on held-out
    docstring questions, 3.8 on commit subjects, lower on 23 of 24 projects each);
    "search": search's order. ``first_kept``: search's first hit stays first (a
    documented constant, which the model never judged; a definition whose name the
    question writes in words, :func:`name_in_words`), the model's order after it."""
    searched = tuple(sorted(order))
    ok = [True] * len(searched) if judged is None else [bool(j) for j in judged]
    picks = [i for i in order if ok[i]]
    if how == "search" or not picks:
        return searched
    if how == "lead":
        return searched if first_kept else (picks[0], *(i for i in searched if i != picks[0]))
    slots = iter(picks)
    placed = tuple(next(slots) if ok[i] else i for i in searched)
    first = searched[0] if first_kept else picks[0]
    return (first, *(i for i in placed if i != first))


#: A word of a question, an identifier's parts apart (``default_environment``: two).
_WORD = re.compile(r"[A-Za-z0-9]+")


def name_in_words(chunk: Chunk, text: str) -> bool:
    """Whether ``text`` writes a definition's name of two words or more as those words
    in order ("the default environment" for ``default_environment``)."""
    words = split_identifier(chunk.name)
    if len(words) < 2 or chunk.kind not in ("function", "method", "class"):
        return False
    said = [w.lower() for w in _WORD.findall(text)]
    n = len(words)
    return any(said[i : i + n] == words for i in range(len(said) - n + 1))


def _line_score(
    weights: np.ndarray, subject: str, terms: Terms
) -> Callable[[Sequence[str], Sequence[bool]], np.ndarray]:
    """The learnt focus score of a block's lines for this question (:mod:`.focus`)."""
    static = line_embedder()

    def score(texts: Sequence[str], whole: Sequence[bool]) -> np.ndarray:
        return line_scores(weights, subject, texts, whole, terms, static)

    return score


def judged_by_model(chunk: Chunk) -> bool:
    """Whether the answer model may move ``chunk`` in search's order: code, as in its
    training. A documented constant never answered a training question (they were
    functions, methods and classes), nor did a declaration file's signature
    (``index.d.ts``: the types of code written elsewhere); docs neither: each of those
    keeps its place."""
    return (
        chunk.language in GRAMMARS
        and chunk.kind != "constant"
        and not is_declaration_file(chunk.path)
    )


def line_embedder() -> Embed | None:
    """Static vectors of texts, for the answer model's question-to-chunk closeness: the
    table it was trained with (``LINE_MODEL_NAME``, whatever the static tier searches
    with; shipped in the package: loaded once; the vectors of texts seen by earlier
    answers are kept); None when it cannot be loaded."""
    try:
        embedder = named_embedder(LINE_MODEL_NAME)
    except EmbeddingError as exc:
        log.warning("answers are ordered without the static model's closeness: %s", exc)
        return None
    with _MEMOS_LOCK:
        memo = _MEMOS.get(embedder.name)
        if memo is None:
            memo = _MEMOS[embedder.name] = _TextVectors(embedder.sums)
    return memo


class _TextVectors:
    """``sums`` with the rows of the last :data:`TEXT_VECTORS` texts kept (answers over
    one index read the same lines and words again)."""

    def __init__(self, sums: Embed) -> None:
        self.sums = sums
        self.rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self.lock = threading.Lock()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return self.sums([])
        with self.lock:
            known = {t: self.rows[t] for t in texts if t in self.rows}
            for t in known:
                self.rows.move_to_end(t)
        new = list(dict.fromkeys(t for t in texts if t not in known))
        if new:
            computed = self.sums(new)
            with self.lock:
                for t, row in zip(new, computed, strict=True):
                    known[t] = self.rows[t] = row
                while len(self.rows) > TEXT_VECTORS:
                    self.rows.popitem(last=False)
        return np.array([known[t] for t in texts], dtype=np.float32)


#: Texts whose static vectors are kept between answers (about 12 MB at 256 dimensions).
TEXT_VECTORS = 12_000
_MEMOS: dict[str, _TextVectors] = {}
_MEMOS_LOCK = threading.Lock()


def _blocks(hits: Sequence[Hit]) -> list[Block]:
    return [Block(h.chunk.path, h.chunk.start_line, h.chunk.end_line) for h in hits]


def _listed(terms: Sequence[str], limit: int = 6) -> str:
    shown = [f"“{t}”" for t in terms[:limit]]
    return ", ".join(shown) + (", …" if len(terms) > limit else "")


class _LineCache:
    """A file's lines as indexed (scrubbed), read once per answer."""

    def __init__(self, read: Callable[[str], list[str] | None] | None) -> None:
        self.read = read
        self.files: dict[str, list[str] | None] = {}

    def __call__(self, path: str) -> list[str] | None:
        if self.read is None:
            return None
        if path not in self.files:
            self.files[path] = self.read(path)
        return self.files[path]
