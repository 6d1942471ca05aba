"""Secret detection and redaction, run over every file before chunking.

Each secret is replaced by ``«redacted:KIND»`` and counted by KIND. Newlines are
never added or removed, so chunk line numbers stay valid: a private key block keeps
its ``BEGIN``/``END`` lines and each body line becomes ``«redacted:private-key»``
(one count per block). In assignments and URLs only the value is replaced; the key
name, scheme, user and host stay readable. :func:`scrub_text` does the same for free
text with no file format (a question before it is written to the query log).

Kinds (stable names): see :data:`KINDS`. Token rules, their judges and private key
blocks live in :mod:`codecite.scrub.rules`; this module runs them and handles
assignments (``key = value``, Dockerfile ``ENV``/``ARG``).

Recall comes first: an exemption below is taken only where a real secret cannot
take that form (or would reveal nothing by being shown).

False-positive policy:

* Assignments to secret-named keys (``password``, ``secret``, ``api_key``, ``token``,
  ``auth``, ``private_key_id``...) are redacted only when the value is a literal:
  quoted anywhere, or unquoted in config files (``.env``, YAML, INI, properties,
  extensionless ``credentials`` as in ``~/.aws/credentials``; ``path`` tells the
  format; a file with ``[profile]`` sections and unquoted ``aws_... = value`` lines
  counts whatever its name, e.g. ``aws_credentials``), in ``ENV``/``ARG`` lines of
  Dockerfiles (``KEY=value`` pairs, the legacy ``ENV KEY value`` and continuation
  lines) and in ``KEY=value`` lines at the start of a line. An
  ``aws_secret_access_key`` followed by 40 key characters is redacted in any file.
  Variables (``password=password``), calls (``os.environ[...]``,
  ``getenv(...)``), annotations (``password: str``), f-strings, empty strings,
  templates (``${DB_PASSWORD}``, ``{{ x }}``, ``<your-key>``, ``%(x)s``), masks
  (``****``) and placeholder words (``none``, ``your-password``...) are kept. Any
  other literal password is redacted, ``"changeme"`` included. Values of the generic
  names (``token``, ``auth``, ``*_key``, ``credentials``) must also look like keys
  (8+ chars, no spaces, letters and digits or high entropy), which spares
  ``token = "IDENT"``. UI text such as ``"password": "Enter your password"`` is kept.
* Documented example keys: any value holding ``EXAMPLE`` (``AKIAIOSFODNN7EXAMPLE``,
  ``wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY``) is kept, in every rule; a random key
  holds it with odds of about 1e-11, and ``AKIAIOSFODNN7EXAMPLQ`` is still redacted.
* Test logins in URLs and ``Basic`` headers (decoded) are kept when the password is
  a placeholder word (``pass``, ``password``, ``foo``/``bar``...), at most 3 chars
  (``u:p``), equal to the user (``guest:guest``), a published example
  (``Aladdin:open sesame``), or letters only on a documentation host (``example.com``,
  ``*.test``, ``localhost``). Anything with digits or symbols on any host
  (``app:S3cr3t-Pr0d-Pa55@db.internal``, ``...@db.internal.example.com``) is redacted.
  This holds in every file, not only under ``tests/``: such a password hides nothing.
* Public values are kept in every file: digest-auth nonces and CSRF tokens (values
  named ``nonce``/``cnonce``/``csrf*``/``xsrf*``; they are sent to every client)
  unless the name also says secret/key/pass (``CSRF_SECRET_KEY`` is redacted);
  subresource-integrity hashes (``sha384-...``, HTML ``integrity=`` and npm
  lockfiles); base64 of binary files (PNG, JPEG, GIF, WebP, SVG, ICO, PDF, fonts,
  recognised by their header, as in ``data:`` URIs and split literals).
* High-entropy literals: quoted, only base64/hex/url-safe characters, at least
  ``entropy_min_length`` long, entropy ``>= entropy_threshold``, letters and
  digits, not an alphabet run, not mostly words (model ids, paths, CamelCase
  names; see :data:`~codecite.scrub.rules.MAX_WORDINESS`). Hex strings (git SHAs,
  digests) and UUIDs top out at 4.0-4.1 bits/char, below the default 4.2, so they
  are kept unless assigned to a secret-named key: a 40-hex sha in code is not
  treated as a secret.
* URLs without credentials, import paths (dots are outside the charset) and
  prose (spaces) never match.

Speed: one literal-prefixed regex per token kind (CPython's prefix search makes a
scan of a file cost about as much as a substring test), secret-named keys found
with ``bytes.find`` on the lowered ASCII text, bounded work per candidate. Patterns
have no nested or overlapping repeats, so a match never backtracks more than its
bounded length (Dockerfile values, hosts and SendGrid parts included).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath

from ..config import Config
from ..types import ScrubResult
from .freetext import scrub_bare_values
from .rules import (
    KINDS,
    RULES,
    Ctx,
    apply_rule,
    entropy_rule,
    is_placeholder,
    is_public_name,
    looks_like_key,
    scrub_private_keys,
    shannon_entropy,
    token,
)

__all__ = [
    "KINDS", "is_config_path", "is_dockerfile", "scrub", "scrub_text", "shannon_entropy", "token",
]  # fmt: skip

CONFIG_SUFFIXES = frozenset(
    {".env", ".ini", ".cfg", ".conf", ".properties", ".yaml", ".yml", ".toml", ".envrc"}
)
#: Extensionless files in INI or ``key=value`` format (``~/.aws/credentials``).
CONFIG_NAMES = frozenset({"credentials", ".pypirc", ".npmrc", ".s3cfg", ".boto"})
#: Dockerfile names (and ``*.dockerfile``): ``ENV``/``ARG`` values are literals.
DOCKERFILE_NAMES = ("dockerfile", "containerfile")


def _is_prose(value: str, keyword: str) -> bool:
    words = value.split()
    if len(words) >= 3 or value.strip().lower() == keyword.lower():
        return True
    return len(words) > 1 and (keyword.lower() in value.lower() or value.rstrip()[-1] in ".?!:")


def _keyword_kind(keyword: str, before: str, value: str) -> str | None:
    """``password``/``secret`` for a secret-named key and a plausible literal value."""
    if before.isalnum() and not keyword[0].isupper():  # "bypass", "compass"
        return None
    if is_placeholder(value) or _is_prose(value, keyword):
        return None
    low = keyword.lower()
    if low.startswith(("pass", "pwd")):
        return "password"
    return "secret" if low == "secret" or looks_like_key(value) else None


#: Words that end a secret-named key, looked for in the lowered ASCII text.
_KEY_WORDS = (b"pass", b"pwd", b"secret", b"key", b"token", b"auth", b"credential")
_WORD_REST = re.compile(rb"[a-z0-9_]*")
_SEP_AHEAD = re.compile(rb"[\"'\]]{0,2}[ \t]*[:=]")
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_KEYWORD = re.compile(
    r"(?:(?:api|access|secret|private|signing|encryption|master|app|client|account)[_-]?key"
    r"|private[_-]?key[_-]?id|apikey|secret|token|auth|credentials?|passphrase"
    r"|pass(?:w(?:or)?d)?|pwd)\Z",
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
#: Punctuation that ends a value in free text (``password=abc123.``).
_TRAILING_PUNCT = ".,;:!?)]}'\""


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


def _is_aws_secret(key: str, value: str) -> bool:
    return "aws" in key.lower() and _AWS_SECRET.fullmatch(value) is not None


def _unquoted_ok(text: str, key_start: int, m: re.Match[str], value: str, ctx: Ctx) -> bool:
    """An unquoted value is a literal in config files, and in unindented ``KEY=value``."""
    if m.group("more") or not value or value[0] in "|>!&*" or value.endswith((",", "(", "[", "{")):
        return False
    key = text[key_start : m.start()]
    if _is_aws_secret(key, value):  # aws_secret_access_key = <40 chars>, in any file
        return True
    line_start = text.rfind("\n", max(0, key_start - MAX_UNQUOTED), key_start) + 1
    prefix = text[line_start:key_start]
    if (line_start == 0 and key_start > MAX_UNQUOTED) or not _LINE_PREFIX.fullmatch(prefix):
        return False
    if ctx.config_file:
        return True
    return (
        prefix in ("", "export ")
        and m.group("sp") == ""
        and key.isupper()
        and not any(c in value for c in "()[]{}")
    )


def _unquoted_value(text: str, key_start: int, m: re.Match[str], ctx: Ctx) -> str | None:
    """The literal an unquoted ``key=value`` assigns, or None when it is not one."""
    if ctx.free_text:  # one word that looks like a key: "login fails with password=..."
        words = m.group("s").split(maxsplit=1)
        value = words[0].rstrip(_TRAILING_PUNCT) if words else ""
        return value if looks_like_key(value) else None
    comment = _COMMENT.search(m.group("s"))
    value = m.group("s")[: comment.start() if comment else None].rstrip(" \t\r")
    return value if _unquoted_ok(text, key_start, m, value, ctx) else None


def _secret_keyword(text: str, start: int, end: int) -> re.Match[str] | None:
    """The secret word ending the key ``text[start:end]``; None for other and public names."""
    kw = _KEYWORD.search(text, start, end)
    key = text[start:end]
    return None if kw is None or "public" in key.lower() or is_public_name(key) else kw


def _secret_kind(text: str, key_start: int, kw: re.Match[str], value: str) -> str | None:
    """The kind of secret ``value`` is when assigned to the key ``text[key_start:kw.end()]``."""
    before = text[kw.start() - 1] if kw.start() else " "
    kind = _keyword_kind(kw.group(0), before, value)
    key = text[key_start : kw.end()]
    aws = _is_aws_secret(key, value) or key.lower().endswith("aws_secret_access_key")
    return "aws-secret-key" if kind and aws else kind


def _after_semicolon(text: str, pos: int) -> bool:
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    return pos > 0 and text[pos - 1] == ";"


def _assignment(text: str, end: int, ctx: Ctx) -> tuple[int, int, str] | None:
    """The value span and kind of a secret assignment whose key ends at ``end``."""
    start = end
    while start > 0 and text[start - 1] in _IDENT_CHARS:
        start -= 1
    kw = _secret_keyword(text, start, end)
    if kw is None:
        return None
    if _after_semicolon(text, start):  # "Server=db;Password=...;"
        m = _ADO_VALUE.match(text, end)
        ok = m is not None and not is_placeholder(m.group("s"))
        return (m.start("s"), m.end("s"), "connection-string") if m and ok else None
    m = _QUOTED_VALUE.match(text, end)
    value: str | None
    if m is not None:
        value = m.group("s")
    else:
        m = _UNQUOTED_VALUE.match(text, end)
        value = None if m is None else _unquoted_value(text, start, m, ctx)
    if m is None or value is None:
        return None
    kind = _secret_kind(text, start, kw, value)
    return (m.start("s"), m.start("s") + len(value), kind) if kind else None


def _scrub_assignments(text: str, ctx: Ctx, counts: Counter[str]) -> str:
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


_DOCKER_INSTRUCTION = re.compile(r"[ \t]*(?:[Ee][Nn][Vv]|[Aa][Rr][Gg])[ \t]+")
_DOCKER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_DOCKER_VALUE = re.compile(r""""(?:[^"\\\r]|\\.)*"|'[^'\r]*'|(?:[^\s"'\\]|\\.)*""")
_BLANKS = re.compile(r"[ \t]*")


