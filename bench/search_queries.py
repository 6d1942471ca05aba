"""Docstrings and doc comments: find them, turn them into queries, strip them.

Used by ``bench/search_bench.py`` (run that; this module has no command line).

- :func:`documented` lists the functions, methods and classes (Python) and the
  functions, methods, classes and interfaces (JavaScript/TypeScript) that carry a
  docstring or a ``/** ... */`` doc comment, with their line range.
- :func:`first_sentence` makes the query: the first sentence of that text, kept
  when it has at least :data:`MIN_WORDS` words.
- :func:`strip_docs` removes *every* docstring / doc comment from a file while
  keeping its line count, so the ground-truth line ranges stay valid in the
  stripped copy that gets indexed. A Python body left empty gets ``...``.

Everything is found with tree-sitter (``codecite.chunking.parse``).
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter

from codecite.chunking import parse

#: Shortest first sentence used as a query.
MIN_WORDS = 6

PY_DEFS = frozenset({"function_definition", "class_definition"})
JS_DEFS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "method_definition",
    }
)
JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function"})
JS_FIELDS = frozenset({"public_field_definition", "field_definition"})
JS_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_JSDOC_LINK = re.compile(r"\{@\w+\s+([^}|\s]+)[^}]*\}")


@dataclass(frozen=True)
class Documented:
    """A definition with its doc text; lines are 1-based, inclusive."""

    start_line: int
    end_line: int
    doc: str


# --------------------------------------------------------------------------- walking


def _walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _statements(block: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [c for c in block.named_children if c.type != "comment"]


def _py_docstring(block: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The docstring statement opening a module or block, if any."""
    if block is None:
        return None
    body = _statements(block)
    if not body or body[0].type != "expression_statement" or body[0].named_child_count != 1:
        return None
    value = body[0].named_children[0]
    return body[0] if value.type in ("string", "concatenated_string") else None


def _py_docstrings(root: tree_sitter.Node) -> list[tuple[tree_sitter.Node, tree_sitter.Node]]:
    """(docstring statement, the module/block holding it) for every docstring."""
    found = []
    for node in _walk(root):
        block = (
            node
            if node.type == "module"
            else (node.child_by_field_name("body") if node.type in PY_DEFS else None)
        )
        doc = _py_docstring(block)
        if doc is not None and block is not None:
            found.append((doc, block))
    return found


def _js_doc_comments(root: tree_sitter.Node, data: bytes) -> list[tree_sitter.Node]:
    return [
        n
        for n in _walk(root)
        if n.type == "comment" and data[n.start_byte : n.end_byte].startswith(b"/**")
    ]


# --------------------------------------------------------------------------- doc text


def _string_value(text: str) -> str:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = re.sub(r"^[rRuUbBfF]*('''|\"\"\"|'|\")|('''|\"\"\"|'|\")$", "", text)
    return value if isinstance(value, str) else ""


def _jsdoc_text(comment: str) -> str:
    body = comment.removeprefix("/**").removesuffix("*/")
    lines = []
    for line in body.splitlines():
        line = line.strip().removeprefix("*").strip()
        if line.startswith("@"):
            break
        lines.append(line)
    return _JSDOC_LINK.sub(r"\1", "\n".join(lines)).strip()


def first_sentence(doc: str) -> str | None:
    """First sentence of the first paragraph, or None when under MIN_WORDS words."""
    paragraph = inspect.cleandoc(doc).strip().split("\n\n", 1)[0]
    flat = " ".join(paragraph.split())
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0].strip()
    return sentence if len(sentence.split()) >= MIN_WORDS else None


# --------------------------------------------------------------------------- definitions


def _lines(node: tree_sitter.Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.end_point[0] + 1


def _python_documented(root: tree_sitter.Node, data: bytes) -> list[Documented]:
    out = []
    for node in _walk(root):
        if node.type not in PY_DEFS:
            continue
        doc = _py_docstring(node.child_by_field_name("body"))
        if doc is None:
            continue
        outer = node.parent if node.parent and node.parent.type == "decorated_definition" else node
        text = _string_value(data[doc.start_byte : doc.end_byte].decode("utf-8", "replace"))
        out.append(Documented(*_lines(outer), doc=text))
    return out


def _js_definition(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The function/method/class/interface a doc comment's next sibling defines."""
    inner = node.child_by_field_name("declaration") if node.type == "export_statement" else node
    if inner is None:
        return None
    if inner.type in JS_DEFS:
        return node
    if inner.type in JS_FIELDS:
        value = inner.child_by_field_name("value")
        return node if value is not None and value.type in JS_FUNCTION_VALUES else None
    if inner.type in JS_DECLARATIONS:
        for declarator in inner.named_children:
            value = declarator.child_by_field_name("value")
            if value is not None and value.type in JS_FUNCTION_VALUES:
                return node
    return None


def _js_documented(root: tree_sitter.Node, data: bytes) -> list[Documented]:
    out = []
    for comment in _js_doc_comments(root, data):
        target = comment.next_named_sibling
        first = target
        while target is not None and target.type == "decorator":
            target = target.next_named_sibling
        if target is None or first is None or first.start_point[0] > comment.end_point[0] + 1:
            continue
        definition = _js_definition(target)
        if definition is None:
            continue
        text = _jsdoc_text(data[comment.start_byte : comment.end_byte].decode("utf-8", "replace"))
        out.append(Documented(first.start_point[0] + 1, definition.end_point[0] + 1, text))
    return out


def documented(text: str, language: str) -> list[Documented]:
    """Definitions of one file that carry a docstring / doc comment."""
    data = text.encode("utf-8", "surrogatepass")
    root = parse(text, language).root_node
    if language == "python":
        return _python_documented(root, data)
    if language in JS_LANGUAGES:
        return _js_documented(root, data)
    return []


# --------------------------------------------------------------------------- stripping


def _py_replacement(doc: tree_sitter.Node, block: tree_sitter.Node) -> bytes:
    """``...`` when the body would be empty (or code shares the line), else nothing."""
    rest = [s for s in _statements(block) if s.id != doc.id]
    shares_line = bool(rest) and rest[0].start_point[0] == doc.end_point[0]
    keep = block.type != "module" and (not rest or shares_line)
    return b"..." if keep else b""


def _replace(data: bytes, spans: list[tuple[int, int, bytes]]) -> bytes:
    """Replace byte spans, padding each replacement with the newlines it removes."""
    out, last = [], 0
    for start, end, filler in sorted(spans):
        if start < last:  # nested (a docstring inside a stripped one): already gone
            continue
        out += [data[last:start], filler, b"\n" * data.count(b"\n", start, end)]
        last = end
    out.append(data[last:])
    return b"".join(out)


def strip_docs(text: str, language: str) -> str:
    """``text`` without docstrings / doc comments, with the same number of lines."""
    data = text.encode("utf-8", "surrogatepass")
    root = parse(text, language).root_node
    if language == "python":
        spans = [(d.start_byte, d.end_byte, _py_replacement(d, b)) for d, b in _py_docstrings(root)]
    elif language in JS_LANGUAGES:
        spans = [(c.start_byte, c.end_byte, b" ") for c in _js_doc_comments(root, data)]
    else:
        return text
    return _replace(data, spans).decode("utf-8", "surrogatepass")


def python_parses(text: str) -> bool:
    """True when Python's own parser accepts ``text``."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True
