"""The shape of a question: what kind of answer its asker wants to read first.

By transparent rules over the question's words (no model), in this order:

- ``error``: a pasted report or traceback, or a question quoting an error message —
  lead with the line that writes the message (or the frame that fails);
- ``tests``: which tests cover it, what to test;
- ``impact``: what breaks if X changes, who calls X;
- ``who``: who may do something (permissions, roles);
- ``quantity``: how long / how many / what limit / what default — a number;
- ``what-happens``: what happens when / if ... — the branch that handles the case;
- ``where``: where is X — a place;
- ``how``: how does X work — the steps;
- ``yesno``: does it support X, can it, is there — yes, and the evidence.

A ``quantity`` or ``what-happens`` question phrased as yes/no ("Is there a limit on the
body size?") keeps its kind and is marked ``polar``: its lead starts with "Yes".
The question's *subject* is what is left when the shape's own words are removed:
the terms the evidence must be about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..identifiers import joined_names, tokenize
from ..retrieve.keyword import STOPWORDS
from ..retrieve.question import Question
from .terms import stems, without_contractions

SHAPES = ("error", "tests", "impact", "who", "quantity", "what-happens", "where", "how", "yesno")

#: "How long", "how many", "how wide": a quantity asked for.
_HOW_QUANTITY = (
    r"how (long|many|much|often|big|large|soon|fast|frequently|wide|deep|high|far|small)"
)

#: A code the question asks the value of ("what exit code", "the status codes").
_CODE_ASKED = r"(exit|status|return|error|http|response) (code|status)s?"

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "tests",
        re.compile(
            r"\b(tests?|tested|testing|test cases?|unit tests?|coverage|covers?|covered|"
            r"what should (i|we) (test|check|verify))\b",
            re.I,
        ),
    ),
    (
        "impact",
        re.compile(
            r"\b(breaks?|(be|is|are|gets?) broken|impact\w*|affect\w*|"
            r"if (i|we) (change|modify|remove|rename|delete|refactor)|who (uses|calls)|"
            r"callers?|called (by|from)|used by(?! default)|usages|usage of|"
            # what depends on the code ("which features depend on it"), not a thing of the
            # domain depending on another ("if a job depends on another job")
            r"depends? on (it|this|that|them|these|those)|(what|which|who)\b.{0,40}\bdepends? on|"
            r"dependents|ripple)\b",
            re.I,
        ),
    ),
    (
        "who",
        re.compile(
            r"\b(who (can|may|is allowed|has access|gets|is trusted|are trusted)|whose|"
            r"which (users?|roles?|people)|"
            r"permissions?|allowed to|authori[sz]\w*|access control|only admins?)\b",
            re.I,
        ),
    ),
    (
        "quantity",
        re.compile(
            rf"\b({_HOW_QUANTITY}|"
            r"what (is|are) the (default|limit|maximum|minimum|max|min|size|timeout|"
            r"number|port|interval)|default (value|timeout|size|limit|port|number)|"
            r"limits?|maximum|minimum|max|timeouts?|expir\w+|ttl|lifetime|longest|largest|"
            r"biggest|shortest|smallest|at most|(a|any|the) cap (on|of|for)|"
            rf"(size|length|duration|interval|delay|port) of|(what|which) {_CODE_ASKED})\b",
            re.I,
        ),
    ),
    (
        "what-happens",
        re.compile(
            r"\b(what happens|what if|what does it do (when|if)|how does it (handle|"
            r"behave|react|respond)|what is (returned|shown|sent|logged) (when|if)|"
            r"what (do|does|will|would) (a |an |the |our )?\w+ (see|get|receive)\b|"
            r"when (a|an|the|someone|somebody|users?)\b.*\?$)",
            re.I,
        ),
    ),
    ("where", re.compile(r"\b(where|which (file|module|function|class|place)|locate)\b", re.I)),
    (
        "how",
        re.compile(
            r"\b(how (does|do|is|are|can|should|to)|explain|walk me through|why|"
            r"what (does|do)|describe|steps?|flow)\b",
            re.I,
        ),
    ),
)
#: A quantity asked outright: it wins over a permission word in the same question.
_HOW_MUCH = re.compile(r"\bhow (long|many|much|often)\b", re.I)
#: A quantity asked for as such (not only a unit word of the subject).
_QUANTITY_ASKED = re.compile(
    rf"\b({_HOW_QUANTITY}|what(?: i|')s the|"
    r"what (is|are) the|default (value|timeout|size|limit|port|number)|"
    rf"(what|which) {_CODE_ASKED})\b",
    re.I,
)
#: Where and how asked at the start of a question.
_ASKS = {
    "where": re.compile(r"^\s*(where|in which (file|module|function|class))\b", re.I),
    "how": re.compile(r"^\s*how (is|are|does|do|can)\b", re.I),
}
_POLAR = re.compile(
    r"^\s*(does|do|did|is|are|was|were|can|could|will|would|should|has|have|may|must)\b", re.I
)
#: A short question quoting an error ("why do I get 'KeyError: user'", "TypeError: x").
_QUOTED_ERROR = re.compile(r"\b[A-Z]\w*(Error|Exception|Exit|Panic)\b|\bpanic:|\berror:", re.I)
#: Stop words of a question's subject: the keyword search's, but for words that name
#: what a question can be about ("file uploads", "who can see the logs").
SUBJECT_STOPWORDS = STOPWORDS - {"file", "files", "show", "find", "handle", "handled", "logic"}
#: The phrases that make a shape ("how many", "what happens", "who can"), removed
#: before the subject is read ("too many files" keeps "many").
_SHAPE_PHRASE = re.compile(
    rf"\b({_HOW_QUANTITY}|how (does|do|is|are|can)|"
    r"what happens|what if|what (is|are) the|who (can|may|is allowed to|uses|calls)|"
    r"what breaks|if (i|we) (change|modify|remove|rename|delete|refactor)|"
    r"what should (i|we) (test|check|verify)|which tests?|where (is|are|do|does)|"
    r"walk me through|is there|are there|does it|do we|can (i|we|it|users?))\b",
    re.I,
)
#: A message quoted in a short question, and words saying that it was seen.
_QUOTED_MESSAGE = re.compile(r"[\"'“‘`][^\"'”’`\n]*\w+\s+\w+\s+\w+[^\"'”’`\n]*[\"'”’`]")
_SEEN = re.compile(
    r"\b(get|gets|getting|got|see|sees|seeing|saw|shows?|showing|says?|saying|prints?|"
    r"printed|logs?|logged|error|message|fails?|failed|failing|raises?|raised|crash\w*)\b",
    re.I,
)
#: Words that say what kind of answer is wanted or who asks, never what it is about,
#: and the function words of English that the keyword search's stop words leave in.
GENERIC_WORDS = frozenset(
    """
    one ones before after again against almost along already although always among amongst
    another around because become becomes becoming been being below beside besides beyond
    both cannot else elsewhere enough etc even ever every except few further hence however
    indeed instead least less likely may maybe meanwhile mine more moreover most mostly
    neither never nevertheless none nor not now often once only onto other others otherwise
    ourselves per perhaps quite rather same seem seemed seems several since still such
    than thereafter therefore these thing though thus together too toward towards under
    unless until upon very via well whereas whether while whither whoever whole whose yet
    yourself yourselves give gives given giving go goes going gone got put puts let lets
    done doing does did made make makes making like likes sure okay way lot lots kind sort
    compute computes computed computing calculate calculates calculated calculating
    determine determines determined decide decides decided define defines defined
    implement implements implemented configure configures configured perform performs
    performed locate located live lives happening

    happens happen happened occur occurs occurred someone somebody anyone anybody people
    support supports supported supporting possible able way ways see seen tell say says
    know stay stays last lasts keep kept take takes taking there here make makes need needs
    want wants try tries please thing things some default defaults value values get gets
    should would could might must also just really actually currently exactly
    anything something everything nothing anywhere somewhere whatever whenever
    our ours us they them their theirs its own without
    """.split()
)


#: The words of a quantity's unit, by what the question asks ("how long" → a duration).
UNITS = {
    "duration": "timeout timeouts ttl age seconds second secs sec minutes minute hours hour "
    "days day ms millis milliseconds interval delay expire expires expiry expiration lifetime "
    "keepalive keep alive grace wait sleep duration period time times heartbeat",
    "count": "max maximum min minimum limit limits count num number workers threads retries "
    "retry attempts concurrency backlog capacity connections many total",
    "size": "size sizes bytes kb mb gb memory length len buffer max maximum limit limits chunk "
    "width columns depth",
    "code": "code codes exit status returncode",
}
_UNIT_QUESTION = (
    ("duration", re.compile(r"\bhow (long|often|soon|frequently)|\b(timeout|expir\w*|"
                            r"seconds?|minutes?|hours?|days?|wait\w*|interval|ttl|lifetime)\b",
                            re.I)),
    # "how long" asks for a duration; "long" alone ("too long", "the longest URL") a size
    ("size", re.compile(r"\bhow (much|big|large|wide|deep|high|far|small)|\b(size|bytes?|"
                        r"memory|length|width|(?<!how )long(est)?|large|big)\b", re.I)),
    ("count", re.compile(r"\bhow many|\b(limit|maximum|max|minimum|number of|count|cap)\b",
                         re.I)),
    ("code", re.compile(rf"\b{_CODE_ASKED}\b", re.I)),
)  # fmt: skip


def unit_words(text: str) -> tuple[str, ...]:
    """The unit words a quantity question's answer likely names ("how long" → timeout,
    ttl, seconds, ...; all of them when the question says no unit)."""
    kinds = [kind for kind, pattern in _UNIT_QUESTION if pattern.search(text)]
    return tuple(dict.fromkeys(w for k in (kinds or list(UNITS)) for w in UNITS[k].split()))


def quantity_units(text: str) -> frozenset[str]:
    """The stems of :func:`unit_words`."""
    return frozenset(stems(" ".join(unit_words(text))))


@dataclass(frozen=True)
class Shape:
    """What the question asks for."""

    kind: str
    #: Phrased as yes/no ("does it", "is there", "can users").
    polar: bool
    #: The terms the answer must be about (identifier parts lower-cased), in order.
    subject: tuple[str, ...]
    #: For a quantity: the stems of the unit words its answer likely names.
    units: frozenset[str] = frozenset()


#: A sentence of a question that asks (ends with a question mark).
_ASKED_SENTENCE = re.compile(r"[^.?!\n]*\?")


def question_shape(text: str, question: Question | None = None) -> Shape:
    """The shape of ``text`` (a long question is read as :func:`read_question` did)."""
    long = question is not None and question.long
    head = _title(text) if long else text
    reported = long and bool(question and (question.errors or question.frames))
    quoted = (
        not long
        # a tests question quoting a message ("Which tests check 'Too many files'?"), not
        # a pasted error that says in passing where it was seen ("... across our test
        # suite. Why does this happen?"): the sentences asking decide
        and not _RULES[0][1].search(" ".join(_ASKED_SENTENCE.findall(text)) or text)
        and bool(
            _QUOTED_ERROR.search(text)
            # "don't ... it's" quotes nothing
            or (_QUOTED_MESSAGE.search(without_contractions(text)) and _SEEN.search(text))
        )
    )
    if reported or quoted:
        kind = "error"
    else:
        kind = next((name for name, rule in _RULES if rule.search(head)), "")
        if kind == "who" and _HOW_MUCH.search(head):  # "how long ... the permission check"
            kind = "quantity"
        if kind == "quantity" and not _QUANTITY_ASKED.search(head):
            # a unit word alone ("Where is a job's time limit enforced?", "How is an
            # invalid ttl reported?") names the subject; the question asks where or how
            kind = next((k for k in ("where", "how") if _ASKS[k].search(head)), kind)
        if long and kind in ("tests", "impact"):  # a report's "tests fail", "it breaks":
            kind = "error"  # it asks where the failure comes from, not for tests or callers
        if not kind:
            kind = "yesno" if _POLAR.match(head) else ("error" if long else "how")
    polar = bool(_POLAR.match(head)) and kind not in ("error", "how", "where")
    source = without_contractions(question.prose if long and question is not None else text)
    if not long:  # the shape's own words are not its subject ("affected", "how many")
        source = _SHAPE_PHRASE.sub(" ", source)
        rule = dict(_RULES).get(kind)
        if rule is not None:
            source = rule.sub(lambda m: " " if len(m.group(0).split()) <= 3 else m.group(0), source)
    units = quantity_units(text) if kind == "quantity" else frozenset()
    return Shape(kind, polar, subject_terms(source), units)


def subject_terms(text: str) -> tuple[str, ...]:
    """The question's content terms: tokens less stop words and generic words. A
    snake_case whole is left to its parts (the keyword index holds only those)."""
    out = []
    for token in tokenize(text):
        if (len(token) < 3 and not any(c.isdigit() for c in token)) or "_" in token:
            continue  # "s3" and "ec2" stay
        if token not in SUBJECT_STOPWORDS and token not in GENERIC_WORDS:
            out.append(token)
    return tuple(dict.fromkeys([*out, *joined_names(text)]))  # "HTTP/2": http2 too


def _title(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), text)