def _skip_blanks(line: str, pos: int) -> int:
    return _BLANKS.match(line, pos).end()  # type: ignore[union-attr]  # matches ""


def _docker_pairs(line: str, pos: int, instruction: bool) -> list[tuple[int, int, int, int]]:
    """``(key_start, key_end, value_start, value_end)`` of each ``KEY=value`` from ``pos``,
    or of the legacy ``ENV KEY value`` (the value is the rest of the line); quotes dropped."""
    found: list[tuple[int, int, int, int]] = []
    while (key := _DOCKER_NAME.match(line, pos)) is not None:
        if line.startswith("=", key.end()):
            start, after = _DOCKER_VALUE.match(line, key.end() + 1).span()  # type: ignore[union-attr]
        elif instruction and not found and line.startswith((" ", "\t"), key.end()):
            start, after = _skip_blanks(line, key.end()), len(line.rstrip(" \t\r\\"))
        else:
            break
        end = after
        if end - start > 1 and line[start] in "\"'" and line[end - 1] == line[start]:
            start, end = start + 1, end - 1
        found.append((key.start(), key.end(), start, end))
        pos = _skip_blanks(line, after)
    return found


def _scrub_dockerfile(text: str, counts: Counter[str]) -> str:
    """Values of secret-named keys in ``ENV``/``ARG`` lines and their continuation lines."""
    lines = text.split("\n")
    continued = False
    for n, line in enumerate(lines):
        instruction = _DOCKER_INSTRUCTION.match(line)
        if instruction is None and not continued:
            continue
        pos = instruction.end() if instruction else _skip_blanks(line, 0)
        parts: list[str] = []
        done = 0
        for key_start, key_end, start, end in _docker_pairs(line, pos, instruction is not None):
            kw = _secret_keyword(line, key_start, key_end)
            kind = None if kw is None else _secret_kind(line, key_start, kw, line[start:end])
            if kind is not None:
                parts += [line[done:start], token(kind)]
                done = end
                counts[kind] += 1
        lines[n] = "".join([*parts, line[done:]])
        continued = line.rstrip(" \t\r").endswith("\\")
    return "\n".join(lines)


