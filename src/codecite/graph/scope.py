"""What a file's imports bring into scope: names, module aliases and whole modules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from codecite.types import Import

#: Languages where importing a module puts all of its names in scope (C ``#include``,
#: C# ``using Ns;``, Ruby ``require``, PHP ``require``).
STAR_LANGUAGES = frozenset({"c", "cpp", "c_sharp", "ruby", "php"})
#: Languages where an imported name may itself be a module (``from shop import orders``).
SUBMODULE_SEP = {"python": ".", "rust": "::"}


@dataclass
class FileScope:
    """Names visible in one file through its imports."""

    #: local name → [(name in the defining file, candidate files)]
    names: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    #: local qualifier (``np``, ``orders``, ``a.b``) → files whose names it qualifies
    modules: dict[str, list[str]] = field(default_factory=dict)
    #: files all of whose names are visible unqualified
    stars: list[str] = field(default_factory=list)
    #: (line, files) per import, for ``imports`` edges
    targets: list[tuple[int, list[str]]] = field(default_factory=list)
    #: every file some import resolved to
    all_files: frozenset[str] = frozenset()
    #: local names bound by imports that resolve to no repository file (third-party code)
    external: set[str] = field(default_factory=set)


def _go_package(module: str) -> str:
    parts = module.split("/")
    last = parts[-1]
    if len(parts) > 1 and last.startswith("v") and last[1:].isdigit():
        last = parts[-2]
    return last.removeprefix("go-").replace("-", "_")


def _module_qualifier(imp: Import, language: str) -> str:
    """The qualifier code uses for a whole-module import without an alias."""
    if imp.alias:
        return imp.alias
    if language == "python":
        return imp.module
    if language == "go":
        return _go_package(imp.module)
    if language == "rust":
        return imp.module.rpartition("::")[2].removeprefix("mod ")
    if language == "c_sharp":
        return imp.module
    return ""


def root(qualifier: str) -> str:
    """First component of a qualifier: ``os`` for ``os.path``, ``a`` for ``a::b``."""
    for sep in (".", "::", "\\", "->"):
        qualifier = qualifier.partition(sep)[0]
    return qualifier


def build_scope(
    imports: Sequence[Import],
    language: str,
    resolve: Callable[[str], list[str]],
) -> FileScope:
    """Resolve a file's imports (``resolve`` maps module text → files) into a scope."""
    scope = FileScope()
    sep = SUBMODULE_SEP.get(language)
    for imp in imports:
        files = resolve(imp.module)
        all_files = list(files)
        if not imp.names:
            qualifier = _module_qualifier(imp, language)
            if qualifier and files:
                scope.modules.setdefault(qualifier, []).extend(files)
            elif qualifier:
                scope.external.add(root(qualifier))
            if language in STAR_LANGUAGES:
                scope.stars.extend(files)
        for name in imp.names:
            if name == "*":
                scope.stars.extend(files)
                continue
            local = imp.alias if imp.alias and len(imp.names) == 1 else name
            sub: list[str] = []
            if sep is not None:
                joiner = "" if imp.module.endswith(sep) else sep
                sub = [f for f in resolve(imp.module + joiner + name) if f not in files]
                all_files.extend(f for f in sub if f not in all_files)
            if files:
                scope.names.setdefault(local, []).append((name, files))
            elif not sub:
                scope.external.add(local)
            if sub:
                scope.modules.setdefault(local, []).extend(sub)
            if files and language in ("java", "php", "c_sharp"):
                scope.modules.setdefault(local, []).extend(files)
        if all_files:
            scope.targets.append((imp.line, all_files))
    scope.all_files = frozenset(f for _, files in scope.targets for f in files)
    scope.external -= scope.names.keys() | scope.modules.keys()
    return scope
