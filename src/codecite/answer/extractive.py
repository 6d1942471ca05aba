"""The offline answer: built from the retrieved code without a generative model,
so it is grounded by construction. For each top symbol: one line saying what it
is (its docstring, else its signature), the lines most relevant to the question
quoted with their line numbers, and the graph facts that fit the question
(callers and tests for impact questions, callees for "how", tests for QA).
Every statement carries a ``path:start-end`` citation to indexed code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..retrieve.expand import GraphStore
from ..retrieve.intent import QueryInfo
from ..retrieve.keyword import STOPWORDS
from ..retrieve.types import Hit
from ..tokens import tokenize
from ..types import LINE_EXACT_KINDS, Chunk
from .citations import Block, cite

#: Graph facts listed per symbol and per kind of edge.
MAX_FACTS = 4
_SENTENCE = re.compile(r"(.+?[.!?])(\s|$)", re.S)
_COMMENT_ONLY = re.compile(r"^\s*(#|//|/\*|\*|--|;)")


@dataclass
class Extract:
    """An extractive answer and the blocks it cites."""

    text: str
    blocks: list[Block] = field(default_factory=list)


def first_sentence(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    m = _SENTENCE.match(flat)
    sentence = m.group(1) if m else flat
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def _terms(info: QueryInfo) -> dict[str, float]:
    """Question terms and their weights: identifiers' parts count double."""
    weights = {t: 1.0 for t in tokenize(info.text) if t not in STOPWORDS and len(t) > 2}
    for identifier in info.identifiers:
        for t in tokenize(identifier):
            if t not in STOPWORDS:
                weights[t] = 2.0
    return weights


def relevant_lines(
    chunk: Chunk, terms: dict[str, float], limit: int = 3, skip: str = ""
) -> list[tuple[int | None, str]]:
    """(line number, text) of the lines sharing most terms with the question; lines
    already said in ``skip`` (the description) and the signature are left out. The
    line number is None for chunks whose content is not the file's lines verbatim
    (class skeletons, module headers)."""
    if not terms:
        return []
    exact = chunk.kind in LINE_EXACT_KINDS
    said = " ".join(f"{skip} {chunk.signature}".split())
    scored = []
    for offset, line in enumerate(chunk.content.split("\n")):
        text = line.strip()
        bare = text.strip("\"'/*# ").rstrip(":{")
        if len(bare) < 4 or " ".join(bare.split()) in said:
            continue
        score = sum(terms.get(t, 0.0) for t in set(tokenize(text)))
        if _COMMENT_ONLY.match(text):
            score *= 0.8
        if score > 0:
            scored.append((score, offset, text))
    best = sorted(scored, key=lambda s: (-s[0], s[1]))[:limit]
    return [
        (chunk.start_line + offset if exact else None, text)
        for _, offset, text in sorted(best, key=lambda s: s[1])
    ]


def describe(chunk: Chunk) -> str:
    """What a chunk is, in one line: its docstring's first sentence, else its signature."""
    if chunk.docstring.strip():
        return first_sentence(chunk.docstring)
    if chunk.signature.strip():
        return f"`{' '.join(chunk.signature.split())}`"
    first = next((ln.strip() for ln in chunk.content.split("\n") if ln.strip()), "")
    return f"`{first[:160]}`"


class ExtractiveAnswerer:
    """Builds extractive answers from hits, with graph facts from the store."""

    def __init__(self, store: GraphStore, max_symbols: int = 5) -> None:
        self.store, self.max_symbols = store, max_symbols

    def answer(self, info: QueryInfo, hits: Sequence[Hit]) -> Extract:
        out = Extract("")
        terms = _terms(info)
        picked = self._pick(hits)
        lines = [f"From the indexed code ({len(picked)} most relevant places):", ""]
        for number, hit in enumerate(picked, start=1):
            lines += self._symbol(number, hit, info, terms, out)
        out.text = "\n".join(lines).rstrip() + "\n"
        return out

    def _pick(self, hits: Sequence[Hit]) -> list[Hit]:
        seen: set[tuple[str, str]] = set()
        picked = []
        for hit in hits:
            key = (hit.chunk.path, hit.chunk.qualname)
            if key not in seen:
                seen.add(key)
                picked.append(hit)
            if len(picked) == self.max_symbols:
                break
        return picked

    def _symbol(
        self, number: int, hit: Hit, info: QueryInfo, terms: dict[str, float], out: Extract
    ) -> list[str]:
        c = hit.chunk
        where = cite(c.path, c.start_line, c.end_line)
        out.blocks.append(Block(c.path, c.start_line, c.end_line))
        description = describe(c)
        lines = [f"{number}. `{c.qualname}` ({c.kind}, {where}): {description}"]
        for line_no, text in relevant_lines(c, terms, skip=description):
            if line_no is None:
                lines.append(f"   > {text}  ({where})")
            else:
                lines.append(f"   > {line_no}: {text}  ({cite(c.path, line_no, line_no)})")
        lines += [f"   - {fact}" for fact in self._facts(c, info.intent, out)]
        return [*lines, ""]

    def _facts(self, chunk: Chunk, intent: str, out: Extract) -> list[str]:
        """Graph facts that fit the question, each citing the other end."""
        wanted = {
            "impact": (("calls", "in", "called by"), ("tests", "in", "tested by")),
            "tests": (("tests", "in", "tested by"),),
            "explain": (("calls", "out", "calls"),),
            "locate": (("calls", "in", "called by"),),
        }.get(intent, ())
        facts: list[str] = []
        testers = {e.src for e in self.store.edges_to(chunk.id, "tests")}
        for kind, direction, phrase in wanted:
            edges = (
                self.store.edges_to(chunk.id, kind)
                if direction == "in"
                else self.store.edges_from(chunk.id, kind)
            )
            ids = [e.src if direction == "in" else e.dst for e in edges]
            if phrase == "called by" and intent == "impact":  # tests are listed as such
                ids = [i for i in ids if i not in testers]
            ids = ids[:MAX_FACTS]
            others = self.store.get_chunks(ids)
            for other in (others[i] for i in ids if i in others):
                out.blocks.append(Block(other.path, other.start_line, other.end_line))
                facts.append(
                    f"{phrase} `{other.qualname}` in "
                    f"{cite(other.path, other.start_line, other.end_line)}"
                )
        return facts
