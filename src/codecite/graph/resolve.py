"""Resolve references and imports into edges between chunks (docs/DESIGN.md section 4).

A reference ``qualifier.name`` made in file F resolves by the first rule that finds something:

1. ``self``/``this``-like qualifier: a method ``name`` of the enclosing class in F.
2. Qualifier is an imported module/alias (``orders.cancel``, Go ``o.New``): ``name`` defined
   in that module's files, top level preferred (one re-export hop followed).
3. Qualifier names a class, defined in F or imported (``Order.create``): its method ``name``;
   or a variable named like a class (``order.cancel`` → ``Order.cancel``), F's or imported;
   among several candidates, the class whose name the variable abbreviates (``ctx.invoke``
   → ``Context.invoke``; Go's one-letter ``c.Bind`` too: ``candidates.abbreviates``).
4. Same file: definitions of ``name`` in F.
5. Imports: ``name`` imported into F (``from .orders import cancel``), or defined in a file
   whose names are all visible (``import *``, ``#include``, C# ``using``, Ruby ``require``);
   for any other qualifier (a variable), a method ``name`` of the files F imports.
6. A unique definition of ``name`` in the repository, in the same language family only.

Names bound by imports of third-party modules (imports that resolve to no repository file:
``np.array()``, ``from requests import get``) are never resolved.

Candidates are narrowed by the qualifier (``order.x`` prefers class ``Order``), the enclosing
class, and top-level functions for unqualified calls; what stays ambiguous (definitions with
different qualnames) is not resolved. Overloads sharing a qualname all get an edge. Unqualified
calls never reach methods in languages without an implicit ``this`` (Python, JS/TS, Go, Rust, C).

Cost: building is O(D) for D definitions; each file's imports are resolved lazily, once, on
its first reference. Each reference is then a few dict lookups plus a scan of the candidates
sharing its name (global lookups are memoized per name), so 200k references against 50k
definitions take about a second.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from codecite.chunking.grammars import detect_language
from codecite.graph.candidates import NO_IMPLICIT_THIS, Cand, abbreviates, pick, qualifier_key
from codecite.graph.paths import PathIndex, resolve_module
from codecite.graph.scope import FileScope, build_scope, root
from codecite.graph.testmap import convention_pairs, family, is_test_path, is_test_source
from codecite.types import Definition, Edge, Import, Reference

#: The resolver's rules: an index whose edges an older version drew has them all drawn
#: again on its next update (2: a variable abbreviating a class, ``ctx`` → ``Context``;
#: 3: common method names in any case, Go's ``wg.Add`` no call of a unique ``Add``).
GRAPH_VERSION = 3
TARGET_KINDS = frozenset({"function", "method", "class"})
SELF_WORDS = frozenset({"self", "this", "cls", "Self", "$this", "static", "@"})
SUPER_WORDS = frozenset({"super", "super()", "base", "parent"})
#: Method names too common to link through a global lookup on an unknown receiver (in
#: any case).
COMMON_NAMES = frozenset(
    {
        "get",
        "set",
        "add",
        "append",
        "push",
        "pop",
        "map",
        "filter",
        "join",
        "split",
        "format",
        "items",
        "keys",
        "values",
        "update",
        "remove",
        "delete",
        "close",
        "open",
        "read",
        "write",
        "run",
        "start",
        "stop",
        "send",
        "call",
        "apply",
        "toString",
        "equals",
        "hashCode",
        "len",
        "size",
        "length",
        "next",
        "then",
        "catch",
        "find",
        "replace",
        "copy",
        "clear",
        "insert",
        "sort",
        "log",
        "info",
        "debug",
        "warn",
        "error",
        "print",
        "String",
        "Error",
        "new",
        "init",
        "count",
        "index",
        "extend",
        "strip",
        "lower",
        "upper",
        "encode",
        "decode",
        "match",
        "search",
        "sub",
        "setdefault",
        "discard",
    }
)


#: The same, in any case: Go and C# capitalise them (``wg.Add``, ``ts.Close``).
_COMMON_LOWER = frozenset(n.lower() for n in COMMON_NAMES)


def common_name(name: str) -> bool:
    """Whether a method name is too common to tie a call to one definition by the name
    alone (:data:`COMMON_NAMES`, in any case)."""
    return name.lower() in _COMMON_LOWER


class Resolver:
    """Definitions and imports of a repository, indexed once; resolves any refs against them.

    ``defs`` are chunks seen as definitions: function/method/class ones are targets,
    module chunks anchor ``imports`` edges (a file without one uses its first chunk).
    """

    def __init__(
        self,
        defs: Iterable[Definition],
        imports: Mapping[str, Sequence[Import]],
        *,
        languages: Mapping[str, str] | None = None,
    ) -> None:
        self._defs: dict[str, Cand] = {}
        self._by_name: dict[str, list[Cand]] = {}
        self._by_file: dict[tuple[str, str], list[Cand]] = {}
        self._by_owner: dict[tuple[str, str], list[Cand]] = {}
        self._in_file: dict[str, list[Definition]] = {}
        self._anchor: dict[str, str] = {}
        self._lang: dict[str, str] = dict(languages or {})
        for d in defs:
            self._add(d)
        self._imports = imports
        self._paths = PathIndex(set(self._in_file) | set(self._lang) | set(imports))
        self._files: dict[str, tuple[str, FileScope]] = {}
        self._modules: dict[tuple[str, str, str], list[str]] = {}
        self._global: dict[tuple[str, str, str], list[Cand]] = {}
        self._memo: dict[tuple[str, str, str, str, str], list[Cand]] = {}
        self._tests: dict[str, bool] = {}

    def _add(self, d: Definition) -> None:
        c = Cand(d, family(d.language))
        self._defs[d.chunk_id] = c
        self._lang.setdefault(d.path, d.language)
        in_file = self._in_file.setdefault(d.path, [])
        first_module = d.kind == "module" and all(x.kind != "module" for x in in_file)
        if first_module or not in_file:
            self._anchor[d.path] = d.chunk_id
        in_file.append(d)
        if d.kind not in TARGET_KINDS:
            return
        self._by_name.setdefault(d.name, []).append(c)
        self._by_file.setdefault((d.path, d.name), []).append(c)
        if c.owner:
            self._by_owner.setdefault((d.name, c.owner), []).append(c)

    # -- files ---------------------------------------------------------------------------

    def language(self, path: str) -> str:
        return self._lang.get(path) or detect_language(path)

    def anchor(self, path: str) -> str:
        """The chunk id standing for a file: its module chunk, else its first chunk."""
        return self._anchor.get(path, "")

    def module_files(self, module: str, from_path: str) -> list[str]:
        """Cached :func:`resolve_module` against the repository's paths."""
        lang = self.language(from_path)
        where = from_path if lang == "rust" else from_path.rpartition("/")[0]
        key = (lang, where, module)
        files = self._modules.get(key)
        if files is None:
            files = self._modules[key] = resolve_module(
                module, from_path=from_path, language=lang, paths=self._paths
            )
        return [f for f in files if f != from_path]

    def _file(self, path: str) -> tuple[str, FileScope]:
        info = self._files.get(path)
        if info is None:
            lang = self.language(path)
            scope = build_scope(
                self._imports.get(path, ()), lang, lambda module: self.module_files(module, path)
            )
            info = self._files[path] = (family(lang), scope)
        return info

    def scope(self, path: str) -> FileScope:
        """What ``path``'s imports bring into scope (resolved once, then cached)."""
        return self._file(path)[1]

    # -- resolution ----------------------------------------------------------------------

    def targets(self, path: str, ref: Reference) -> list[Definition]:
        """Definitions a reference made in ``path`` resolves to ([] when unresolved)."""
        src = self._defs.get(ref.chunk_id)
        cls = src.own_class if src is not None else ""
        key = (path, ref.name, ref.qualifier, cls, ref.kind)
        hits = self._memo.get(key)
        if hits is None:
            hits = self._memo[key] = self._lookup(
                path, ref.name, ref.qualifier, cls, ref.kind == "inherit"
            )
        return [c.d for c in hits if c.d.chunk_id != ref.chunk_id]

    def _lookup(self, path: str, name: str, q: str, cls: str, inherit: bool) -> list[Cand]:
        fam, scope = self._file(path)
        local = self._by_file.get((path, name), ())
        if inherit:
            local = [c for c in local if c.kind == "class"]
        plain = not q or q in SELF_WORDS or q in SUPER_WORDS
        if q in SELF_WORDS and cls:
            hits = [c for c in local if c.parent == cls]
            if hits:
                return hits
        elif q in SUPER_WORDS:
            local = [c for c in local if c.parent != cls]
        elif q:
            files = scope.modules.get(q)
            if files:
                return self._in_files(files, name, inherit)
            if scope.external and root(q) in scope.external:
                return []  # ``np.array()``, ``os.path.join()``: third-party code
            hits = self._class_members(path, scope, q, name, inherit)
            if hits:
                return hits
        if local and plain and fam in NO_IMPLICIT_THIS:
            local = [c for c in local if c.kind != "method"]
        if local:
            hits = pick(local, q, cls, plain)
            if hits:
                return hits
        hits = []
        if not q and name in scope.external:
            return []  # ``from requests import get; get(url)``
        if plain:
            hits = self._imported(scope, name, q, cls, inherit)
        elif not inherit and scope.all_files:
            hits = pick(
                [
                    c
                    for f in scope.all_files
                    for c in self._by_file.get((f, name), ())
                    if c.kind == "method"
                ],
                q,
                cls,
                plain,
            )
        return hits or self._unique(fam, name, q, plain, inherit)

    def _in_files(
        self, files: Sequence[str], name: str, inherit: bool, hop: bool = True
    ) -> list[Cand]:
        if len(files) == 1 and not inherit:  # the common case, without the generic scan
            found = self._by_file.get((files[0], name), [])
        else:
            found = [
                c
                for f in files
                for c in self._by_file.get((f, name), ())
                if not inherit or c.kind == "class"
            ]
        top = [c for c in found if not c.parent]
        if top or found:
            return top or found
        if hop:  # re-exports: ``from .orders import cancel`` in a package's __init__
            again = [f2 for f in files for _, fs in self.scope(f).names.get(name, ()) for f2 in fs]
            return self._in_files(again, name, inherit, hop=False) if again else []
        return []

    def _class_members(
        self, path: str, scope: FileScope, q: str, name: str, inherit: bool
    ) -> list[Cand]:
        """``Order.create()``: a class named like the qualifier; ``order.cancel()``: a
        method of a class named like the variable (in F, then imported, then unique)."""
        if inherit:
            return []
        key = qualifier_key(q)
        tail = q.rpartition(".")[2].rpartition("::")[2].rpartition("\\")[2]
        if tail[:1].isupper():
            classes = [c for c in self._by_file.get((path, tail), ()) if c.kind == "class"]
            classes = classes or self._imported(scope, tail, "", "", True)
            hits = [
                m
                for k in classes
                for m in self._by_file.get((k.path, name), ())
                if m.parent == k.qualname
            ]
            if hits:
                return hits
        owned = self._by_owner.get((name, key), ())
        if not owned:
            return []
        for keep in ((path,), scope.all_files):
            hits = [c for c in owned if c.path in keep]
            if hits:
                return pick(hits, q, "", False)
        return pick(owned, q, "", False)

    def _imported(self, scope: FileScope, name: str, q: str, cls: str, inherit: bool) -> list[Cand]:
        for orig, files in scope.names.get(name, ()):
            hits = self._in_files(files, name if orig == "default" else orig, inherit)
            if hits:
                return hits
        if scope.stars:
            return pick(
                [
                    c
                    for f in scope.stars
                    for c in self._by_file.get((f, name), ())
                    if not inherit or c.kind == "class"
                ],
                q,
                cls,
                not q,
            )
        return []

    def _unique(self, fam: str, name: str, q: str, plain: bool, inherit: bool) -> list[Cand]:
        """Rule 6, memoized per (family, name, qualifier shape)."""
        key = (fam, name, ("+" if inherit else "") + ("" if plain else qualifier_key(q)))
        hits = self._global.get(key)
        if hits is None:
            cands = [
                c
                for c in self._by_name.get(name, ())
                if c.fam == fam
                and (c.kind == "class" or not inherit)
                and not (plain and fam in NO_IMPLICIT_THIS and c.kind == "method")
            ]
            if not plain and common_name(name):
                cands = [
                    c for c in cands if c.owner == key[2] or abbreviates(key[2], c.owner, c.fam)
                ]
            hits = self._global[key] = pick(cands, q, "", plain)
        return hits

    # -- edges ---------------------------------------------------------------------------

    def _is_test_source(self, chunk_id: str) -> bool:
        hit = self._tests.get(chunk_id)
        if hit is None:
            c = self._defs.get(chunk_id)
            hit = self._tests[chunk_id] = c is not None and is_test_source(c.d)
        return hit

    def ref_edges(self, refs: Iterable[tuple[str, Reference]]) -> list[Edge]:
        """``calls``/``inherits`` edges of the refs, and ``tests`` edges for test callers."""
        out: list[Edge] = []
        for path, ref in refs:
            hits = self.targets(path, ref)
            if not hits:
                continue
            kind = "inherits" if ref.kind == "inherit" else "calls"
            test = kind == "calls" and self._is_test_source(ref.chunk_id)
            for d in hits:
                out.append(Edge(ref.chunk_id, d.chunk_id, kind, ref.line))
                if test and d.kind != "class" and not is_test_path(d.path):
                    out.append(Edge(ref.chunk_id, d.chunk_id, "tests", ref.line))
        return out

    def import_edges(self, paths: Iterable[str] | None = None) -> list[Edge]:
        """File → file ``imports`` edges between anchor chunks, for ``paths`` (default all)."""
        out: list[Edge] = []
        for path in self._imports if paths is None else paths:
            src = self.anchor(path)
            if not src:
                continue
            for line, files in self.scope(path).targets:
                for f in files:
                    dst = self.anchor(f)
                    if dst and dst != src:
                        out.append(Edge(src, dst, "imports", line))
        return out

    def convention_edges(self, paths: Iterable[str] | None = None) -> list[Edge]:
        """``tests`` edges by naming: ``test_cancel*`` in ``test_orders.py`` → ``cancel`` in
        ``orders.py`` (also ``TestCancel`` in ``orders_test.go``, ``OrderTest.java``...)."""
        files = self._in_file if paths is None else {p: self._in_file.get(p, []) for p in paths}
        pairs = convention_pairs(files, self._in_file, self.language)
        return [
            Edge(t.chunk_id, d.chunk_id, "tests")
            for t, d in pairs
            if self._is_test_source(t.chunk_id)
        ]

    def edges(self, refs: Iterable[tuple[str, Reference]]) -> list[Edge]:
        """All edges: refs (calls, inherits, tests), imports, naming-convention tests."""
        return dedupe([*self.ref_edges(refs), *self.import_edges(), *self.convention_edges()])


