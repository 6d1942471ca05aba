"""A question's words as code writes them: identifier parts lightly stemmed
(``uploads`` ~ ``upload``, ``compression`` ~ ``compressed``), weighted by how rare they
are in the index (a term found in every chunk tells nothing; one found nowhere tells
that the question is about something else), and which of them *name* something
specific (``Firebase``, ``keychain``) rather than being ordinary words."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..identifiers import tokenize

#: Suffixes stripped, longest first, while at least :data:`_MIN_STEM` letters remain.
_SUFFIXES = (
    "ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "ness", "ities", "ity",
    "ties", "ty", "ers", "er", "ied", "ies", "ed", "es", "ly", "s",
)  # fmt: skip
#: Irregular forms a question writes where code writes the plain verb ("results are
#: kept" ~ ``keep``, "the email is sent" ~ ``send``; "a failed job" ~ ``failure_ttl``).
_IRREGULAR = {
    "failure": "fail", "failures": "fail",
    "kept": "keep", "sent": "send", "built": "build", "lost": "lose", "ran": "run",
    "began": "begin", "begun": "begin", "chosen": "choose", "chose": "choose",
    "written": "write", "wrote": "write", "taken": "take", "took": "take", "gave": "give",
    "given": "give", "held": "hold", "left": "leave", "met": "meet", "paid": "pay",
    "read": "read", "said": "say", "seen": "see", "saw": "see", "shown": "show",
    "spent": "spend", "thrown": "throw", "threw": "throw", "told": "tell", "went": "go",
    "found": "find", "bound": "bind", "hidden": "hide", "hid": "hide", "broken": "break",
    "broke": "break", "stolen": "steal", "forgot": "forget", "forgotten": "forget",
}  # fmt: skip
_MIN_STEM = 3
#: A verb in -ate, in any form, stemmed as its noun in -ation is (``validate``,
#: ``validated``, ``validating`` → ``valid``); not ``format``, ``state``, ``date``, nor
#: the -eat verbs (``repeating``: ``repeat``).
_ATE = re.compile(r"^([a-z]{2,}[a-df-z])at(?:e|es|ed|ing)$")


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """A crude stem: ``files``/``file`` → ``fil``, ``compression``/``compress``/
    ``compressed`` → ``compress``, ``validate``/``validation``/``validated`` → ``valid``,
    ``retries``/``retry`` → ``retri``, ``loyalty``/``loyal`` → ``loyal``. Only for
    matching, never shown."""
    w = word.lower()
    w = _IRREGULAR.get(w, w)
    verb = _ATE.match(w)
    if verb:  # "validates" ~ "validation", "created" ~ "creation"
        return verb.group(1)
    for suffix in _SUFFIXES:
        least = _MIN_STEM + 2 if suffix.endswith(("ty", "ties")) else _MIN_STEM
        if w.endswith(suffix) and len(w) - len(suffix) >= least:
            if suffix == "es" and not w[:-2].endswith(("s", "x", "z", "ch", "sh")):
                continue  # "files" → "file" (then "fil"), "boxes" → "box"
            if suffix == "s" and w.endswith(("ss", "us", "is")):
                break  # "compress", "status", "analysis": no plural to take off
            w = w[: -len(suffix)]
            if suffix in ("ied", "ies"):
                w += "i"
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    if w.endswith("y") and len(w) > 3:
        w = w[:-1] + "i"
    return w


def stems(text: str) -> frozenset[str]:
    """The stems of a text's tokens (identifier parts and whole identifiers)."""
    return frozenset(stem(t) for t in tokenize(text))


@lru_cache(maxsize=1)
def _vocabulary_ids() -> dict[str, int]:
    path = resources.files("codecite.embed").joinpath("data/minilm-tokenizer.json")
    vocab: dict[str, int] = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    return vocab


@lru_cache(maxsize=1)
def _common_words() -> frozenset[str]:
    """Everyday words: the bundled tokenizer's whole-word pieces (English) and the words
    of Python's standard library it lacks (code jargon: ``login``, ``endpoint``; made by
    ``scripts/common_words.py``), with their stems."""
    vocab = _vocabulary_ids()
    jargon = resources.files("codecite.question").joinpath("data/common-words.txt")
    words = {w for w in vocab if w.isalpha()}
    words.update(
        line.strip() for line in jargon.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    )  # fmt: skip
    return frozenset(words | {stem(w) for w in words})


_NAME = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9+#.]*[A-Za-z0-9+#]|\b[A-Z]\b")
#: Capitalised words that are not names of a technology.
_PLAIN_CAPITALS = frozenset(
    "i api apis url urls http https json html css id ids ip os ui cli get post put delete "
    "patch head options sql utf ok yes no".split()
)


#: Prefixes that make an everyday word of another (``redeploy``, ``mistypes``).
_PREFIXES = ("re", "mis", "un", "pre", "non", "over", "under", "out", "down", "up", "sub",
             "multi", "auto", "self", "de")  # fmt: skip


