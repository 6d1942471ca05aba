"""Find the definitions of a syntax tree: the generic walker over a
:class:`~codecite.chunking.languages.LanguageSpec`.

The walk visits containers (the root, namespaces, class bodies) and classifies
each child: a function, a class-like (walked again for its members), a
namespace (walked with a longer qualname prefix), a group (walked as if its
children were the container's) or a plain statement. Function bodies are not
entered: nested functions and classes stay inside their parent.

Rows are 0-based here; :mod:`codecite.chunking.treesitter` turns them into lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tree_sitter import Node

from .languages import LanguageSpec
from .names import (
    attached_docstring,
    clean_string,
    header,
    name_parts,
    python_docstring,
    receiver_type,
    split_name,
)


def last_row(node: Node) -> int:
    """Last row holding text of a node (a node ending with its newline ends before it)."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return end.row - 1
    return end.row


@dataclass(frozen=True)
class Scope:
    """Where the walk is: qualname parts and the headers of the enclosing containers."""

    parts: tuple[str, ...] = ()
    headers: tuple[str, ...] = ()
    in_class: bool = False
    #: Keyword put before class-likes taken out of a group (Go ``type``).
    group_keyword: str = ""
    #: Walking a JavaScript object literal: members are functions, not methods.
    in_object: bool = False

    def enter(self, parts: list[str], header: str, *, in_class: bool) -> Scope:
        return Scope(self.parts + tuple(parts), (*self.headers, header), in_class)


@dataclass
class Definition:
    """A function, method or class found in the tree."""

    kind: str
    node: Node
    outer: Node
    start_row: int
    end_row: int
    name: str
    qualname: str
    parent: str
    headers: tuple[str, ...]
    body: Node | None
    signature: str
    docstring: str
    members: list[Definition] = field(default_factory=list)
    group_keyword: str = ""
    #: A method defined outside its class body (Go receiver, C++ ``A::f``, JS prototype).
    detached: bool = False


@dataclass
class FileSyntax:
    """What the walk found in one file."""

    definitions: list[Definition] = field(default_factory=list)
    imports: list[Node] = field(default_factory=list)
    statements: list[Node] = field(default_factory=list)
    errors: list[Node] = field(default_factory=list)


