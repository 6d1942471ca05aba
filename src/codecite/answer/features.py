"""What the learnt answer model reads of a question and of search's top hits (issue 38).

The same function computes the features when the model is trained
(``scripts/train_answer_model``: questions mined from docstrings of many projects,
asked of indexes that cannot see those docstrings) and when ``ask`` orders its blocks,
so the two can never drift. Every feature is a number in about [0, 1]; none names a
project, a word list or a benchmark question:

- where search put the hit (its rank, its score relative to the top, its keyword and
  vector ranks, whether graph expansion brought it);
- what kind of code it is (definition, class, module, docs or text, a test);
- how much of the question it holds: the rarity-weighted share of the question's terms
  (lightly stemmed) in its name, its path and its body, and the cosine of the question
  with the chunk in the static code model and (when there) the search model;
- whether the question writes the hit's name as an identifier;
- where in it the question is: the largest share of the question's terms within a few
  lines, and its line closest to the question in the static code model.

:func:`question_features` summarises a whole retrieval for abstention and confidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..chunking.grammars import GRAMMARS
from ..embed.text import embed_text
from ..filters import Filters
from ..graph.testmap import is_test_path
from ..identifiers import split_identifier
from ..question import Question
from ..question.terms import Terms, specific_terms, stem, stems
from ..retrieve.types import Hit
from ..store.protocols import KeywordIndex
from ..types import Chunk

#: The per-hit features, in the order of the model's weights.
HIT_FEATURES = (
    "rank_recip", "first", "score_rel", "keyword_recip", "vector_recip", "graph",
    "definition", "class", "module", "prose", "test", "asks_tests_and_test",
    "name_share", "path_share", "body_share", "body_share_rel", "static_cos",
    "static_cos_rel", "model_cos", "has_model_cos", "written_name", "log_lines",
    "window_share", "window_share_rel", "line_cos", "line_cos_rel",
)  # fmt: skip
#: The features of a whole retrieval (abstention, confidence).
QUESTION_FEATURES = (
    "top_prob", "top_body_share", "top_name_share", "best_static_cos", "best_model_cos",
    "has_model_cos", "unknown_name_share", "log_terms", "unknown_soft_share",
    "best_window_share", "best_line_cos", "top_window_share", "has_unknown_name",
    "absent_share",
)  # fmt: skip
#: Chunks of code (every language tree-sitter parses): not docs, not text.
CODE_ONLY = Filters(languages=tuple(GRAMMARS))
#: Hits of search's list the model reads and may reorder (16 and 24, refitted, measured
#: and not kept: BENCHMARKS.md stop 54).
CANDIDATES = 8
#: Hits of search's list whose best evidence (closest in meaning, most of the question's
#: words) tells abstention whether the code answers at all, and confidence how sure the
#: first block is: more than the order's candidates (BENCHMARKS.md stop 54: other
#: projects' docstring questions declined 47% -> 51% at the same 0.5% of their own).
EVIDENCE_HITS = 16
#: Lines of the window in which a hit's terms are counted together (the question's
#: words close together, not scattered over a long function).
WINDOW = 6

_PROSE = frozenset({"markdown", "text", "rst"})
_DEFINITIONS = frozenset({"function", "method"})

Embed = Callable[[Sequence[str]], np.ndarray]


def hit_features(
    question: str,
    terms: Terms,
    hits: Sequence[Hit],
    static: Embed | None,
    tests_asked: bool = False,
) -> np.ndarray:
    """float32 (len(hits), len(HIT_FEATURES)): the features of search's top hits."""
    n = len(hits)
    out = np.zeros((n, len(HIT_FEATURES)), dtype=np.float32)
    if not n:
        return out
    top_score = max(hits[0].score, 1e-9)
    bodies = [stems(f"{h.chunk.qualname} {h.chunk.content}") for h in hits]
    body = np.array([terms.share(b) for b in bodies], dtype=np.float32)
    cos = _cosines(question, [h.chunk for h in hits], static)
    window = np.array([_window_share(terms, h.chunk) for h in hits], dtype=np.float32)
    line = _line_cosines(question, [h.chunk for h in hits], static)
    for i, h in enumerate(hits):
        c = h.chunk
        test = is_test_path(c.path)
        row = {
            "rank_recip": 1.0 / (1 + i),
            "first": float(i == 0),
            "score_rel": max(0.0, min(1.0, h.score / top_score)),
            "keyword_recip": 0.0 if h.keyword_rank is None else 1.0 / (1 + h.keyword_rank),
            "vector_recip": 0.0 if h.vector_rank is None else 1.0 / (1 + h.vector_rank),
            "graph": float(h.source.startswith("graph")),
            "definition": float(c.kind in _DEFINITIONS),
            "class": float(c.kind == "class"),
            "module": float(c.kind == "module"),
            "prose": float(c.language in _PROSE or c.kind == "section"),
            "test": float(test),
            "asks_tests_and_test": float(test and tests_asked),
            "name_share": terms.share(stems(c.qualname)),
            "path_share": terms.share(stems(c.path)),
            "body_share": float(body[i]),
            "static_cos": float(cos[i]),
            "model_cos": h.similarity or 0.0,
            "has_model_cos": float(h.similarity is not None),
            "written_name": float(_written(terms, c)),
            "log_lines": math.log1p(c.end_line - c.start_line + 1) / 6,
            "window_share": float(window[i]),
            "line_cos": float(line[i]),
        }
        out[i] = [0.0 if name in _RELATIVE_NAMES else row[name] for name in HIT_FEATURES]
    return relative(out)


