"""Rerank fused candidates with signals we own (no cross-encoder ships its weights
offline, docs/DESIGN.md section 10). Each signal has a named weight in Config:

- exact symbol: the chunk's name or qualname is an identifier of the query;
- agreement: the chunk was found by both keyword and vector search;
- graph proximity: edges link the chunk to other top candidates;
- path prior: tests, docs and examples rank lower unless the question is about them;
- coarse kind: module headers, line windows and whole files rank a little lower.

Scores are the fused scores normalised to [0, 1] plus the weighted signals. A
cross-encoder, if one becomes available offline, plugs in as another ``Reranker``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Protocol

from ..chunking.grammars import is_code_language
from ..config import Config
from ..graph.testmap import is_test_path
from ..identifiers import split_identifier
from ..question.kinds import QueryInfo, symbol_candidates
from ..store.protocols import GraphReader
from .types import Hit

_DOC_PATH = re.compile(
    r"(^|/)_?(docs?|documentation|examples?|samples?|demo)/|\.(md|rst|txt)$", re.I
)
#: A project's own tooling: build, release and documentation scripts, benchmarks,
#: version stamping. A bug report's fix is in the code it ships, rarely here.
_SUPPORT_PATH = re.compile(
    r"^(bench|scripts?|build_tools|tools|ci|\.github)/|(^|/)benchmarks?/|(^|/)(setup|"
    r"versioneer|_version|noxfile|tasks|fabfile)\.py$",
    re.I,
)


COARSE_KINDS = frozenset({"module", "window", "file"})


class Reranker(Protocol):
    def rerank(self, hits: list[Hit], info: QueryInfo) -> list[Hit]: ...


def _norm(name: str) -> str:
    return "".join(split_identifier(name))


class SignalReranker:
    """The default reranker: owned signals with named weights."""

    def __init__(self, graph: GraphReader, config: Config) -> None:
        self.graph, self.config = graph, config

    def rerank(self, hits: list[Hit], info: QueryInfo) -> list[Hit]:
        if not hits:
            return hits
        top = max(h.score for h in hits) or 1.0
        wanted = {
            _norm(n)
            for i in info.identifiers
            for n in (symbol_candidates(i)[:2] if info.long else symbol_candidates(i))
        }
        linked = self._linked(
            [h.chunk.id for h in hits[: self.config.search.rerank_proximity_pool]]
        )
        asks_docs, asks_non_code = info.asks_docs, info.asks_non_code
        # a bug report not about setup or packaging: the project's tooling is not its fix
        tooling_down = info.long and not asks_non_code
        out = []
        for hit in hits:
            links = linked.get(hit.chunk.id, 0)
            bonus, why = self._signals(hit, info, wanted, links, asks_docs, tooling_down)
            if not is_code_language(hit.chunk.language) and not asks_non_code:
                bonus -= self.config.search.rerank_non_code_prior
            reason = hit.why + (f"; {', '.join(why)}" if why else "")
            out.append(replace(hit, score=hit.score / top + bonus, why=reason))
        return sorted(out, key=lambda h: -h.score)

    def _signals(
        self,
        hit: Hit,
        info: QueryInfo,
        wanted: set[str],
        links: int,
        asks_docs: bool,
        tooling_down: bool,
    ) -> tuple[float, list[str]]:
        c, cfg = hit.chunk, self.config
        bonus, why = 0.0, []
        # A bug report's scores spread wider and its words touch tests and docs more:
        # its path prior is stronger, its (already filtered) exact names count less.
        prior = cfg.search.rerank_path_prior_long if info.long else cfg.search.rerank_path_prior
        if wanted and (_norm(c.name) in wanted or _norm(c.qualname) in wanted):
            bonus += (
                cfg.search.rerank_exact_symbol_long if info.long else cfg.search.rerank_exact_symbol
            )
            why.append("exact symbol")
        top = cfg.search.rerank_agreement_top
        agree = (hit.keyword_rank or top + 1) <= top and (hit.vector_rank or top + 1) <= top
        if cfg.search.rerank_agreement and agree:
            bonus += cfg.search.rerank_agreement
            why.append("keyword+vector agree")
        if links:
            bonus += cfg.search.rerank_graph_proximity * min(links, 3) / 3
            why.append(f"linked to {links} other hits")
        if is_test_path(c.path):
            bonus += prior if info.intent in ("tests", "impact") else -prior
        elif (_DOC_PATH.search(c.path) and not asks_docs) or (
            tooling_down and _SUPPORT_PATH.search(c.path)
        ):
            bonus -= prior
        if c.kind in COARSE_KINDS or (
            c.kind == "class" and c.end_line - c.start_line >= cfg.search.large_class_lines
        ):  # a large class's chunk is its outline: its line range says little
            bonus -= cfg.search.rerank_coarse_kind
        return bonus, why

    def _linked(self, ids: list[str]) -> dict[str, int]:
        """For each id, how many of the other ids it shares an edge with."""
        if len(ids) < 2:
            return {}
        counts: dict[str, int] = {}
        for src, dst in self.graph.edges_among(ids):
            if src != dst:
                counts[src] = counts.get(src, 0) + 1
                counts[dst] = counts.get(dst, 0) + 1
        return counts
