"""What a question asks for, by transparent rules (no model): ``locate`` (where
is X), ``explain`` (how does X work), ``impact`` (what breaks / who uses X),
``tests`` (which tests cover X). Also: the identifiers a query names, which
shift fusion toward keyword search and get an exact symbol lookup."""

from __future__ import annotations

import re
from dataclasses import dataclass

INTENTS = ("locate", "explain", "impact", "tests")

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
            r"who (uses|calls)|callers?|called by|used by|usages?|depends? on|dependents?|"
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

_BACKTICK = re.compile(r"`([^`]+)`")
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


def analyse(query: str) -> QueryInfo:
    """Intent and identifiers of a query."""
    intent = next((name for name, rule in _RULES if rule.search(query)), "locate")
    found: list[str] = [m.group(1).strip() for m in _BACKTICK.finditer(query)]
    found += [m.group(0) for m in _DOTTED.finditer(query) if not m.group(0)[0].isdigit()]
    words = _WORD.findall(_BACKTICK.sub(" ", query))
    found += [w for w in words if _is_identifier(w)]
    identifiers = tuple(dict.fromkeys(i for i in found if i))
    share = len([w for w in words if _is_identifier(w) or any(w in i for i in identifiers)])
    return QueryInfo(query, intent, identifiers, share / len(words) if words else 0.0)


def symbol_candidates(identifier: str) -> list[str]:
    """Names to look up for an identifier: the whole (as qualname) and its last part."""
    parts = re.split(r"\.|::|->", identifier)
    out = [".".join(parts)]
    if len(parts) > 1:
        out += [parts[-1], parts[0]]
    return list(dict.fromkeys(p for p in out if p))
