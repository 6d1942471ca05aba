"""Free text (a question, a log line): values pasted without their key names.

A word of a question is redacted when it looks generated (:func:`is_random_run`) rather
than like a word, a number or an identifier. :mod:`codecite.scrub` runs this after the
token rules and the assignments, for :func:`~codecite.scrub.scrub_text` only.
"""

from __future__ import annotations

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
#: Shortest hex run taken for a key (a 32-hex Django key, a 40-hex key id; git commit
#: ids are redacted too: shown in a stored question they tell little).
MIN_HEX_SECRET = 24
#: Bits per character from which a 16+ character mixed run is random.
BARE_ENTROPY = 3.8


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
        elif len(part) < 2 or not _VOWELS.intersection(part):
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
        return n >= MIN_HEX_SECRET and has_digit
    if _identifier_shaped(run):
        return False
    mean_part = n / len(_IDENT_PART.findall(run))
    classes = has_digit + lower + upper
    if classes == 3:
        return mean_part < 2.6 or (n >= 16 and shannon_entropy(run) >= BARE_ENTROPY)
    if has_digit and n >= 16:
        return mean_part < 3.0 and shannon_entropy(run) >= 3.6
    if has_digit and n >= 10:
        return mean_part < 2.5
    return lower and upper and n >= 20 and mean_part < 2.5


def scrub_bare_values(text: str, counts: Counter[str]) -> str:
    """Free text with random-looking runs redacted as ``high-entropy``: a password or
    key pasted into a question without its key name (``why does this fail:
    hunter2-PSnGd1Ck``), a private key's body lines pasted without their END line."""

    def word(m: re.Match[str]) -> str:
        found = m.group(0)
        if "«redacted:" in found or DOC_MARKER in found:
            return found

        def run(r: re.Match[str]) -> str:
            if not is_random_run(r.group(0)):
                return r.group(0)
            counts["high-entropy"] += 1
            return token("high-entropy")

        return _BARE_SEGMENT.sub(run, found)

    return _BARE_WORD.sub(word, text)
