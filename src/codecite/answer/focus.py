"""Which line of a block answers (issue 38): the statement a first line quotes, and
the line a block is shown around when no line holds the question's words
(``compose.focus_of``: otherwise the line holding most of them).

A learnt linear score over each line of a chunk (:data:`LINE_FEATURES`): how much of
the question's rarer words it and its neighbours hold, how close it is to the question
in the static code model, where it stands in the chunk and what kind of line it is.
Its weights ship in the answer model's file (``line_weights``), fitted by
``scripts/train_answer_model/train_lines.py`` on open data: commit subjects of many
projects, each with the lines the commit added to the definitions it changed (the
place where what the subject says now happens), validated on projects left out.
Without them the statement holding most of the question's words is quoted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..question.terms import Terms, stems
from .features import Embed, cosines_to

#: The per-line features, in the order of the weights.
LINE_FEATURES = (
    "share", "share_rel", "near_share", "cos", "cos_rel", "near_cos", "first", "position",
    "comment", "whole", "short", "log_chars",
)  # fmt: skip
#: Lines on each side whose words and closeness count as a line's neighbourhood (a
#: block shows about ten lines around its focus).
NEAR = 2
#: The lines of a chunk scored (the longest chunks are read to here, as the features do).
MAX_LINES = 160
_COMMENT = ("#", "//", "/*", "*", '"""', "'''")


def line_cosines(question: str, lines: Sequence[str], static: Embed | None) -> np.ndarray:
    """Each line's cosine to the question in the static code model (0 for blank lines
    and without the model)."""
    out = np.zeros(len(lines), dtype=np.float32)
    wanted = [i for i, line in enumerate(lines) if len(line.strip()) > 3]
    if static is None or not wanted:
        return out
    out[wanted] = cosines_to(question, [lines[i].strip() for i in wanted], static)
    return out


def line_features(
    lines: Sequence[str], whole: Sequence[bool], terms: Terms, cosines: np.ndarray
) -> np.ndarray:
    """float32 (len(lines), len(LINE_FEATURES)). ``whole``: whether each line reads
    alone (``compose.whole_lines``); ``cosines``: :func:`line_cosines`."""
    n = len(lines)
    out = np.zeros((n, len(LINE_FEATURES)), dtype=np.float32)
    if not n:
        return out
    words = [stems(line) for line in lines]
    share = np.array([terms.share(w) for w in words], dtype=np.float32)
    near = np.array(
        [terms.share(frozenset().union(*words[max(0, i - NEAR) : i + NEAR + 1])) for i in range(n)],
        dtype=np.float32,
    )
    cos = np.asarray(cosines, dtype=np.float32)
    top_share, top_cos = float(share.max()), float(cos.max())
    for i, line in enumerate(lines):
        text = line.strip()
        row = {
            "share": share[i],
            "share_rel": share[i] / top_share if top_share > 0 else 0.0,
            "near_share": near[i],
            "cos": cos[i],
            "cos_rel": cos[i] - top_cos + 1.0,
            "near_cos": float(cos[max(0, i - NEAR) : i + NEAR + 1].max()),
            "first": float(i == 0),
            "position": i / max(n - 1, 1),
            "comment": float(text.startswith(_COMMENT)),
            "whole": float(whole[i]),
            "short": float(len(text) <= 3),
            "log_chars": math.log1p(len(text)) / 5,
        }
        out[i] = [row[name] for name in LINE_FEATURES]
    return out


def line_scores(
    weights: np.ndarray,
    question: str,
    lines: Sequence[str],
    whole: Sequence[bool],
    terms: Terms,
    static: Embed | None,
) -> np.ndarray:
    """The learnt score of each line (higher: the line that answers); lines past
    :data:`MAX_LINES` score lowest."""
    head = list(lines[:MAX_LINES])
    scores = np.full(len(lines), -np.inf)
    if head:
        cos = line_cosines(question, head, static)
        scores[: len(head)] = line_features(head, whole[: len(head)], terms, cos) @ weights
    return scores
