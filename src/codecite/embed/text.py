"""The compact text embedded for a chunk.

The local model reads 128 tokens of a document, so the text must say the
most in little room::

    {path} {kind} {qualname} ({name split into words})
    {signature}
    {docstring, up to a third of the budget}
    {body lines: no blanks, no comment noise, no long literals, no indentation}

Whitespace is dropped because WordPiece ignores it while the character budget
would count it. Comment *prose* is kept (it is often the best description of
the code); decorative rules, licence lines and linter pragmas are not. The
signature and docstring are not repeated from the body, nor the path when a
chunk's name is its file (windows, whole files).

:data:`EMBED_TEXT_VERSION` changes whenever the text of some chunk changes:
vectors of texts of another version are not mixed into one index.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from ..identifiers import split_identifier
from ..types import Chunk

#: Bump when any chunk's text changes (stored with the index's vectors).
#: 1: up to 750/1,100 characters for 256 tokens. 2: budgets for 128 tokens, the
#: path not repeated as the name of window/file chunks.
EMBED_TEXT_VERSION = 2
#: Characters of text for one code chunk. Indentation-free code is ~2.6 chars
#: per MiniLM token (median on CPython's stdlib): 480 chars ≈ 128 tokens plus
#: some slack, as the ratio varies. Measured in bench/embed_bench.py.
DEFAULT_MAX_CHARS = 480
#: Prose (markdown, text) runs ~4.5 chars per token.
PROSE_MAX_CHARS = 640
#: Languages whose lines are prose/markup, where comment rules do not apply.
_PROSE_LANGUAGES = frozenset({"markdown", "text", "rst", "restructuredtext"})
_DOC_SHARE = 3  # the docstring gets at most 1/_DOC_SHARE of the budget
_MAX_LINE = 160
_MAX_LITERAL = 48

_COMMENT_START = re.compile(
    r"^\s*(#(?![!\[]|include|define|if|else|endif|pragma)|//|/\*+|\*+/?|--|;;|<!--)"
)
_PRAGMA = re.compile(
    r"(noqa|type:\s*ignore|pragma|pylint:|eslint-|tslint:|prettier-ignore|nolint|"
    r"istanbul ignore|rubocop:|NOSONAR|@ts-|clang-format|SPDX-|fmt:\s*(on|off)|isort:)",
    re.IGNORECASE,
)
_LICENSE = re.compile(r"copyright|licen[cs]e|all rights reserved|\(c\)\s*\d{4}", re.IGNORECASE)
_TRAILING_PRAGMA = re.compile(
    r"\s+(#|//)\s*(noqa|type:\s*ignore|pragma|pylint:|eslint-|nolint|NOSONAR)\b.*$"
)
_STRING = re.compile(r"(\"\"\"|'''|\"|'|`)((?:\\.|(?!\1).){" + str(_MAX_LITERAL + 1) + r",}?)\1")
_BLOB = re.compile(r"[A-Za-z0-9+/=_\-]{64,}")
_NUMBERS = re.compile(r"(?:[-+]?(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d+)?)\s*,\s*){8,}")
#: Lines with no word character worth a token: ``}``, ``});``, ``end``, ``else:``, ``pass``.
_TRIVIAL = re.compile(
    r"^[\W_]*(?:end|else|pass|try|finally|do|begin|return|break|continue)?[\W_]*$"
)
_WORDS = re.compile(r"[A-Za-z0-9]+")
_SPACES = re.compile(r"[ \t]+")


def embed_text(chunk: Chunk, max_chars: int | None = None) -> str:
    """The text embedded for ``chunk``: header, signature, docstring, body,
    at most ``max_chars`` characters (default: :data:`DEFAULT_MAX_CHARS` for
    code, :data:`PROSE_MAX_CHARS` for prose). Pure: same chunk, same text."""
    prose = chunk.language in _PROSE_LANGUAGES
    if max_chars is None:
        max_chars = PROSE_MAX_CHARS if prose else DEFAULT_MAX_CHARS
    header = _header(chunk)
    signature = _squash(chunk.signature)
    doc = _squash(chunk.docstring)
    doc_budget = max(0, max_chars // _DOC_SHARE)
    if len(doc) > doc_budget:
        doc = _cut(doc, doc_budget)
    parts = [p for p in (header, signature, doc) if p]
    used = sum(len(p) + 1 for p in parts)
    skip = _line_keys(chunk.signature) | _line_keys(chunk.docstring)
    body: list[str] = []
    for line in _body_lines(chunk.content, prose, skip):
        if used + len(line) + 1 > max_chars:
            room = max_chars - used - 1
            if room >= 24:  # a useful fragment, else stop
                body.append(_cut(line, room))
            break
        body.append(line)
        used += len(line) + 1
    return _cut("\n".join(parts + body), max_chars)


def _header(chunk: Chunk) -> str:
    qualname = chunk.qualname or chunk.name
    if qualname in (chunk.path, PurePosixPath(chunk.path).name):
        qualname = ""  # a window or whole file: its name is the path again
    fields = [chunk.path, chunk.kind, qualname]
    words = " ".join(split_identifier(chunk.name)) if qualname and chunk.name else ""
    # The split name helps WordPiece on camelCase (lowercased, it would be one
    # unknown word); for snake_case it only repeats what the tokenizer sees.
    if words and words != " ".join(_WORDS.findall(chunk.name)).lower():
        fields.append(f"({words})")
    return " ".join(f for f in fields if f)


def _squash(text: str) -> str:
    """Lines stripped and non-empty, inner runs of spaces collapsed."""
    lines = (_SPACES.sub(" ", line.strip()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _cut(text: str, limit: int) -> str:
    """``text`` shortened to ``limit`` characters at a word boundary, with "…"."""
    if len(text) <= limit:
        return text
    head = text[: max(0, limit - 1)]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip() + "…"


def _line_keys(text: str) -> set[str]:
    """Normalised word content of each line, to recognise it again in the body."""
    keys = set()
    for line in text.splitlines():
        key = " ".join(_WORDS.findall(line)).lower()
        if key:
            keys.add(key)
    return keys


def _body_lines(content: str, prose: bool, skip: set[str]) -> list[str]:
    out: list[str] = []
    previous = ""
    for raw in content.splitlines():
        line = _SPACES.sub(" ", raw.strip())
        if not line:
            continue
        if not prose:
            line = _clean_code_line(line)
            if not line:
                continue
            key = " ".join(_WORDS.findall(line)).lower()
            if key in skip:
                continue
        if len(line) > _MAX_LINE:
            line = _cut(line, _MAX_LINE)
        if line == previous:
            continue
        out.append(line)
        previous = line
    return out


def _clean_code_line(line: str) -> str:
    """One stripped code line without noise; "" when nothing is left."""
    match = _COMMENT_START.match(line)
    if match:
        words = _WORDS.findall(line[match.end() :])
        if not words or _PRAGMA.search(line) or _LICENSE.search(line):
            return ""
        return line
    line = _TRAILING_PRAGMA.sub("", line)
    line = _BLOB.sub("…", line)
    line = _STRING.sub(_short_literal, line)
    line = _NUMBERS.sub("…, ", line)
    if _TRIVIAL.match(line):
        return ""
    return line


def _short_literal(match: re.Match[str]) -> str:
    quote, body = match.group(1), match.group(2)
    return f"{quote}{_cut(body, _MAX_LITERAL)}{quote}"
