"""Resolve an import's module text to repository files, per language.

:class:`PathIndex` indexes the repository's paths once (by base name and by directory) so
each lookup costs a few dict hits plus a scan of the files sharing one base name.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Set
from functools import lru_cache

JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")
#: TypeScript declaration files: the types of code written elsewhere, no body of any.
DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")


def is_declaration_file(path: str) -> bool:
    """A TypeScript declaration file (``index.d.ts``): signatures without code."""
    return path.lower().endswith(DECLARATION_SUFFIXES)


class PathIndex:
    """The set of repository paths with lookups by base name and by directory."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths: frozenset[str] = frozenset(paths)
        self.by_name: dict[str, list[str]] = {}
        self.by_dir: dict[str, list[str]] = {}
        self.dirs_by_name: dict[str, set[str]] = {}
        for path in sorted(self.paths):
            head, _, name = path.rpartition("/")
            self.by_name.setdefault(name, []).append(path)
            self.by_dir.setdefault(head, []).append(path)
            while head:
                self.dirs_by_name.setdefault(head.rpartition("/")[2], set()).add(head)
                head = head.rpartition("/")[0]

    def __contains__(self, path: object) -> bool:
        return path in self.paths

    def with_suffix(self, suffix: str) -> list[str]:
        """Paths equal to ``suffix`` or ending with ``/suffix``."""
        name = suffix.rpartition("/")[2]
        return [p for p in self.by_name.get(name, ()) if p == suffix or p.endswith("/" + suffix)]

    def dirs_with_suffix(self, suffix: str) -> list[str]:
        """Directories equal to ``suffix`` or ending with ``/suffix``."""
        name = suffix.rstrip("/").rpartition("/")[2]
        return sorted(
            d for d in self.dirs_by_name.get(name, ()) if d == suffix or d.endswith("/" + suffix)
        )

    def files_in(self, directory: str, extensions: tuple[str, ...]) -> list[str]:
        return [p for p in self.by_dir.get(directory, ()) if p.endswith(extensions)]


def _norm(path: str) -> str:
    joined = posixpath.normpath(path)
    return "" if joined == "." else joined


def _first(index: PathIndex, candidates: Iterable[str]) -> list[str]:
    for cand in candidates:
        if cand in index:
            return [cand]
    return []


def _python(module: str, from_path: str, index: PathIndex) -> list[str]:
    stripped = module.lstrip(".")
    dots = len(module) - len(stripped)
    rel = stripped.replace(".", "/")
    if dots:
        base = posixpath.dirname(from_path)
        for _ in range(dots - 1):
            base = posixpath.dirname(base)
        stem = _norm(posixpath.join(base, rel)) if rel else base
        return _first(index, [stem + ".py", stem + ".pyi", posixpath.join(stem, "__init__.py")])
    here = posixpath.dirname(from_path)
    bases = ["", "src/", here + "/"] if here else ["", "src/"]
    found = _first(index, [b + rel + ext for b in bases for ext in (".py", "/__init__.py")])
    if found or "/" not in rel:
        return found
    for ext in (".py", "/__init__.py"):
        hits = index.with_suffix(rel + ext)
        if len(hits) == 1:
            return hits
    return []


def _js_probe(stem: str, index: PathIndex) -> list[str]:
    if stem in index and not stem.endswith("/"):
        return [stem]
    base = stem
    for ext in (".js", ".jsx", ".mjs", ".cjs"):
        if stem.endswith(ext):
            base = stem[: -len(ext)]
    cands = [base + ext for ext in JS_EXTENSIONS] + [base + "/index" + ext for ext in JS_EXTENSIONS]
    return _first(index, cands)


def _js(module: str, from_path: str, index: PathIndex) -> list[str]:
    if module.startswith("."):
        return _js_probe(_norm(posixpath.join(posixpath.dirname(from_path), module)), index)
    if module.startswith(("@/", "~/")):
        return _js_probe("src/" + module[2:], index) or _js_probe(module[2:], index)
    if "/" in module and module.split("/")[0] in index.dirs_by_name:
        return _js_probe(_norm(module), index) or _js_probe("src/" + module, index)
    return []


def _go_files(index: PathIndex, directory: str) -> list[str]:
    return [p for p in index.files_in(directory, (".go",)) if not p.endswith("_test.go")]


def _go(module: str, from_path: str, index: PathIndex) -> list[str]:
    """Go files of the directory sharing the longest tail with the import path
    (``example.com/shop/invoicing`` → ``services/invoicing``); a tie resolves nothing."""
    wanted = module.split("/")
    scored: list[tuple[int, str]] = []
    for d in index.dirs_by_name.get(wanted[-1], ()):
        have = d.split("/")
        common = 0
        while common < min(len(have), len(wanted)) and have[-1 - common] == wanted[-1 - common]:
            common += 1
        if _go_files(index, d):
            scored.append((common, d))
    if not scored:
        return []
    top = max(c for c, _ in scored)
    dirs = [d for c, d in scored if c == top]
    return _go_files(index, dirs[0]) if len(dirs) == 1 else []


