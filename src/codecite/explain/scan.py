"""Reading the code: the file's lines as a chunk holds them, where a signature or a
doc comment's words are, and the exceptions raised and values returned early (with
the condition they sit under), by per-language code patterns."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from ..types import LINE_EXACT_KINDS, Chunk
from .limits import MAX_CALL_LINES, MAX_SIGNATURE_LINES

_ELIDED = re.compile(r"^\s*(?:\.\.\.|(?://|#|--|/\*|\*)\s*\.\.\.\s*(?:\*/)?)\s*$")
COMMENT = re.compile(r"^\s*(?:#|//|/\*|\*|--|>>>|\.\.\.)")
_IF = re.compile(r"^(?:\}\s*)?(?:else\s+if|elif|if|unless)\b\s*(?P<cond>.*)$")
_CATCH = re.compile(r"^(?:\}\s*)?(?:except|catch|rescue)\b\s*(?P<cond>.*)$")
_ELSE = re.compile(r"^(?:\}\s*)?else\b")
#: Blocks that do not make a statement conditional (looked through for an ``if``).
_BLOCK = re.compile(r"^(?:try|with|async\s+with|using|synchronized|lock)\b|^\{$")
_CASE = re.compile(r"^(?:case\b\s*(?P<cond>.*?)|default)\s*:")
_INLINE_IF = re.compile(
    r"^(?:\}\s*)?(?:else\s+if|elif|if)\b(?P<cond>.*?)(?<![\w.])(?:raise|throw|return|panic)\b"
)
_RAISE = re.compile(r"(?:^|:\s+)raise\b(?:\s+(?P<what>[\w.]+))?")
_THROW = re.compile(r"(?<![\w.])throw\s+(?:new\s+)?(?P<what>[\w$.]+)")
_PANIC = re.compile(r"(?<![\w.])(?P<what>panic!?|unreachable!|todo!)\s*\(")
_RETURN = re.compile(r"(?:^|[\s:{)])return\b(?P<value>.*)$")
STRING = re.compile(r"([\"'`])(?:\\.|(?!\1).)*\1")
#: Comment and string markers before a doc comment's words (``/**``, ``*``, ``"""``).
_STRING_MARKS = re.compile(r"^\s*(?:/\*\*|\*|//+|#+|[rRbBuU]?\"\"\"|[rRbBuU]?\'\'\')")
_DOCSTRING = re.compile(r"^[rRbBuUfF]{0,2}(\"\"\"|''')")


def norm(text: str) -> str:
    return " ".join(text.split())


def indent_of(text: str) -> int:
    return len(text) - len(text.lstrip())


def verbatim(chunk: Chunk) -> dict[int, str]:
    """File line number → text, for the lines of ``chunk`` that are the file's lines as
    they are: all of a function's (method, window, section), and the top of a class
    skeleton or module header up to its first elided line."""
    lines = chunk.content.split("\n")
    if chunk.kind in LINE_EXACT_KINDS or len(lines) == chunk.end_line - chunk.start_line + 1:
        return {chunk.start_line + i: text for i, text in enumerate(lines)}
    out: dict[int, str] = {}
    for i, text in enumerate(lines):
        if _ELIDED.match(text):
            break
        out[chunk.start_line + i] = text
    return out


def lines_of(chunks: Sequence[Chunk]) -> dict[int, str]:
    out: dict[int, str] = {}
    for c in chunks:
        for n, text in verbatim(c).items():
            out.setdefault(n, text)
    return out


def find_line(lines: dict[int, str], needle: str, start: int = 0) -> int | None:
    """The first line at or after ``start`` where ``needle`` starts (its first words
    may run on into the next line)."""
    flat = norm(needle).rstrip("…")
    for size in (40, 20, 10):
        key = flat[:size]
        if len(key) < 3:
            break
        for n in sorted(lines):
            here = norm(_STRING_MARKS.sub("", lines[n])) if n >= start else ""
            if not here:
                continue
            joined = f"{here} {norm(lines.get(n + 1, ''))}"
            at = joined.find(key)
            if 0 <= at < len(here):
                return n
    return None


def signature_span(chunks: Sequence[Chunk]) -> tuple[int, int] | None:
    """The first and last file line of the head chunk's signature."""
    head = chunks[0]
    sig = norm(head.signature)
    lines = verbatim(head)
    if not sig or not lines:
        return None
    key, tail = sig[:30], sig[-12:]
    for n in sorted(lines):
        text = norm(lines[n])
        if not text or COMMENT.match(lines[n]) or (text.startswith("@") and sig[0] != "@"):
            continue
        bare = re.sub(r"^(?:export\s+(?:default\s+)?|declare\s+)", "", text)
        if key in bare or (len(bare) >= 6 and sig.startswith(bare)):
            joined = ""
            for end in range(n, n + MAX_SIGNATURE_LINES):
                if end not in lines:
                    break
                joined = norm(f"{joined} {lines[end]}")
                if tail in joined:
                    return n, end
            return n, n
    return None


