"""Answering, wired from its stages:

    question ─► search (intent-aware, packed to a budget) ─► confidence check
             ─► extractive answer | prompt ─► LLM ─► citation check ─► Answer

When retrieval confidence is low the answer says "not enough information in the
indexed code" before any model is asked. Every citation in the final text is
checked against the context; unverified ones are flagged, never silently kept.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..retrieve import Searcher
from ..retrieve.intent import QueryInfo, analyse
from ..retrieve.keyword import STOPWORDS
from ..retrieve.search import append_query_log
from ..retrieve.types import Filters, Hit, mark_stale
from ..scrub import scrub
from ..tokens import tokenize
from ..types import LINE_EXACT_KINDS, Skipped
from ..walk import read_source
from .citations import Block, Citation, check_citations, citation_flags
from .extractive import ExtractiveAnswerer
from .llm import EXTRACTIVE, LLM
from .prompt import INSUFFICIENT, build_messages

log = logging.getLogger(__name__)

#: Top hits whose text counts for the question-term coverage.
COVERAGE_HITS = 5


@dataclass
class Answer:
    question: str
    answer: str
    citations: list[Citation]
    sources: list[Hit]
    insufficient: bool
    llm: str
    intent: str = "locate"
    confidence: dict[str, float] = field(default_factory=dict)
    #: Problems found by the citation check ("2 citations not in the context", ...).
    flags: list[str] = field(default_factory=list)
    #: Why this LLM was used (for ``--llm auto``).
    llm_reason: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``ask --json`` (DESIGN.md section 8), plus intent, confidence and flags."""
        return {
            "question": self.question,
            "answer": self.answer,
            "citations": [c.to_json() for c in self.citations],
            "sources": [h.to_json() for h in self.sources],
            "insufficient": self.insufficient,
            "llm": self.llm,
            "llm_reason": self.llm_reason,
            "intent": self.intent,
            "confidence": self.confidence,
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


def confidence(info: QueryInfo, hits: Sequence[Hit]) -> dict[str, float]:
    """Retrieval confidence signals: the best cosine similarity of a hit, and the
    share of the question's terms that occur in the top hits."""
    terms = {t for t in tokenize(info.text) if t not in STOPWORDS and len(t) > 2}
    seen: set[str] = set()
    for hit in hits[:COVERAGE_HITS]:
        c = hit.chunk
        seen.update(tokenize(f"{c.path} {c.qualname} {c.docstring} {c.content}"))
    similarity = max((h.similarity for h in hits if h.similarity is not None), default=0.0)
    coverage = len(terms & seen) / len(terms) if terms else 0.0
    return {"similarity": round(similarity, 4), "coverage": round(coverage, 4)}


def is_insufficient(signals: dict[str, float], min_similarity: float, min_coverage: float) -> bool:
    return signals["similarity"] < min_similarity and signals["coverage"] < min_coverage


class Answerer:
    """Answers questions over one index with one searcher (models loaded once)."""

    def __init__(
        self, searcher: Searcher, log_dir: Path | None = None, root: Path | None = None
    ) -> None:
        """``log_dir``: where the query log is appended (None: no log); ``root``: the
        repository on disk, to check that cited lines still say what was indexed."""
        self.searcher, self.config, self.log_dir = searcher, searcher.config, log_dir
        self.root = root
        self.extractive = ExtractiveAnswerer(searcher.store, self.config.answer_max_symbols)

    def ask(
        self,
        question: str,
        *,
        llm: LLM | None = None,
        llm_reason: str = "",
        filters: Filters | None = None,
        k: int = 12,
        on_token: Callable[[str], None] | None = None,
        stale: Sequence[str] = (),
    ) -> Answer:
        """Answer ``question`` with ``llm`` (None: the extractive answer, no model);
        ``llm_reason`` says why that one was chosen (``--llm auto``); sources from the
        files in ``stale`` (changed on disk, not re-indexed) are marked stale."""
        draft = self.prepare(
            question, llm=llm, llm_reason=llm_reason, filters=filters, k=k, stale=stale
        )
        text = (
            None if draft.messages is None or llm is None else (self.generate(draft, llm, on_token))
        )
        return self.finish(draft, text)

    # The three steps of ``ask``, for callers that run the model elsewhere (a stream
    # in another thread): only ``generate`` is slow, and it touches no store.
    def prepare(
        self,
        question: str,
        *,
        llm: LLM | None = None,
        llm_reason: str = "",
        filters: Filters | None = None,
        k: int = 12,
        stale: Sequence[str] = (),
    ) -> Draft:
        """Retrieve, check confidence, and answer at once when no model is needed
        (abstention, extractive); else leave the prompt in ``Draft.messages``."""
        started = time.perf_counter()
        result = self.searcher.search(
            question, k=k, filters=filters, budget=self.config.answer_context_tokens
        )
        info = result.info or analyse(question)
        hits = self.searcher.fill_similarity(question, mark_stale(result.hits, list(stale)))
        signals = confidence(info, hits)
        answer = Answer(
            question,
            "",
            [],
            hits,
            False,
            llm.name if llm else EXTRACTIVE,
            info.intent,
            signals,
            llm_reason=llm_reason,
            timings_ms=dict(result.timings_ms),
        )
        draft = Draft(answer, started)
        if not hits or is_insufficient(
            signals, self.config.abstain_min_similarity, self.config.abstain_min_coverage
        ):
            answer.insufficient = True
            answer.answer = self._abstain(hits)
        elif llm is None:
            extract = self.extractive.answer(info, hits)
            answer.answer = extract.text
            self._check(answer, [*_blocks(hits), *extract.blocks])
        else:
            draft.messages = build_messages(question, hits, info.intent)
        return draft

    def generate(
        self, draft: Draft, llm: LLM, on_token: Callable[[str], None] | None = None
    ) -> str:
        """The model's answer to the draft's prompt (streamed to ``on_token``)."""
        assert draft.messages is not None, "nothing to generate: the draft is answered"
        return llm.complete(
            draft.messages, max_tokens=self.config.answer_max_tokens, on_token=on_token
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

    def _abstain(self, hits: Sequence[Hit]) -> str:
        text = f"Not enough information in the indexed code to answer this ({INSUFFICIENT})."
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
        """The file's lines now, scrubbed as indexing scrubs them (None: gone)."""
        assert self.root is not None
        read = read_source(self.root / path, path)
        if isinstance(read, Skipped):
            return None
        return scrub(read[0], self.config, path=path).text.split("\n")

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


def _blocks(hits: Sequence[Hit]) -> list[Block]:
    return [Block(h.chunk.path, h.chunk.start_line, h.chunk.end_line) for h in hits]
