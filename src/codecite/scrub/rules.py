"""Token rules of the secret scrubber and the judges that tell a secret from a test value.

A rule is one literal-prefixed pattern for a known key format (``AKIA...``, ``ghp_...``,
``SG....``) or the high-entropy literal rule; its judge keeps placeholders, published test
vectors and public values. Private key blocks are redacted line by line here too.
:mod:`codecite.scrub` runs the rules, handles assignments and states the policy.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from ..config import Config

KINDS = (
    "private-key", "aws-access-key", "aws-secret-key", "github-token", "gitlab-token",
    "slack-token", "slack-webhook", "stripe-key", "google-api-key", "anthropic-key",
    "openai-key", "npm-token", "sendgrid-key", "twilio-sid", "jwt", "bearer-token",
    "basic-auth", "connection-string", "password", "secret", "high-entropy", "heroku-api-key",
)  # fmt: skip


def token(kind: str) -> str:
    """The text that replaces a secret of ``kind``."""
    return f"«redacted:{kind}»"


@dataclass(frozen=True)
class Ctx:
    """What is known about the text being scrubbed."""

    config: Config
    #: Unquoted ``key: value`` lines are literals (``.env``, YAML, INI, ``credentials``).
    config_file: bool = False
    #: A Dockerfile: ``ENV``/``ARG`` values are literals.
    dockerfile: bool = False
    #: Free text (a question): an unquoted value that looks like a key is a literal.
    free_text: bool = False


#: Decides a match: False keeps it, True redacts it as the rule's kind, a str names the kind.
Judge = Callable[[re.Match[str], Ctx], bool | str]


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    #: The rule runs only when one of these occurs in the text.
    triggers: tuple[str, ...] = ()
    #: Group holding the secret; only it is replaced.
    group: str | int = 0
    judge: Judge | None = None
    #: The match must not follow a letter, digit or ``_`` (a ``\b`` that keeps the
    #: regex's fast literal-prefix search).
    word_start: bool = True


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text``."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


#: Marks a documented example key (``AKIAIOSFODNN7EXAMPLE``); random keys never hold it.
DOC_MARKER = "EXAMPLE"
_PLACEHOLDER_WORDS = frozenset(
    ["none", "null", "nil", "undefined", "true", "false", "yes", "no", "password", "passwd",
     "secret", "token", "example", "dummy", "redacted", "hidden", "todo", "tbd", "fixme",
     "xxx", "n/a", "na", "empty", "string", "str", "pass", "pwd", "pw", "foo", "bar", "baz"]
)  # fmt: skip
_PLACEHOLDER_PREFIXES = (
    "your", "my-", "my_", "enter", "insert", "replace", "example", "dummy", "fake",
    "placeholder", "<", "$", "%(", "#{", "{", "[",
)  # fmt: skip
_MASK_CHARS = frozenset("*xX.-_•#?:")
_FILELIKE = re.compile(r"[\w\-/\\~]+(?:\.[A-Za-z_][\w\-]*)+")
_PATHLIKE = ("/", "./", "../", "~/", "http://", "https://", "file:")
#: Shortest value that can look like a key, and the entropy that makes one without digits.
MIN_KEY_LENGTH = 8
KEYLIKE_ENTROPY = 3.5


def is_placeholder(value: str) -> bool:
    v = value.strip()
    low = v.lower()
    return (
        not any(c.isascii() and c.isalnum() for c in v)
        or low in _PLACEHOLDER_WORDS
        or low.startswith(_PLACEHOLDER_PREFIXES)
        or set(v) <= _MASK_CHARS
        or "${" in v
        or "{{" in v
        or "«redacted:" in v
        or DOC_MARKER in v
    )


def looks_like_key(value: str) -> bool:
    """Random-looking enough for a token/key value: 8+ chars, no spaces, not a path."""
    if len(value) < MIN_KEY_LENGTH or any(c.isspace() for c in value):
        return False
    if value.startswith(_PATHLIKE) or _FILELIKE.fullmatch(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return (has_digit and has_alpha) or shannon_entropy(value) >= KEYLIKE_ENTROPY


#: Passwords this short are test values (``u:p``, ``a:b``); no real credential is.
MAX_DUMMY_PASSWORD = 3
#: Logins published as examples (RFC 7617 basic auth, RFC 2617 digest auth).
_DOC_LOGINS = frozenset({("aladdin", "open sesame"), ("mufasa", "circle of life")})
#: Hosts reserved for documentation and tests (RFC 2606, RFC 6761).
_RESERVED_HOSTS = ("example.com", "example.net", "example.org", "localhost")
_RESERVED_SUFFIXES = (".example", ".test", ".invalid", ".localhost", ".example.com",
                      ".example.net", ".example.org")  # fmt: skip


def is_dummy_login(user: str, password: str, host: str = "") -> bool:
    """A test login: a placeholder or very short password, the user name repeated, a
    published example, or a plain word on a documentation host (``alice:wonder@example.com``).
    """
    low, host = password.lower(), host.lower().rstrip(".")
    if is_placeholder(password) or len(password) <= MAX_DUMMY_PASSWORD:
        return True
    if low == user.lower() or (user.lower(), low) in _DOC_LOGINS:
        return True
    reserved = host in _RESERVED_HOSTS or host.endswith(_RESERVED_SUFFIXES)
    return reserved and password.isalpha()


#: Names of values that are public by design: digest-auth nonces, CSRF tokens (sent in
#: every page), unless the name also says secret/key (``CSRF_SECRET_KEY`` is a secret).
_PUBLIC_NAME_WORDS = ("nonce", "csrf", "xsrf")
_SECRET_NAME_WORDS = ("secret", "key", "pass", "pwd", "private", "credential", "signing")


def is_public_name(name: str) -> bool:
    low = name.lower()
    return any(w in low for w in _PUBLIC_NAME_WORDS) and not any(
        w in low for w in _SECRET_NAME_WORDS
    )


#: How far before a literal its key name is looked for.
KEY_LOOKBACK = 80
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _skip_back(text: str, i: int, lo: int, chars: str | frozenset[str]) -> int:
    while i > lo and text[i - 1] in chars:
        i -= 1
    return i


def key_before(text: str, pos: int) -> str:
    """The name a literal at ``pos`` is assigned to (``k = "v"``, ``"k": "v"``, ``k="v"``)."""
    lo = max(0, pos - KEY_LOOKBACK)
    i = _skip_back(text, pos, lo, " \t")
    j = _skip_back(text, i, max(lo, i - 2), "=:>")  # =, :, =>, :=
    if j == i:
        return ""
    i = _skip_back(text, j, lo, " \t")
    i = _skip_back(text, i, max(lo, i - 2), "\"']")
    return text[_skip_back(text, i, lo, _NAME_CHARS) : i]


def _judge_mixed(m: re.Match[str], ctx: Ctx) -> bool | str:
    """Keys with a generic prefix (``sk-``, ``Bearer``): digits and both cases."""
    s = m.group("s")
    return any(c.isdigit() for c in s) and s.lower() != s and s.upper() != s


def _judge_basic(m: re.Match[str], ctx: Ctx) -> bool | str:
    try:
        decoded = base64.b64decode(m.group("s"), validate=True)
    except (binascii.Error, ValueError):
        return False
    user, colon, password = decoded.decode("utf-8", "replace").partition(":")
    return bool(colon) and not is_dummy_login(user, password)


_HOST = re.compile(r"[A-Za-z0-9.\-]*")


def _judge_url(m: re.Match[str], ctx: Ctx) -> bool | str:
    host = _HOST.match(m.string, m.end())
    return not is_dummy_login(m.group("u"), m.group("s"), host.group(0) if host else "")


_ALPHABET_RUN = re.compile(r"abcd|bcde|cdef|ABCD|BCDE|CDEF|0123|1234|2345|3456|6789|wxyz|WXYZ")
_WORD = re.compile(r"[A-Z]?[a-z]{4,}")
#: Share of characters in words (a capital and 4+ lowercase letters) from which a
#: literal reads as names (``runwayml/stable-diffusion-v1-5``,
#: ``QDQDisableWeightAdjustForInt32Bias``); random keys of 24+ chars stay below it
#: 99% of the time.
MAX_WORDINESS = 0.45
#: Longest part of a literal that is judged (enough for a long blob).
MAX_JUDGED = 4096
#: Subresource-integrity hashes (HTML ``integrity=``, npm lockfiles): public digests.
_SRI = re.compile(r"sha(?:1|256|384|512)-[A-Za-z0-9+/]+={0,2}")
#: Base64 of binary file headers: PNG, JPEG, GIF, WebP, SVG, XML, ICO, PDF, WOFF, WOFF2.
_BINARY_BASE64_PREFIXES = (
    "iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "PHN2Zy", "PD94bWwg", "AAABAA", "JVBERi0",
    "d09GRg", "d09GMg",
)  # fmt: skip


def _judge_entropy(m: re.Match[str], ctx: Ctx) -> bool | str:
    s = m.group("s")[:MAX_JUDGED]
    if not (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
        return False
    if DOC_MARKER in s or s.startswith(_BINARY_BASE64_PREFIXES) or _SRI.fullmatch(s):
        return False
    if len(_ALPHABET_RUN.findall(s)) > 2:  # "ABCDEFGHIJ...0123456789+/" alphabets
        return False
    if sum(map(len, _WORD.findall(s))) >= MAX_WORDINESS * len(s):
        return False
    if shannon_entropy(s) < ctx.config.index.entropy_threshold:
        return False
    return not is_public_name(key_before(m.string, m.start()))


def _judge_sk(m: re.Match[str], ctx: Ctx) -> bool | str:
    if m.group("ant"):
        return "anthropic-key"
    return "openai-key" if _judge_mixed(m, ctx) else False


_AWS_PREFIXES = "AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA"
#: Rules without triggers start with a literal: the regex's own prefix search is as
#: fast as a substring test, so they run on every text.
RULES: tuple[Rule, ...] = (
    Rule("aws-access-key", re.compile(rf"(?:{_AWS_PREFIXES})[A-Z0-9]{{16}}\b")),
    Rule("github-token",
         re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b")),
    Rule("gitlab-token", re.compile(r"glpat-[A-Za-z0-9_\-]{20,}")),
    Rule("slack-token", re.compile(r"xox[baprs]-[A-Za-z0-9\-]{10,}")),
    Rule("slack-webhook",
         re.compile(r"hooks\.slack\.com/services/(?P<s>T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+)"),
         group="s", word_start=False),
    Rule("stripe-key", re.compile(r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
         ("k_live_", "k_test_")),
    Rule("google-api-key", re.compile(r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])")),
    Rule("openai-key",
         re.compile(r"sk-(?P<ant>ant-)?(?:proj-|svcacct-|admin-)?(?P<s>[A-Za-z0-9_\-]{20,})"),
         judge=_judge_sk),
    Rule("npm-token", re.compile(r"npm_[A-Za-z0-9]{36}\b")),
    # SG. + 22 + . + 43 url-safe chars; the lengths are loose to catch truncated keys
    Rule("sendgrid-key", re.compile(
        r"SG\.(?P<s>[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{32,64})(?![A-Za-z0-9_\-])"),
         judge=_judge_mixed),
    Rule("twilio-sid", re.compile(r"AC[0-9a-f]{32}\b")),  # account SID
    Rule("twilio-sid", re.compile(r"SK[0-9a-f]{32}\b")),  # API key SID
    Rule("jwt",
         re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    Rule("bearer-token", re.compile(r"[Bb]earer[ \t]+(?P<s>[A-Za-z0-9\-._~+/]{20,}=*)"),
         ("earer",), group="s", judge=_judge_mixed),
    Rule("basic-auth", re.compile(r"Basic[ \t]+(?P<s>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])"),
         group="s", judge=_judge_basic),
    # a Heroku API key is a UUID: known by the name before it (HEROKU_API_KEY=, "heroku
    # api key", heroku: ...), as a UUID without it is an id
    Rule("heroku-api-key",
         re.compile(r"[Hh][Ee][Rr][Oo][Kk][Uu][\w .:=>\"'-]{0,40}?"
                    r"(?P<s>[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-"
                    r"[0-9A-Fa-f]{12})(?![0-9A-Za-z-])"),
         ("eroku", "EROKU"), group="s", word_start=False),
    Rule("connection-string",
         re.compile(r"://(?P<u>[^\s:/@'\"<>]*):(?P<s>[^\s@'\"<>/]+)@(?=[A-Za-z0-9\[])"),
         group="s", judge=_judge_url, word_start=False),
)  # fmt: skip


@lru_cache(maxsize=8)
def entropy_rule(min_length: int) -> Rule:
    pattern = re.compile(rf"(?P<q>[\"'`])(?P<s>[A-Za-z0-9+/=_\-]{{{min_length},}})(?P=q)")
    return Rule("high-entropy", pattern, group="s", judge=_judge_entropy, word_start=False)


def apply_rule(rule: Rule, text: str, ctx: Ctx, counts: Counter[str]) -> str:
    """``text`` with every match of ``rule`` its judge accepts replaced by the token."""

    def repl(m: re.Match[str]) -> str:
        start = m.start()
        if rule.word_start and start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            return m.group(0)
        if DOC_MARKER in m.group(rule.group):  # AKIAIOSFODNN7EXAMPLE
            return m.group(0)
        verdict = True if rule.judge is None else rule.judge(m, ctx)
        if verdict is False:
            return m.group(0)
        kind = rule.kind if verdict is True else verdict
        counts[kind] += 1
        whole = m.group(0)
        return (
            whole[: m.start(rule.group) - start] + token(kind) + whole[m.end(rule.group) - start :]
        )

    if rule.pattern.search(text) is None:  # a search is faster than a sub that finds nothing
        return text
    return rule.pattern.sub(repl, text)


_KEY_MARK = r"(?P<label>[A-Z0-9 ]*)PRIVATE KEY(?P<block>(?: BLOCK)?)-----"
_KEY_BEGIN = re.compile(r"-----BEGIN " + _KEY_MARK)
_KEY_END = re.compile(r"-----END " + _KEY_MARK)
#: Longest key body looked at (an RSA-16384 key is ~13 KB).
MAX_KEY_BODY = 40_000
_KEY_LINE = re.compile(r"[A-Za-z0-9+/=][^\r\n\"'`]*[A-Za-z0-9+/=]|[A-Za-z0-9+/=]")
_ESCAPED_BODY = re.compile(r"((?:\\[rn]|[ \t])*)([^\r]*?)((?:\\[rn]|[ \t])*)")


def _redact_key_body(body: str) -> str:
    """Each body line's content becomes the token; newlines are kept."""
    tok = token("private-key")
    if "\n" not in body:  # one line with escaped newlines, as in JSON or a Python string
        m = _ESCAPED_BODY.fullmatch(body)
        return f"{m[1]}{tok}{m[3]}" if m and m[2] else body
    lines = body.split("\n")
    for i in range(1, len(lines) - 1):
        lines[i] = _KEY_LINE.sub(tok, lines[i], count=1)
    return "\n".join(lines)


def scrub_private_keys(text: str, counts: Counter[str]) -> str:
    """Private key bodies redacted, one count per block; BEGIN/END lines and newlines kept.

    Each BEGIN marker is paired with the next END marker of the same label.
    """
    ends = list(_KEY_END.finditer(text))
    starts = [e.start() for e in ends]
    parts: list[str] = []
    done = 0
    for begin in _KEY_BEGIN.finditer(text):
        i = bisect.bisect_left(starts, begin.end())
        if begin.start() < done or i == len(ends):
            continue
        end = ends[i]
        same = end.group("label", "block") == begin.group("label", "block")
        body = text[begin.end() : end.start()]
        if not same or len(body) > MAX_KEY_BODY:
            continue
        redacted = _redact_key_body(body)
        if redacted != body:
            parts += [text[done : begin.end()], redacted]
            done = end.start()
            counts["private-key"] += 1
    return "".join([*parts, text[done:]]) if parts else text
