"""``explain``: the documentation of one symbol, from what the index knows about it,
every statement cited ``path:start-end``::

    target ─► resolve: qualname (Deal.close) | name (close) | path::qualname | path:line
           ─► facts: summary (doc comment, else signature), parameters and return value
              (signature + doc comment), exceptions raised and early returns (per-language
              code patterns), callees, 2-3 usage examples (the callers' calling lines,
              source before tests), tests (names and their asserting lines)
           ─► offline: markdown assembled from the facts (grounded by construction)
              | LLM: the facts and the code as delimited context; the model writes prose
           ─► every citation checked against the chunks used; unverified ones flagged

A name that matches several definitions raises :class:`AmbiguousSymbolError` listing
them, as git does for an ambiguous ref. The package, by stage: :mod:`.resolve` (a
target to a definition), :mod:`.signature` and :mod:`.doc_comment` (reading them),
:mod:`.scan` (reading the code), :mod:`.graph` (callers, callees, tests),
:mod:`.facts` (assembling), :mod:`.model` (the values, JSON), :mod:`.markdown`,
:mod:`.prose` (checking citations, the LLM); :mod:`.limits` names the limits.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..answer.llm import LLM, LLMChoice
from .doc_comment import parse_doc, split_summary
from .facts import build
from .limits import DEFINITION_KINDS
from .markdown import code_span, render
from .model import Cited, Exit, Explanation, Link, Param, TestCase, Usage
from .prose import check, ms_since, write_prose
from .resolve import group_definitions, resolve
from .scan import signature_span, text_span, verbatim
from .signature import parse_signature

if TYPE_CHECKING:
    from .source import Source

__all__ = [
    "DEFINITION_KINDS",
    "Cited",
    "Exit",
    "Explanation",
    "Link",
    "Param",
    "TestCase",
    "Usage",
    "build",
    "check",
    "code_span",
    "explain",
    "group_definitions",
    "parse_doc",
    "parse_signature",
    "resolve",
    "signature_span",
    "split_summary",
    "text_span",
    "verbatim",
    "write_prose",
]


def explain(index: Source, target: str, *, llm: str | LLM | LLMChoice | None = None) -> Explanation:
    """Explain the symbol ``target`` names (see :func:`resolve`) from the index.

    Offline (``llm`` None or "extractive") the explanation is assembled from the
    facts, so it is grounded by construction. With a model (``"openai:MODEL"``,
    ``"auto"``, an :class:`LLM`), the model writes the prose from the same facts and
    code; its citations are checked like ``ask``'s and unverified ones flagged.
    Changed files are re-indexed first, as for a search."""
    started = time.perf_counter()
    choice = None if llm is None else index.choose_llm(llm)
    expl, fresh = index.fresh(
        lambda: build(index, resolve(index, target), target), Explanation.paths
    )
    if fresh.stale:
        expl.flags.append(
            f"{len(fresh.stale)} file(s) changed since indexing and were not re-indexed "
            f"({', '.join(fresh.stale[:3])}); run `codecite index`"
        )
    check(expl)
    expl.timings_ms["facts"] = ms_since(started)
    if choice is not None:
        expl.llm_reason = choice.reason
    if choice is not None and choice.llm is not None:  # the prose leads the markdown
        write_prose(expl, choice.llm, max_tokens=index.config.answer.answer_max_tokens)
    else:
        expl.markdown = render(expl)
    expl.timings_ms["total"] = ms_since(started)
    return expl