def is_dockerfile(path: str) -> bool:
    """``Dockerfile``, ``Dockerfile.prod``, ``api.dockerfile``, ``Containerfile``."""
    name = PurePosixPath(path).name.lower()
    return (
        name in DOCKERFILE_NAMES
        or name.startswith(tuple(f"{n}{sep}" for n in DOCKERFILE_NAMES for sep in ".-"))
        or name.endswith(tuple(f".{n}" for n in DOCKERFILE_NAMES))
    )


def is_config_path(path: str) -> bool:
    """Whether unquoted ``key: value`` / ``key = value`` lines are literals in this file."""
    p = PurePosixPath(path)
    return (
        p.suffix.lower() in CONFIG_SUFFIXES or p.name.startswith(".env") or p.name in CONFIG_NAMES
    )


#: An INI section header and an unquoted ``aws_...`` assignment: the shape of an AWS
#: credentials or config file, whatever it is named (``aws_credentials``, ``creds``).
_INI_SECTION = re.compile(r"^\[[\w .:/-]{1,128}\][ \t]*\r?$", re.M)
_AWS_INI_KEY = re.compile(r"^[ \t]*aws_[a-z_]{2,64}[ \t]*=[ \t]*[^\s'\"]", re.M)


def is_credentials_text(text: str) -> bool:
    """Whether ``text`` reads as an AWS credentials file (``[profile]`` sections with
    unquoted ``aws_... = value`` lines): its unquoted values are literals, as in any
    config file. Keyed on the content, so the file's name does not matter."""
    return "aws_" in text and bool(_AWS_INI_KEY.search(text) and _INI_SECTION.search(text))


