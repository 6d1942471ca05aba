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
    from .picture.draw import MAP_FORMATS, draw_map, draw_neighbourhood
    from .picture.model import Arrow, Box, Neighbourhood, SystemMap
    from .progress import Progress
    from .retrieve.types import FileHit, Hit, SearchResult
    from .types import Chunk, Edge, IndexReport

# --- issue 22, "one door": what the server, web page, Slack, MCP and integrations use
if TYPE_CHECKING:
    from ._http import server_message
    from .answer.citations import parse_citations
    from .answer.llm import EXTRACTIVE
    from .api import RELATIONS
    from .filetext import clean_path
    from .filters import LANGUAGES
    from .question.kinds import analyse, detect_intent
    from .retrieve.across import RepoHit, search_across, search_files_across

    # issue 22 (the store decides its backend once): what the server's state and jobs use
    from .scrub import scrub_text
    from .store import index_exists, is_shared_store, open_state_tables
    from .store.postgres.queue import open_job_runs
    from .store.postgres.replicas import register_replicas
    from .types import CHUNK_KINDS, MAX_K, SYMBOL_LIMIT
# --- end of issue 22's names

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
    "MAP_FORMATS": "picture.draw",
    "draw_map": "picture.draw",
    "draw_neighbourhood": "picture.draw",
    "Arrow": "picture.model",  # an arrow of a SystemMap
    "Box": "picture.model",  # a box of a SystemMap
    "Neighbourhood": "picture.model",
    "SystemMap": "picture.model",
    "IndexReport": "types",
    "Progress": "progress",
    "FileHit": "retrieve.types",
    "Hit": "retrieve.types",
    "SearchResult": "retrieve.types",
    "Chunk": "types",
    "Edge": "types",
    # --- issue 22, "one door": what the server, web page, Slack, MCP and integrations use
    # instead of internals. Each is documented where it is defined.
    "parse_citations": "answer.citations",  # citations written in an answer's text
    "EXTRACTIVE": "answer.llm",  # the answer mode without a model
    "RELATIONS": "api",  # graph relations of Index.related
    "clean_path": "filetext",  # a repository-relative path as the index names files
    "LANGUAGES": "filters",  # languages a filter may name
    "server_message": "_http",  # the error message an HTTP server's response carries
    "RepoHit": "retrieve.across",  # a hit of a search across repositories
    "search_across": "retrieve.across",
    "search_files_across": "retrieve.across",
    "detect_intent": "question.kinds",  # a question's intent, as search reports it
    "analyse": "question.kinds",  # a question's intent and the names it writes
    "register_replicas": "store.postgres.replicas",  # read replicas of the shared store
    "CHUNK_KINDS": "types",
    "MAX_K": "types",  # the most results a search returns
    "SYMBOL_LIMIT": "types",  # the most definitions one name resolves to
    # issue 22 (the store decides its backend once): what the server's state and jobs use
    "index_exists": "store",
    "is_shared_store": "store",
    "open_job_runs": "store.postgres.queue",
    "open_state_tables": "store",
    "scrub_text": "scrub",
    # --- end of issue 22's names
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
    "Arrow",
    "Box",
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
    "Neighbourhood",
    "Progress",
    "SearchResult",
    "SystemMap",
    "UserError",
    "draw_map",
    "draw_neighbourhood",
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
# --- issue 22, "one door": what the server, web page, Slack, MCP and integrations use
__all__ += [
    "CHUNK_KINDS",
    "EXTRACTIVE",
    "LANGUAGES",
    "MAP_FORMATS",
    "MAX_K",
    "RELATIONS",
    "SYMBOL_LIMIT",
    "RepoHit",
    "analyse",
    "clean_path",
    "detect_intent",
    "parse_citations",
    "register_replicas",
    "search_across",
    "search_files_across",
    "server_message",
]
# --- end of issue 22's names
