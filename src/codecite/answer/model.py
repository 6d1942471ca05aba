"""The learnt answer model (issue 38): the order of an answer's blocks, whether to
answer at all, and how sure the answer is.

Its weights ship in ``answer/data/answer-model.json``, made by
``scripts/train_answer_model`` from questions mined out of many open-source projects'
docstrings (each asked of an index of its project with every docstring removed; the
other projects' questions as the negatives of abstention) and commit subjects (asked of
the released tree; right = the definitions the commit changed), validated on projects
left out of the fit. No benchmark question fitted a number of it; the file lists the
training projects and the held-out figures.

- :meth:`AnswerModel.order` scores search's first hits (:mod:`.features`): each one's
  probability of being the code that answers (:class:`OrderScore`: a weighted sum of
  its features). The answer's blocks follow it (the
  default, ``answer_order = "model"``; docs, which it never learnt to judge, keep their
  places in search's order) where the hits carry the search model's cosine; its
  probability for the block shown first is a feature of the two models below.
- :meth:`AnswerModel.answers` is the probability that the question is about this
  index at all; below the shipped threshold (the highest that declined at most 0.5% of
  the held-out projects' docstring questions) the answer declines.
- :meth:`AnswerModel.level` is the probability that the first block is right, cut into
  ``low`` / ``medium`` / ``high`` at the held-out thirds.
- ``line_weights`` score the lines of a block (:mod:`.focus`): the statement its first
  line quotes (and the line it is shown around where none holds the question's words).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from .features import CANDIDATES, EVIDENCE_HITS, HIT_FEATURES, QUESTION_FEATURES, softmax
from .focus import LINE_FEATURES

log = logging.getLogger(__name__)

MODEL_FILE = "answer-model.json"


@dataclass(frozen=True)
class Ordered:
    """The model's order of a question's candidates (indexes into them) and each
    candidate's probability of being the one that answers."""

    order: tuple[int, ...]
    probs: np.ndarray