#: The features each hit has relative to the best of its list (a share of the best
#: share, a cosine less the best cosine), with the absolute one they are made of.
_RELATIVE = (
    ("body_share_rel", "body_share", "share"), ("static_cos_rel", "static_cos", "cosine"),
    ("window_share_rel", "window_share", "share"), ("line_cos_rel", "line_cos", "cosine"),
)  # fmt: skip
_RELATIVE_NAMES = frozenset(rel for rel, _, _ in _RELATIVE)
#: Each hit feature's column.
_COLUMN = {name: i for i, name in enumerate(HIT_FEATURES)}


def relative(features: np.ndarray) -> np.ndarray:
    """``features`` (hits, HIT_FEATURES) with the relative columns computed over these
    hits (a list's first hits are a shorter list: the order reads its candidates so)."""
    out = features.copy()
    if not len(out):
        return out
    for rel, raw, kind in _RELATIVE:
        values = out[:, _COLUMN[raw]]
        best = float(values.max())
        if kind == "share":
            out[:, _COLUMN[rel]] = values / best if best > 0 else 0.0
        else:
            out[:, _COLUMN[rel]] = values - best + 1.0
    return out


def _written(terms: Terms, chunk: Chunk) -> bool:
    if not terms.written:
        return False
    names = {chunk.name.lower(), chunk.qualname.lower()}
    return bool(names & terms.written)


def _cosines(question: str, chunks: Sequence[Chunk], static: Embed | None) -> np.ndarray:
    """The question's cosine with each chunk's embedded text in the static code model
    (zeros when it cannot be loaded)."""
    if static is None or not chunks:
        return np.zeros(len(chunks), dtype=np.float32)
    return cosines_to(question, [embed_text(c) for c in chunks], static)


def cosines_to(question: str, texts: Sequence[str], static: Embed) -> np.ndarray:
    """float32 (len(texts),): the question's cosine with each text in the static code
    model (a zero vector's cosine is 0)."""
    rows = static([question, *texts])
    norms = np.linalg.norm(rows, axis=1)
    norms[norms == 0] = 1.0
    unit = rows / norms[:, None]
    return np.asarray(unit[1:] @ unit[0], dtype=np.float32)


def _window_share(terms: Terms, chunk: Chunk) -> float:
    """The largest share of the question's terms found within :data:`WINDOW` lines of
    the chunk (its name counted in every window)."""
    lines = [stems(line) for line in chunk.content.splitlines()] or [frozenset()]
    name = stems(chunk.qualname)
    best = 0.0
    for start in range(max(1, len(lines) - WINDOW + 1)):
        best = max(best, terms.share(name.union(*lines[start : start + WINDOW])))
    return best


#: The lines of a chunk whose closeness to the question is measured (the longest
#: chunks are read to here).
MAX_LINES = 120


def _line_cosines(question: str, chunks: Sequence[Chunk], static: Embed | None) -> np.ndarray:
    """Each chunk's closest line to the question in the static code model: the line
    that says what was asked, wherever it lies in a long chunk."""
    if static is None or not chunks:
        return np.zeros(len(chunks), dtype=np.float32)
    per = [
        [ln.strip() for ln in c.content.splitlines()[:MAX_LINES] if len(ln.strip()) > 3]
        for c in chunks
    ]
    sims = cosines_to(question, [t for lines in per for t in lines], static)
    out = np.zeros(len(chunks), dtype=np.float32)
    at = 0
    for i, lines in enumerate(per):
        if lines:
            out[i] = float(sims[at : at + len(lines)].max())
        at += len(lines)
    return out


def softmax(scores: np.ndarray) -> np.ndarray:
    if not len(scores):
        return scores
    z = np.exp(scores - scores.max())
    return np.asarray(z / z.sum(), dtype=np.float64)