class Walker:
    """Walks one tree with one language spec."""

    def __init__(self, spec: LanguageSpec, source: bytes, module: str = "") -> None:
        self.spec = spec
        self.source = source
        #: The file's name without its extension: a CommonJS module's object of
        #: functions (``module.exports = {...}``) is named by it.
        self.module = module
        self.found = FileSyntax()
        self._import_re = re.compile(spec.import_pattern) if spec.import_pattern else None

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    # -- containers ---------------------------------------------------------------

    def walk(self, root: Node) -> FileSyntax:
        if root.type == "ERROR":
            self.found.errors.append(root)
        else:
            self.container(root.children, Scope(), self.found.definitions)
        return self.found

    def container(self, children: list[Node], scope: Scope, out: list[Definition]) -> None:
        named = [c for c in children if c.is_named]
        for index in range(len(named)):
            scope = self._child(named, index, scope, out)

    def _child(self, named: list[Node], index: int, scope: Scope, out: list[Definition]) -> Scope:
        """Classify one child of a container; returns the scope for the next siblings."""
        spec, child = self.spec, named[index]
        kind = child.type
        if kind == "ERROR" and not scope.in_class:
            self.found.errors.append(child)
        elif kind in spec.file_namespaces and child.child_by_field_name(spec.body_field) is None:
            self._statement(child, scope)
            return self._enter_namespace(child, scope)
        elif (namespace := self._namespace(child)) is not None:
            body = namespace.child_by_field_name(spec.body_field)
            assert body is not None
            self.container(body.children, self._enter_namespace(namespace, scope), out)
        elif kind in spec.groups and not self._single_spec_group(child):
            grouped = replace(scope, group_keyword=spec.group_keyword)
            self.container(self._members(child), grouped, out)
        elif (obj := self._object_namespace(child, scope)) is not None:
            self._statement(child, scope)
            inner = replace(scope.enter([obj[0]], obj[1], in_class=False), in_object=True)
            self.container(obj[2].children, inner, out)
        else:
            definition = self.definition(named, index, scope)
            if definition is None and not (scope.in_class or scope.in_object):
                definition = self._constant(named, index, scope)
            if definition is not None:
                out.append(definition)
            elif kind not in spec.comments:
                self._statement(child, scope)
        return scope

    def _constant(self, named: list[Node], index: int, scope: Scope) -> Definition | None:
        """A top-level declaration of one name that says what it is: a doc comment
        above it (Sphinx's ``#:`` too), a Python attribute docstring below it, or a
        comment on its line (``const defaultMultipartMemory = 32 << 20 // 32 MB``). A
        module of documented settings is then one chunk a setting, each with its words
        (``DEFAULT_RESULT_TTL = 500`` "to keep job results"), not one chunk of all."""
        outer = named[index]
        node = self.unwrap(outer)
        if node.type not in self.spec.constants or self._is_import(node):
            return None
        name = self._constant_name(node)
        if name is None:
            return None
        start, comments = self.leading(named, index, name)
        end = last_row(outer)
        doc = attached_docstring(comments, self.text, self.spec.name) if comments else ""
        doc = _SPHINX_MARK.sub("", doc)  # Sphinx's "#:" leaves a ":"
        after = named[index + 1] if index + 1 < len(named) else None
        if after is not None and self.spec.python_docstrings and after.start_point.row == end + 1:
            string = _lone_string(after)
            if string is not None:
                doc, end = doc or clean_string(self.text(string)), last_row(after)
        elif after is not None and after.type in self.spec.comments and _is_trailing(after):
            doc = doc or attached_docstring([after], self.text, self.spec.name)
        if not doc:
            return None
        qual = [*scope.parts, name]
        return Definition(
            kind="constant",
            node=node,
            outer=outer,
            start_row=start,
            end_row=end,
            name=name,
            qualname=".".join(qual),
            parent=".".join(scope.parts),
            headers=scope.headers,
            body=None,
            signature=header(self.spec, self.source, node, None),
            docstring=doc,
        )

    def _constant_name(self, node: Node) -> str | None:
        """The one name a declaration declares (None: several, or a pattern)."""
        if node.type == "expression_statement":  # Python: NAME = value, NAME: T = value
            inner = node.named_children
            if len(inner) != 1 or inner[0].type not in self.spec.declarators:
                return None
            target = inner[0].child_by_field_name("left")
            value = inner[0].child_by_field_name("right")
        elif self.spec.declarators:
            found = [c for c in node.named_children if c.type in self.spec.declarators]
            if len(found) != 1:
                return None
            target = found[0].child_by_field_name("name")
            value = found[0].child_by_field_name("value")
        else:
            target, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if target is None or target.type not in ("identifier", "name") or not _a_value(value):
            return None
        return self.text(target)

    def _namespace(self, node: Node) -> Node | None:
        """The namespace with a body that ``node`` is or wraps (``export namespace X {}``)."""
        inner = self.unwrap(node)
        if inner.type in self.spec.namespaces and inner.child_by_field_name(self.spec.body_field):
            return inner
        return None

    def _members(self, node: Node) -> list[Node]:
        body = node.child_by_field_name(self.spec.body_field)
        return list((body or node).children)

    def _statement(self, node: Node, scope: Scope) -> None:
        if scope.in_class or node.type in self.spec.ignored:
            return
        self.found.statements.append(node)
        if self._is_import(node):
            self.found.imports.append(node)

    def _is_import(self, node: Node) -> bool:
        """An import statement, or one its text marks as one (``const x = require(...)``)."""
        return node.type in self.spec.imports or bool(
            self._import_re is not None and self._import_re.match(self.text(node))
        )

    def _enter_namespace(self, node: Node, scope: Scope) -> Scope:
        name = node.child_by_field_name("name")
        parts = split_name(self.text(name)) if name is not None else []
        head = header(self.spec, self.source, node, node.child_by_field_name("body"))
        return scope.enter(parts, head, in_class=False)

    def _single_spec_group(self, node: Node) -> bool:
        """A Go ``type X struct {...}``: the group is the class-like's wrapper."""
        if not self.spec.group_keyword:
            return False
        inner = [c for c in node.named_children if c.type not in self.spec.comments]
        return len(inner) == 1 and self._is_class(inner[0])

    # -- definitions ----------------------------------------------------------------

    def unwrap(self, node: Node) -> Node:
        """The definition inside wrappers (decorators, export, template, Go group, typedef)."""
        spec = self.spec
        while node.type in spec.wrappers:
            inner = (
                node.child_by_field_name("definition")
                or node.child_by_field_name("declaration")
                or node.child_by_field_name("value")
            )
            if inner is None:
                rest = [c for c in node.named_children if c.type not in spec.attributes]
                rest = [c for c in rest if c.type not in spec.comments]
                inner = rest[-1] if rest else None
            if inner is None:
                break
            node = inner
        if node.type in spec.groups and self._single_spec_group(node):
            node = next(c for c in node.named_children if self._is_class(c))
        exported = self._exported(node)  # module.exports = class Application {...}
        if exported is not None and exported.type in spec.classes:
            return exported
        if node.type in spec.type_wrappers:
            inner_type = node.child_by_field_name("type")
            if inner_type is not None and self._is_class(inner_type):
                return inner_type
        return node

    def _is_class(self, node: Node) -> bool:
        spec = self.spec
        if node.type not in spec.classes:
            return False
        condition = spec.class_conditions.get(node.type)
        if condition is not None:
            child = node.child_by_field_name(condition[0])
            return child is not None and child.type in condition[1]
        return not spec.class_needs_body or node.child_by_field_name("body") is not None

    def _function_value(self, node: Node) -> tuple[list[str], Node] | None:
        """JavaScript: (name parts, function node) for a function held by a variable,
        a class field, an object property or an assignment."""
        spec = self.spec
        if not spec.function_values:
            return None
        if node.type in spec.variable_declarations:
            declarators = [c for c in node.named_children if c.type == "variable_declarator"]
            if len(declarators) != 1:
                return None
            name, value = declarators[0].child_by_field_name("name"), self._value(declarators[0])
        elif node.type in spec.field_definitions:
            name = node.child_by_field_name("property") or node.child_by_field_name("name")
            value = self._value(node)
        elif node.type == "pair":
            name, value = node.child_by_field_name("key"), self._value(node)
        elif node.type == "expression_statement" and node.named_child_count == 1:
            assign = node.named_children[0]
            if assign.type == "call_expression":
                return self._defined_getter(assign)
            if assign.type != "assignment_expression":
                return None
            name, value = assign.child_by_field_name("left"), assign.child_by_field_name("right")
            # ``res.set = res.header = function header(field, val) {...}``: the first name
            while value is not None and value.type == "assignment_expression":
                value = value.child_by_field_name("right")
        else:
            return None
        if name is None or value is None or value.type not in spec.function_values:
            return None
        if name.type not in (
            "identifier",
            "property_identifier",
            "member_expression",
            "private_property_identifier",
            "string",
        ):
            return None
        return _js_name(self.text(name)), value

    def _defined_getter(self, call: Node) -> tuple[list[str], Node] | None:
        """``defineGetter(req, 'subdomains', function subdomains() {...})``,
        ``Object.defineProperty(obj, 'name', {get: function () {...}})``: (``req``,
        ``subdomains``) and the getter, a property defined by a function."""
        callee, args = call.child_by_field_name("function"), call.child_by_field_name("arguments")
        if callee is None or args is None or not _DEFINES.search(self.text(callee)):
            return None
        values = [c for c in args.named_children if c.type not in self.spec.comments]
        if len(values) != 3 or values[1].type != "string":
            return None
        owner, getter = values[0], values[2]
        if getter.type == "object":  # {get: function () {...}}: the getter
            getter = next(
                (
                    v
                    for pair in getter.named_children
                    if pair.type == "pair"
                    and self.text(pair.child_by_field_name("key") or pair) == "get"
                    and (v := pair.child_by_field_name("value")) is not None
                ),
                getter,
            )
        if getter.type not in self.spec.function_values or owner.type not in (
            "identifier",
            "member_expression",
            "this",
        ):
            return None
        return [*split_name(self.text(owner)), *_js_name(self.text(values[1]))], getter

    def _value(self, node: Node) -> Node | None:
        """The value of a declarator/field/pair, looking through ``memo(() => ...)``."""
        value = node.child_by_field_name("value")
        if value is not None and value.type == "call_expression":
            args = value.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if first is not None and first.type in self.spec.function_values:
                return first
        return value

    def _object_namespace(self, node: Node, scope: Scope) -> tuple[str, str, Node] | None:
        """JavaScript ``const api = { f() {...}, g: () => ... }`` at module level, also
        ``const proto = module.exports = {...}``, and ``module.exports = {...}`` (named
        by the module): (name, header, object node) when the object holds functions."""
        if scope.in_class or scope.in_object or not self.spec.variable_declarations:
            return None
        inner = self.unwrap(node)
        exported = self._exported(inner)
        value: Node | None
        if exported is not None:
            name_text, value = self.module or "exports", exported
        elif inner.type in self.spec.variable_declarations:
            declarators = [c for c in inner.named_children if c.type == "variable_declarator"]
            if len(declarators) != 1:
                return None
            name = declarators[0].child_by_field_name("name")
            value = _assigned(declarators[0].child_by_field_name("value"))
            if name is None or name.type != "identifier":
                return None
            name_text = self.text(name)
        else:
            return None
        if value is None or value.type != "object":
            return None
        if not any(self._is_function(c) for c in value.named_children):
            return None
        header = self.text(inner).split("{", 1)[0] + "{"
        return name_text, " ".join(header.split()), value

    def _exported(self, node: Node) -> Node | None:
        """JavaScript: the value a statement ``module.exports = ...`` (or ``exports =``,
        ``exports = module.exports = ...``) gives the module; None for other nodes."""
        if not self.spec.function_values or node.type != "expression_statement":
            return None
        if node.named_child_count != 1 or node.named_children[0].type != "assignment_expression":
            return None
        assign = node.named_children[0]
        left = assign.child_by_field_name("left")
        if left is None or self.text(left) not in ("module.exports", "exports"):
            return None
        return _assigned(assign.child_by_field_name("right"))

    def _is_function(self, node: Node) -> bool:
        if node.type in self.spec.functions:
            return True
        return self._function_value(node) is not None

    def definition(self, named: list[Node], index: int, scope: Scope) -> Definition | None:
        outer = named[index]
        node = self.unwrap(outer)
        if node.type in self.spec.functions:
            return self._function(named, index, node, node, scope)
        if self._is_class(node):
            return self._class(named, index, node, scope)
        value = self._function_value(node)
        if value is not None:
            return self._function(named, index, node, value[1], scope, value[0])
        if node is not outer and node.type in self.spec.function_values:  # export default () =>
            parts = name_parts(node, self.spec, self.text) or ["default"]
            return self._function(named, index, node, node, scope, parts)
        return None

    def _function(
        self,
        named: list[Node],
        index: int,
        node: Node,
        func: Node,
        scope: Scope,
        js_parts: list[str] | None = None,
    ) -> Definition | None:
        spec = self.spec
        body = func.child_by_field_name(spec.body_field)
        if body is None and spec.body_required:
            return None
        parts = js_parts if js_parts is not None else self._function_name(node)
        kind = "method" if scope.in_class or len(parts) > 1 else "function"
        if js_parts is not None and not scope.in_class:
            kind = "method" if "prototype" in parts else "function"
            parts = [p for p in parts if p != "prototype"]
        if scope.in_object:
            kind = "function"
        definition = self._make(kind, named, index, node, body, scope, parts)
        definition.detached = kind == "method" and not scope.in_class
        return definition

    def _function_name(self, node: Node) -> list[str]:
        parts = name_parts(node, self.spec, self.text)
        receiver = receiver_type(node, self.text)  # Go: func (o *Order) Cancel()
        if receiver:
            parts = [receiver, *parts]
        owner = node.child_by_field_name("object")  # Ruby: def Billing.rate
        if owner is not None and owner.type != "self":
            parts = [*split_name(self.text(owner)), *parts]
        return parts or ["<anonymous>"]

    def _class(self, named: list[Node], index: int, node: Node, scope: Scope) -> Definition:
        outer = named[index]
        parts = name_parts(node, self.spec, self.text)
        if outer.type in self.spec.type_wrappers and (outer.type == "type_definition" or not parts):
            parts = name_parts(outer, self.spec, self.text)
        if self.spec.name_fields.get(node.type):
            parts = parts[-1:]
        if not parts and outer is not node and node.type == "class":
            # export default class extends Base {...}: "default", as a function;
            # module.exports = class {...}: the module's name
            exported = outer.type == "expression_statement"
            parts = [(self.module if exported else "") or "default"]
        body = node.child_by_field_name(self.spec.body_field)
        definition = self._make("class", named, index, node, body, scope, parts or ["<anonymous>"])
        if scope.group_keyword and outer is node:
            definition.group_keyword = scope.group_keyword
            definition.signature = scope.group_keyword + definition.signature
        elif self.spec.group_keyword and outer.type in self.spec.groups:
            definition.signature = self.spec.group_keyword + definition.signature
        elif outer.type in self.spec.type_wrappers and body is not None:
            # typedef struct { ... } name;  /  struct point { ... } origin;
            head = header(self.spec, self.source, outer, body)
            tail = self.source[body.end_byte : outer.end_byte].decode("utf-8", "replace")
            tail = tail.strip().rstrip(";").strip()
            definition.signature = f"{head} {{ ... }} {' '.join(tail.split())}" if tail else head
        if body is not None:
            inner = scope.enter(parts, definition.signature, in_class=True)
            self.container(self._members(node), inner, definition.members)
        return definition

    def _make(
        self,
        kind: str,
        named: list[Node],
        index: int,
        node: Node,
        body: Node | None,
        scope: Scope,
        parts: list[str],
    ) -> Definition:
        outer = named[index]
        start_row, comments = self.leading(named, index, parts[-1])
        qual = [*scope.parts, *parts]
        docstring = python_docstring(body, self.text) if self.spec.python_docstrings else ""
        return Definition(
            kind=kind,
            node=node,
            outer=outer,
            start_row=start_row,
            end_row=last_row(outer),
            name=parts[-1],
            qualname=".".join(qual),
            parent=".".join(qual[:-1]),
            headers=scope.headers,
            body=body,
            signature=header(self.spec, self.source, node, body),
            docstring=docstring or attached_docstring(comments, self.text, self.spec.name),
        )

    # -- pieces -----------------------------------------------------------------------

    def leading(self, named: list[Node], index: int, name: str) -> tuple[int, list[Node]]:
        """First row of a definition with its attached comments, attributes and
        overload signatures; and the attached comments."""
        spec = self.spec
        start = named[index].start_point.row
        comments: list[Node] = []
        for position in range(index - 1, -1, -1):
            sibling = named[position]
            if last_row(sibling) < start - 1 and not (
                position == index - 1 and self._doc_block_above(sibling, start)
            ):
                break
            if sibling.type in spec.attributes:
                start = sibling.start_point.row
            elif self._is_overload(sibling, name):
                start, comments = sibling.start_point.row, []
            elif sibling.type in spec.comments and not _is_trailing(sibling):
                start = sibling.start_point.row
                comments.insert(0, sibling)
            else:
                break
        return start, comments

    def _doc_block_above(self, comment: Node, row: int) -> bool:
        """Whether ``comment`` is a ``/** ... */`` doc block one blank line above the
        definition at ``row`` (JSDoc and Javadoc are often written so: express's
        ``res.format``), not a file's header comment (the file's first node)."""
        if comment.type not in self.spec.comments or last_row(comment) != row - 2:
            return False
        parent = comment.parent
        if comment.prev_named_sibling is None and parent is not None and parent.parent is None:
            return False
        return self.text(comment).startswith("/**")

    def _is_overload(self, node: Node, name: str) -> bool:
        inner = self.unwrap(node)
        if inner.type not in self.spec.overloads:
            return False
        parts = name_parts(inner, self.spec, self.text)
        return bool(parts) and parts[-1] == name