def _everyday(word: str, common: frozenset[str]) -> bool:
    if word in common or stem(word) in common:
        return True
    return any(
        word.startswith(p) and len(word) - len(p) >= 4 and stem(word[len(p) :]) in common
        for p in _PREFIXES
    )


_CONTRACTION = re.compile(r"n[’']t\b|[’'](s|re|ll|ve|d|m)\b", re.I)


def without_contractions(text: str) -> str:
    """``doesn't`` → ``does``, ``it's`` → ``it``: no "doesn" or "t" to look up."""
    return _CONTRACTION.sub("", text)


#: What comes before a word that is the asker's own value, not a name the code must
#: hold: an example ("such as -xvf", "e.g. Foo"), short options bundled after one dash,
#: a percent-escape of a URL ("/files/%E0%A4").
_EXAMPLE = re.compile(r"(\b(such as|e\.g\.?|for (example|instance))[\s,:]*|(?<![-\w])-|%)$", re.I)


def _user_value(sentence: str, at: int) -> bool:
    return bool(_EXAMPLE.search(sentence[max(0, at - 20) : at]))


def specific_terms(text: str) -> dict[str, bool]:
    """The lower-cased words of ``text`` that name something specific, each mapped to
    whether it is *firmly* a name: a word that is no everyday word (``keychain``,
    ``Celery``, ``PowerShell``, ``JWT``) or a word of business (prices, plans); an
    everyday word written capitalised inside a sentence or in capitals (``Germany``,
    ``VIP``, ``Windows``) is a name too, but not firmly (it may be a value the code
    calls otherwise: a region code, a tier). Common acronyms (API, URL) are none."""
    common = _common_words()
    out: dict[str, bool] = {}
    whole = without_contractions(text)
    at = 0
    for sentence in re.split(r"(?<=[.!?])\s+|\n", whole):
        at = whole.find(sentence, at)
        for i, m in enumerate(_NAME.finditer(sentence)):
            if _user_value(whole, at + m.start()):
                continue
            for part in re.split(r"[.+#]", m.group(0)):
                low = part.lower()
                if len(low) < 2 or low in _PLAIN_CAPITALS or low in STOPWORDS:
                    continue
                capital = any(c.isupper() for c in part) and (i > 0 or part.isupper())
                rare = not _everyday(low, common)
                if rare and (capital or low.isalpha()):
                    out[low] = True
                elif capital:
                    out.setdefault(low, False)
    return out


#: Words that carry no meaning for code search; dropped from keyword queries.
STOPWORDS = frozenset(
    """
a an and are as at be by can could do does did for from has have how i if in into is it its
me my of on or our should so than that the their them then there these this those to was
we were what when where which who whom why will with would you your about all any each
get gets got find show tell explain work works handled handle happen happens used use uses
code codebase function method class implemented implementation logic
""".split()
)


#: A name written as code: in backticks, dotted, snake_case, camelCase, PascalCase with
#: an inner capital, or a CONSTANT_IN_CAPITALS.
_WRITTEN = re.compile(r"`([^`\n]+)`|\b([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+|[a-z]+_[\w]+|"
                      r"[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|"
                      r"[A-Z][A-Z0-9]*_[A-Z0-9_]+)\b")  # fmt: skip


@dataclass(frozen=True)
class Terms:
    """A question's content terms with their rarity in the index (inverse document
    frequency; a term no chunk holds weighs the most)."""

    stems: tuple[str, ...]
    #: Each stem's word as the question writes it (lower-cased).
    words: tuple[str, ...]
    weights: tuple[float, ...]
    #: Terms no chunk of the index holds, as written.
    absent: tuple[str, ...]
    #: Names the question writes as identifiers (``Context.invoke``, ``max_age``).
    written: frozenset[str]

    @property
    def total(self) -> float:
        return sum(self.weights)

    def share(self, found: frozenset[str]) -> float:
        """The weighted share of the terms among ``found`` (stems)."""
        total = self.total
        if not total:
            return 0.0
        return sum(w for s, w in zip(self.stems, self.weights, strict=True) if s in found) / total


def question_terms(question: str, df: Callable[[str], int], documents: int) -> Terms:
    """The question's content words, each once, weighted by rarity in the index."""
    seen: dict[str, tuple[float, str]] = {}
    absent: list[str] = []
    for token in tokenize(question):
        if token in STOPWORDS or len(token) < 2 or token.isdigit():
            continue
        s = stem(token)
        if s in seen:
            continue
        n = df(token)
        if n == 0:
            absent.append(token)
        seen[s] = (math.log((documents + 1) / (n + 0.5)), token)
    written = frozenset(
        part.lower() for m in _WRITTEN.finditer(question) for part in _names(m.group(0))
    )
    return Terms(
        tuple(seen),
        tuple(t for _, t in seen.values()),
        tuple(w for w, _ in seen.values()),
        tuple(absent),
        written,
    )


def _names(written: str) -> list[str]:
    text = written.strip("`").strip()
    tail = text.rsplit(".", 1)[-1].split("(")[0]
    return [text.split("(")[0], tail] if tail else [text]
