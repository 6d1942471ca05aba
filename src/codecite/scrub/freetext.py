"""Free text (a question, a log line): values pasted without their key names.

Two checks, for :func:`~codecite.scrub.scrub_text` only (after the token rules and the
assignments): a word that reads as a password (:func:`is_password_word`: letters of
both cases, digits and symbols, scrambled rather than composed of words, numbers and
identifiers) is redacted as ``password``; a run of 8+ letters and digits that looks
generated (:func:`is_random_run`) as ``high-entropy``.

Kept, because a pasted question holds them far more often than a secret of that form:
hex runs of at most :data:`MAX_HEX_ID` characters (git object ids, whole or
abbreviated, MD5 and SHA-1 digests; a 32- or 40-hex key pasted without its key name
is kept too: nothing tells it from a commit id), a digest after its label
(``sha256:...``), UUIDs (ids; a Heroku key is found by the word ``heroku`` before it,
:mod:`codecite.scrub.rules`), runs whose characters repeat like a counter's
(``rq01x0001z``), versions, paths, URLs, e-mail addresses and identifiers. Measured on
tests/fixtures/pasted.json (tests/test_scrub_pasted.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter

from .rules import DOC_MARKER, shannon_entropy, token

#: A word of free text (a question): a run without spaces, quotes or brackets.
_BARE_WORD = re.compile(r"[^\s'\"`<>()\[\]{},;]{8,}")
#: The letter-and-digit runs of a word; one that looks random makes the run a secret.
_BARE_SEGMENT = re.compile(r"[A-Za-z0-9]{8,}")
#: How identifiers split: ``Int32Array`` → Int, 32, Array; ``HTTPServer`` → HTTP, Server.
_IDENT_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_HEX_RUN = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_VOWELS = frozenset("aeiouyAEIOUY")
#: Words without a vowel that identifiers are made of (``XMLHttpRequest``, ``SqlConn``).
_VOWELLESS_WORDS = frozenset(
    "http https xml sql dns ssl tls tcp ssh cpp png jpg svg pdf csv rgb src lib std cmd "
    "pkg msg ctx req res cfg db fs js ts py rb rpc grpc jwt html css ws mq kv ml".split()
)
#: Longest hex run that is kept: a git object id (abbreviated or whole), an MD5 or
#: SHA-1 digest. A longer one (a 64-hex key) is redacted.
MAX_HEX_ID = 40
#: A digest's label: the hex after it is a digest, not a key (``nginx@sha256:9f86...``).
_DIGEST_LABEL = re.compile(r"(?:sha(?:1|224|256|384|512)|md5|blake2b?)[:=-]$", re.IGNORECASE)
#: Bits per character from which a 16+ character mixed run is random.
BARE_ENTROPY = 3.8
#: How far below the most a 10-15 character run's entropy may fall and still read as
#: random: a run whose characters repeat like a counter's (``rq01x0001z``) is an id.
ENTROPY_SLACK = 0.6


def _identifier_shaped(run: str) -> bool:
    """``GetUint64``, ``Int32Array``, ``testRouteNotOK2``: words (each with a vowel),
    acronyms and a few digit groups, not starting with a digit."""
    parts = _IDENT_PART.findall(run)
    if "".join(parts) != run:
        return False
    words = digits = 0
    for i, part in enumerate(parts):
        if part.isdigit():
            if i == 0:
                return False
            digits += 1
        elif part.isupper():
            if not 2 <= len(part) <= 6:
                return False
        elif len(part) < 2 or not (_VOWELS.intersection(part) or part.lower() in _VOWELLESS_WORDS):
            return False
        else:
            words += 1
    return words >= 1 and digits <= max(1, words // 2)


def is_random_run(run: str) -> bool:
    """Whether a run of 8+ letters and digits looks like a generated secret rather
    than a word, a number or an identifier (measured on 170,000 words of real code
    and docs: 0.1% flagged, nearly all of them hex or base64 blobs)."""
    if run[:2] in ("0x", "0X") and _HEX_RUN.fullmatch(run[2:]):
        run = run[2:]  # an address or constant (0x7f3a2b1c), unless as long as a key
    n = len(run)
    has_digit = any(c.isdigit() for c in run)
    upper, lower = run.lower() != run, run.upper() != run  # has upper, has lower case
    if not (lower or upper):
        return False  # digits only: a number
    if _HEX_RUN.fullmatch(run):
        return n > MAX_HEX_ID and has_digit
    if _identifier_shaped(run):
        return False
    mean_part = n / len(_IDENT_PART.findall(run))
    classes = has_digit + lower + upper
    if classes == 3:
        return mean_part < 2.6 or (n >= 16 and shannon_entropy(run) >= BARE_ENTROPY)
    if has_digit and n >= 16:
        return mean_part < 3.0 and shannon_entropy(run) >= 3.6
    if has_digit and n >= 10:
        return mean_part < 2.5 and shannon_entropy(run) >= math.log2(n) - ENTROPY_SLACK
    return lower and upper and n >= 20 and mean_part < 2.5


#: A word between spaces, for the password check (quotes and brackets included: a
#: password may hold them).
_SPACED_WORD = re.compile(r"\S{8,}")
#: What wraps a word in prose or code (quotes, brackets), and ends a sentence.
_LEADING = "([{<\"'`"
_TRAILING = ")]}>\"'`.,:;!?"
_ALNUM = re.compile(r"[A-Za-z0-9]+")
#: Symbols of passwords rather than of identifiers, versions and paths (``-_./:``).
PASSWORD_SYMBOLS = frozenset("!#$%&*+=?@^~|")
#: Shortest word taken for a password.
MIN_PASSWORD = 8
#: Paths, URLs and code: no password candidates.
_NOT_PASSWORD = re.compile(r"[/\\()\[\]{}<>'\"`]")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
#: Letters and digits in a short form: ``v1``, ``x86``, ``64bit``, ``i18n``, ``k8s``.
_AFFIXED = re.compile(r"[A-Za-z]{1,3}[0-9]+|[0-9]+[A-Za-z]{1,3}|[A-Za-z][0-9]+[A-Za-z]{1,2}")
_AFFIX_PREFIX = re.compile(r"[A-Za-z]{1,3}[0-9]+(?=[A-Z])")


def _ordinary_run(run: str) -> bool:
    """A number, a hex run (``F4F4F4``), a word (lower, UPPER or Title case), an
    identifier or a short form (``v1``, ``x86``, ``V2Validator``)."""
    if run.isdigit() or _HEX_RUN.fullmatch(run) or _identifier_shaped(run):
        return True
    if _AFFIXED.fullmatch(run):
        return True
    prefix = _AFFIX_PREFIX.match(run)  # V2Validator, S3Client
    if prefix and _identifier_shaped(run[prefix.end() :]):
        return True
    return run.isalpha() and (run.islower() or run.isupper() or run.istitle())


def _scrambled(run: str) -> bool:
    """Letters of both cases and digits in one run that is no identifier (``Wint3r``,
    ``sC0ming``, ``Pr0d``; not ``Int32``, ``OAuth2``, ``H264``)."""
    return (
        run.lower() != run
        and run.upper() != run
        and any(c.isdigit() for c in run)
        and not _ordinary_run(run)
    )


def is_password_word(word: str) -> bool:
    """Whether a word of a question (no spaces) reads as a password: letters of both
    cases and digits in two or more runs split by symbols, mostly not words, numbers or
    identifiers, and either a password symbol (:data:`PASSWORD_SYMBOLS`) with runs that
    look random (``Wint3r!sC0ming#BboSqX``, ``F0&NHNI@xFeT&VIf``) or two scrambled runs
    (``S3cr3t-Pr0d-Pa55``). Paths, URLs, e-mail addresses and code (brackets, quotes)
    are not."""
    if len(word) < MIN_PASSWORD or _NOT_PASSWORD.search(word) or _EMAIL.fullmatch(word):
        return False
    runs = _ALNUM.findall(word)
    joined = "".join(runs)
    if len(runs) < 2 or joined.lower() == joined or joined.upper() == joined:
        return False
    if not any(c.isdigit() for c in joined) or _identifier_shaped(joined):
        return False
    if sum(len(r) for r in runs if _ordinary_run(r)) >= 0.5 * len(joined):
        return False
    scrambled = sum(map(_scrambled, runs))
    if PASSWORD_SYMBOLS.intersection(word):
        return scrambled > 0 or len(joined) / len(_IDENT_PART.findall(joined)) < 2.6
    return scrambled >= 2


def _scrub_password_words(text: str, counts: Counter[str]) -> str:
    def word(m: re.Match[str]) -> str:
        found = m.group(0)
        if "«redacted:" in found or DOC_MARKER in found:
            return found
        core = found.lstrip(_LEADING)
        lead = len(found) - len(core)
        core = core.rstrip(_TRAILING)
        if not is_password_word(core):
            return found
        counts["password"] += 1
        return found[:lead] + token("password") + found[lead + len(core) :]

    return _SPACED_WORD.sub(word, text)


def scrub_bare_values(text: str, counts: Counter[str]) -> str:
    """Free text with values pasted without their key names redacted: a word that reads
    as a password (``why does Wint3r!sC0ming#BboSqX fail``) as ``password``, a
    random-looking run (``hunter2-PSnGd1Ck``, a key, a private key's body lines pasted
    without their END line) as ``high-entropy``."""
    text = _scrub_password_words(text, counts)

    def word(m: re.Match[str]) -> str:
        found = m.group(0)
        if "«redacted:" in found or DOC_MARKER in found:
            return found

        def run(r: re.Match[str]) -> str:
            before = found[max(0, r.start() - 8) : r.start()]
            if _DIGEST_LABEL.search(before) or not is_random_run(r.group(0)):
                return r.group(0)
            counts["high-entropy"] += 1
            return token("high-entropy")

        return _BARE_SEGMENT.sub(run, found)

    return _BARE_WORD.sub(word, text)
