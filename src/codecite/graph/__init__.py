"""Code graph (docs/DESIGN.md section 4): per-file imports and references, resolved into edges.

- :func:`extract_facts` — one parsed file → :class:`~codecite.types.FileFacts`
  (imports as written, call and base-class references attributed to chunks).
- :func:`resolve_module` — an import's module text → repository files.
- :func:`resolve` / :class:`Resolver` — definitions + imports + references → ``calls``,
  ``inherits``, ``imports`` and ``tests`` edges; :func:`invert` gives ``called_by``.
- :mod:`.neighbours` — a stored definition's links as a reader means them (every part of
  it; for a class, its methods' links and its construction sites too).
"""

from codecite.graph.extract import extract_facts, supported
from codecite.graph.paths import PathIndex, resolve_module
from codecite.graph.resolve import Resolver, dedupe, invert, resolve
from codecite.graph.testmap import is_test_path

__all__ = [
    "PathIndex",
    "Resolver",
    "dedupe",
    "extract_facts",
    "invert",
    "is_test_path",
    "resolve",
    "resolve_module",
    "supported",
]
