"""Words of a question matched against lines of code: identifier parts, lightly stemmed
(``uploads`` ~ ``upload``, ``compression`` ~ ``compressed``), weighted by how rare they
are in the index (a term found in every chunk tells nothing; one found nowhere tells
that the question is about something else)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Sequence
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


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """A crude stem: ``files``/``file`` → ``fil``, ``compression``/``compressed`` →
    ``compress``, ``retries``/``retry`` → ``retri``, ``loyalty``/``loyal`` → ``loyal``.
    Only for matching, never shown."""
    w = word.lower()
    w = _IRREGULAR.get(w, w)
    for suffix in _SUFFIXES:
        least = _MIN_STEM + 2 if suffix.endswith(("ty", "ties")) else _MIN_STEM
        if w.endswith(suffix) and len(w) - len(suffix) >= least:
            if suffix == "es" and not w[:-2].endswith(("s", "x", "z", "ch", "sh")):
                continue  # "files" → "file" (then "fil"), "boxes" → "box"
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


def variants(term: str) -> tuple[str, ...]:
    """Spellings of a term the index may hold instead (its tokens are not stemmed):
    ``uploads`` → ``upload``; ``file`` → ``files``; ``parsing`` → ``parse``."""
    out = [term, term + "s", term + "ty", term + "ity", term + "ed", term + "d"]
    for suffix, repl in (("ies", "y"), ("es", ""), ("s", ""), ("ing", ""), ("ing", "e"),
                         ("ed", ""), ("ed", "e"), ("ion", ""), ("ion", "e")):  # fmt: skip
        if term.endswith(suffix) and len(term) - len(suffix) >= _MIN_STEM:
            out.append(term[: -len(suffix)] + repl)
    return tuple(dict.fromkeys(out))


class TermWeights:
    """Inverse document frequencies of a question's terms over the index, and which of
    them the index's *code* holds (a name found only in the docs is not in the code)."""

    def __init__(
        self,
        terms: Iterable[str],
        df: Callable[[str], int],
        documents: int,
        in_code: Callable[[Sequence[str]], bool] | None = None,
        extra: Iterable[str] = (),
        extra_weight: float = 1.0,
    ) -> None:
        """``in_code(spellings)``: whether a code chunk holds one of the spellings (only
        asked for terms rare enough that the answer is not obvious); ``extra``: terms
        the question does not write but looks for (the code's words for its own,
        :mod:`codecite.retrieve.concepts`), each weighing ``extra_weight`` times as
        much as it would."""
        self.documents = max(documents, 1)
        terms = list(dict.fromkeys(terms))
        added = [t for t in dict.fromkeys(extra) if t not in terms]
        self.df = {t: max(df(v) for v in variants(t)) for t in [*terms, *added]}
        self.weights = {t: self._idf(n) * _specificity(t) for t, n in self.df.items()}
        for t in added:
            self.weights[t] *= extra_weight
        self.present = {
            t: n > 0 and (in_code is None or n > CODE_CHECK_DF or in_code(variants(t)))
            for t, n in self.df.items()
        }
        self.by_stem: dict[str, float] = {}
        for term, weight in self.weights.items():
            key = stem(term)
            self.by_stem[key] = max(self.by_stem.get(key, 0.0), weight)

    def _idf(self, df: int) -> float:
        return math.log(1 + self.documents / (df + 1))

    @property
    def total(self) -> float:
        return sum(self.by_stem.values())

    def matched(self, found: frozenset[str]) -> float:
        """The weight of the question's terms among the stems ``found``."""
        return sum(w for s, w in self.by_stem.items() if s in found)

    def share(self, found: frozenset[str], without: Sequence[str] = ()) -> float:
        """Which share (0..1) of the question's weight (less the terms ``without``) the
        stems ``found`` carry."""
        left = {stem(t) for t in without}
        total = sum(w for s, w in self.by_stem.items() if s not in left)
        matched = sum(w for s, w in self.by_stem.items() if s in found and s not in left)
        return matched / total if total else 0.0

    @property
    def absent(self) -> list[str]:
        """The question's terms that no code of the index holds."""
        return [t for t, here in self.present.items() if not here]

    def absent_share(self, without: Collection[str] = ()) -> float:
        """The share of the question's weight carried by terms no indexed code has (but
        the terms ``without``)."""
        total = sum(self.weights.values())
        gone = sum(self.weights[t] for t in self.absent if t not in without)
        return gone / total if total else 0.0


#: The tokenizer's vocabulary is ordered by frequency in English: a word among its
#: first ids is everyday English and counts less (down to half) than a rarer one.
ZIPF_ID = 6000


@lru_cache(maxsize=1)
def _vocabulary_ids() -> dict[str, int]:
    path = resources.files("codecite.embed").joinpath("data/minilm-tokenizer.json")
    vocab: dict[str, int] = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    return vocab


def _specificity(term: str) -> float:
    """0.5 for the most common English words up to 1 for rare ones and for words the
    vocabulary lacks (``timeout``, ``keepalive``)."""
    rank = _vocabulary_ids().get(term)
    return 1.0 if rank is None else 0.5 + 0.5 * min(1.0, rank / ZIPF_ID)


#: Terms found in more chunks than this are taken to be in the code without asking.
CODE_CHECK_DF = 200


@lru_cache(maxsize=1)
def _common_words() -> frozenset[str]:
    """Everyday words: the bundled tokenizer's whole-word pieces (English) and the words
    of Python's standard library it lacks (code jargon: ``login``, ``endpoint``; made by
    ``scripts/common_words.py``), with their stems."""
    vocab = _vocabulary_ids()
    jargon = resources.files("codecite.answer").joinpath("data/common-words.txt")
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


#: Words of business, not code: a question about prices, plans or service levels is
#: answered by code only when the code itself deals with them (then they are in it).
BUSINESS_WORDS = frozenset(
    "cost costs price prices pricing priced pay paying paid bill bills billing billed invoice "
    "invoices subscription subscriptions seat seats sla slas uptime revenue contract contracts "
    "monthly yearly annual budget spend spending salary salaries discount discounts".split()
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
                if len(low) < 2 or low in _PLAIN_CAPITALS:
                    continue
                capital = any(c.isupper() for c in part) and (i > 0 or part.isupper())
                rare = not _everyday(low, common)
                if (rare and (capital or low.isalpha())) or low in BUSINESS_WORDS:
                    out[low] = True
                elif capital:
                    out.setdefault(low, False)
    return out
