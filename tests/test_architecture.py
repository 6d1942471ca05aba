"""The house has no circles and nothing imports back up a floor. Every import counts:
module-level, function-level and type-only (``if TYPE_CHECKING:``) ones alike, since a
lazy import that points up is still a dependency up."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "codecite"
#: Floors, bottom up: a module may import its own floor's and lower floors' modules.
#: Above the door (``api``) are its clients: the server, integrations, evaluation (it
#: measures what the door returns); the CLI on top starts them all and nothing imports it.
FLOORS: list[set[str]] = [
    {"errors", "types", "identifiers", "_http", "progress", "config"},
    {"chunking", "graph", "scrub", "walk", "filetext", "filters", "embed", "store"},
    {"question"},  # a question read once, below retrieval and answers (issue 38)
    {"index", "retrieve", "answer", "picture"},
    {"explain"},
    {"api", "__init__"},  # the door
    {"server", "integrations", "evaluate"},  # clients of the door
    {"cli", "__main__"},
]


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Module → the codecite modules (or packages) it imports, every import counted."""
    modules = {_module(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if not target.startswith("codecite"):
                    continue
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    graph[name].add(full if full in modules else target)
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name.startswith("codecite")}
    return {m: {t for t in ts if t in modules and t != m} for m, ts in graph.items()}


def _room(module: str) -> str:
    """The top-level module or package a module belongs to (``retrieve``, ``api``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _floor(room: str) -> int:
    for level, rooms in enumerate(FLOORS):
        if room in rooms:
            return level
    raise AssertionError(f"codecite.{room} is on no floor: add it to FLOORS")


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles() -> None:
    graph = _imports()
    assert _circles(graph) == []
    rooms: dict[str, set[str]] = defaultdict(set)
    for module, targets in graph.items():
        rooms[_room(module)] |= {_room(t) for t in targets} - {_room(module), "__init__"}
    assert _circles(rooms) == [], "folders import each other"


def test_nothing_imports_up_a_floor() -> None:
    up = sorted(
        f"{module} -> {target}"
        for module, targets in _imports().items()
        for target in targets
        if _floor(_room(target)) > _floor(_room(module)) and _room(target) != "__init__"
    )
    assert up == []


def test_the_circle_finder_finds_circles() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
