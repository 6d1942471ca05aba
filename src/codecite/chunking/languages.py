"""Per-language knowledge for the tree-sitter chunker, kept as data.

Each :class:`LanguageSpec` names the node types of one grammar that the generic
walker (:mod:`codecite.chunking.syntax`) needs: what is a function, what is a
class-like container, what only prefixes qualified names (namespaces), which
nodes wrap a definition (decorators, ``export``, ``template<...>``), which
sibling nodes belong to the next definition (attributes, decorators), comments,
imports. The node types were read from the real parsers (``tree.root_node``),
not guessed; the fixtures in ``tests/fixtures/languages`` exercise them.

Class-like kinds per language (each gets one ``class`` chunk with a skeleton):

- python: ``class``; ruby: ``class`` and ``module``
- javascript: ``class``; typescript/tsx: ``class``, ``abstract class``,
  ``interface``, ``enum``
- go: ``type X struct`` / ``type X interface``
- java: class, interface, enum, record, ``@interface``
- rust: struct, enum, union, trait and ``impl`` blocks (an impl's class chunk
  is named after its type: ``impl Display for Order`` is class ``Order``)
- c: struct, union, enum with a body (typedef'd or not); cpp: the same plus class
- c_sharp: class, interface, struct, record, enum
- php: class, interface, trait, enum

Namespaces (qualname prefix, no chunk of their own): C++ ``namespace`` and
``extern "C"``, C# ``namespace`` (block and file-scoped), PHP ``namespace``,
TypeScript ``namespace``/``module``, Rust ``mod { }``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace


def _fs(*names: str) -> frozenset[str]:
    return frozenset(names)


@dataclass(frozen=True)
class LanguageSpec:
    """Node types of one tree-sitter grammar, as the chunker uses them."""

    name: str
    #: Definitions with a body that become ``function``/``method`` chunks.
    functions: frozenset[str]
    #: Class-like containers: one ``class`` chunk each, members walked inside.
    classes: frozenset[str]
    #: Containers that only prefix qualnames (``namespace billing { }``).
    namespaces: frozenset[str] = frozenset()
    #: Statements that set the namespace of the following siblings (``namespace X;``).
    file_namespaces: frozenset[str] = frozenset()
    #: Nodes wrapping one definition (``decorated_definition``, ``export_statement``).
    wrappers: frozenset[str] = frozenset()
    #: Nodes whose children are walked as if they were the container's
    #: (``enum_body_declarations``, ``class << self``, ``#ifdef`` blocks, Go ``type ( ... )``).
    groups: frozenset[str] = frozenset()
    #: Sibling nodes that belong to the definition after them (``#[derive]``, ``@dec``).
    attributes: frozenset[str] = frozenset()
    #: Attribute nodes found *inside* a definition, skipped for its signature.
    inner_attributes: frozenset[str] = frozenset()
    #: Nodes holding modifiers and annotations together (Java ``modifiers``).
    modifiers: frozenset[str] = frozenset()
    comments: frozenset[str] = _fs("comment")
    #: Import-like statements shown in chunk contexts (package lines included).
    imports: frozenset[str] = frozenset()
    #: Regex on a top-level statement's text that also marks an import (``require``).
    import_pattern: str = ""
    #: Bodiless signatures that stay with the implementation that follows (overloads).
    overloads: frozenset[str] = frozenset()
    #: Field holding a definition's body.
    body_field: str = "body"
    #: Definitions without a body are declarations, not chunks (except Ruby's empty ``def``).
    body_required: bool = True
    #: Body node types replaced by :attr:`elision` in class skeletons.
    block_bodies: frozenset[str] = frozenset()
    #: Text that replaces an elided body in class skeletons.
    elision: str = "{ /* ... */ }"
    #: Line comment marker, for context labels and elided-span notes.
    comment_marker: str = "//"
    #: Per node type, the field giving its name when it is not ``name``.
    name_fields: Mapping[str, str] = field(default_factory=dict)
    #: Per node type, a (field, allowed child types) condition to count as class-like
    #: (Go ``type_spec`` is a class only when its type is a struct or interface).
    class_conditions: Mapping[str, tuple[str, frozenset[str]]] = field(default_factory=dict)
    #: A class-like without a body is only a type reference (C ``struct x *p``).
    class_needs_body: bool = False
    #: Nodes whose ``type`` child may be a class-like (C ``typedef struct {...} T;``).
    type_wrappers: frozenset[str] = frozenset()
    #: Keyword put before a class-like taken out of a group (Go ``type``).
    group_keyword: str = ""
    #: JavaScript family: functions held by variables, fields, assignments, objects.
    variable_declarations: frozenset[str] = frozenset()
    function_values: frozenset[str] = frozenset()
    field_definitions: frozenset[str] = frozenset()
    #: Python: the docstring is the first string statement of the body.
    python_docstrings: bool = False
    #: Top-level nodes that are not statements (``<?php``).
    ignored: frozenset[str] = frozenset()
    #: Top-level declarations of one name (``const X = 5``): with a doc comment (or a
    #: Python attribute docstring, or a comment on its line) a ``constant`` chunk.
    constants: frozenset[str] = frozenset()
    #: The nodes inside such a declaration that name it (a JavaScript declarator).
    declarators: frozenset[str] = frozenset()


_JS_FUNCTIONS = _fs("function_declaration", "generator_function_declaration", "method_definition")
_JS_VALUES = _fs("arrow_function", "function_expression", "function", "generator_function")
_C_CLASSES = _fs("struct_specifier", "union_specifier", "enum_specifier")
_C_GROUPS = _fs("preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "preproc_elifdef")

PYTHON = LanguageSpec(
    name="python",
    functions=_fs("function_definition"),
    classes=_fs("class_definition"),
    wrappers=_fs("decorated_definition"),
    imports=_fs("import_statement", "import_from_statement", "future_import_statement"),
    block_bodies=_fs("block"),
    elision="...",
    comment_marker="#",
    python_docstrings=True,
    constants=_fs("expression_statement"),
    declarators=_fs("assignment"),
)

JAVASCRIPT = LanguageSpec(
    name="javascript",
    functions=_JS_FUNCTIONS,
    # "class": a class expression, a definition where a module exports it by name
    # (``module.exports = class Application extends Emitter {...}``)
    classes=_fs("class_declaration", "class"),
    wrappers=_fs("export_statement"),
    attributes=_fs("decorator"),
    inner_attributes=_fs("decorator"),
    imports=_fs("import_statement"),
    import_pattern=r"^(const|let|var)\s[^=]*=\s*require\(",
    block_bodies=_fs("statement_block", "class_body"),
    variable_declarations=_fs("lexical_declaration", "variable_declaration"),
    function_values=_JS_VALUES,
    field_definitions=_fs("field_definition"),
    constants=_fs("lexical_declaration", "variable_declaration"),
    declarators=_fs("variable_declarator"),
)

TYPESCRIPT = LanguageSpec(
    name="typescript",
    functions=_JS_FUNCTIONS,
    classes=_fs(
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "enum_declaration",
    ),
    namespaces=_fs("internal_module", "module"),
    wrappers=_fs("export_statement", "ambient_declaration"),
    attributes=_fs("decorator"),
    inner_attributes=_fs("decorator"),
    imports=_fs("import_statement", "import_alias"),
    import_pattern=r"^(const|let|var)\s[^=]*=\s*require\(",
    overloads=_fs("function_signature", "method_signature"),
    block_bodies=_fs("statement_block", "class_body", "enum_body", "interface_body"),
    variable_declarations=_fs("lexical_declaration", "variable_declaration"),
    function_values=_JS_VALUES,
    field_definitions=_fs("public_field_definition", "field_definition"),
    constants=_fs("lexical_declaration", "variable_declaration"),
    declarators=_fs("variable_declarator"),
)

TSX = replace(TYPESCRIPT, name="tsx")

GO = LanguageSpec(
    name="go",
    functions=_fs("function_declaration", "method_declaration"),
    classes=_fs("type_spec"),
    groups=_fs("type_declaration"),
    imports=_fs("package_clause", "import_declaration"),
    block_bodies=_fs("block"),
    class_conditions={"type_spec": ("type", _fs("struct_type", "interface_type"))},
    group_keyword="type ",
    constants=_fs("const_declaration", "var_declaration"),
    declarators=_fs("const_spec", "var_spec"),
)

JAVA = LanguageSpec(
    name="java",
    functions=_fs(
        "method_declaration", "constructor_declaration", "compact_constructor_declaration"
    ),
    classes=_fs(
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    ),
    groups=_fs("enum_body_declarations"),
    inner_attributes=_fs("marker_annotation", "annotation"),
    modifiers=_fs("modifiers"),
    comments=_fs("line_comment", "block_comment"),
    imports=_fs("package_declaration", "import_declaration"),
    block_bodies=_fs(
        "block",
        "constructor_body",
        "class_body",
        "interface_body",
        "enum_body",
        "annotation_type_body",
    ),
)

RUST = LanguageSpec(
    name="rust",
    functions=_fs("function_item"),
    classes=_fs("struct_item", "enum_item", "union_item", "trait_item", "impl_item"),
    namespaces=_fs("mod_item"),
    attributes=_fs("attribute_item"),
    comments=_fs("line_comment", "block_comment"),
    imports=_fs("use_declaration", "extern_crate_declaration"),
    block_bodies=_fs("block", "declaration_list", "field_declaration_list", "enum_variant_list"),
    name_fields={"impl_item": "type"},
    constants=_fs("const_item", "static_item"),
)

C = LanguageSpec(
    name="c",
    functions=_fs("function_definition"),
    classes=_C_CLASSES,
    groups=_C_GROUPS,
    class_needs_body=True,
    imports=_fs("preproc_include"),
    block_bodies=_fs("compound_statement", "field_declaration_list", "enumerator_list"),
    type_wrappers=_fs("type_definition", "declaration", "field_declaration"),
)

CPP = LanguageSpec(
    name="cpp",
    functions=_fs("function_definition"),
    classes=_C_CLASSES | {"class_specifier"},
    namespaces=_fs("namespace_definition", "linkage_specification"),
    wrappers=_fs("template_declaration"),
    groups=_C_GROUPS,
    class_needs_body=True,
    imports=_fs("preproc_include", "using_declaration", "alias_declaration"),
    block_bodies=_fs("compound_statement", "field_declaration_list", "enumerator_list"),
    type_wrappers=_fs("type_definition", "declaration", "field_declaration"),
)

C_SHARP = LanguageSpec(
    name="c_sharp",
    functions=_fs(
        "method_declaration",
        "constructor_declaration",
        "destructor_declaration",
        "operator_declaration",
        "conversion_operator_declaration",
    ),
    classes=_fs(
        "class_declaration",
        "interface_declaration",
        "struct_declaration",
        "record_declaration",
        "record_struct_declaration",
        "enum_declaration",
    ),
    namespaces=_fs("namespace_declaration"),
    file_namespaces=_fs("file_scoped_namespace_declaration"),
    inner_attributes=_fs("attribute_list"),
    imports=_fs("using_directive"),
    block_bodies=_fs("block", "declaration_list", "enum_member_declaration_list"),
)

RUBY = LanguageSpec(
    name="ruby",
    functions=_fs("method", "singleton_method"),
    classes=_fs("class", "module"),
    groups=_fs("singleton_class"),
    import_pattern=r"^(require|require_relative|load|autoload)\b",
    body_required=False,
    block_bodies=_fs("body_statement"),
    elision="# ...",
    comment_marker="#",
)

PHP = LanguageSpec(
    name="php",
    functions=_fs("function_definition", "method_declaration"),
    classes=_fs(
        "class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"
    ),
    namespaces=_fs("namespace_definition"),
    file_namespaces=_fs("namespace_definition"),
    inner_attributes=_fs("attribute_list"),
    imports=_fs("namespace_use_declaration"),
    import_pattern=r"^(require|require_once|include|include_once)\b",
    block_bodies=_fs("compound_statement", "declaration_list", "enum_declaration_list"),
    ignored=_fs("php_tag", "text_interpolation"),
)

SPECS: dict[str, LanguageSpec] = {
    spec.name: spec
    for spec in (PYTHON, JAVASCRIPT, TYPESCRIPT, TSX, GO, JAVA, RUST, C, CPP, C_SHARP, RUBY, PHP)
}


def get_spec(language: str) -> LanguageSpec | None:
    """The spec of a code language, or None for text languages."""
    return SPECS.get(language)
