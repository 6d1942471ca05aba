"""Weighted Reciprocal Rank Fusion: ``score(d) = Σ_lists weight / (rrf_k + rank)``
with 1-based ranks. Lists are chunk ids, best first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(
    lists: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int = 60
) -> dict[str, float]:
    """Fused scores by id (higher is better); an id a list holds twice counts once, at
    its first rank."""
    scores: dict[str, float] = {}
    for name, ids in lists.items():
        weight = weights.get(name, 1.0)
        for chunk_id, rank in ranks(ids).items():
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
    return scores


def ranks(ids: Sequence[str]) -> dict[str, int]:
    """1-based rank of each id in a list (its first place, when it is there twice)."""
    out: dict[str, int] = {}
    for i, chunk_id in enumerate(ids, start=1):
        out.setdefault(chunk_id, i)
    return out
