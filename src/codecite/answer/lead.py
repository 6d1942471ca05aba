"""The lead of an offline answer: one sentence of the question's shape, built only
from the cited code (docs/DESIGN.md §7).

- quantity: "**14 days** by default: `max_age = 14 * 24 * 60 * 60` in
  `SessionMiddleware.__init__` (starlette/middleware/sessions.py:21)." — the value
  as written, and what it comes to when it is arithmetic or a duration;
- what happens / error: "`Request.form` raises `MultiPartException` ("Too many files…")
  when `len(files) > max_files` (…)";
- yes/no: "Yes — `GZipMiddleware` (…): its docstring or the line that does it";
- where / how / who: the place, what it does (docstring sentence or the line);
- impact / tests: the callers / the tests, each cited (from the code graph).

Nothing is said that the cited lines do not show; the computed value of an arithmetic
default is the only thing derived, and it says so ("= 1,209,600").
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Sequence

from ..identifiers import tokenize
from .citations import cite
from .evidence import DOC_SECTIONS, Evidence, sentence_spans
from .shape import Shape
from .terms import stems

#: ``name = value``, ``name: type = value`` (a default), ``name := value``, ``name: value``
#: (an object or struct literal); the value up to a separator at its own depth.
_VALUE = re.compile(
    r"(?<![\w.])(?P<name>[A-Za-z_$][\w$]*)\s*(?::\s*[\w\[\]|. ]{1,60}?)?\s*"
    r"(?:(?<![=!<>:])=(?!=)|:=|:(?!:))\s*"
    r"(?P<value>(?:\((?:[^()]|\([^()]*\))*\)|[^,;{}()])+)"
    r"|\b(?:set|setdefault|get)\(\s*['\"](?P<key>[^'\"]+)['\"]\s*,\s*(?P<setting>[^()]+?)\s*\)"
)
_RAISE = re.compile(
    r"(?:raise|throw)\s+(?:new\s+)?(?P<exc>[\w.]+)\s*\(\s*"
    r"(?P<msg>(?:f|r|b)?(?:\"[^\"]*\"|'[^']*'|`[^`]*`))?"
)
_GO_ERROR = re.compile(r"(?:errors\.New|fmt\.Errorf|panic)\(\s*(?P<msg>\"[^\"]*\"|`[^`]*`)")
_CONDITION = re.compile(
    r"^\s*(?:\}\s*)?(?:if|elif|else if|unless|when|case)\b\s*\(?(?P<cond>.+?)\)?"
    r"\s*(?::|\{|then)?\s*$"
)
_SECONDS_HINT = re.compile(
    r"\b(timeout|ttl|age|interval|delay|expir\w*|lifetime|keepalive|keep_alive|grace|seconds?|"
    r"secs?|duration|period|wait|sleep)",
    re.I,
)
_SIZE_HINT = re.compile(r"\b(size|bytes|memory|length|buffer|body|upload|payload)", re.I)
_MILLIS_HINT = re.compile(r"\b(ms|millis\w*)\b", re.I)
_DURATION_CALL = re.compile(
    r"timedelta\((?P<args>[^)]*)\)|(?P<n>\d+)\s*\*\s*time\.(?P<unit>Second|Minute|Hour|Millisecond)"
)
_BINOPS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.LShift: lambda a, b: float(int(a) << int(b)),
}


def lead_sentence(shape: Shape, evidence: Sequence[Evidence], facts: Sequence[str] = ()) -> str:
    """The answer's first sentence from its best evidence (``facts``: graph sentences
    for impact/tests questions, already cited)."""
    if shape.kind in ("impact", "tests") and facts:
        return facts[0]
    if not evidence:
        return facts[0] if facts else ""
    best = evidence[0]
    where = cite(best.path, best.start_line, best.end_line)
    symbol = _symbol(best)
    if shape.kind == "quantity":
        quantity = _quantity(best.focus_text, best, shape.units)
        if not quantity and best.value_text:  # a setting's description, its value nearby
            quantity = _quantity(best.value_text, best, shape.units)
            where = cite(best.path, best.value_line, best.value_line)
        if quantity:
            said = f" — {best.sentence.rstrip('.')}" if best.sentence else ""
            if best.member and f"{best.member} =" in quantity:  # the value names its field
                symbol = f"`{best.chunk.qualname}`"
            return ("Yes: " if shape.polar else "") + f"{quantity} in {symbol} ({where}){said}."
    if best.role in ("raise", "message") or (
        shape.kind in ("what-happens", "error") and best.role in ("branch", "return", "log")
    ):
        sentence = _behaviour(best, symbol, where, shape)
        handler = next((e for e in evidence[1:2] if e.role == "handler"), None)
        if handler is not None:
            then = _clip(" ".join(line.strip() for line in handler.lines[1:]) or handler.focus_text)
            sentence = (
                sentence.rstrip(".") + f"; `{handler.chunk.qualname}` catches it: `{then}` "
                f"({cite(handler.path, handler.start_line, handler.end_line)})."
            )
        return sentence
    if shape.kind == "yesno" or shape.polar:
        if best.coverage >= YES_COVERAGE:
            return f"Yes — {symbol} ({where}): {_what(best)}."
        said = _what(best)
        doc = best.chunk.docstring.strip()
        if said.startswith("`") and doc:  # a line of code: what its symbol is for, first
            said = f"{first_sentence(doc).rstrip('.')}; {said}"
        return f"The closest code is {symbol} ({where}): {said}."
    if shape.kind == "where":
        return f"In {symbol} ({where}): {_what(best)}."
    if shape.kind == "who":  # the check as written, or the sentence that states it
        said = _what(best) if best.role == "doc" or best.sentence else f"`{_clip(best.focus_text)}`"
        return f"{symbol} decides it ({where}): {said}."
    return f"{symbol} ({where}): {_what(best)}."


#: "Yes" only when the lead's line and symbol hold this share of the question's subject.
YES_COVERAGE = 0.5


#: Where a doc comment's first paragraph ends: a blank line, or a section heading
#: ("Args:", "Returns", "Parameters") on a line of its own.
_PARAGRAPH_END = re.compile(rf"\n\s*\n|\n\s*:?({DOC_SECTIONS})::?\s*(\n|$)", re.I)


def first_sentence(text: str, limit: int = 240) -> str:
    """The first sentence of a doc comment (of its first paragraph: a summary line with
    no period does not run on into its "Args:")."""
    flat = " ".join(_PARAGRAPH_END.split(text.strip(), maxsplit=1)[0].split())
    spans = sentence_spans(flat)
    sentence = flat[spans[0][0] : spans[0][1]] if spans else flat
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def _what(ev: Evidence) -> str:
    """What a piece of evidence says: its prose sentence, its docstring's first, else the
    focus line."""
    if ev.sentence:
        return ev.sentence.rstrip(".")
    if ev.role == "doc":
        return first_sentence(ev.focus_text.strip("\"'/*#: ")).rstrip(".")  # "#: x" too
    doc = ev.chunk.docstring.strip()
    if doc and ev.role == "definition":
        return first_sentence(doc).rstrip(".")
    return f"`{_clip(ev.focus_text)}`"


def _behaviour(ev: Evidence, symbol: str, where: str, shape: Shape) -> str:
    """What the code does in the case: the raise (its exception and message) and the
    condition that leads to it, else the branch or return as written."""
    text = " ".join(line.strip() for line in ev.lines)
    condition = ""
    first = ev.lines[0]
    m = _CONDITION.match(first)
    if m and ev.start_line < ev.focus:
        condition = m.group("cond").strip()
    raised = _RAISE.search(text)
    go = _GO_ERROR.search(text)
    when = f" when `{_clip(condition, 90)}`" if condition else ""
    if raised:
        message = _clip(raised.group("msg") or "", 140)
        call = f"{raised.group('exc')}({message})" if message else raised.group("exc")
        return f"{symbol} raises `{call}`{when} ({where})."
    if go:
        return f"{symbol} returns the error {_clip(go.group('msg'), 140)}{when} ({where})."
    verb = {"log": "logs", "return": "returns"}.get(ev.role, "does")
    focus = _clip(ev.focus_text if verb == "does" else _statement(ev))
    if verb == "does":
        return f"{symbol} handles it{when} ({where}): `{focus}`."
    return f"{symbol} {verb} `{focus}`{when} ({where})."


def _symbol(ev: Evidence) -> str:
    """The evidence's symbol: its chunk's name, or the field of a class outline the
    focus line sets or documents (``App.permanent_session_lifetime``, not ``App``)."""
    if not ev.chunk.qualname:
        return f"`{ev.path}`"
    if ev.member:
        return f"`{ev.chunk.qualname}.{ev.member}`"
    return f"`{ev.chunk.qualname}`"


def _statement(ev: Evidence) -> str:
    """The statement the focus line starts (a call spread over lines, joined)."""
    at = ev.focus - ev.start_line
    return " ".join(line.strip() for line in ev.lines[at:])


def _quantity(line: str, ev: Evidence, units: frozenset[str] = frozenset()) -> str:
    """ "**14 days** by default: `max_age = 14 * 24 * 60 * 60`" from a value line: of
    the line's assignments and defaults (``x = 30``, ``name: int = 5`` in a signature,
    ``Timeout: 30 * time.Second`` in a literal) the one with a number, its name matching
    the question's unit words first."""
    code, _, comment = _split_comment(line)
    found = [
        (m.group("name") or m.group("key"), (m.group("value") or m.group("setting")).strip())
        for m in _VALUE.finditer(code)
    ]
    found = [(n, v.rstrip(",;")) for n, v in found if re.search(r"\d|timedelta|time\.", v)]
    if not found:
        return ""
    name, value = max(found, key=lambda nv: (bool(stems(nv[0]) & units), -found.index(nv)))
    if name in ("default", "value") and ev.chunk.name:
        shown_name = f"{ev.chunk.name}.{name}"
    else:
        shown_name = name
    human = _human(value, name + " " + ev.chunk.qualname, comment.strip())
    written = f"`{shown_name} = {_clip(value, 80)}`"
    return f"**{human}** by default: {written}" if human else f"By default {written}"