def _scrub(text: str, ctx: Ctx) -> ScrubResult:
    if not ctx.config.index.scrub_secrets or not text:
        return ScrubResult(text, {})
    counts: Counter[str] = Counter()
    if "PRIVATE KEY" in text:
        text = scrub_private_keys(text, counts)
    for rule in RULES:
        if not rule.triggers or any(t in text for t in rule.triggers):
            text = apply_rule(rule, text, ctx, counts)
    if ctx.dockerfile:
        text = _scrub_dockerfile(text, counts)
    text = _scrub_assignments(text, ctx, counts)
    text = apply_rule(entropy_rule(ctx.config.index.entropy_min_length), text, ctx, counts)
    if ctx.free_text:  # a value pasted without its key name
        text = scrub_bare_values(text, counts)
    return ScrubResult(text, dict(counts))


def scrub(text: str, config: Config, path: str = "") -> ScrubResult:
    """``text`` with secrets replaced by ``«redacted:KIND»``, and the count of each KIND.

    ``path`` (optional) tells the file format: in config files (``.env``, YAML, INI,
    ``credentials``..., and any file shaped like an AWS credentials file, whatever its
    name: :func:`is_credentials_text`) unquoted values of secret-named keys are redacted too, and in
    Dockerfiles the values of ``ENV``/``ARG``. The line count of the text never
    changes. With ``config.index.scrub_secrets`` False the text is returned unchanged.
    """
    config_file = (bool(path) and is_config_path(path)) or is_credentials_text(text)
    ctx = Ctx(config, config_file=config_file, dockerfile=bool(path) and is_dockerfile(path))
    return _scrub(text, ctx)


def scrub_text(text: str, config: Config | None = None) -> str:
    """Free text (a question, a log line) with secrets replaced by ``«redacted:KIND»``.

    For text with no file format, such as a question before it is written to the
    query log. Every token rule applies (``ghp_...``, ``AKIA...``, JWTs, private
    keys, URL passwords...), quoted values of secret-named keys too, and an unquoted
    ``password=...`` / ``token: ...`` value when it is one word that looks like a key
    (8+ chars, letters and digits): "login fails with password=S3cr3t-Pr0d" is
    redacted, "what does token=None mean" is not. Values pasted without a key name are
    redacted when they read as a password or look generated (:mod:`.freetext`: mixed
    letters, digits and symbols that are no identifier, hex over 40 characters, base64),
    so "why does Wint3r!sC0ming#BboSqX fail" keeps its words and loses the password, while
    git commit ids, UUIDs, versions and paths stay; a private key's body lines go even
    without their END line. ``config`` (default: the defaults)
    sets the entropy limits; with ``config.index.scrub_secrets`` False the text is returned
    unchanged.
    """
    return _scrub(text, Ctx(Config() if config is None else config, free_text=True)).text
