"""Wording of what an answer says about the question's own words."""

from __future__ import annotations

import re
from collections.abc import Sequence

#: A hyphenated word as a question writes it: ``opt-out``, ``sign-in``, ``utf-8``.
HYPHENATED = re.compile(r"\b[^\W_]+(?:-[^\W_]+)+\b")


def join_hyphenated(
    question: str, missing: Sequence[str], searched: Sequence[str]
) -> tuple[list[str], list[str]]:
    """The question's terms as a decline lists them (``missing``: no indexed code holds
    them; ``searched``: the rest), with the parts of a hyphenated word of the question
    (``opt`` and ``out`` of "opt-out") listed once, as the word: among the missing when
    any part is missing (no code mentions "opt-out" then), else among the searched; in
    the place of its first part."""
    lists = [list(missing), list(searched)]
    for word in dict.fromkeys(w.lower() for w in HYPHENATED.findall(question)):
        parts = word.split("-")
        for terms in lists:
            at = [i for i, t in enumerate(terms) if t in parts]
            if at:
                break
        else:
            continue
        first = at[0]
        for other in lists:
            other[:] = [t for t in other if t not in parts]
        terms.insert(min(first, len(terms)), word)
    return lists[0], lists[1]
