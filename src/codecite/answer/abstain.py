"""Whether to answer, and how sure the answer is (docs/DESIGN.md §7).

Signals, all from the question, the index and the evidence (no model needed):

- ``literal``: the question carries literal evidence found in the code — a reported
  error message written by a line, a traceback frame on an indexed line, a path of an
  indexed file. Such a question is never declined;
- ``absent``: the share of the question's subject weight (:mod:`.terms`) carried by
  terms that no indexed chunk contains ("keychain", "Firebase" in a web framework);
- ``context``: the share of the subject weight found in the top retrieved chunks and
  the chunks of the best evidence;
- ``evidence``: the share held by the best evidence line and its symbol;
- ``similarity``: the best cosine similarity of a retrieved chunk (model vectors; not
  measured while they are missing, and then not used);
- ``phrases``: for a question asking yes or no (a yes/no question, or a quantity or
  what-happens one phrased as one: "Is there a per-IP rate limit?"), the share of its
  subject's adjacent term pairs ("rate limiting", "Google account") that some
  retrieved chunk holds both of, and ``best_chunk``: the largest share of its subject
  terms one retrieved chunk holds. A capability no retrieved code names even in part is
  not shown by the code.

A word of the question that describes a concept the code has its own words for
("bandwidth", "compress" ~ ``gzip``; :mod:`codecite.retrieve.concepts`) counts as found
where one of those words is, and as absent only when none is in the code; a name
("PowerShell") never stands for its kind.

Declined when not literal and the question is about something the index lacks
(``absent`` ≥ ``abstain_max_absent``), when its retrieved context covers too
little of it (``context`` < ``abstain_min_coverage`` and ``similarity`` <
``abstain_min_similarity``), or when it asks yes or no about something whose phrases
no retrieved chunk holds together (``phrases`` 0 and ``best_chunk`` <
``abstain_yesno_chunk_share``), or part of which no code holds while no chunk holds
most of the rest (``best_chunk`` < ``abstain_yesno_partial_share`` and ``absent`` ≥
``abstain_yesno_absent``). The
thresholds are config fields, calibrated by ``bench/answer_bench.py`` (their measured
ranges are noted in config.py).

Confidence levels (``Answer.confidence``):

- ``high``: literal evidence, or the lead line and its symbol hold nearly all of the
  question's subject (``evidence`` ≥ ``confidence_high``) in the code itself;
- ``medium``: the lead covers a good part of it (``evidence`` ≥ ``confidence_medium``);
- ``low``: related code, but the lead covers little of the question: read the blocks;
- ``none``: declined ("not enough information in the indexed code").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from ..config import Config
from ..retrieve.concepts import concept_matches
from ..retrieve.intent import QueryInfo, symbol_candidates
from ..retrieve.question import Question
from ..retrieve.types import Hit
from .evidence import Evidence
from .shape import Shape
from .terms import TermWeights, specific_terms, stem, stems

#: The last parts of dotted words that are file names, not symbols.
FILE_SUFFIXES = frozenset(
    "html htm css js mjs ts tsx jsx py go rb java kt rs php json yaml yml toml ini cfg md "
    "rst txt xml csv sh".split()
)
#: Top hits whose text counts for ``context``.
CONTEXT_HITS = 3
LEVELS = ("none", "low", "medium", "high")


@dataclass(frozen=True)
class Signals:
    literal: bool
    absent: float
    context: float
    evidence: float
    #: The best cosine similarity of a hit (None: the index has no model vectors yet).
    similarity: float | None
    #: Specific terms of the question (names: ``Celery``, ``keychain``) no code holds.
    missing_names: tuple[str, ...] = ()
    #: ``context`` counting only the terms other than the missing names.
    rest_context: float = 0.0
    #: The missing names that are everyday words written capitalised (``Germany``,
    #: ``VIP``): values the code may call otherwise, so they decline only a question
    #: whose other terms the retrieved code misses too.
    soft_names: tuple[str, ...] = ()
    #: A long question (a pasted report): its words are the reporter's, its own code's.
    long: bool = False
    #: A yes/no question: the share of its subject's adjacent term pairs some retrieved
    #: chunk holds both of (None: not yes/no, or fewer than two subject terms), and
    #: the largest share of its subject terms one retrieved chunk holds.
    phrases: float | None = None
    best_chunk: float = 1.0

    def to_json(self) -> dict[str, float | bool | list[str] | None]:
        return {
            "literal": self.literal,
            "missing_names": list(self.missing_names),
            "rest_context": round(self.rest_context, 4),
            "absent": round(self.absent, 4),
            "context": round(self.context, 4),
            "evidence": round(self.evidence, 4),
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "phrases": None if self.phrases is None else round(self.phrases, 4),
            "best_chunk": round(self.best_chunk, 4),
        }


def signals(
    question: Question,
    info: QueryInfo,
    weights: TermWeights,
    hits: Sequence[Hit],
    evidence: Sequence[Evidence],
    shape: Shape,
    described: Mapping[str, frozenset[str]] | None = None,
) -> Signals:
    """The signals (see the module); ``described``: the question's terms that describe
    a concept the code has words for (:func:`described_terms`), each found where one of
    those words is ("bandwidth" where ``gzip`` is), and never absent."""
    read = [h.chunk for h in hits[:CONTEXT_HITS]] + [e.chunk for e in evidence[:CONTEXT_HITS]]
    text = " ".join(
        f"{c.path} {c.qualname} {c.docstring} {c.content}" for c in {c.id: c for c in read}.values()
    )
    literal = any(e.role in ("message", "frame") for e in evidence)
    if question.paths:
        indexed = {h.chunk.path for h in hits}
        literal = literal or any(
            p == path or path.endswith("/" + p) for p in question.paths for path in indexed
        )
    if info.identifiers and not literal:  # a symbol the question names, found
        named = {
            n
            for i in info.identifiers
            for n in symbol_candidates(i)[:2]
            if n.lower() not in FILE_SUFFIXES  # "index.html" names no symbol "html"
        }
        literal = any(h.chunk.qualname in named or h.chunk.name in named for h in hits)
    # None while the index has no model vectors: closeness is then not measured
    similarity = max((h.similarity for h in hits if h.similarity is not None), default=None)
    # A pasted report names the reporter's own code (their modules, their functions):
    # only a short question's names must be in the indexed code.
    names = {} if question.long else specific_terms(question.text)
    # a name ("PowerShell") is what it is: the code's words for its kind do not stand in
    stand_in = {t: words for t, words in (described or {}).items() if not names.get(t)}

    def read_as(found: frozenset[str]) -> frozenset[str]:
        return found | {stem(t) for t, words in stand_in.items() if words & found}

    missing = tuple(t for t in weights.absent if t in names and t not in stand_in)
    found = read_as(stems(text))
    return Signals(
        literal,
        weights.absent_share(without=stand_in),
        weights.share(found),
        max((e.coverage for e in evidence[:1]), default=0.0),
        similarity,
        missing,
        weights.share(found, without=missing),
        tuple(t for t in missing if not names[t]),
        question.long,
        *(_phrases(shape, hits, read_as) if _asks_yes_or_no(shape) else (None, 1.0)),
    )


def described_terms(
    text: str, weights: TermWeights, sought: TermWeights
) -> dict[str, frozenset[str]]:
    """The question's terms (of ``weights``) that describe a concept the code has words
    for (:func:`~codecite.retrieve.concepts.concept_matches`, the words found in the
    code by ``sought``): term → the stems of those words."""
    out: dict[str, frozenset[str]] = {}
    for said, words in concept_matches(text):
        present = frozenset(stem(w) for w in words if sought.present.get(w, False))
        if not present:
            continue
        for term in said:
            if term in weights.df:
                out[term] = out.get(term, frozenset()) | present
    return out


def _asks_yes_or_no(shape: Shape) -> bool:
    """Whether the question asks yes or no about a capability: a yes/no question, or
    one of another shape phrased as one ("Is there a built-in per-IP rate limit?",
    "Do we collect usage analytics ...?"), but not one asking whether tests exist
    (its subject is the test's whole case, rarely held by one chunk)."""
    return shape.kind == "yesno" or (shape.polar and shape.kind != "tests")


def _phrases(
    shape: Shape, hits: Sequence[Hit], read_as: Callable[[frozenset[str]], frozenset[str]]
) -> tuple[float | None, float]:
    """(the share of the subject's adjacent term pairs one retrieved chunk holds both
    of, the largest share of the subject's terms one chunk holds), each chunk read as
    its path, name, doc comment and code, by stems (``read_as``: with the terms its
    words stand for)."""
    terms = list(dict.fromkeys(stem(t) for t in shape.subject))
    pairs = {(a, b) for a, b in pairwise(terms)}
    if not pairs:
        return None, 1.0
    texts = [
        read_as(stems(f"{h.chunk.path} {h.chunk.qualname} {h.chunk.docstring} {h.chunk.content}"))
        for h in hits
    ]
    held = sum(1 for a, b in pairs if any(a in t and b in t for t in texts))
    best = max((sum(1 for term in terms if term in t) for t in texts), default=0)
    return held / len(pairs), best / len(terms)


def declines(s: Signals, config: Config) -> bool:
    """Whether the question should get "not enough information" (see the module)."""
    if s.literal:
        return False
    if set(s.missing_names) - set(s.soft_names):
        return True
    if s.soft_names and (
        s.rest_context < config.answer.abstain_soft_name_context
        or s.absent >= config.answer.abstain_soft_name_absent
    ):
        return True
    if s.absent >= config.answer.abstain_max_absent and not s.long:
        return True
    if s.phrases is not None and not s.long:
        if s.phrases == 0 and s.best_chunk < config.answer.abstain_yesno_chunk_share:
            return True
        if (
            s.best_chunk < config.answer.abstain_yesno_partial_share
            and s.absent >= config.answer.abstain_yesno_absent
        ):
            return True
    if s.similarity is None:  # no model vectors yet: the context alone does not decide
        return False
    return (
        s.context < config.answer.abstain_min_coverage
        and s.similarity < config.answer.abstain_min_similarity
    )


def level(s: Signals, declined: bool, lead: Evidence | None, config: Config) -> str:
    if declined:
        return "none"
    if s.literal:
        return "high"
    if lead is not None and s.evidence >= config.answer.confidence_high and not lead.is_secondary:
        return "high"
    if s.evidence >= config.answer.confidence_medium:
        return "medium"
    return "low"