@dataclass(frozen=True)
class OrderScore:
    """A hit's score in the order: a weighted sum of its features, plus (a measured
    variant of the recipe, ``train.py --hidden N``) a few hidden units (tanh) over them,
    through which a feature's worth can depend on the others. The shipped model has
    none: held out the units put the right code first more often, on the benchmarks'
    people's questions they did not (BENCHMARKS.md stop 56)."""

    #: (F,) one weight per hit feature.
    linear: np.ndarray
    #: (F, H) the hidden units' weights, (H,) their biases and (H,) their weights in the
    #: score; None: no hidden units.
    hidden: np.ndarray | None = None
    hidden_bias: np.ndarray | None = None
    out: np.ndarray | None = None

    def _units(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The hidden units' weights, biases and output weights; None without them."""
        if self.hidden is None or self.hidden_bias is None or self.out is None:
            return None
        return self.hidden, self.hidden_bias, self.out

    def __call__(self, features: np.ndarray) -> np.ndarray:
        """The score of each row of ``features`` (any leading shape, features last)."""
        scores = features @ self.linear
        if (units := self._units()) is not None:
            weights, bias, out = units
            scores = scores + np.tanh(features @ weights + bias) @ out
        return np.asarray(scores, dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        """The model file's ``order_weights`` and (with hidden units) ``order_hidden``."""
        out: dict[str, Any] = {"order_weights": [round(float(v), 6) for v in self.linear]}
        if (units := self._units()) is not None:
            weights, bias, unit_out = units
            out["order_hidden"] = {
                "weights": [[round(float(v), 6) for v in row] for row in weights],
                "bias": [round(float(v), 6) for v in bias],
                "out": [round(float(v), 6) for v in unit_out],
            }
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> OrderScore:
        """The score a model file holds; ValueError when its parts do not fit together."""
        hidden = raw.get("order_hidden")
        linear = np.array(raw["order_weights"], dtype=np.float64)
        if linear.ndim != 1:
            raise ValueError("order_weights is not one weight per feature")
        if not hidden:
            return cls(linear)
        weights = np.array(hidden["weights"], dtype=np.float64)
        bias = np.array(hidden["bias"], dtype=np.float64)
        out = np.array(hidden["out"], dtype=np.float64)
        if weights.shape != (len(linear), len(bias)) or out.shape != bias.shape:
            raise ValueError(
                f"order_hidden's shapes do not fit: weights {weights.shape}, bias "
                f"{bias.shape}, out {out.shape} for {len(linear)} features"
            )
        return cls(linear, weights, bias, out)


@dataclass(frozen=True)
class AnswerModel:
    order_score: OrderScore
    abstain_weights: np.ndarray
    abstain_threshold: float
    confidence_weights: np.ndarray
    medium: float
    high: float
    #: Where it came from (the training projects, the held-out figures).
    provenance: dict[str, Any]
    #: The focus line's weights (:mod:`.focus`); None: the rule (most of the words).
    line_weights: np.ndarray | None = None

    def order(self, features: np.ndarray) -> Ordered:
        """Candidates by the model's score, search's order breaking ties."""
        scores = self.order_score(features) if len(features) else np.zeros(0)
        probs = softmax(scores)
        order = tuple(int(i) for i in np.argsort(-scores, kind="stable"))
        return Ordered(order, probs)

    def answers(self, question: np.ndarray) -> float:
        """The probability that the question is about the indexed code."""
        return _logistic(question, self.abstain_weights)

    def declines(self, question: np.ndarray) -> bool:
        return self.answers(question) < self.abstain_threshold

    def right_first(self, question: np.ndarray) -> float:
        """The probability that the first block is the code that answers."""
        return _logistic(question, self.confidence_weights)

    def level(self, question: np.ndarray) -> str:
        p = self.right_first(question)
        return "high" if p >= self.high else "medium" if p >= self.medium else "low"


def _logistic(x: np.ndarray, w: np.ndarray) -> float:
    return float(1 / (1 + np.exp(-(x @ w[:-1] + w[-1]))))


@lru_cache(maxsize=1)
def answer_model() -> AnswerModel | None:
    """The shipped model (loaded once); None when its file is missing or was made for
    other features or other lengths of search's list (then answers keep search's order
    and decline nothing)."""
    try:
        raw = json.loads(
            resources.files("codecite.answer").joinpath("data", MODEL_FILE).read_text()
        )
    except (OSError, ValueError) as exc:
        log.warning("answers keep search's order: the answer model cannot be read (%s)", exc)
        return None
    return from_json(raw)


def from_json(raw: dict[str, Any]) -> AnswerModel | None:
    if (
        tuple(raw.get("hit_features", ())) != HIT_FEATURES
        or tuple(raw.get("question_features", ())) != QUESTION_FEATURES
    ):
        log.warning("answers keep search's order: the answer model's features are not these")
        return None
    # its scores and thresholds are of lists this long
    read = (raw.get("candidates"), raw.get("evidence_hits"))
    if read != (CANDIDATES, EVIDENCE_HITS):
        log.warning(
            "answers keep search's order: the answer model read %s candidates and %s hits, "
            "not %s and %s", *read, CANDIDATES, EVIDENCE_HITS,
        )  # fmt: skip
        return None
    try:
        return AnswerModel(
            OrderScore.from_json(raw),
            np.array(raw["abstain_weights"], dtype=np.float64),
            float(raw["abstain_threshold"]),
            np.array(raw["confidence_weights"], dtype=np.float64),
            float(raw["confidence_levels"]["medium"]),
            float(raw["confidence_levels"]["high"]),
            {k: raw.get(k) for k in ("trained_on", "questions", "validation", "recipe")},
            np.array(raw["line_weights"], dtype=np.float64)
            if tuple(raw.get("line_features", ())) == LINE_FEATURES
            else None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("answers keep search's order: the answer model's file is malformed (%s)", exc)
        return None
