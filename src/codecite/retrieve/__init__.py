"""Query side: keyword + vector search fused with RRF, graph expansion, rerank, pack.

::

    searcher = Searcher(index)                      # loads vectors and the model once
    result = searcher.search("where is the VIP discount computed", k=10,
                             filters=Filters(languages=("python",)))
    for hit in result.hits:                         # Hit.chunk is a codecite.types.Chunk
        print(hit.chunk.path, hit.chunk.start_line, hit.source, hit.why)
"""

from .search import Searcher
from .types import SOURCES, Filters, Hit, SearchResult

__all__ = ["SOURCES", "Filters", "Hit", "SearchResult", "Searcher"]
