"""Reading a doc comment: its summary, and the parameters, return value and
exceptions it describes, in the Google, NumPy, Sphinx and JSDoc/Javadoc conventions."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..types import Chunk
from .limits import DETAILS_CHARS


@dataclass
class DocEntry:
    """A parameter, return value or exception as a doc comment describes it; ``raw``
    is its first line as written (to find it in the code)."""

    name: str = ""
    type: str = ""
    description: str = ""
    raw: str = ""

    def extend(self, text: str) -> None:
        """Add a continuation line to the description."""
        self.description = f"{self.description} {text}".strip()


@dataclass
class DocInfo:
    summary: str = ""
    params: dict[str, DocEntry] = field(default_factory=dict)
    returns: DocEntry | None = None
    raises: list[DocEntry] = field(default_factory=list)


_SECTIONS = {
    "args": "params",
    "arguments": "params",
    "parameters": "params",
    "params": "params",
    "keyword args": "params",
    "keyword arguments": "params",
    "other parameters": "params",
    "returns": "returns",
    "return": "returns",
    "yields": "returns",
    "raises": "raises",
    "throws": "raises",
    "exceptions": "raises",
}
_DASHES = re.compile(r"^-{3,}\s*$")
_FIELD = re.compile(r"^(?::\w[\w .-]*:(?:\s|$)|\.\. [\w-]+::)")
#: The end of a sentence: not after a list number ("1."), "e.g." or "i.e.".
_SENTENCE_END = re.compile(r"(?<![0-9])(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.!?](?=\s|$)")
_TAGS: list[tuple[str, re.Pattern[str]]] = [
    (
        "param",
        re.compile(
            r"^:param\s+(?:(?P<type>[^:]+?)\s+)?(?P<name>\*{0,2}[\w$]+)\s*:\s*(?P<desc>.*)$"
        ),
    ),
    ("type", re.compile(r"^:type\s+(?P<name>\*{0,2}[\w$]+)\s*:\s*(?P<type>.*)$")),
    ("return", re.compile(r"^:returns?:\s*(?P<desc>.*)$")),
    ("rtype", re.compile(r"^:rtype:\s*(?P<type>.*)$")),
    ("raise", re.compile(r"^:(?:raises?|except|exception)\s+(?P<type>[\w.]+)\s*:\s*(?P<desc>.*)$")),
    (
        "param",
        re.compile(
            r"^@(?:param|arg|argument)\s+(?:\{(?P<type>[^}]*)\}\s*)?"
            r"(?P<name>\[?[\w$.]+(?:=[^\]]*)?\]?)\s*(?:-\s*)?(?P<desc>.*)$"
        ),
    ),
    ("return", re.compile(r"^@returns?\s*(?:\{(?P<type>[^}]*)\}\s*)?(?P<desc>.*)$")),
    (
        "raise",
        re.compile(r"^@(?:throws|exception)\s+(?:\{(?P<type>[^}]*)\}\s*)?(?P<desc>.*)$"),
    ),
]
_GOOGLE_PARAM = re.compile(
    r"^(?P<name>\*{0,2}[\w$.]+)\s*(?:\((?P<type>[^)]*)\))?\s*:\s*(?P<desc>.*)$"
)
_GOOGLE_RETURN = re.compile(
    r"^(?:(?P<type>[\w.\[\]]+(?:\s*[,|]\s*[\w.\[\]]+)*)\s*:\s+)?(?P<desc>.*)$"
)
_NUMPY_PARAM = re.compile(
    r"^(?P<name>\*{0,2}[\w$.]+(?:\s*,\s*\*{0,2}[\w$.]+)*)\s*(?::\s*(?P<type>.*))?$"
)


def plain_name(name: str) -> str:
    """A documented name as the signature writes it: ``[b=1]`` → ``b``, ``*args`` → ``args``."""
    return name.strip("[]").split("=")[0].lstrip("*$").strip()


def parse_doc(doc: str) -> DocInfo:
    """Parameters, return value and exceptions of a doc comment in the Google
    (``Args:``), NumPy (``Parameters`` + dashes), Sphinx (``:param x:``) and
    JSDoc/Javadoc (``@param``) conventions; ``summary``: the text before them."""
    info = DocInfo()
    lines = doc.split("\n")
    section, header_indent, base = "", -1, -1
    current: DocEntry | None = None
    summary: list[str] = []
    doctest = False  # the prose ends at the first example (>>>)
    i = 0
    while i < len(lines):
        line = lines[i]
        text, indent = line.strip(), len(line) - len(line.lstrip())
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        i += 1
        if not text:
            if not section:
                current = None
                summary.append("")  # a paragraph ends
            continue
        key = text.rstrip(":").strip().lower()
        if _DASHES.match(following) and key in _SECTIONS:  # NumPy
            section, header_indent, base, current = _SECTIONS[key], -2, -1, None
            i += 1
            continue
        if text.endswith(":") and key in _SECTIONS:  # Google
            section, header_indent, base, current = _SECTIONS[key], indent, -1, None
            continue
        tagged = _tag(text)
        if tagged is not None:
            current = _add_tag(info, *tagged)
            section = ""
            continue
        if section and header_indent >= 0 and indent <= header_indent:
            section = ""  # a Google section ends where the text comes back out
        if section:
            if base < 0:
                base = indent
            if indent <= base:
                current = _section_entry(info, section, text, numpy=header_indent == -2)
            elif current is not None:
                current.extend(text)
        elif current is not None:
            current.extend(text)
        elif text.startswith(">>>"):
            doctest = True
        elif _FIELD.match(text):  # another reST field (:meta private:) or directive
            continue
        elif not (info.params or info.returns or info.raises or doctest):
            summary.append(text)
    info.summary = re.sub(r"\n{3,}", "\n\n", "\n".join(summary)).strip()
    return info


def _tag(text: str) -> tuple[str, re.Match[str]] | None:
    for kind, pattern in _TAGS:
        m = pattern.match(text)
        if m:
            return kind, m
    return None


def _add_tag(info: DocInfo, kind: str, m: re.Match[str]) -> DocEntry | None:
    groups = m.groupdict()
    raw = m.group(0)
    if kind in ("param", "type"):
        name = plain_name(groups["name"])
        entry = info.params.setdefault(name, DocEntry(name, raw=raw))
        entry.type = (groups.get("type") or entry.type or "").strip()
        if kind == "param":
            entry.description, entry.raw = (groups.get("desc") or "").strip(), raw
            if groups["name"].startswith("[") and "=" in groups["name"]:
                entry.description += f" (default {groups['name'].strip('[]').split('=', 1)[1]})"
        return entry if kind == "param" else None
    if kind in ("return", "rtype"):
        if info.returns is None:
            info.returns = DocEntry("return", raw=raw)
        entry = info.returns
        if groups.get("type"):
            entry.type = groups["type"].strip()
        if kind == "return":
            entry.description, entry.raw = (groups.get("desc") or "").strip(), raw
        return entry if kind == "return" else None
    kind_name = (groups.get("type") or "").strip()
    desc = (groups.get("desc") or "").strip()
    if not kind_name:  # Javadoc: @throws IllegalArgumentException if ...
        kind_name, _, desc = desc.partition(" ")
    entry = DocEntry(kind_name, kind_name, desc.strip(), raw)
    info.raises.append(entry)
    return entry


def _section_entry(info: DocInfo, section: str, text: str, *, numpy: bool) -> DocEntry | None:
    if section == "params":
        m = (_NUMPY_PARAM if numpy else _GOOGLE_PARAM).match(text)
        if not m:
            return None
        desc = "" if numpy else (m.groupdict().get("desc") or "")
        entry = None
        for name in m["name"].split(","):
            entry = DocEntry(plain_name(name), (m["type"] or "").strip(), desc.strip(), text)
            info.params[entry.name] = entry
        return entry
    if section == "returns":
        if info.returns is not None and info.returns.raw:
            info.returns.extend(text)
            return info.returns
        if numpy:
            name, colon, kind = text.partition(" : ")
            info.returns = DocEntry("return", (kind if colon else name).strip(), "", text)
        else:
            m = _GOOGLE_RETURN.match(text)
            kind = (m["type"] or "") if m else ""
            desc = m["desc"] if m else text
            info.returns = DocEntry("return", kind.strip(), desc.strip(), text)
        return info.returns
    name, _, desc = text.partition(":")
    entry = DocEntry(name.strip(), name.strip(), desc.strip(), text)
    if not re.fullmatch(r"[\w.]+", entry.name):
        return None
    info.raises.append(entry)
    return entry


def split_summary(text: str, limit: int = 240) -> tuple[str, str]:
    """A doc comment's prose as (its first sentence, the rest): the sentence ends at
    the first ``.``/``!``/``?`` of the first paragraph (not after a list number or
    "e.g."), or with the paragraph."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    if not paragraphs:
        return "", ""
    first = paragraphs[0]
    end = _SENTENCE_END.search(first)
    sentence = first[: end.end()] if end else first
    if len(sentence) > limit:
        return sentence[: limit - 1] + "…", ""
    rest = " ".join([first[len(sentence) :].strip(), *paragraphs[1:]]).strip()
    if len(rest) > DETAILS_CHARS:  # cut at a sentence end
        ends = [m.end() for m in _SENTENCE_END.finditer(rest) if m.end() <= DETAILS_CHARS]
        rest = rest[: ends[-1]] + " …" if ends else ""
    return sentence, rest


def summary_of(chunk: Chunk) -> str:
    return split_summary(parse_doc(chunk.docstring).summary)[0]