def _split_comment(line: str) -> tuple[str, str, str]:
    """(code, marker, comment) of a line; a ``#`` or ``//`` inside a string is code."""
    bare = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', lambda m: "_" * len(m.group(0)), line)
    at = min((i for i in (bare.find(" #"), bare.find("//")) if i >= 0), default=-1)
    if bare.lstrip().startswith("#"):
        at = bare.index("#")
    return (line, "", "") if at < 0 else (line[:at], line[at : at + 2], line[at + 2 :])


def _human(value: str, names: str, comment: str) -> str:
    """The value in plain words: a duration when it is one, an evaluated product."""
    duration = _DURATION_CALL.search(value)
    if duration:
        if duration.group("args") is not None:
            parts = [a.strip() for a in duration.group("args").split(",") if "=" in a]
            return ", ".join(f"{v.strip()} {k.strip()}" for k, v in (p.split("=") for p in parts))
        unit = duration.group("unit").lower()
        return f"{duration.group('n')} {unit}{'s' if duration.group('n') != '1' else ''}"
    number = _evaluate(value)
    if number is None:
        return ""
    names = " ".join(tokenize(names))  # identifier parts: "UsageError" holds no "age"
    if _SIZE_HINT.search(names) and number >= 1024:
        return _size(number)
    if _MILLIS_HINT.search(names):
        return _duration(number / 1000) if number >= 1000 else f"{_format(number)} ms"
    if _SECONDS_HINT.search(names):
        return _duration(number)
    if comment and re.search(r"\d", comment) and len(comment) < 40:
        return f"{_format(number)} ({comment.rstrip('.')})"
    return _format(number)


