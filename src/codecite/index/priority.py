"""The order chunks are embedded in: what a reader most likely asks about first
(small, public, documented definitions; tests and long chunks later), so an index
still embedding already answers the common questions well."""

from __future__ import annotations

from ..graph.testmap import is_test_path
from ..types import Chunk

#: Embedding order: what a reader most likely asks about is embedded first.
KIND_PRIORITY = {
    "function": 3.0,
    "method": 3.0,
    "class": 2.5,
    "module": 1.5,
    "section": 1.5,
    "file": 1.0,
    "window": 0.5,
}
DOCUMENTED_BONUS = 1.0
PUBLIC_BONUS = 0.5
TEST_PENALTY = 1.0
#: Priority lost per 100 lines of chunk (long chunks embed less precisely).
LENGTH_PENALTY_PER_100_LINES = 0.5


def chunk_priority(chunk: Chunk) -> float:
    """Embedding order of a chunk: small, public, documented symbols first."""
    score = KIND_PRIORITY.get(chunk.kind, 0.0)
    if chunk.docstring:
        score += DOCUMENTED_BONUS
    if chunk.name and not chunk.name.startswith("_"):
        score += PUBLIC_BONUS
    if is_test_path(chunk.path):
        score -= TEST_PENALTY
    lines = chunk.end_line - chunk.start_line + 1
    return score - LENGTH_PENALTY_PER_100_LINES * min(lines / 100.0, 2.0)
