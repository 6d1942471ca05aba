"""Resolving a target (``Deal.close``, ``close``, ``path::qualname``, ``path:line``)
to the chunks of one definition; several matches raise :class:`AmbiguousSymbolError`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import AmbiguousSymbolError, UserError
from ..types import SYMBOL_LIMIT, Chunk
from .limits import EXPLAINED_KINDS
from .scan import body_lines, signature_span

if TYPE_CHECKING:
    from .source import Source

_LOCATION = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<line>\d+)$")


def resolve(index: Source, target: str) -> tuple[Chunk, ...]:
    """The definition ``target`` names, as its chunks (one, or the parts of a long
    one): ``path:line`` (the innermost definition there), ``path::qualname``, a
    qualified name (``Deal.close``), a dotted path ending in one
    (``shop.deals.Deal.close``) or a plain name (``close``). Several matches raise
    :class:`AmbiguousSymbolError` listing them; none raises :class:`UserError`."""
    text = target.strip()
    if not text:
        raise UserError(
            "give a symbol to explain: a name (Deal.close), path::qualname or path:line"
        )
    location = _LOCATION.match(text)
    if location and "::" not in text:
        return _at_location(index, _repo_path(index, location["path"]), int(location["line"]))
    path, sep, name = text.rpartition("::")
    path = _repo_path(index, path) if sep else ""
    with index.store.reporting_damage():
        found = _by_name(index, name.strip(), path)
    groups = group_definitions(found)
    if not groups:
        where = f" in {path}" if path else ""
        raise UserError(
            f"no function, method, class or documented constant named {name.strip()!r}{where}; "
            "names are case-sensitive (`codecite search` finds code by description)"
        )
    if len(groups) > 1:
        raise _ambiguous(text, groups)
    return groups[0]


def _repo_path(index: Source, path: str) -> str:
    """A path as the index stores it: repository-relative, POSIX, no ``./``."""
    raw = path.strip()
    if raw.startswith("/"):
        try:
            raw = Path(raw).resolve().relative_to(index.root).as_posix()
        except ValueError:
            raise UserError(f"{path}: not inside the repository {index.root}") from None
    return "/".join(p for p in raw.split("/") if p not in ("", "."))


def _by_name(index: Source, name: str, path: str) -> list[Chunk]:
    store = index.store
    chunks: list[Chunk] = []
    if "." in name:
        ids = store.find_symbols(name, "qualname", None, SYMBOL_LIMIT)
        chunks = [c for c in store.get_chunks(ids).values() if c.qualname == name]
    if not chunks:
        last = name.rsplit(".", 1)[-1]
        ids = store.find_symbols(last, "name", None, SYMBOL_LIMIT)
        chunks = [c for c in store.get_chunks(ids).values() if c.kind in EXPLAINED_KINDS]
        if "." in name:  # a dotted path: shop.deals.Deal.close, deals.Deal.close
            chunks = [c for c in chunks if _dotted(c).endswith("." + name) or c.qualname == name]
    if path:
        chunks = [c for c in chunks if c.path == path]
    return [c for c in chunks if c.kind in EXPLAINED_KINDS]


def _dotted(chunk: Chunk) -> str:
    module = chunk.path.rsplit(".", 1)[0].replace("/", ".")
    return f".{module}.{chunk.qualname}"


def group_definitions(chunks: Iterable[Chunk]) -> list[tuple[Chunk, ...]]:
    """Chunks grouped into definitions, by place: the parts of a long one together;
    Python ``@overload`` stubs left out when their implementation is there; other
    definitions of one name in one file (Java overloads) kept apart."""
    groups: dict[tuple[str, str, str], list[Chunk]] = {}
    for c in chunks:
        groups.setdefault((c.path, c.qualname, c.kind), []).append(c)
    out: list[tuple[Chunk, ...]] = []
    for found in groups.values():
        parts = sorted((c for c in found if c.part), key=lambda c: c.part)
        whole = [c for c in found if not c.part]
        real = [c for c in whole if not _is_stub(c)]
        out += [(c,) for c in (real or ([] if parts else whole))]
        out += [tuple(parts)] if parts else []
    return sorted(out, key=lambda g: (g[0].path, g[0].start_line))


def _is_stub(chunk: Chunk) -> bool:
    """A Python ``@overload`` (or protocol) stub: a signature and ``...``, nothing else."""
    if chunk.language != "python" or not chunk.content.rstrip().endswith("..."):
        return False
    span = signature_span([chunk])
    return span is not None and not body_lines([chunk], span[1])


def _ambiguous(target: str, groups: list[tuple[Chunk, ...]]) -> AmbiguousSymbolError:
    candidates = [
        (g[0].path, g[0].start_line, max(c.end_line for c in g), g[0].qualname, g[0].kind)
        for g in groups
    ]
    width = max(len(f"{p}:{s}") for p, s, *_ in candidates)
    rows = [f"  {f'{p}:{s}':<{width}}  {k} {q}" for p, s, _, q, k in candidates]
    return AmbiguousSymbolError(
        f"{target!r} is ambiguous: {len(groups)} definitions match. The candidates are:\n"
        + "\n".join(rows)
        + "\nGive one as path:line or path::qualname (for example "
        f"`codecite explain {candidates[0][0]}:{candidates[0][1]}`).",
        candidates,
    )


def _at_location(index: Source, path: str, line: int) -> tuple[Chunk, ...]:
    chunks = [c for c in index.chunks(path) if c.path == path]
    if not chunks:
        raise UserError(
            f"{path}: not an indexed file; give a repository-relative path as in a "
            "citation (`codecite search` finds files)"
        )
    here = [c for c in chunks if c.kind in EXPLAINED_KINDS and c.start_line <= line <= c.end_line]
    if not here:
        names = [f"{c.qualname} ({c.path}:{c.start_line})" for c in chunks if c.kind != "module"]
        listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        raise UserError(
            f"no function, method, class or documented constant at {path}:{line}"
            + (f"; this file defines: {listed}" if names else "")
        )
    inner = min(here, key=lambda c: (c.end_line - c.start_line, -c.start_line))
    groups = group_definitions(
        c for c in chunks if (c.qualname, c.kind) == (inner.qualname, inner.kind)
    )
    return next((g for g in groups if inner in g), groups[0])
