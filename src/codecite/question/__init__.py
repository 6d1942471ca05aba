"""A question, read once (issue 38; DESIGN.md §2): one floor below ``retrieve/`` and
``answer/`` (it imports neither), so that ``search`` and ``ask`` read the same
question the same way and pass the value down, as a request is passed through a
pipeline.

:func:`read` turns the text into a frozen :class:`Question`:

- its **parts** (:mod:`.parts`): prose, code, traceback frames, error messages, paths;
- its **kind** (:mod:`.kinds`, one rule table): what it asks for first (the answer)
  and the intent retrieval expands for;
- its **identifiers** (``Context.invoke``, ``max_age``) and its **terms**
  (:mod:`.terms`), weighed by rarity against an index with :meth:`Question.terms`.

The code-side expansions of people's words ("gives up" ~ ``timeout``) are not a
table here: they come from the vector tiers, the static code model trained on
docstring/identifier pairs of many projects and the bundled sentence model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from .kinds import Kind, QueryInfo, analyse, classify
from .parts import Frame, Parts, read_parts
from .terms import Terms, question_terms


@dataclass(frozen=True)
class Question:
    text: str
    parts: Parts
    kind: Kind
    #: Identifiers and intent as retrieval uses them (a long question's intent is read
    #: from its title).
    info: QueryInfo

    @property
    def long(self) -> bool:
        return self.parts.long

    @property
    def identifiers(self) -> tuple[str, ...]:
        return self.info.identifiers

    @property
    def subject(self) -> str:
        """What the question is about: its text less the words that say what kind of
        answer it wants ("what breaks if I change", "which tests cover")."""
        phrase = self.kind.phrase
        if not phrase or self.long:
            return self.text
        return self.text.replace(phrase, " ", 1)

    def terms(self, df: Callable[[str], int], documents: int) -> Terms:
        """The subject's content words, weighted by their rarity in an index."""
        return question_terms(self.subject, df, documents)


def read(text: str) -> Question:
    """The question ``text`` read once: its parts, kind, identifiers."""
    parts = read_parts(text)
    if parts.long:
        title = next((line for line in text.splitlines() if line.strip()), text)
        kind = classify(title, reported=bool(parts.errors or parts.frames), long=True)
        info = replace(analyse(text, title, "locate"), long=True)
    else:
        kind = classify(text, reported=False)
        info = analyse(text, intent=kind.intent)
    return Question(text, parts, kind, info)


__all__ = ["Frame", "Kind", "Parts", "QueryInfo", "Question", "Terms", "read"]
