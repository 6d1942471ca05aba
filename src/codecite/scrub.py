"""Secret detection and redaction, run over every file before chunking.

Each secret is replaced by ``«redacted:KIND»`` and counted by KIND. Newlines are
never added or removed, so chunk line numbers stay valid: a private key block keeps
its ``BEGIN``/``END`` lines and each body line becomes ``«redacted:private-key»``
(one count per block). In assignments and URLs only the value is replaced; the key
name, scheme, user and host stay readable.

Kinds (stable names): see :data:`KINDS`.

False-positive policy:

* Assignments to secret-named keys (``password``, ``secret``, ``api_key``, ``token``,
  ``auth``...) are redacted only when the value is a literal: quoted anywhere, or
  unquoted in config files (``.env``, YAML, INI, properties; ``path`` tells the
  format) and in ``KEY=value`` lines at the start of a line. Variables
  (``password=password``), calls (``os.environ[...]``, ``getenv(...)``), annotations
  (``password: str``), f-strings, empty strings, templates (``${DB_PASSWORD}``,
  ``{{ x }}``, ``<your-key>``, ``%(x)s``), masks (``****``) and placeholder words
  (``none``, ``your-password``...) are kept. Any other literal password is
  redacted, ``"changeme"`` included. Values of the generic names (``token``,
  ``auth``, ``*_key``, ``credentials``) must also look like keys (8+ chars, no
  spaces, letters and digits or high entropy), which spares ``token = "IDENT"``.
  UI text such as ``"password": "Enter your password"`` is kept.
* High-entropy literals: quoted, only base64/hex/url-safe characters, at least
  ``entropy_min_length`` long, entropy ``>= entropy_threshold``, letters and
  digits, not an alphabet run, not mostly words (model ids, paths, CamelCase
  names; see :data:`MAX_WORDINESS`). Hex strings (git SHAs, digests) and UUIDs top
  out at 4.0-4.1 bits/char, below the default 4.2, so they are kept unless assigned
  to a secret-named key: a 40-hex sha in code is not treated as a secret.
* URLs without credentials, import paths (dots are outside the charset) and
  prose (spaces) never match.

Speed: one literal-prefixed regex per token kind (CPython's prefix search makes a
scan of a file cost about as much as a substring test), secret-named keys found
with ``bytes.find`` on the lowered ASCII text, bounded work per candidate.
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
from pathlib import PurePosixPath

from .config import Config
from .types import ScrubResult

KINDS = (
    "private-key", "aws-access-key", "aws-secret-key", "github-token", "gitlab-token",
    "slack-token", "slack-webhook", "stripe-key", "google-api-key", "anthropic-key",
    "openai-key", "npm-token", "jwt", "bearer-token", "basic-auth", "connection-string",
    "password", "secret", "high-entropy",
)  # fmt: skip
CONFIG_SUFFIXES = frozenset(
    {".env", ".ini", ".cfg", ".conf", ".properties", ".yaml", ".yml", ".toml", ".envrc"}
)


def token(kind: str) -> str:
    """The text that replaces a secret of ``kind``."""
    return f"«redacted:{kind}»"


#: Decides a match: False keeps it, True redacts it as the rule's kind, a str names the kind.
Judge = Callable[[re.Match[str], "_Ctx"], bool | str]


@dataclass(frozen=True)
class _Ctx:
    config: Config
    config_file: bool


@dataclass(frozen=True)
class _Rule:
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


def _is_placeholder(value: str) -> bool:
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
    )


def _looks_like_key(value: str) -> bool:
    """Random-looking enough for a token/key value: 8+ chars, no spaces, not a path."""
    if len(value) < 8 or any(c.isspace() for c in value) or value.startswith(_PATHLIKE):
        return False
    if _FILELIKE.fullmatch(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return (has_digit and has_alpha) or shannon_entropy(value) >= 3.5


def _is_prose(value: str, keyword: str) -> bool:
    words = value.split()
    if len(words) >= 3 or value.strip().lower() == keyword.lower():
        return True
    return len(words) > 1 and (keyword.lower() in value.lower() or value.rstrip()[-1] in ".?!:")


def _keyword_kind(keyword: str, before: str, value: str) -> str | None:
    """``password``/``secret`` for a secret-named key and a plausible literal value."""
    if before.isalnum() and not keyword[0].isupper():  # "bypass", "compass"
        return None
    if _is_placeholder(value) or _is_prose(value, keyword):
        return None
    low = keyword.lower()
    if low.startswith(("pass", "pwd")):
        return "password"
    return "secret" if low == "secret" or _looks_like_key(value) else None


def _judge_mixed(m: re.Match[str], ctx: _Ctx) -> bool | str:
    """Keys with a generic prefix (``sk-``, ``Bearer``): digits and both cases."""
    s = m.group("s")
    return any(c.isdigit() for c in s) and s.lower() != s and s.upper() != s


def _judge_basic(m: re.Match[str], ctx: _Ctx) -> bool | str:
    try:
        decoded = base64.b64decode(m.group("s"), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _judge_url(m: re.Match[str], ctx: _Ctx) -> bool | str:
    return not _is_placeholder(m.group("s"))


_ALPHABET_RUN = re.compile(r"abcd|bcde|cdef|ABCD|BCDE|CDEF|0123|1234|2345|3456|6789|wxyz|WXYZ")
_WORD = re.compile(r"[A-Z]?[a-z]{4,}")
#: Share of characters in words (a capital and 4+ lowercase letters) from which a
#: literal reads as names (``runwayml/stable-diffusion-v1-5``,
#: ``QDQDisableWeightAdjustForInt32Bias``); random keys of 24+ chars stay below it
#: 99% of the time.
MAX_WORDINESS = 0.45


def _judge_entropy(m: re.Match[str], ctx: _Ctx) -> bool | str:
    s = m.group("s")[:4096]  # enough to judge a long blob
    if not (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
        return False
    if len(_ALPHABET_RUN.findall(s)) > 2:  # "ABCDEFGHIJ...0123456789+/" alphabets
        return False
    if sum(map(len, _WORD.findall(s))) >= MAX_WORDINESS * len(s):
        return False
    return shannon_entropy(s) >= ctx.config.entropy_threshold


def _judge_sk(m: re.Match[str], ctx: _Ctx) -> bool | str:
    if m.group("ant"):
        return "anthropic-key"
    return "openai-key" if _judge_mixed(m, ctx) else False


_AWS_PREFIXES = "AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA"
#: Rules without triggers start with a literal: the regex's own prefix search is as
#: fast as a substring test, so they run on every text.
_RULES: tuple[_Rule, ...] = (
    _Rule("aws-access-key", re.compile(rf"(?:{_AWS_PREFIXES})[A-Z0-9]{{16}}\b")),
    _Rule("github-token",
          re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b")),
    _Rule("gitlab-token", re.compile(r"glpat-[A-Za-z0-9_\-]{20,}")),
    _Rule("slack-token", re.compile(r"xox[baprs]-[A-Za-z0-9\-]{10,}")),
    _Rule("slack-webhook",
          re.compile(r"hooks\.slack\.com/services/(?P<s>T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+)"),
          group="s", word_start=False),
    _Rule("stripe-key", re.compile(r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
          ("k_live_", "k_test_")),
    _Rule("google-api-key", re.compile(r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])")),
    _Rule("openai-key",
          re.compile(r"sk-(?P<ant>ant-)?(?:proj-|svcacct-|admin-)?(?P<s>[A-Za-z0-9_\-]{20,})"),
          judge=_judge_sk),
    _Rule("npm-token", re.compile(r"npm_[A-Za-z0-9]{36}\b")),
    _Rule("jwt",
          re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    _Rule("bearer-token", re.compile(r"[Bb]earer[ \t]+(?P<s>[A-Za-z0-9\-._~+/]{20,}=*)"),
          ("earer",), group="s", judge=_judge_mixed),
    _Rule("basic-auth", re.compile(r"Basic[ \t]+(?P<s>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])"),
          group="s", judge=_judge_basic),
    _Rule("connection-string",
          re.compile(r"://[^\s:/@'\"<>]*:(?P<s>[^\s@'\"<>/]+)@(?=[A-Za-z0-9\[])"),
          group="s", judge=_judge_url, word_start=False),
)  # fmt: skip


@lru_cache(maxsize=8)
def _entropy_rule(min_length: int) -> _Rule:
    pattern = re.compile(rf"(?P<q>[\"'`])(?P<s>[A-Za-z0-9+/=_\-]{{{min_length},}})(?P=q)")
    return _Rule("high-entropy", pattern, group="s", judge=_judge_entropy, word_start=False)


def _apply(rule: _Rule, text: str, ctx: _Ctx, counts: Counter[str]) -> str:
    def repl(m: re.Match[str]) -> str:
        start = m.start()
        if rule.word_start and start and (text[start - 1].isalnum() or text[start - 1] == "_"):
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


def _scrub_private_keys(text: str, counts: Counter[str]) -> str:
    """Each BEGIN marker is paired with the next END marker of the same label."""
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


#: Words that end a secret-named key, looked for in the lowered ASCII text.
_KEY_WORDS = (b"pass", b"pwd", b"secret", b"key", b"token", b"auth", b"credential")
_WORD_REST = re.compile(rb"[a-z0-9_]*")
_SEP_AHEAD = re.compile(rb"[\"'\]]{0,2}[ \t]*[:=]")
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_KEYWORD = re.compile(
    r"(?:(?:api|access|secret|private|signing|encryption|master|app|client|account)[_-]?key"
    r"|apikey|secret|token|auth|credentials?|passphrase|pass(?:w(?:or)?d)?|pwd)\Z",
    re.IGNORECASE,
)
_QUOTED_VALUE = re.compile(
    r"""["']?\]?[ \t]*(?::[ \t]*[A-Za-z_][\w\[\]., |]*(?==))?"""
    r"""(?:=>|:=|=(?!=)|:)[ \t]*(?P<q>["'`])(?P<s>(?:\\.|(?!(?P=q))[^\\\r\n])*)(?P=q)"""
)
#: Longest unquoted value considered (and line prefix before a key): bounds the work
#: per candidate, so a line full of ``password=`` stays linear.
MAX_UNQUOTED = 256
_UNQUOTED_VALUE = re.compile(
    r"""["']?(?P<sp>[ \t]*)[:=][ \t]*(?P<s>[^\s'"`#][^\r\n]{0,"""
    + str(MAX_UNQUOTED)
    + r"""})(?P<more>[^\r\n]?)"""
)
_COMMENT = re.compile(r"[ \t]+#")
_ADO_VALUE = re.compile(r"[ \t]*=[ \t]*(?P<s>[^;'\"\r\n]{1,256})")
_AWS_SECRET = re.compile(r"[A-Za-z0-9/+=]{40}")
_LINE_PREFIX = re.compile(r"[ \t]*(?:export[ \t]+|-[ \t]+)?[\"']?")


