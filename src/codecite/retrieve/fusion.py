"""Weighted Reciprocal Rank Fusion: ``score(d) = Σ_lists weight / (rrf_k + rank)``
with 1-based ranks. Lists are chunk ids, best first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(
    lists: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int = 60
) -> dict[str, float]:
    """Fused scores by id (higher is better)."""
    scores: dict[str, float] = {}
    for name, ids in lists.items():
        weight = weights.get(name, 1.0)
        for rank, chunk_id in enumerate(ids, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
    return scores


def ranks(ids: Sequence[str]) -> dict[str, int]:
    """1-based rank of each id in a list."""
    return {chunk_id: i for i, chunk_id in enumerate(ids, start=1)}