def dedupe(edges: Iterable[Edge]) -> list[Edge]:
    """Drop self-edges and repeats of (src, dst, kind), keeping the first (earliest line)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Edge] = []
    for e in edges:
        key = (e.src, e.dst, e.kind)
        if e.src != e.dst and key not in seen:
            seen.add(key)
            out.append(e)
    return out


def resolve(
    defs: Sequence[Definition],
    imports: Mapping[str, Sequence[Import]],
    refs: Sequence[tuple[str, Reference]],
    *,
    languages: Mapping[str, str] | None = None,
) -> list[Edge]:
    """Edges of a repository; ``refs`` are (path of the referencing file, reference).

    ``defs`` are the function/method/class chunks (pass the module chunks too: they anchor
    ``imports`` edges and JS/TS test blocks). ``imports`` maps each path to its imports;
    ``languages`` maps paths to languages (taken from ``defs`` when missing). Pure: for
    incremental use keep a :class:`Resolver` and call :meth:`Resolver.ref_edges` on new refs.
    """
    return Resolver(defs, imports, languages=languages).edges(refs)


def invert(edges: Iterable[Edge], kind: str = "calls") -> dict[str, list[Edge]]:
    """Edges of ``kind`` grouped by destination: ``invert(edges)[x]`` are x's callers
    (``called_by``, which is never stored)."""
    out: dict[str, list[Edge]] = {}
    for e in edges:
        if e.kind == kind:
            out.setdefault(e.dst, []).append(e)
    return out
