"""codecite: ask questions about a codebase, get answers cited as path:start-end.

Library use::

    import codecite
    with codecite.open_index("path/to/repo") as index:
        report = index.update()                      # incremental; embeds what changed
        result = index.search("where is the VIP discount computed", k=5,
                              filters=codecite.Filters.parse(languages=["py"]))
        for hit in result.hits:
            print(hit.chunk.path, hit.chunk.start_line, hit.chunk.end_line, hit.source)
        answer = index.ask("How is the loyalty discount computed?")   # offline: extractive
        print(answer.answer, [c.to_json() for c in answer.citations])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .answer.answerer import Answer
    from .answer.citations import Citation
    from .answer.llm import LLM, LLMChoice
    from .api import FileLines, Index, IndexStatus, find_index, open_existing, open_index
    from .config import Config, Endpoint, load_config
    from .errors import CodeciteError, Interrupted, UserError
    from .filters import Filters
    from .indexer import IndexReport
    from .progress import Progress
    from .retrieve.types import FileHit, Hit, SearchResult

    # issue 22 (the store decides its backend once): what the server's state and jobs use
    from .scrub import scrub_text
    from .store import index_exists, is_shared_store
    from .store.postgres.queue import open_job_runs
    from .store.state import open_state_tables
    from .types import Chunk, Edge

# Public names → defining module. Imported on first use, so that importing one
# stage (``codecite.chunking``) does not load the embedding model's stack.
_EXPORTS = {
    "Answer": "answer.answerer",
    "Citation": "answer.citations",
    "LLM": "answer.llm",
    "LLMChoice": "answer.llm",
    "FileLines": "api",
    "Index": "api",
    "IndexStatus": "api",
    "find_index": "api",
    "open_existing": "api",
    "open_index": "api",
    "Config": "config",
    "Endpoint": "config",
    "load_config": "config",
    "CodeciteError": "errors",
    "Interrupted": "errors",
    "UserError": "errors",
    "Filters": "filters",
    "IndexReport": "indexer",
    "Progress": "progress",
    "FileHit": "retrieve.types",
    "Hit": "retrieve.types",
    "SearchResult": "retrieve.types",
    "Chunk": "types",
    "Edge": "types",
    # issue 22 (the store decides its backend once): what the server's state and jobs use
    "index_exists": "store",
    "is_shared_store": "store",
    "open_job_runs": "store.postgres.queue",
    "open_state_tables": "store.state",
    "scrub_text": "scrub",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'codecite' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__version__ = "0.1.0"

__all__ = [
    "LLM",
    "Answer",
    "Chunk",
    "Citation",
    "CodeciteError",
    "Config",
    "Edge",
    "Endpoint",
    "FileHit",
    "FileLines",
    "Filters",
    "Hit",
    "Index",
    "IndexReport",
    "IndexStatus",
    "Interrupted",
    "LLMChoice",
    "Progress",
    "SearchResult",
    "UserError",
    "find_index",
    "index_exists",
    "is_shared_store",
    "load_config",
    "open_existing",
    "open_index",
    "open_job_runs",
    "open_state_tables",
    "scrub_text",
]