def _key_ends(text: str) -> list[int]:
    """Where identifiers that contain a key word and are followed by ``:``/``=`` end."""
    low = text.encode("ascii", "replace").lower()  # one byte per character: same offsets
    ends: set[int] = set()
    for word in _KEY_WORDS:
        i = low.find(word)
        while i >= 0:
            end = _WORD_REST.match(low, i + len(word)).end()  # type: ignore[union-attr]
            if _SEP_AHEAD.match(low, end):
                ends.add(end)
            i = low.find(word, end)
    return sorted(ends)


def _unquoted_ok(text: str, key_start: int, m: re.Match[str], value: str, ctx: _Ctx) -> bool:
    """An unquoted value is a literal in config files, and in unindented ``KEY=value``."""
    if m.group("more") or not value or value[0] in "|>!&*" or value.endswith((",", "(", "[", "{")):
        return False
    line_start = text.rfind("\n", max(0, key_start - MAX_UNQUOTED), key_start) + 1
    prefix = text[line_start:key_start]
    if (line_start == 0 and key_start > MAX_UNQUOTED) or not _LINE_PREFIX.fullmatch(prefix):
        return False
    if ctx.config_file:
        return True
    key = text[key_start : m.start()]
    return (
        prefix in ("", "export ")
        and m.group("sp") == ""
        and key.isupper()
        and not any(c in value for c in "()[]{}")
    )