def question_features(
    features: np.ndarray,
    probs: np.ndarray,
    order: Sequence[int],
    unknown: float,
    n_terms: int,
    soft: float = 0.0,
    absent: float = 0.0,
) -> np.ndarray:
    """float32 (len(QUESTION_FEATURES),): what a whole retrieval shows, once its hits
    are ordered (``order``: indexes into ``features``; ``probs``: the model's
    probability of each hit being the one that answers). ``unknown``: the weighted
    share of the question's terms that no chunk holds *and* that are no ordinary word
    (everyday English or the common jargon of code, :func:`.terms.specific_terms`): a
    question naming a thing the code never mentions (and whether there is any such name:
    ``has_unknown_name``). ``soft``: the same share for the names that are everyday
    words written capitalised (``Viper``, ``Rich``): maybe a product, maybe a value the
    code calls otherwise. ``absent``: the weighted share of all the question's terms,
    ordinary words too, that no code holds. The model learns what each is worth: an
    ordinary word missing from the code is one signal in a sum calibrated against other
    projects' questions, never a rule that declines."""
    if not len(features):
        return np.zeros(len(QUESTION_FEATURES), dtype=np.float32)
    top = order[0]
    row = {
        "top_prob": float(probs[top]),
        "top_body_share": float(features[top, _COLUMN["body_share"]]),
        "top_name_share": float(features[top, _COLUMN["name_share"]]),
        "best_static_cos": float(features[:, _COLUMN["static_cos"]].max()),
        "best_model_cos": float(features[:, _COLUMN["model_cos"]].max()),
        "has_model_cos": float(features[:, _COLUMN["has_model_cos"]].max()),
        "unknown_name_share": unknown,
        "log_terms": math.log1p(n_terms) / 3,
        "unknown_soft_share": soft,
        "best_window_share": float(features[:, _COLUMN["window_share"]].max()),
        "best_line_cos": float(features[:, _COLUMN["line_cos"]].max()),
        "top_window_share": float(features[top, _COLUMN["window_share"]]),
        "has_unknown_name": float(unknown > 0),
        "absent_share": absent,
    }
    return np.array([row[name] for name in QUESTION_FEATURES], dtype=np.float32)


@dataclass(frozen=True)
class Observation:
    """What the model reads of one question's retrieval."""

    terms: Terms
    #: HIT_FEATURES of search's first CANDIDATES hits, one row each: what the order reads.
    features: np.ndarray
    #: HIT_FEATURES of search's first EVIDENCE_HITS hits (relative to them): what
    #: abstention and confidence read (:func:`question_features`); ``features`` is its
    #: first rows, relative to themselves.
    evidence: np.ndarray
    #: The weighted share of unknown names (see :func:`question_features`).
    unknown: float
    #: Those names: words of the question that name something specific (not everyday
    #: English nor the common jargon of code) and that no chunk holds.
    unknown_names: tuple[str, ...] = ()
    #: The weighted share of the question's capitalised everyday words no chunk holds.
    soft_unknown: float = 0.0
    #: The weighted share of the question's terms, any word, that no code holds.
    absent: float = 0.0


def code_holds(store: KeywordIndex, df: Callable[[str], int]) -> Callable[[str], bool]:
    """Whether a chunk of *code* holds a term (a name mentioned only in the docs or a
    changelog is not something the code does), asked of the index once a term."""
    known: dict[str, bool] = {}

    def holds(term: str) -> bool:
        if term not in known:
            known[term] = df(term) > 0 and bool(
                store.keyword_search([term], CODE_ONLY, 1, (1.0, 1.0, 1.0))
            )
        return known[term]

    return holds


def _absent_parts(identifier: str, holds: Callable[[str], bool]) -> list[str]:
    """The parts of a name written as code (3 letters or more) that no code holds."""
    return [p for p in split_identifier(identifier) if len(p) >= 3 and p.isalpha() and not holds(p)]


def observe(
    question: Question,
    hits: Sequence[Hit],
    df: Callable[[str], int],
    documents: int,
    static: Embed | None,
    in_code: Callable[[str], bool] | None = None,
) -> Observation:
    """The features of ``question`` over search's first :data:`EVIDENCE_HITS` hits
    (``hits``: with their cosines filled), and over its first :data:`CANDIDATES`, read
    from its subject (the words of what kind of answer it wants are no evidence).
    ``in_code``: whether code holds a term (:func:`code_holds`; default: any chunk)."""
    terms = question.terms(df, documents)
    top = tuple(hits[:EVIDENCE_HITS])
    subject = question.subject
    holds = in_code or (lambda t: df(t) > 0)
    named = specific_terms(subject)
    names = [t for t, firm in named.items() if firm and not holds(t)]
    # a name written as code (``prompt_toolkit``, ``Depends()``) of which some part
    # (of 3 letters or more) no code holds: named, its missing parts weighed
    missing = {i: parts for i in question.identifiers if (parts := _absent_parts(i, holds))}
    unknown = terms.share(
        frozenset(stem(t) for t in names) | {stem(p) for parts in missing.values() for p in parts}
    )
    names += [ident for ident in missing if ident.lower() not in names]
    soft = terms.share(frozenset(stem(t) for t, firm in named.items() if not firm and not holds(t)))
    evidence = hit_features(subject, terms, top, static, question.kind.name == "tests")
    absent = terms.share(
        frozenset(s for s, w in zip(terms.stems, terms.words, strict=True) if not holds(w))
    )
    features = relative(evidence[:CANDIDATES])
    return Observation(terms, features, evidence, unknown, tuple(names), soft, absent)
