"""What a question asks for, by transparent rules (no model): ``locate`` (where
is X), ``explain`` (how does X work), ``impact`` (what breaks / who uses X),
``tests`` (which tests cover X). Also: the identifiers a query names, which
shift fusion toward keyword search and get an exact symbol lookup."""

from __future__ import annotations

import re
from dataclasses import dataclass

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "tests",
        re.compile(
            r"\b(tests?|tested|testing|test cases?|coverage|covers?|covered|spec|specs|qa|"
            r"unit tests?|assert\w*)\b",
            re.I,
        ),
    ),
    (
        "impact",
        re.compile(
            r"\b(breaks?|broken|impact\w*|affect\w*|if i (change|modify|remove|rename|delete)|"
            r"who (uses|calls)|callers?|called by|used by|usages|usage of|depends? on|dependents?|"
            r"ripple|consequences?|what happens if)\b",
            re.I,
        ),
    ),
    (
        "explain",
        re.compile(
            r"\b(how (does|do|is|are|can)|explain|walk me through|why|what does|what do|"
            r"what happens when|describe|logic|flow|works?)\b",
            re.I,
        ),
    ),
)

ASKS_DOCS = re.compile(r"\b(docs?|documentation|readme|guide|example|examples)\b", re.I)
ASKS_NON_CODE = re.compile(
    r"\b(docs?|documentation|readme|guide|changelog|config\w*|settings?|ya?ml|toml|ini|cfg|"
    r"json|ci|workflows?|pipeline|setup|install\w*|packag\w+|dependenc\w+|requirements?|"
    r"markdown|license|contributing)\b",
    re.I,
)
#: An inline code span: a run of backticks, text on one line, the same run again
#: (Markdown and reStructuredText: `x`, ``x``); a fenced block is not one.
_BACKTICK = re.compile(r"(?<!`)(`+)(?!`)([^`\r\n]+?)(?<!`)\1(?!`)")
_DOTTED = re.compile(r"\b[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+\b")
_WORD = re.compile(r"[A-Za-z_$][\w$]*")


def _is_identifier(word: str) -> bool:
    """camelCase, PascalCase with an inner capital, snake_case, or digits inside."""
    if "_" in word.strip("_") or "$" in word:
        return True
    inner = word[1:]
    return any(ch.isupper() for ch in inner) and any(ch.islower() for ch in word)


@dataclass(frozen=True)
class QueryInfo:
    text: str
    intent: str
    #: Identifiers named in the query, as written (``Deal.status``, ``calculatePriceWithTax``).
    identifiers: tuple[str, ...]
    #: Share of the query's words that are identifiers.
    identifier_share: float
    #: The text the intent was read from (a long question's title, else the query).
    intent_text: str = ""
    #: A long question (a bug report, retrieve/question.py).
    long: bool = False

    @property
    def asks_docs(self) -> bool:
        """The question (a long one's title) is about documentation or examples."""
        return bool(ASKS_DOCS.search(self.intent_text or self.text))

    @property
    def asks_non_code(self) -> bool:
        """The question (a long one's title) is about docs, configuration, CI, setup."""
        return bool(ASKS_NON_CODE.search(self.intent_text or self.text))


def detect_intent(text: str) -> str:
    """The first intent whose rule matches ``text`` (``locate`` when none does)."""
    return next((name for name, rule in _RULES if rule.search(text)), "locate")


def analyse(query: str, intent_text: str | None = None) -> QueryInfo:
    """Intent and identifiers of a query; the intent is read from ``intent_text`` when
    given (a bug report's title: its body says "test" and "assert" without asking
    for tests)."""
    intent = detect_intent(query if intent_text is None else intent_text)
    found: list[str] = [m.group(2).strip() for m in _BACKTICK.finditer(query)]
    found += [m.group(0) for m in _DOTTED.finditer(query) if not m.group(0)[0].isdigit()]
    words = _WORD.findall(_BACKTICK.sub(" ", query))
    found += [w for w in words if _is_identifier(w)]
    identifiers = tuple(dict.fromkeys(i for i in found if i))
    share = len([w for w in words if _is_identifier(w) or any(w in i for i in identifiers)])
    return QueryInfo(
        query,
        intent,
        identifiers,
        share / len(words) if words else 0.0,
        query if intent_text is None else intent_text,
    )


def symbol_candidates(identifier: str) -> list[str]:
    """Names to look up for an identifier: the whole (as qualname) and its last part."""
    parts = re.split(r"\.|::|->", identifier)
    out = [".".join(parts)]
    if len(parts) > 1:
        out += [parts[-1], parts[0]]
    return list(dict.fromkeys(p for p in out if p))
