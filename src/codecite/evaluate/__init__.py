"""Retrieval evaluation against a golden set (``codecite eval GOLDEN.jsonl``).

A golden file is JSONL, one query a line::

    {"id": "q01", "query": "where is the loyalty discount computed",
     "relevant": [{"path": "shop/pricing.py", "start_line": 25, "end_line": 34},
                  {"path": "shop/tax.py"}],
     "persona": "engineer", "kind": "locate", "facts": ["10%"]}

Only ``query`` and ``relevant`` are required; a relevant entry without lines
counts at file level only (at chunk level it matches any chunk of the file).
Blank lines and lines starting with ``//`` are ignored.

Metrics are computed at two levels over the results cut at ``k``:

- **file**: relevant items are the distinct relevant paths; the ranking is the
  retrieved paths with duplicates removed (first occurrence kept), so a rank is
  a position among distinct files.
- **chunk**: relevant items are the relevant entries; a retrieved chunk matches
  an entry with the same path whose line range overlaps (or that has no lines).
  A position is a *hit* when it matches at least one relevant item not matched
  higher up, so duplicates never count twice; an item's rank is the first
  position that matches it.

Recall@n = share of relevant items ranked <= n; Precision@5 = hits in the top 5
/ 5; MRR = 1 / position of the first hit (0 if none); nDCG@10 uses binary gains
(hits) against an ideal ranking of min(#relevant, 10) hits; hit@5 = 1 if any
hit in the top 5. Cut-offs above ``k`` see only the top ``k``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from ..errors import UserError

__all__ = [
    "EvalReport",
    "GoldenQuery",
    "LevelMetrics",
    "QueryResult",
    "Relevant",
    "Retrieved",
    "evaluate",
    "load_golden",
]

_R = TypeVar("_R")
_G = TypeVar("_G")


@dataclass(frozen=True)
class Relevant:
    """A labelled answer location; without lines it is relevant as a whole file."""

    path: str
    start_line: int | None = None
    end_line: int | None = None


@dataclass(frozen=True)
class GoldenQuery:
    id: str
    query: str
    relevant: tuple[Relevant, ...]
    persona: str = ""
    kind: str = ""
    facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Retrieved:
    """One search result, in rank order."""

    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class LevelMetrics:
    recall_at_1: float = 0.0
    recall_at_5: float = 0.0
    recall_at_10: float = 0.0
    precision_at_5: float = 0.0
    mrr: float = 0.0
    ndcg_at_10: float = 0.0
    hit_at_5: float = 0.0

    def to_json(self) -> dict[str, float]:
        return {f.name: round(getattr(self, f.name), 4) for f in fields(self)}


@dataclass(frozen=True)
class QueryResult:
    """One row of the report: how one golden query fared."""

    id: str
    query: str
    persona: str
    kind: str
    #: Rank (1-based) of each distinct relevant file, None when not in the top k.
    file_ranks: tuple[int | None, ...]
    #: Rank of each relevant entry, None when not in the top k.
    chunk_ranks: tuple[int | None, ...]
    file: LevelMetrics
    chunk: LevelMetrics
    #: Distinct retrieved paths in the top k, best first.
    top_paths: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "query": self.query,
            "persona": self.persona,
            "kind": self.kind,
            "file_ranks": list(self.file_ranks),
            "chunk_ranks": list(self.chunk_ranks),
            "file": self.file.to_json(),
            "chunk": self.chunk.to_json(),
            "top_paths": list(self.top_paths),
        }


@dataclass(frozen=True)
class Summary:
    """Means over a group of queries, per level."""

    count: int
    file: LevelMetrics
    chunk: LevelMetrics

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "file": self.file.to_json(), "chunk": self.chunk.to_json()}


@dataclass(frozen=True)
class EvalReport:
    k: int
    queries: tuple[QueryResult, ...]
    #: Means over all queries.
    overall: Summary
    #: Means per ``kind`` / ``persona`` (queries without one are left out).
    by_kind: dict[str, Summary]
    by_persona: dict[str, Summary]

    @property
    def file(self) -> LevelMetrics:
        return self.overall.file

    @property
    def chunk(self) -> LevelMetrics:
        return self.overall.chunk

    def worst(self, n: int) -> list[QueryResult]:
        """The ``n`` queries with the lowest (file MRR, chunk recall@10), worst first."""
        ranked = sorted(self.queries, key=lambda q: (q.file.mrr, q.chunk.recall_at_10))
        return ranked[: max(n, 0)]

    def to_json(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "count": self.overall.count,
            "mean": {"file": self.file.to_json(), "chunk": self.chunk.to_json()},
            "by_kind": {key: s.to_json() for key, s in self.by_kind.items()},
            "by_persona": {key: s.to_json() for key, s in self.by_persona.items()},
            "queries": [q.to_json() for q in self.queries],
        }


# --------------------------------------------------------------------------- loading


def load_golden(path: str | Path) -> list[GoldenQuery]:
    """Read a golden JSONL file; a bad line raises :class:`UserError` naming it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"golden file {path} not found; pass the path of a .jsonl file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read golden file {path}: {exc}") from None
    queries: list[GoldenQuery] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        where = f"{path}:{lineno}"
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise UserError(
                f"{where}: invalid JSON ({exc.msg}); each line must be one JSON object"
            ) from None
        query = _parse_query(data, where, default_id=f"line{lineno}")
        if query.id in seen:
            raise UserError(f"{where}: id {query.id!r} already used on line {seen[query.id]}")
        seen[query.id] = lineno
        queries.append(query)
    if not queries:
        raise UserError(f"golden file {path} has no queries; add one JSON object per line")
    return queries