def excerpt(lines: dict[int, str], start: int, end: int) -> str:
    return textwrap.dedent("\n".join(lines.get(n, "") for n in range(start, end + 1))).strip()


def balanced_end(lines: dict[int, str], start: int, limit: int = MAX_CALL_LINES) -> int:
    """The last line of a statement that starts at ``start`` (brackets balanced)."""
    depth, end = 0, start
    for n in range(start, start + limit):
        if n not in lines:
            break
        text = STRING.sub("", lines[n])
        depth += sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
        end = n
        if depth <= 0:
            break
    return end


def body_lines(chunks: Sequence[Chunk], after: int) -> list[tuple[int, str]]:
    """The code lines after line ``after`` (the signature): no doc strings, comments
    or blank lines."""
    out: list[tuple[int, str]] = []
    quote = ""
    for n, text in sorted(lines_of(chunks).items()):
        stripped = text.strip()
        if n <= after:
            continue
        if quote:
            quote = "" if quote in stripped else quote
            continue
        m = _DOCSTRING.match(stripped)
        if m:
            rest = stripped[m.end() :]
            quote = "" if m.group(1) in rest else m.group(1)
            continue
        if stripped and not COMMENT.match(text):
            out.append((n, text))
    return out


def _guard(lines: list[tuple[int, str]], i: int, language: str) -> tuple[str, str, int]:
    """(guard, condition, line) of the statement ``lines[i]``: the ``if`` (or
    ``else``, ``except``/``catch``, ``case``) it sits under, through ``try``/``with``
    blocks; ("", "", 0) when none."""
    n, text = lines[i]
    inline = _INLINE_IF.match(text.strip())
    if inline:
        return "if", _clean_condition(inline["cond"]), n
    indent = indent_of(text)
    for j in range(i - 1, -1, -1):
        at, above = lines[j]
        if indent_of(above) >= indent:
            continue
        st = above.strip()
        m = _IF.match(st)
        if m:
            return "if", _clean_condition(m["cond"]), at
        m = _CATCH.match(st)
        if m:
            caught = re.sub(r"\s+as\s+\w+$", "", _clean_condition(m["cond"]))
            caught = "" if language not in ("python", "ruby") and " " not in caught else caught
            return "catch", caught, at
        if _ELSE.match(st):
            return "else", "", at
        m = _CASE.match(st)
        if m:
            return "case", _clean_condition(m["cond"] or "default"), at
        if not _BLOCK.match(st):
            return "", "", 0
        indent = indent_of(above)  # inside try/with: look further out
    return "", "", 0


def _clean_condition(text: str) -> str:
    cond = re.sub(r"\s*(?:\{|:|\bthen|\bdo)\s*$", "", text.strip())
    if cond.startswith("(") and cond.endswith(")"):
        depth = 0
        for i, ch in enumerate(cond):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0 and i < len(cond) - 1:
                return cond
        cond = cond[1:-1].strip()
    elif cond.startswith("(") and cond.count("(") > cond.count(")"):
        cond = cond[1:].strip()
    return cond


def _raised(text: str, language: str) -> str | None:
    """What a line raises ("" for a bare re-raise), or None when it raises nothing."""
    code = STRING.sub('""', text.strip())
    if language in ("python", "ruby"):
        m = _RAISE.search(code)
        return None if m is None else (m["what"] or "")
    m = _PANIC.search(code) if language in ("go", "rust") else _THROW.search(code)
    return None if m is None else m["what"].rstrip("!")


def find_exits(
    chunks: Sequence[Chunk], after: int, language: str
) -> list[tuple[str, str, str, str, int, int, int]]:
    """``(kind, what, guard, condition, guard line, first line, last line)`` of each
    ``raise``/``throw``/``panic`` and of each ``return`` under an ``if``/``else``/
    ``except``/``case`` (a value returned early), in the order of the lines."""
    lines = body_lines(chunks, after)
    by_line = dict(lines)
    out = []
    for i, (n, text) in enumerate(lines):
        raised = _raised(text, language)
        returned = None if raised is not None else _RETURN.search(STRING.sub('""', text))
        if raised is None and returned is None:
            continue
        guard, condition, at = _guard(lines, i, language)
        end = balanced_end(by_line, n)
        if raised is not None:
            out.append(("raises", raised, guard, condition, at, n, end))
        elif guard:
            statement = _RETURN.search(
                norm(" ".join(by_line.get(k, "") for k in range(n, end + 1)))
            )
            value = statement["value"] if statement else ""
            value = value.strip().rstrip(";}").strip()
            out.append(("returns", value, guard, condition, at, n, end))
    return out


def text_span(lines: dict[int, str], text: str, start: int = 0) -> tuple[int, int] | None:
    """The lines that hold ``text`` (a doc comment's words), found by its first and
    last words."""
    first = find_line(lines, text, start)
    if first is None:
        return None
    words = text.rstrip("…").split()
    for k in (3, 2, 1):
        last = find_line(lines, " ".join(words[-k:]), first) if len(words) > k else None
        if last is not None and last - first < MAX_SIGNATURE_LINES * 3:
            return first, last
    return first, first
