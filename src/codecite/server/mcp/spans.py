"""Lines of a file as the tools name them: ``path:start-end``, and a chunk's location
as JSON. Shared by :mod:`.results` (what the tools return) and :mod:`.symbols` (which
definition a symbol names)."""

from __future__ import annotations

from typing import Any, Protocol

from ... import Chunk


class Span(Protocol):
    """Anything that covers lines of a file (a chunk, a citation, a definition)."""

    @property
    def path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...


def citation(path: str, start: int, end: int) -> str:
    return f"{path}:{start}-{end}"


def cite(span: Span) -> str:
    """``span`` as ``path:start-end``."""
    return citation(span.path, span.start_line, span.end_line)


def chunk_json(chunk: Chunk, repo: str) -> dict[str, Any]:
    return {
        "repo": repo,
        "path": chunk.path,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "citation": cite(chunk),
        "name": chunk.name,
        "qualname": chunk.qualname,
        "kind": chunk.kind,
        "language": chunk.language,
    }
