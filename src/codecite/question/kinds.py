"""What a question asks for, by one table of transparent rules (no model), read once
for retrieval and for the answer alike (issue 38: the intent of ``search`` and the
shape of ``ask`` were two classifiers of one question).

Each rule names the *kind* of answer wanted first and the *intent* retrieval expands
for (``locate``, ``explain``: what it calls, ``impact``: its callers, ``tests``). In
order, the first rule that matches wins:

- ``tests``: which tests cover it, what to test;
- ``impact``: what breaks if X changes, who calls X;
- ``who``: who may do something (permissions, roles);
- ``quantity``: how long / how many / what limit / what default;
- ``what-happens``: what happens when / if ...;
- ``where``: where is X;
- ``how``: how does X work, why;
- ``quantity`` again: a word of a quantity alone (a limit, a timeout, a ttl);

``error`` (a pasted report or traceback, or a question quoting an error message) is
read from the question's parts first; a question phrased as yes/no with no other kind
is ``yesno``, else ``how``. Also: the identifiers a question names, which shift fusion
toward keyword search and get an exact symbol lookup (in an impact question, the word a
change or a call is of, even a plain one: "what breaks if I change respond")."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .terms import STOPWORDS

#: An effect ("what breaks", "the impact of"): it asks for impact only where the question
#: changes or supposes something (_CHANGES); "why does X impact memory" and "the line
#: break index" ask how X works.
_EFFECT = re.compile(
    r"\b(breaks?|(be|is|are|gets?) broken|impact\w*|affect\w*|consequences?|ripple)\b", re.I
)
#: Words of a quantity, and of who may do something, that name what a question is about
#: as well as making its kind (:data:`_CONTENT`).
_QUANTITY_WORDS = r"limits?|maximum|minimum|timeouts?|expir\w+|ttl|lifetime"
#: ("the Authorization header" is a header: it asks what happens to one)
_ACCESS_WORDS = r"permissions?|authori[sz]\w*\b(?!\s+headers?\b)|access control"
#: A question asking for tests: tests as what it asks for ("which tests", "is there a
#: test for", "are there any specs"), how something is tested ("where do we test ..."),
#: its coverage, "what should I test", a test's own words ("Test that ...", "This tests
#: ...") ("the test client", "how are tests collected" name what the code handles).
_WANTS_TESTS = re.compile(
    r"\b((which|what|are there( any)?|do (any|the)|list( the)?|show( me)?( the)?|"
    r"find( the)?|where are( the)?)( \w+)? (tests|specs|spec files|test cases|test files)|"
    r"(which|what) (\w+ )?(test|spec) (covers|checks|exercises|tests|verifies|proves|guards)|"
    r"(a|any|one) test (for|that|which|covering|checking)|"
    r"(covered|exercised|checked|verified) by (any |the )?tests?|tested|(test|code) coverage|"
    r"(we|you|they|i) test|^\W*(this )?(tests?|testing)|"
    r"what should (i|we) (test|check|verify)|what to test)\b",
    re.I,
)
#: A question about one test's code: "the test function that validates ...", "the
#: testing utility that invokes ..." (its answer is that test: search's order stands).
_ABOUT_TEST = re.compile(
    r"\b(the|this|that) (unit |functional |integration )?(test|testing) (function|method|"
    r"class|case|helper|utility|utilities|fixture|suite|module|file|harness)s?\b",
    re.I,
)
_TESTS_ASKED = re.compile(f"{_WANTS_TESTS.pattern}|{_ABOUT_TEST.pattern}", re.I)
#: Words of a call or a use: they ask for the callers ("where is parse_args called
#: from?", "the callers of retry") except in a question that asks how or why, where they
#: describe what it is about ("how does the tokenizer used by the parser report ...").
_USES = re.compile(r"\b(callers?|called (by|from)|used by(?! default)|usages|usage of)\b", re.I)
_EXPLAINS = re.compile(
    r"^\W*(how|why|when|what (happens|does|do|is the (role|purpose|design|mechanism)))\b", re.I
)
#: (kind, intent, rule): the first that matches names what the question asks.
_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    # a question about tests asks for them ("which tests cover it") or about one test's
    # code ("the test helper that ..."); tests named as what the code handles ("how does
    # the runner collect tests?", a test runner's every question) ask about the code, as
    # do "does the retry cover network errors?" and "the spec of the format"
    ("tests", "tests", _TESTS_ASKED),
    ("impact", "impact", re.compile(
        r"\b(if (i|we) (change|modify|remove|rename|delete|refactor)|who (uses|calls)|"
        r"depends? on (it|this|that|them|these|those)|(what|which|who)\b.{0,40}\bdepends? on|"
        r"dependents)\b", re.I)),
    ("impact", "impact", _USES),
    ("impact", "impact", _EFFECT),
    ("who", "locate", re.compile(
        r"\b(who (can|may|is allowed|has access|gets|is trusted|are trusted)|whose|"
        rf"which (users?|roles?|people)|allowed to|{_ACCESS_WORDS}|only admins?)\b", re.I)),
    ("quantity", "locate", re.compile(
        r"\b(how (long|many|much|often|big|large|soon|fast|frequently|wide|high|far|small)|"
        r"what (is|are) the (default|limit|maximum|minimum|max|min|size|timeout|number|port|"
        r"interval)|default (value|timeout|size|limit|port|number))\b", re.I)),
    ("what-happens", "explain", re.compile(
        r"\b(what happens|what if|what does it do (when|if)|how does it (handle|behave|react|"
        r"respond))\b", re.I)),
    ("where", "locate", re.compile(
        r"\b(where|which (file|module|function|class|place)|locate)\b", re.I)),
    ("how", "explain", re.compile(
        r"\b(how (does|do|is|are|can|should|to)|explain|walk me through|why|what (does|do)|"
        r"describe|steps?|flow|logic|works?)\b", re.I)),
    # a word of a quantity alone asks for one when nothing else is asked: "what happens
    # when the timeout is reached", "where is the time limit enforced" ask otherwise
    ("quantity", "locate", re.compile(rf"\b({_QUANTITY_WORDS})\b", re.I)),
)  # fmt: skip
KINDS = ("error", *dict.fromkeys(kind for kind, _, _ in _RULES), "yesno")
#: Words that make a kind but name what the question is about: they stay in its subject
#: ("What happens when the timeout is reached?", "How are permissions checked?").
_CONTENT = re.compile(f"{_QUANTITY_WORDS}|{_ACCESS_WORDS}", re.I)
#: A change, or a supposition of one: an effect word ("breaks", "affects") asks for
#: impact only beside one.
_CHANGES = re.compile(
    r"\b(if|chang(e[sd]?|ing)|modif(y|ies|ied|ying|ication)|remov(e[sd]?|ing|al)|renam(e[sd]?|ing)|"
    r"delet(e[sd]?|ing)|refactor\w*|replac(e[sd]?|ing)|rewr(ite|ites|iting|itten|ote)|"
    r"alter(s|ed|ing)?|swap(s|ped|ping)?)\b",
    re.I,
)
_POLAR = re.compile(
    r"^\s*(does|do|did|is|are|was|were|can|could|will|would|should|has|have|may|must)\b", re.I
)
#: A sentence of a question that asks (ends with a question mark).
_ASKED_SENTENCE = re.compile(r"[^.?!\n]*\?")
#: A short question quoting an error ("why do I get 'KeyError: user'", "TypeError: x").
_QUOTED_ERROR = re.compile(r"\b[A-Z]\w*(Error|Exception|Exit|Panic)\b|\bpanic:|\berror:", re.I)


@dataclass(frozen=True)
class Kind:
    """What a question asks for: the answer's ``name`` (one of :data:`KINDS`), the
    ``intent`` retrieval expands for, and whether it is phrased as yes/no."""

    name: str
    intent: str
    polar: bool = False
    #: The words that made the kind ("what breaks if I change", "which tests"): not
    #: what the question is about ('' when they are: "timeout", "permissions").
    phrase: str = ""
    #: A tests question that asks for tests ("which tests", "is there a test for"), not
    #: about a thing named test ("the test client").
    wants_tests: bool = False


def classify(text: str, reported: bool = False, long: bool = False) -> Kind:
    """The kind of ``text`` (a long question's title); ``reported``: it pastes a
    traceback or an error message. A long question (a bug report) asks where the code
    is, whatever its title says ("tests fail", "it breaks")."""
    polar = bool(_POLAR.match(text))
    # a question quoting an error, unless the sentences that ask are about tests ("Which
    # tests check 'Too many files'?"); "... across our test suite" in passing is not
    asked = " ".join(_ASKED_SENTENCE.findall(text)) or text
    if reported or (not long and _QUOTED_ERROR.search(text) and not _RULES[0][2].search(asked)):
        return Kind("error", "locate", False)
    for name, intent, rule in _RULES:
        found = rule.search(text)
        if (
            found
            and (rule is not _EFFECT or _CHANGES.search(text))
            and (rule is not _USES or not _EXPLAINS.match(text))
        ):
            if long:
                return Kind("error" if name in ("tests", "impact") else name, "locate", False)
            wants = name == "tests" and bool(_WANTS_TESTS.search(text))
            phrase = "" if _CONTENT.fullmatch(found.group(0)) else found.group(0)
            return Kind(name, intent, polar and name not in ("how", "where"), phrase, wants)
    if long:
        return Kind("error", "locate", False)
    return Kind("yesno", "locate", True) if polar else Kind("how", "locate", False)


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
#: A name written as a call, ``crontab()`` or ``settle(resolve, reject)``: code, even a
#: plain word (not the plural of "file(s)" or "HTTP(S)", nor a dotted name's last part).
_CALLED = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]+)\((?![A-Za-z]{1,2}\))")
#: The arguments of a call written in backticks (`` `app.use(fn)` ``: the name is
#: ``app.use``).
_CALL_ARGS = re.compile(r"^([A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)*)\s*\(.*\)$")


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
    """The intent of ``text`` (``locate`` when no rule names another)."""
    return classify(text).intent


#: The word a change or a call is of, in an impact question ("if I change respond",
#: "if I changed how respond handles HEAD", "who calls serve"): a name, even a plain
#: word, looked up as a symbol ("how errors are logged": a subject, no name).
_CHANGED = re.compile(
    r"\b(chang(?:e|ed|ing)|modif(?:y|ied|ying)|renam(?:e|ed|ing)|remov(?:e|ed|ing)|"
    r"delet(?:e|ed|ing)|refactor(?:ed|ing)?|rewr(?:ite|ote|iting)|calls|uses|callers of|"
    r"usages of)\s+(?:how\s+)?([A-Za-z_$][\w$]*)\b(?!\s*[-']|\.\w)(?!\s+(?:are|is|were|was|get)\b)",
    re.I,
)


def analyse(query: str, intent_text: str | None = None, intent: str | None = None) -> QueryInfo:
    """Intent and identifiers of a query; the intent is read from ``intent_text`` when
    given (a bug report's title: its body says "test" and "assert" without asking
    for tests)."""
    if intent is None:
        intent = detect_intent(query if intent_text is None else intent_text)
    spans = (m.group(2).strip() for m in _BACKTICK.finditer(query))
    found: list[str] = [_CALL_ARGS.sub(r"\1", span) for span in spans]
    found += [m.group(0) for m in _DOTTED.finditer(query) if not m.group(0)[0].isdigit()]
    prose = _BACKTICK.sub(" ", query)
    if intent_text is None:  # a short question's calls (a report's pasted code: not names)
        found += [m.group(1) for m in _CALLED.finditer(prose)]
    words = _WORD.findall(prose)
    found += [w for w in words if _is_identifier(w)]
    if intent == "impact":  # "what breaks if I change respond": the name changed
        changed = (m.group(2) for m in _CHANGED.finditer(query))
        found += [w for w in changed if w.lower() not in STOPWORDS]
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
