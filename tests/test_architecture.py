"""The package's shape (DESIGN.md §2): no import circles in the server and the
integrations. Every import counts, function-level and ``TYPE_CHECKING`` ones included:
a circle hidden in a function still ties the modules into one."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import codecite

PACKAGE = Path(codecite.__file__).parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, modules: set[str]) -> Iterator[str]:
    """The package's modules ``path`` imports (a name imported from a package counts as
    its submodule when there is one of that name, else as the package)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "codecite")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "codecite":
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                yield full if full in modules else target


def circles(prefixes: tuple[str, ...]) -> list[list[str]]:
    """Strongly connected groups of more than one module among those under ``prefixes``."""
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    inside = {m for m in paths if m.startswith(prefixes)}
    edges = {m: {t for t in imported(paths[m], set(paths)) if t in inside} for m in inside}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(inside):
        if module not in index:
            visit(module)
    return found


def test_no_import_circles_in_server() -> None:
    assert circles(("codecite.server", "codecite.integrations")) == []