def _after_semicolon(text: str, pos: int) -> bool:
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    return pos > 0 and text[pos - 1] == ";"


def _assignment(text: str, end: int, ctx: _Ctx) -> tuple[int, int, str] | None:
    """The value span and kind of a secret assignment whose key ends at ``end``."""
    start = end
    while start > 0 and text[start - 1] in _IDENT_CHARS:
        start -= 1
    kw = _KEYWORD.search(text, start, end)
    if kw is None or "public" in text[start:end].lower():
        return None
    before = text[kw.start() - 1] if kw.start() else " "
    if _after_semicolon(text, start):  # "Server=db;Password=...;"
        m = _ADO_VALUE.match(text, end)
        ok = m is not None and not _is_placeholder(m.group("s"))
        return (m.start("s"), m.end("s"), "connection-string") if m and ok else None
    m = _QUOTED_VALUE.match(text, end)
    if m is not None:
        value = m.group("s")
    else:
        m = _UNQUOTED_VALUE.match(text, end)
        if m is None:
            return None
        comment = _COMMENT.search(m.group("s"))
        value = m.group("s")[: comment.start() if comment else None].rstrip(" \t\r")
        if not _unquoted_ok(text, start, m, value, ctx):
            return None
    kind = _keyword_kind(kw.group(0), before, value)
    if kind and _AWS_SECRET.fullmatch(value) and "aws" in text[start:end].lower():
        kind = "aws-secret-key"
    return (m.start("s"), m.start("s") + len(value), kind) if kind else None


