"""Per-language tree-sitter queries and node tables used by the graph extractor.

Kept as data, in the spirit of Aider's ``queries/*-tags.scm``. Capture names:

- ``@call``   a callee expression (or a call node that holds its own name field);
  split into (name, qualifier) with :data:`NAME_FIELDS`.
- ``@base``   a base class / implemented interface / embedded type / mixin expression.
- ``@impl``   a Rust ``impl Trait for Type`` item (trait and type are read from it).
- ``@import`` an import statement, handed to the language's import reader.
- ``@require`` the string literal of a ``require("x")`` / ``import("x")`` style call.

Captures whose name starts with ``_`` only serve predicates.
"""

from __future__ import annotations

PYTHON = """
(call function: (_) @call)
(class_definition superclasses: (argument_list [(identifier) (attribute)] @base))
[(import_statement) (import_from_statement)] @import
"""

_JS_COMMON = """
(call_expression function: (_) @call)
(new_expression constructor: (_) @call)
[(import_statement) (export_statement source: (_))] @import
(call_expression
  function: (identifier) @_req (#eq? @_req "require")
  arguments: (arguments . (string) @require))
(call_expression function: (import) arguments: (arguments . (string) @require))
"""

JAVASCRIPT = (
    _JS_COMMON
    + """
(class_heritage (_) @base)
"""
)

TYPESCRIPT = (
    _JS_COMMON
    + """
(extends_clause value: (_) @base)
(implements_clause (_) @base)
(extends_type_clause type: (_) @base)
"""
)

GO = """
(call_expression function: (_) @call)
(field_declaration_list (field_declaration !name type: (_) @base))
(interface_type (type_elem (_) @base))
(import_spec) @import
"""

JAVA = """
(method_invocation) @call
(object_creation_expression type: (_) @call)
(superclass (_) @base)
(super_interfaces (type_list (_) @base))
(extends_interfaces (type_list (_) @base))
(import_declaration) @import
"""

C_SHARP = """
(invocation_expression function: (_) @call)
(object_creation_expression type: (_) @call)
(base_list (_) @base)
(using_directive) @import
"""

RUST = """
(call_expression function: (_) @call)
(impl_item trait: (_)) @impl
(trait_item bounds: (trait_bounds (_) @base))
[(use_declaration) (mod_item !body)] @import
"""

C = """
(call_expression function: (_) @call)
(preproc_include) @import
"""

CPP = """
(call_expression function: (_) @call)
(new_expression type: (_) @call)
(base_class_clause [(type_identifier) (qualified_identifier) (template_type)] @base)
(preproc_include) @import
"""

RUBY = """
(call method: (_)) @call
(superclass (_) @base)
(call
  method: (identifier) @_mixin (#any-of? @_mixin "include" "extend" "prepend")
  !receiver
  arguments: (argument_list [(constant) (scope_resolution)] @base))
(call
  method: (identifier) @_req (#any-of? @_req "require" "require_relative" "load")
  !receiver
  arguments: (argument_list . (string) @require))
"""

PHP = """
(function_call_expression function: (_) @call)
[(member_call_expression) (nullsafe_member_call_expression) (scoped_call_expression)] @call
(object_creation_expression [(name) (qualified_name)] @call)
(base_clause (_) @base)
(class_interface_clause (_) @base)
(declaration_list (use_declaration [(name) (qualified_name)] @base))
(namespace_use_declaration) @import
[(include_expression) (include_once_expression)
 (require_expression) (require_once_expression)] @import
"""

QUERIES: dict[str, str] = {
    "python": PYTHON,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "tsx": TYPESCRIPT,
    "go": GO,
    "java": JAVA,
    "c_sharp": C_SHARP,
    "rust": RUST,
    "c": C,
    "cpp": CPP,
    "ruby": RUBY,
    "php": PHP,
}

#: Leaf node types that are a name on their own.
NAME_TYPES = frozenset(
    {
        "identifier",
        "property_identifier",
        "field_identifier",
        "type_identifier",
        "constant",
        "name",
        "namespace_identifier",
        "private_property_identifier",
        "package_identifier",
        "shorthand_property_identifier",
        "simple_identifier",
    }
)

#: How to find the name inside a composite callee / type node: a field name, or
#: ``"first"`` / ``"last"`` named child, tried in order.
NAME_FIELDS: dict[str, tuple[str, ...]] = {
    "attribute": ("attribute",),
    "member_expression": ("property",),
    "selector_expression": ("field",),
    "field_expression": ("field",),
    "scoped_identifier": ("name",),
    "qualified_identifier": ("name",),
    "member_access_expression": ("name",),
    "qualified_name": ("name", "last"),
    "generic_name": ("first",),
    "template_function": ("name",),
    "template_type": ("name",),
    "generic_function": ("function",),
    "generic_type": ("name", "type", "first"),
    "index_expression": ("operand",),
    "scope_resolution": ("name",),
    "scoped_type_identifier": ("last",),
    "nested_type_identifier": ("name",),
    "qualified_type": ("name",),
    "call": ("method",),
    "method_invocation": ("name",),
    "member_call_expression": ("name",),
    "nullsafe_member_call_expression": ("name",),
    "scoped_call_expression": ("name",),
    "function_call_expression": ("function",),
    "pointer_type": ("first",),
    "type_elem": ("first",),
}

#: Callee names that are imports, not calls, per language.
IMPORT_CALLS: dict[str, frozenset[str]] = {
    "javascript": frozenset({"require"}),
    "typescript": frozenset({"require"}),
    "tsx": frozenset({"require"}),
    "ruby": frozenset({"require", "require_relative", "load", "include", "extend", "prepend"}),
}
