"""Graph expansion: one hop from the top hits along the edges that fit the
question — callers and tests for impact questions, callees for "how does it
work", tests for QA questions. Expanded chunks score below their seed, never
duplicate a chunk already listed, and are capped in number."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from ..config import Config
from ..filters import Filters
from ..store.protocols import ChunkReader, GraphReader
from .types import Hit


@dataclass(frozen=True)
class Step:
    label: str  # the hit's source is "graph:<label>"
    edge_kind: str
    #: "in": chunks with an edge into the seed (callers, tests); "out": the seed's targets.
    direction: str
    phrase: str  # for ``why``: "called by", "calls", "tested by"


CALLERS = Step("called_by", "calls", "in", "calls")
CALLEES = Step("calls", "calls", "out", "called by")
TESTS = Step("tests", "tests", "in", "tests")

#: Which edges each intent follows, in order of preference.
INTENT_STEPS: dict[str, tuple[Step, ...]] = {
    "impact": (TESTS, CALLERS),  # a caller that is a test is labelled as a test
    "explain": (CALLEES,),
    "tests": (TESTS,),
    "locate": (),
}


class GraphStore(ChunkReader, GraphReader, Protocol):
    """What expansion reads: edges, and the chunks at their ends."""


def expand(
    store: GraphStore,
    hits: list[Hit],
    intent: str,
    config: Config,
    filters: Filters | None = None,
) -> list[Hit]:
    """``hits`` plus their graph neighbours that pass ``filters``. A neighbour already
    listed is lifted to the score it would get (when that is higher) instead of being
    listed twice."""
    steps = INTENT_STEPS.get(intent, ())
    out = list(hits)
    index = {h.chunk.id: i for i, h in enumerate(out)}
    added = 0
    for seed in hits[: config.search.expand_seeds]:
        for step in steps:
            edges = (
                store.edges_to(seed.chunk.id, step.edge_kind)
                if step.direction == "in"
                else store.edges_from(seed.chunk.id, step.edge_kind)
            )
            ids = list(dict.fromkeys(e.src if step.direction == "in" else e.dst for e in edges))
            new = {
                chunk_id: chunk
                for chunk_id, chunk in store.get_chunks(i for i in ids if i not in index).items()
                if filters is None or filters.allows(chunk)
            }
            for position, chunk_id in enumerate(ids, start=1):
                score = seed.score * config.search.expand_score_factor / position
                why = f"{step.phrase} {seed.chunk.qualname}"
                if chunk_id in index:
                    i = index[chunk_id]
                    if out[i].score < score and out[i].via == "":
                        out[i] = replace(out[i], score=score, why=f"{out[i].why}; {why}")
                elif chunk_id in new and added < config.search.expand_max:
                    index[chunk_id] = len(out)
                    out.append(
                        Hit(new[chunk_id], score, f"graph:{step.label}", why, via=seed.chunk.id)
                    )
                    added += 1
    return out
