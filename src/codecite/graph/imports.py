"""Read import statements into :class:`~codecite.types.Import` records, per language.

Convention for ``Import`` (module text is kept as written, quotes stripped):

- ``names`` empty: the whole module; ``alias`` is its local name when one is given
  (``import numpy as np``, ``import * as ns from "x"``, Go ``o "shop/orders"``).
- ``names`` set: those names come from the module. Names imported under another name get
  their own record with one name and ``alias`` = the local name
  (``from .x import y, z as w`` → ``Import(".x", ("y",))`` + ``Import(".x", ("z",), "w")``).
- ``("*",)``: every name of the module (``from x import *``, Go dot import, Java ``x.*``).
- Special module texts: Rust ``mod x;`` → ``"mod x"``; Ruby ``require_relative "a"`` → ``"./a"``;
  C/C++ system includes keep their angle brackets (``"<vector>"``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tree_sitter import Node

from codecite.types import Import


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _line(node: Node) -> int:
    return node.start_point[0] + 1


def _string_value(node: Node | None) -> str:
    """Content of a string literal node, quotes removed."""
    if node is None:
        return ""
    raw = _text(node).strip()
    if len(raw) >= 2 and raw[0] in "\"'`" and raw[-1] == raw[0]:
        return raw[1:-1]
    if len(raw) >= 2 and raw[0] == "<" and raw[-1] == ">":
        return raw
    return raw


def _grouped(module: str, pairs: list[tuple[str, str]], line: int) -> Iterator[Import]:
    """One record for the plain names, one per aliased name."""
    plain = tuple(name for name, alias in pairs if not alias or alias == name)
    if plain or not pairs:
        yield Import(module, plain, "", line)
    for name, alias in pairs:
        if alias and alias != name:
            yield Import(module, (name,), alias, line)


def _python(node: Node) -> Iterator[Import]:
    line = _line(node)
    if node.type == "import_statement":
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                yield Import(
                    _text(child.child_by_field_name("name")),
                    (),
                    _text(child.child_by_field_name("alias")),
                    line,
                )
            else:
                yield Import(_text(child), (), "", line)
        return
    module = _text(node.child_by_field_name("module_name"))
    pairs: list[tuple[str, str]] = []
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            pairs.append(
                (
                    _text(child.child_by_field_name("name")),
                    _text(child.child_by_field_name("alias")),
                )
            )
        else:
            pairs.append((_text(child), ""))
    if any(c.type == "wildcard_import" for c in node.named_children):
        pairs.append(("*", ""))
    yield from _grouped(module, pairs, line)


def _js(node: Node) -> Iterator[Import]:
    module = _string_value(node.child_by_field_name("source"))
    line = _line(node)
    pairs: list[tuple[str, str]] = []
    alias = ""
    for child in node.named_children:
        if child.type == "import_require_clause":  # TS ``import x = require("./x")``
            source = child.child_by_field_name("source")
            name = child.named_children[0] if child.named_children else None
            yield Import(_string_value(source), (), _text(name), line)
            return
        if child.type == "namespace_export":  # ``export * as ns from "./x"``
            pairs.append(("*", ""))
        elif child.type == "import_clause":
            for part in child.named_children:
                if part.type == "identifier":
                    pairs.append(("default", _text(part)))
                elif part.type == "namespace_import":
                    alias = _text(part.named_children[-1]) if part.named_children else ""
                elif part.type == "named_imports":
                    pairs.extend(_specifiers(part, "import_specifier"))
        elif child.type == "export_clause":
            pairs.extend(_specifiers(child, "export_specifier"))
    if node.type == "export_statement" and not pairs and "*" in _text(node).split("from")[0]:
        pairs.append(("*", ""))
    if alias:
        yield Import(module, (), alias, line)
    if pairs or not alias:
        yield from _grouped(module, pairs, line)


def _specifiers(node: Node, kind: str) -> list[tuple[str, str]]:
    return [
        (_text(s.child_by_field_name("name")), _text(s.child_by_field_name("alias")))
        for s in node.named_children
        if s.type == kind
    ]


def js_require(string_node: Node) -> Import:
    """``require("x")`` / ``import("x")``: names or alias from the declaration around it."""
    module = _string_value(string_node)
    line = _line(string_node)
    decl = (
        string_node.parent.parent.parent
        if string_node.parent and string_node.parent.parent
        else None
    )
    if decl is None or decl.type != "variable_declarator":
        return Import(module, (), "", line)
    target = decl.child_by_field_name("name")
    if target is not None and target.type == "identifier":
        return Import(module, (), _text(target), line)
    if target is not None and target.type == "object_pattern":
        names = tuple(
            _text(c) if c.type != "pair_pattern" else _text(c.child_by_field_name("key"))
            for c in target.named_children
        )
        return Import(module, names, "", line)
    return Import(module, (), "", line)


def _go(node: Node) -> Iterator[Import]:
    module = _string_value(node.child_by_field_name("path"))
    name = node.child_by_field_name("name")
    if name is not None and name.type == "dot":
        yield Import(module, ("*",), "", _line(node))
    else:
        yield Import(module, (), _text(name), _line(node))


def _java(node: Node) -> Iterator[Import]:
    target = next(
        (c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None
    )
    module = _text(target)
    if any(c.type == "asterisk" for c in node.named_children):
        yield Import(module, ("*",), "", _line(node))
    else:
        yield Import(module, (module.rsplit(".", 1)[-1],), "", _line(node))


def _c_sharp(node: Node) -> Iterator[Import]:
    target = next(
        (
            c
            for c in node.named_children
            if c.type in ("qualified_name", "identifier", "generic_name")
            and c != node.child_by_field_name("name")
        ),
        None,
    )
    alias = _text(node.child_by_field_name("name"))
    yield Import(_text(target), (), alias, _line(node))


def _rust(node: Node) -> Iterator[Import]:
    line = _line(node)
    if node.type == "mod_item":
        yield Import("mod " + _text(node.child_by_field_name("name")), (), "", line)
        return
    by_module: dict[str, list[tuple[str, str]]] = {}
    for path, alias in _rust_tree(node.child_by_field_name("argument"), ""):
        module, _, leaf = path.rpartition("::")
        by_module.setdefault(module, []).append((leaf, alias))
    for module, pairs in by_module.items():
        if module:
            yield from _grouped(module, pairs, line)
        else:
            for leaf, alias in pairs:
                yield Import(leaf, (), alias, line)


def _rust_tree(node: Node | None, prefix: str) -> Iterator[tuple[str, str]]:
    if node is None:
        return
    join = (prefix + "::") if prefix else ""
    if node.type == "use_as_clause":
        yield (
            join + _text(node.child_by_field_name("path")),
            _text(node.child_by_field_name("alias")),
        )
    elif node.type == "use_wildcard":
        inner = _text(node).removesuffix("*").removesuffix("::")
        yield join + (inner + "::*" if inner else "*"), ""
    elif node.type == "scoped_use_list":
        path = _text(node.child_by_field_name("path"))
        items = node.child_by_field_name("list")
        for child in items.named_children if items is not None else ():
            yield from _rust_tree(child, join + path if path else prefix)
    elif node.type == "use_list":
        for child in node.named_children:
            yield from _rust_tree(child, prefix)
    else:
        yield join + _text(node), ""


def _c(node: Node) -> Iterator[Import]:
    yield Import(_string_value(node.child_by_field_name("path")), (), "", _line(node))


def ruby_require(string_node: Node) -> Import:
    """``require "x"`` / ``require_relative "x"`` (made ``./x``) / ``load "x"``."""
    call = string_node.parent.parent if string_node.parent else None
    method = _text(call.child_by_field_name("method")) if call is not None else ""
    module = _string_value(string_node)
    if method == "require_relative" and not module.startswith((".", "/")):
        module = "./" + module
    return Import(module, (), "", _line(string_node))


def _php(node: Node) -> Iterator[Import]:
    line = _line(node)
    if node.type != "namespace_use_declaration":
        strings = [c for c in _walk(node) if c.type in ("string", "encapsed_string")]
        if strings:
            module = _string_value(strings[-1])
            if module.startswith("/") and ("__DIR__" in _text(node) or "__FILE__" in _text(node)):
                module = "." + module
            yield Import(module, (), "", line)
        return
    prefix = ""
    group = node.child_by_field_name("body")
    if group is not None:
        prefix = next((_text(c) for c in node.named_children if c.type == "namespace_name"), "")
    clauses = group.named_children if group is not None else node.named_children
    for clause in clauses:
        if clause.type != "namespace_use_clause":
            continue
        target = next(
            (
                c
                for c in clause.named_children
                if c.type in ("qualified_name", "name", "namespace_name")
            ),
            None,
        )
        full = _text(target).lstrip("\\")
        if prefix:
            full = prefix.strip("\\") + "\\" + full
        alias = _text(clause.child_by_field_name("alias"))
        yield Import(full, (full.rsplit("\\", 1)[-1],), alias, line)


def _walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.named_children:
        yield from _walk(child)


READERS: dict[str, Callable[[Node], Iterator[Import]]] = {
    "python": _python,
    "javascript": _js,
    "typescript": _js,
    "tsx": _js,
    "go": _go,
    "java": _java,
    "c_sharp": _c_sharp,
    "rust": _rust,
    "c": _c,
    "cpp": _c,
    "php": _php,
}

#: Readers for ``@require`` captures (string literal of an import-like call).
REQUIRE_READERS: dict[str, Callable[[Node], Import]] = {
    "javascript": js_require,
    "typescript": js_require,
    "tsx": js_require,
    "ruby": ruby_require,
}
