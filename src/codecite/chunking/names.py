"""Names and docstrings read from syntax nodes."""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable

from tree_sitter import Node

from .languages import LanguageSpec

Text = Callable[[Node], str]

_SEP = re.compile(r"\s*(?:::|\\|\.)\s*")
_TEMPLATE_ARGS = re.compile(r"(?<=[\w>])<[^<>]*>")
_BRACKETS = re.compile(r"\[[^\[\]]*\]")
_COMMENT_OPEN = re.compile(r"^\s*(?:/\*+!?|///?!?|#+|\*+(?!/))\s?")
_COMMENT_CLOSE = re.compile(r"\s*\*+/\s*$")
_XML_TAG = re.compile(r"</?[A-Za-z][^>]*>")


def split_name(text: str) -> list[str]:
    """``Invoice::Builder::build`` → ``["Invoice", "Builder", "build"]``; template
    arguments are dropped (``Box<dyn T>`` → ``Box``)."""
    text = text.strip()
    if "operator" not in text:
        previous = None
        while previous != text:
            previous, text = text, _TEMPLATE_ARGS.sub("", text)
    parts = [p.strip(" *&") for p in _SEP.split(text)]
    return [p for p in parts if p]


def name_parts(node: Node, spec: LanguageSpec, text: Text) -> list[str]:
    """The (possibly qualified) name of a definition, split into parts.

    The name is the ``name`` field (or the spec's field for that node type); C and
    C++ functions and typedefs follow their ``declarator`` chain instead.
    """
    name = node.child_by_field_name(spec.name_fields.get(node.type, "name"))
    if name is None:
        declarator = node.child_by_field_name("declarator")
        while declarator is not None:
            deeper = declarator.child_by_field_name("declarator")
            if deeper is None and declarator.type.endswith("_declarator"):
                # reference_declarator (``T& f()``) holds its declarator without a field
                deeper = next(iter(declarator.named_children), None)
            if deeper is None:
                break
            declarator = deeper
        name = declarator
    if name is None:
        return []
    return split_name(text(name))


def receiver_type(node: Node, text: Text) -> str:
    """Go: the type a method's receiver points to (``(o *Order)`` → ``Order``)."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ""
    for param in receiver.named_children:
        kind = param.child_by_field_name("type")
        if kind is not None:
            cleaned = _BRACKETS.sub("", text(kind))
            return cleaned.strip(" *&").split(".")[-1]
    return ""


def python_docstring(body: Node | None, text: Text) -> str:
    """Python: the first statement of a body when it is a string."""
    if body is None:
        return ""
    for child in body.named_children:
        if child.type == "comment":
            continue
        if child.type != "expression_statement" or child.named_child_count != 1:
            return ""
        string = child.named_children[0]
        if string.type not in ("string", "concatenated_string"):
            return ""
        return clean_string(text(string))
    return ""


def clean_string(raw: str) -> str:
    """The value of a Python string literal, dedented (``inspect.cleandoc``); a NUL
    character stays written as ``\\x00`` (``"C{'\\x00'}"`` in a docstring: no stored
    text holds a NUL, which PostgreSQL's text cannot)."""
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = raw.lstrip("rRbBuUfF").strip("'\"")
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return inspect.cleandoc(str(value).replace("\0", "\\x00"))


def attached_docstring(comments: list[Node], text: Text, language: str) -> str:
    """The comment block above a definition with its markers removed."""
    lines: list[str] = []
    for comment in comments:
        for line in text(comment).splitlines():
            if line.strip() in ("=begin", "=end"):
                continue
            line = _COMMENT_CLOSE.sub("", _COMMENT_OPEN.sub("", line, count=1))
            if language == "c_sharp":
                line = _XML_TAG.sub("", line)
            lines.append(line.rstrip())
    return inspect.cleandoc("\n".join(lines)).strip()


def header(spec: LanguageSpec, source: bytes, node: Node, body: Node | None) -> str:
    """A definition's header up to its body, on one line, without the attributes,
    annotations and comments in front (``public BigDecimal total(List<Item> items)``)."""
    start = _header_start(spec, node)
    if body is not None and body.start_byte > start:
        raw = source[start : body.start_byte]
    else:
        raw = source[start : node.end_byte].split(b"\n", 1)[0].split(b"{", 1)[0]
    text = " ".join(raw.decode("utf-8", "replace").split())
    return text.removesuffix("{").rstrip()


def _header_start(spec: LanguageSpec, node: Node) -> int:
    skip = spec.inner_attributes | spec.attributes | spec.comments
    for child in node.children:
        if child.type in skip:
            continue
        if child.type in spec.modifiers:
            for part in child.children:
                if part.type not in skip:
                    return part.start_byte
            continue
        return child.start_byte
    return node.start_byte
