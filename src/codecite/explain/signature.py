"""Reading a signature: its parameters (name, type, default) and return type, for
``name: Type`` languages, ``Type name`` ones and Go."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Languages whose parameters are written ``Type name`` (else ``name: Type``).
TYPE_FIRST = frozenset({"java", "c", "cpp", "c_sharp", "csharp", "dart", "php"})
_MODIFIERS = frozenset(
    "public private protected internal static final abstract synchronized native default "
    "async virtual override inline extern const unsafe readonly sealed open suspend "
    "export function func def fn fun pub partial new".split()
)
_PARAM_MODIFIERS = re.compile(
    r"^(?:(?:public|private|protected|readonly|override|final|const|ref|out|in|params|"
    r"this|vararg|mut|var|val|let)\s+)+"
)
_ANNOTATION = re.compile(r"@[\w.]+(?:\([^()]*\))?\s*")
_NO_PARAM = frozenset({"self", "cls", "this", "&self", "&mut self", "mut self", "*", "/", ""})


@dataclass(frozen=True)
class SigParam:
    name: str
    type: str = ""
    default: str = ""


def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "\"'`":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}" or (ch == ">" and text[i - 1] not in "-="):
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _param_group(signature: str, name: str) -> tuple[str, str, str] | None:
    """(before, inside, after) around the parameter list that follows ``name``."""
    m = re.search(
        rf"(?<![\w$]){re.escape(name)}\s*(?:<[^()]*>)?\s*(?:=\s*(?:async\s*)?)?\(", signature
    )
    start = m.end() - 1 if m else signature.find("(")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(signature)):
        depth += {"(": 1, ")": -1}.get(signature[i], 0)
        if depth == 0:
            return signature[:start], signature[start + 1 : i], signature[i + 1 :]
    return None


def parse_signature(signature: str, name: str, language: str) -> tuple[list[SigParam], str]:
    """The parameters (``self``/``this``/receivers left out) and the return type
    written in a signature, for ``name: Type`` languages (Python, TS/JS, Kotlin,
    Rust, Swift), ``Type name`` ones (Java, C, C#) and Go's ``a, b Type``."""
    sig = " ".join(signature.split())
    group = _param_group(sig, name)
    if group is None:
        return [], ""
    before, inside, after = group
    items = [p for p in split_top(inside) if p]
    if language == "go":
        params = _go_params(items)
    else:
        params = [p for p in (_one_param(item, language) for item in items) if p]
    return params, _return_type(before, after, name, language)


def _one_param(item: str, language: str) -> SigParam | None:
    item = _ANNOTATION.sub("", item).strip()
    head, default = item, ""
    eq = split_top(item, "=")
    if len(eq) > 1 and not item.startswith("="):
        head, default = eq[0], "=".join(eq[1:]).strip()
    head = _PARAM_MODIFIERS.sub("", head.strip())
    if head in _NO_PARAM:
        return None
    if language in TYPE_FIRST and ":" not in head:
        m = re.match(r"^(?P<type>.*?[\s*&.\]>])\s*(?P<name>[$\w]+)$", head)
        if not m:
            return SigParam(head, "", default)
        kind = m["type"].strip().removesuffix("...").strip()
        variadic = "..." if m["type"].strip().endswith("...") else ""
        return SigParam(variadic + m["name"], kind, default)
    name, _, kind = head.partition(":")
    name = name.strip()
    if name in _NO_PARAM:
        return None
    return SigParam(name.rstrip("?"), kind.strip(), default)


def _go_params(items: list[str]) -> list[SigParam]:
    """Go: ``a, b float64, names ...string``: a name alone takes the next type."""
    out: list[SigParam] = []
    pending: list[str] = []
    for item in items:
        name, _, kind = item.partition(" ")
        if not kind:
            pending.append(name)
            continue
        out += [SigParam(p, kind.strip()) for p in pending] + [SigParam(name, kind.strip())]
        pending = []
    return out + [SigParam("", p) for p in pending]  # unnamed: types only


def _return_type(before: str, after: str, name: str, language: str) -> str:
    rest = after.strip()
    if language in TYPE_FIRST:
        words = [w for w in re.split(r"\s+", _ANNOTATION.sub("", before).strip()) if w]
        words = [w for w in words if w not in _MODIFIERS]
        if words and words[-1] == name:
            words = words[:-1]
        kind = " ".join(words)
        return "" if re.fullmatch(r"<[^>]*>", kind) else re.sub(r"^<[^>]*>\s*", "", kind)
    if "->" in rest:
        rest = rest.split("->", 1)[1]
    elif rest.startswith(":") and language != "python":
        rest = rest[1:]
    elif language != "go":
        return ""
    if language == "python":
        rest = rest.split("#", 1)[0]
    rest = re.split(r"\s*(?:\{|=>|\bwhere\b|\bthrows\b)", rest, maxsplit=1)[0]
    return rest.strip().removesuffix(":").removesuffix("=").strip()
