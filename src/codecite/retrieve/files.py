"""File-level evidence and diversity (issue 13).

- Evidence adds up: a file whose several chunks match is likelier the answer than a
  file with one lucky chunk, so each hit gains a share of its file's other hits'
  scores (decaying: the second hit of a file counts half, the third a quarter, ...).
- The top k is diverse: at most ``max_chunks_per_file`` chunks of one file before
  every other file's hits have had their turn.
- :func:`rank_files` groups hits into ranked files with their best chunks: the answer
  ``search --files`` gives (what an agent or a QA engineer needs first).
"""

from __future__ import annotations

from dataclasses import replace

from .types import FileHit, Hit


def file_evidence(hits: list[Hit], decay: float) -> dict[str, float]:
    """Per file: the sum of its hits' scores, the i-th best weighted ``decay**i``
    (``file_evidence_decay``: each further hit counts that share of the one before)."""
    seen: dict[str, int] = {}
    totals: dict[str, float] = {}
    for hit in sorted(hits, key=lambda h: -h.score):
        path = _key(hit)
        i = seen.get(path, 0)
        totals[path] = totals.get(path, 0.0) + max(hit.score, 0.0) * decay**i
        seen[path] = i + 1
    return totals


def add_file_evidence(hits: list[Hit], weight: float, decay: float) -> list[Hit]:
    """``hits`` re-scored: each gains ``weight`` × its file's evidence from its other
    hits, sorted best first."""
    if weight <= 0 or not hits:
        return sorted(hits, key=lambda h: -h.score)
    totals = file_evidence(hits, decay)
    out = [
        replace(h, score=h.score + weight * max(totals[_key(h)] - max(h.score, 0.0), 0.0))
        for h in hits
    ]
    return sorted(out, key=lambda h: -h.score)


def diversify(hits: list[Hit], per_file: int) -> list[Hit]:
    """``hits`` in order, except that a file's hits past the first ``per_file`` wait
    until every other hit has been placed (0: no limit)."""
    if per_file <= 0:
        return hits
    counts: dict[str, int] = {}
    first: list[Hit] = []
    later: list[Hit] = []
    for hit in hits:
        path = _key(hit)
        counts[path] = counts.get(path, 0) + 1
        (first if counts[path] <= per_file else later).append(hit)
    return first + later


def rank_files(hits: list[Hit], k: int, chunks_per_file: int, decay: float) -> list[FileHit]:
    """The ``k`` best files of ``hits``, each with its ``chunks_per_file`` best hits."""
    totals = file_evidence(hits, decay)
    files: dict[tuple[str, str], FileHit] = {}
    for hit in sorted(hits, key=lambda h: -h.score):
        key = (hit.chunk.repo, hit.chunk.path)
        entry = files.get(key)
        if entry is None:
            entry = files[key] = FileHit(hit.chunk.path, hit.chunk.repo, totals[_key(hit)])
        if len(entry.hits) < chunks_per_file:
            entry.hits.append(hit)
    return sorted(files.values(), key=lambda f: -f.score)[:k]


def _key(hit: Hit) -> str:
    return f"{hit.chunk.repo}\0{hit.chunk.path}"


__all__ = ["FileHit", "add_file_evidence", "diversify", "file_evidence", "rank_files"]