def _evaluate(expression: str) -> float | None:
    """The value of an arithmetic expression of number literals, else None."""
    text = expression.replace("_", "").strip().rstrip(",;")
    text = re.sub(r"(?<=\d)[lLuU]+\b", "", text)
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        match = re.search(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])", text)
        return float(match.group(0)) if match and len(text) < 60 else None
    return _value(tree)


def _value(node: ast.expr) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value) if not isinstance(node.value, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _value(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _value(node.left), _value(node.right)
        if left is None or right is None or (right == 0 and isinstance(node.op, ast.Div)):
            return None
        try:
            return _BINOPS[type(node.op)](left, right)
        except (OverflowError, ZeroDivisionError):
            return None
    if isinstance(node, ast.Call) and node.args and len(node.args) >= 2:
        # int(os.environ.get("WEB_CONCURRENCY", 1)): the fallback is the default
        return _value(node.args[-1])
    if isinstance(node, ast.Call) and len(node.args) == 1:
        return _value(node.args[0])
    return None


def _duration(seconds: float) -> str:
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size and seconds % size == 0:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''} ({_format(seconds)} seconds)"
    return f"{_format(seconds)} second{'s' if seconds != 1 else ''}"


def _size(number: float) -> str:
    for size, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if number >= size and number % size == 0:
            return f"{_format(number / size)} {unit} ({_format(number)} bytes)"
    return f"{_format(number)} bytes"


def _format(number: float) -> str:
    if number == int(number):
        return f"{int(number):,}"
    return f"{number:,.3g}"


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