def _scrub_assignments(text: str, ctx: _Ctx, counts: Counter[str]) -> str:
    parts: list[str] = []
    done = 0
    for end in _key_ends(text):
        found = _assignment(text, end, ctx) if end >= done else None
        if found is not None:
            start, stop, kind = found
            parts += [text[done:start], token(kind)]
            done = stop
            counts[kind] += 1
    return "".join([*parts, text[done:]]) if parts else text


def is_config_path(path: str) -> bool:
    """Whether unquoted ``key: value`` / ``key = value`` lines are literals in this file."""
    p = PurePosixPath(path)
    return p.suffix.lower() in CONFIG_SUFFIXES or p.name.startswith(".env")


def scrub(text: str, config: Config, path: str = "") -> ScrubResult:
    """``text`` with secrets replaced by ``«redacted:KIND»``, and the count of each KIND.

    ``path`` (optional) tells the file format: in config files (``.env``, YAML, INI,
    ...) unquoted values of secret-named keys are redacted too. The line count of
    the text never changes. With ``config.scrub_secrets`` False the text is returned
    unchanged.
    """
    if not config.scrub_secrets or not text:
        return ScrubResult(text, {})
    counts: Counter[str] = Counter()
    ctx = _Ctx(config, is_config_path(path) if path else False)
    if "PRIVATE KEY" in text:
        text = _scrub_private_keys(text, counts)
    for rule in _RULES:
        if not rule.triggers or any(t in text for t in rule.triggers):
            text = _apply(rule, text, ctx, counts)
    text = _scrub_assignments(text, ctx, counts)
    text = _apply(_entropy_rule(config.entropy_min_length), text, ctx, counts)
    return ScrubResult(text, dict(counts))