def _dotted(ext: str, sep: str, min_parts: int) -> Callable[[str, str, PathIndex], list[str]]:
    """Java/C#/PHP: a namespace path matched as a file suffix (``com/x/Y.java``), then as a
    directory suffix, dropping leading parts (PSR-4 / root namespace not on disk) down to
    ``min_parts``, then trailing parts (static imports, nested classes, functions)."""

    def resolve(module: str, from_path: str, index: PathIndex) -> list[str]:
        parts = [p for p in module.strip(sep).split(sep) if p and p != "*"]
        for end in range(len(parts), 0, -1):
            for start in range(end):
                if start and end - start < min_parts:
                    break
                suffix = "/".join(parts[start:end])
                hits = index.with_suffix(suffix + ext)
                if hits:
                    return hits
                if end == len(parts):
                    for d in index.dirs_with_suffix(suffix):
                        if files := index.files_in(d, (ext,)):
                            return files
        return []

    return resolve


def _rust_module_dir(from_path: str) -> str:
    head, _, name = from_path.rpartition("/")
    if name in ("mod.rs", "lib.rs", "main.rs"):
        return head
    return posixpath.join(head, name.removesuffix(".rs"))


def _rust(module: str, from_path: str, index: PathIndex) -> list[str]:
    if module.startswith("mod "):
        base, rest = _rust_module_dir(from_path), [module[4:].strip()]
    else:
        parts = module.split("::")
        head, rest = parts[0], parts[1:]
        if head == "crate":
            cut = from_path.rfind("src/")
            base = from_path[: cut + 3] if cut >= 0 else ""
        elif head == "self":
            base = _rust_module_dir(from_path)
        elif head == "super":
            base = posixpath.dirname(_rust_module_dir(from_path))
            while rest and rest[0] == "super":
                base, rest = posixpath.dirname(base), rest[1:]
        else:
            return []
    for end in range(len(rest), 0, -1):
        stem = _norm(posixpath.join(base, *rest[:end]))
        found = _first(index, [stem + ".rs", stem + "/mod.rs"])
        if found:
            return found
    return []


def _include(module: str, from_path: str, index: PathIndex) -> list[str]:
    target = module.strip("<>")
    found = _first(index, [_norm(posixpath.join(posixpath.dirname(from_path), target)), target])
    return found or index.with_suffix(target.lstrip("./"))


def _ruby(module: str, from_path: str, index: PathIndex) -> list[str]:
    target = module if module.endswith(".rb") else module + ".rb"
    if module.startswith("."):
        return _first(index, [_norm(posixpath.join(posixpath.dirname(from_path), target))])
    found = _first(index, ["lib/" + target, target])
    if found or "/" not in target:
        return found
    return index.with_suffix("lib/" + target) or index.with_suffix(target)


def _php(module: str, from_path: str, index: PathIndex) -> list[str]:
    if "/" in module or module.endswith(".php"):
        rel = _norm(posixpath.join(posixpath.dirname(from_path), module))
        return _first(index, [rel, module.lstrip("/")]) or index.with_suffix(module.lstrip("./"))
    return _PHP_NS(module, from_path, index)


_PHP_NS = _dotted(".php", "\\", 2)

RESOLVERS: dict[str, Callable[[str, str, PathIndex], list[str]]] = {
    "python": _python,
    "javascript": _js,
    "typescript": _js,
    "tsx": _js,
    "go": _go,
    "java": _dotted(".java", ".", 2),
    "c_sharp": _dotted(".cs", ".", 1),
    "rust": _rust,
    "c": _include,
    "cpp": _include,
    "ruby": _ruby,
    "php": _php,
}


@lru_cache(maxsize=4)
def _cached_index(paths: frozenset[str]) -> PathIndex:
    return PathIndex(paths)


def resolve_module(
    module: str, *, from_path: str, language: str, paths: Set[str] | PathIndex
) -> list[str]:
    """Repository files that ``module`` (as written in ``from_path``) refers to.

    ``paths`` is the set of repository paths, or a prebuilt :class:`PathIndex`; a
    ``frozenset`` gets its index cached, a plain set is indexed on every call (O(paths)).
    Third-party and unknown modules give ``[]``.
    """
    resolver = RESOLVERS.get(language)
    if resolver is None or not module:
        return []
    if isinstance(paths, PathIndex):
        index = paths
    elif isinstance(paths, frozenset):
        index = _cached_index(paths)
    else:
        index = PathIndex(paths)
    return [p for p in resolver(module, from_path, index) if p != from_path]
