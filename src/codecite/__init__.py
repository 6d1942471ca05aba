"""codecite: ask questions about a codebase, get answers cited as path:start-end.

Library use::

    import codecite
    with codecite.open_index("path/to/repo") as index:
        report = index.update()          # incremental; embeds what changed
        for chunk in index.chunks("src/billing/orders.py"):
            print(chunk.qualname, chunk.start_line, chunk.end_line)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import Index, IndexStatus, find_index, open_existing, open_index
    from .config import Config, load_config
    from .errors import CodeciteError, UserError
    from .indexer import IndexReport, Interrupted
    from .progress import Progress
    from .types import Chunk, Edge

# Public names → defining module. Imported on first use, so that importing one
# stage (``codecite.chunking``) does not load the embedding model's stack.
_EXPORTS = {
    "Index": "api", "IndexStatus": "api", "find_index": "api", "open_existing": "api",
    "open_index": "api", "Config": "config", "load_config": "config",
    "CodeciteError": "errors", "UserError": "errors", "IndexReport": "indexer",
    "Interrupted": "indexer", "Progress": "progress", "Chunk": "types", "Edge": "types",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'codecite' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


__version__ = "0.1.0"

__all__ = [
    "Chunk",
    "CodeciteError",
    "Config",
    "Edge",
    "Index",
    "IndexReport",
    "IndexStatus",
    "Interrupted",
    "Progress",
    "UserError",
    "find_index",
    "load_config",
    "open_existing",
    "open_index",
]