def _parse_query(data: object, where: str, default_id: str) -> GoldenQuery:
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a JSON object, got {type(data).__name__}")
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise UserError(f'{where}: missing "query" (a non-empty string)')
    relevant = data.get("relevant")
    if not isinstance(relevant, list) or not relevant:
        raise UserError(
            f'{where}: "relevant" must be a non-empty list of {{"path", "start_line", "end_line"}}'
        )
    facts = data.get("facts", [])
    if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
        raise UserError(f'{where}: "facts" must be a list of strings')
    return GoldenQuery(
        id=_optional_str(data, "id", where) or default_id,
        query=query,
        relevant=tuple(_parse_relevant(item, where) for item in relevant),
        persona=_optional_str(data, "persona", where),
        kind=_optional_str(data, "kind", where),
        facts=tuple(facts),
    )


def _optional_str(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key, "")
    if key == "id" and _is_int(value):
        return str(value)
    if not isinstance(value, str):
        raise UserError(f'{where}: "{key}" must be a string')
    return value


def _parse_relevant(item: object, where: str) -> Relevant:
    if not isinstance(item, dict) or not isinstance(item.get("path"), str) or not item["path"]:
        raise UserError(f'{where}: each "relevant" entry needs a "path" string')
    start, end = item.get("start_line"), item.get("end_line")
    if start is None and end is None:
        return Relevant(_norm(item["path"]))
    if not (_is_int(start) and _is_int(end)):
        raise UserError(f'{where}: give both "start_line" and "end_line" as integers, or neither')
    if not 1 <= start <= end:
        raise UserError(f"{where}: line range {start}-{end} must satisfy 1 <= start <= end")
    return Relevant(_norm(item["path"]), start, end)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _norm(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


# --------------------------------------------------------------------------- metrics


def evaluate(
    golden: Sequence[GoldenQuery], results: Sequence[Sequence[Retrieved]], *, k: int = 10
) -> EvalReport:
    """Score ``results[i]`` (search results in rank order) against ``golden[i]``."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if len(golden) != len(results):
        raise ValueError(f"{len(golden)} golden queries but {len(results)} result lists")
    rows = tuple(_score_query(q, r[:k]) for q, r in zip(golden, results, strict=True))
    return EvalReport(
        k=k,
        queries=rows,
        overall=_summarize(rows),
        by_kind=_group(rows, lambda row: row.kind),
        by_persona=_group(rows, lambda row: row.persona),
    )


def _score_query(query: GoldenQuery, top: Sequence[Retrieved]) -> QueryResult:
    if not query.relevant:
        raise ValueError(f"golden query {query.id!r} has no relevant items")
    retrieved = [Retrieved(_norm(r.path), r.start_line, r.end_line) for r in top]
    top_paths = tuple(dict.fromkeys(r.path for r in retrieved))
    rel_paths = tuple(dict.fromkeys(_norm(r.path) for r in query.relevant))
    file_ranks, file_hits = _ranks(rel_paths, top_paths, _same_path)
    items = tuple(
        dict.fromkeys(Relevant(_norm(r.path), r.start_line, r.end_line) for r in query.relevant)
    )
    chunk_ranks, chunk_hits = _ranks(items, retrieved, _matches)
    return QueryResult(
        id=query.id,
        query=query.query,
        persona=query.persona,
        kind=query.kind,
        file_ranks=file_ranks,
        chunk_ranks=chunk_ranks,
        file=_metrics(file_ranks, file_hits),
        chunk=_metrics(chunk_ranks, chunk_hits),
        top_paths=top_paths,
    )


def _same_path(want: str, got: str) -> bool:
    return want == got


def _matches(rel: Relevant, got: Retrieved) -> bool:
    if rel.path != got.path:
        return False
    if rel.start_line is None or rel.end_line is None:
        return True
    return got.start_line <= rel.end_line and rel.start_line <= got.end_line


def _ranks(
    relevant: Sequence[_R], ranking: Sequence[_G], match: Callable[[_R, _G], bool]
) -> tuple[tuple[int | None, ...], list[int]]:
    """Rank of each relevant item (first matching position) and the hit positions."""
    ranks: list[int | None] = [None] * len(relevant)
    hits: list[int] = []
    for position, got in enumerate(ranking, start=1):
        new = [i for i, rel in enumerate(relevant) if ranks[i] is None and match(rel, got)]
        for i in new:
            ranks[i] = position
        if new:
            hits.append(position)
    return tuple(ranks), hits


def _metrics(ranks: Sequence[int | None], hits: Sequence[int]) -> LevelMetrics:
    n = len(ranks)

    def recall(cut: int) -> float:
        return sum(1 for r in ranks if r is not None and r <= cut) / n

    dcg = sum(1 / math.log2(p + 1) for p in hits if p <= 10)
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(n, 10) + 1))
    return LevelMetrics(
        recall_at_1=recall(1),
        recall_at_5=recall(5),
        recall_at_10=recall(10),
        precision_at_5=sum(1 for p in hits if p <= 5) / 5,
        mrr=1 / hits[0] if hits else 0.0,
        ndcg_at_10=dcg / ideal,
        hit_at_5=1.0 if hits and hits[0] <= 5 else 0.0,
    )


def _mean(metrics: Iterable[LevelMetrics]) -> LevelMetrics:
    items = list(metrics)
    if not items:
        return LevelMetrics()
    return LevelMetrics(
        **{
            f.name: sum(getattr(m, f.name) for m in items) / len(items)
            for f in fields(LevelMetrics)
        }
    )


def _summarize(rows: Sequence[QueryResult]) -> Summary:
    return Summary(
        count=len(rows),
        file=_mean(r.file for r in rows),
        chunk=_mean(r.chunk for r in rows),
    )


def _group(rows: Sequence[QueryResult], key: Callable[[QueryResult], str]) -> dict[str, Summary]:
    groups: dict[str, list[QueryResult]] = {}
    for row in rows:
        if key(row):
            groups.setdefault(key(row), []).append(row)
    return {name: _summarize(groups[name]) for name in sorted(groups)}