def _a_value(value: Node | None) -> bool:
    """Whether a declaration gives its name a value of its own: not none, not a chained
    assignment (``var app = exports = module.exports = {}``), not an empty object or
    list filled later (a namespace)."""
    if value is None or value.type in ("assignment", "assignment_expression"):
        return False
    empty = value.type in ("object", "array", "dictionary", "list") and not value.named_children
    return not empty


_SPHINX_MARK = re.compile(r"^:[ \t]?", re.M)


def _lone_string(node: Node) -> Node | None:
    """The string a Python statement is made of (an attribute docstring), or None."""
    inner = node.named_children
    lone = node.type == "expression_statement" and len(inner) == 1
    return inner[0] if lone and inner[0].type in ("string", "concatenated_string") else None


def _is_trailing(comment: Node) -> bool:
    """A comment on the same line as the code before it belongs to that code."""
    previous = comment.prev_sibling
    return previous is not None and last_row(previous) == comment.start_point.row


#: Calls that define a property by a function (a getter).
_DEFINES = re.compile(r"(^|\.)(define\w*(Getter|Property)|__defineGetter__)$")


def _assigned(value: Node | None) -> Node | None:
    """The value at the end of a chain of assignments (``a = b = {...}``: the object)."""
    while value is not None and value.type == "assignment_expression":
        value = value.child_by_field_name("right")
    return value


def _js_name(text: str) -> list[str]:
    parts = split_name(text.strip("'\"`"))
    if parts[:2] == ["module", "exports"]:
        parts = parts[2:]
    elif parts[:1] == ["exports"]:
        parts = parts[1:]
    return parts or ["default"]
