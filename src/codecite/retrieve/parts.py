"""Ranked lists from the parts of a long question (:mod:`.question`), fused with the
vector list by weighted RRF. Each part is searched for what it is good at:

- ``prose`` and ``code``: BM25 on their own (a long snippet must not drown the prose),
  each with its most informative terms only (query-term frequency × IDF, common
  words out), so a 400-word report is not dominated by its most frequent words;
- ``symbols``: exact symbol-table look-ups of the identifiers;
- ``files``: the files that traceback frames and path mentions name, resolved to
  indexed paths by their longest matching suffix, best chunks first (the frame's
  function, then the file's best BM25 chunks for the prose);
- ``errors``: the literal phrases of error messages, looked up in code bodies (the
  line that raises the message is often the answer).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from ..chunking.grammars import GRAMMARS, is_code_language
from ..config import Config
from ..filters import Filters
from ..graph.testmap import is_test_path
from ..identifiers import split_identifier, tokenize
from ..question.kinds import QueryInfo
from ..question.parts import Frame, Parts, error_phrases
from ..question.terms import STOPWORDS
from ..store.protocols import ReadStore
from .keyword import TermStats, symbol_search

log = logging.getLogger(__name__)

#: Languages that are code (those with a grammar; not prose, configuration or text).
CODE_LANGUAGES = tuple(GRAMMARS)

#: An identifier naming more definitions than this is too common to look up.
MAX_DEFINITIONS = 5
#: Chunks of one name read to count its definitions (a long class's parts included).
DEFINITION_CHUNKS = 64
_DUNDER = re.compile(r"__\w+__")
#: How many folders above the file name a suffix match may use.
SUFFIX_DEPTH = 3
#: Chunks a named file contributes to the ``files`` list.
CHUNKS_PER_NAMED_FILE = 3
#: Definitions of a frame's function name looked at in its file (the one that holds
#: the frame's line, or lies nearest it, is taken).
FRAME_DEFINITIONS = 20


class Deadline:
    """The time a long question's parts may take (``long_query_seconds``): a part, or
    a loop step within one, that would start after it is skipped."""

    def __init__(self, seconds: float) -> None:
        self.until = time.monotonic() + seconds

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self.until


def part_lists(
    store: ReadStore,
    question: Parts,
    info: QueryInfo,
    config: Config,
    filters: Filters | None,
    stats: TermStats,
    deadline: Deadline | None = None,
) -> dict[str, list[str]]:
    """Chunk ids by part (best first); empty parts are left out. The work is bounded
    whatever the question's length (``long_query_*`` settings); parts not started by
    the ``deadline`` are left out too (the others still rank)."""
    n = config.search.candidates
    clock = deadline or Deadline(config.search.long_query_seconds)
    weights = (
        config.search.bm25_symbol_weight,
        config.search.bm25_path_weight,
        config.search.bm25_body_weight,
    )
    limit = config.search.long_query_max_terms
    prose_terms = informative_terms(question.prose, stats, config.search.long_query_terms, limit)
    pool = store.keyword_search(prose_terms, filters, config.search.long_query_pool, weights)
    lists: dict[str, list[str]] = {
        "prose": pool[:n],
        "prose_files": best_chunk_per_file(store, pool, config.search.rrf_k),
    }
    parts: dict[str, Callable[[], list[str]]] = {
        "code": lambda: store.keyword_search(
            informative_terms(question.code, stats, config.search.long_query_terms, limit),
            filters,
            n,
            weights,
        ),
        "symbols": lambda: symbol_search(
            store, info.identifiers, filters, config.search.long_query_symbols
        ),
        "files": lambda: named_file_chunks(
            store, question, prose_terms, filters, config.search.long_query_files, clock
        ),
        "errors": lambda: error_chunks(
            store, question, filters, n, config.search.long_query_phrases
        ),
    }
    for name, run in parts.items():
        if clock.passed:
            log.info("long question: out of time before its %s part", name)
            break
        lists[name] = run()
    return {name: ids for name, ids in lists.items() if ids}


def best_chunk_per_file(store: ReadStore, ranked: list[str], rrf_k: int) -> list[str]:
    """Files ranked by the evidence of all their chunks in ``ranked`` (BM25 over whole
    files, approximated: a file whose many chunks match beats one lucky chunk), each
    as its best chunk; code files only (tests, docs and configuration are left to the
    other lists and their priors)."""
    chunks = store.get_chunks(ranked)
    evidence: dict[str, float] = {}
    best: dict[str, str] = {}
    for rank, chunk_id in enumerate(ranked, start=1):
        chunk = chunks.get(chunk_id)
        if chunk is None or not is_code_language(chunk.language) or is_test_path(chunk.path):
            continue
        evidence[chunk.path] = evidence.get(chunk.path, 0.0) + 1.0 / (rrf_k + rank)
        best.setdefault(chunk.path, chunk_id)
    return [best[path] for path in sorted(evidence, key=lambda p: -evidence[p])]


def specific_identifiers(
    store: ReadStore,
    identifiers: tuple[str, ...],
    filters: Filters | None,
    limit: int,
    deadline: Deadline | None = None,
    max_examined: int | None = None,
) -> tuple[str, ...]:
    """The identifiers of a long question worth an exact look-up: a qualified name
    the index defines (``Schema.dump``), or a name that is compound or capitalised
    (``to_json_dict``, ``FileSet``; a plain word such as ``name`` or ``data`` is
    anyone's attribute), not a dunder (``__init__``: every class has one), naming at
    most :data:`MAX_DEFINITIONS` definitions (a name defined everywhere says nothing).
    At most ``max_examined`` identifiers are looked at, none after the ``deadline``."""
    out: list[str] = []
    for identifier in identifiers[:max_examined]:
        if deadline is not None and deadline.passed:
            break
        name = re.split(r"\.|::|->", identifier)[-1]
        if not name or _DUNDER.fullmatch(name):
            continue
        if name != identifier and store.find_symbols(identifier, "qualname", filters, 1):
            out.append(identifier)
        elif len(split_identifier(name)) < 2 and not name[0].isupper():
            continue
        if (
            identifier not in out
            and 1 <= count_definitions(store, name, filters) <= MAX_DEFINITIONS
        ):
            out.append(identifier)
        if len(out) == limit:
            break
    return tuple(out)


def count_definitions(store: ReadStore, name: str, filters: Filters | None) -> int:
    """How many definitions are named ``name`` (more than :data:`MAX_DEFINITIONS`
    counts as one more): a long class or function cut into parts is one definition,
    however many chunks it has."""
    found = store.find_symbols(name, "name", filters, DEFINITION_CHUNKS)
    if len(found) <= MAX_DEFINITIONS:
        return len(found)
    chunks = store.get_chunks(found).values()
    return min(len({(c.path, c.qualname) for c in chunks}), MAX_DEFINITIONS + 1)


def code_only(info: QueryInfo, filters: Filters | None) -> Filters | None:
    """Unless its title asks about docs or configuration, a bug report's answer is
    code: its searches are limited to code (an issue template or a changelog shares
    a report's boilerplate and its words, never its fix). A language filter given by
    the user stands."""
    if info.asks_non_code or (filters and filters.languages):
        return filters
    return replace(filters or Filters(), languages=CODE_LANGUAGES)


def part_weights(config: Config) -> dict[str, float]:
    """The RRF weight of each part's list (config fields ``question_*_weight``)."""
    return {
        "prose": config.search.question_prose_weight,
        "prose_files": config.search.question_file_evidence_weight,
        "code": config.search.question_code_weight,
        "symbols": config.search.question_symbol_weight,
        "files": config.search.question_file_weight,
        "errors": config.search.question_error_weight,
        "vector": config.search.question_vector_weight,
    }


def informative_terms(
    text: str, stats: TermStats, limit: int, max_terms: int | None = None
) -> list[str]:
    """The ``limit`` terms of ``text`` with the highest (1 + ln tf) · idf; terms absent
    from the index and those in over ``keyword_max_df_share`` of it are left out. Only
    the ``max_terms`` most frequent distinct terms are weighed (one index look-up each)."""
    counts = Counter(t for t in tokenize(text) if t not in STOPWORDS and len(t) > 1)
    if not counts:
        return []
    if max_terms is not None and len(counts) > max_terms:
        counts = Counter(dict(counts.most_common(max_terms)))
    documents = max(stats.documents, 1)
    scored = []
    for term, tf in counts.items():
        df = stats.df(term)
        if df == 0 or df > 0.25 * documents:
            continue
        idf = math.log(1 + (documents - df + 0.5) / (df + 0.5))
        scored.append(((1 + math.log(tf)) * idf, term))
    scored.sort(reverse=True)
    return [term for _, term in scored[:limit]]


def named_file_chunks(
    store: ReadStore,
    question: Parts,
    terms: list[str],
    filters: Filters | None,
    max_files: int | None = None,
    deadline: Deadline | None = None,
) -> list[str]:
    """Chunks of the files that frames (deepest first) and path mentions name. A frame
    in an installed copy (``site-packages/pkg/mod.py``) names the repository's file
    when its suffix matches one; frames of other libraries match none. At most
    ``max_files`` distinct names are resolved (a pasted log of thousands of frames
    costs no more than its first few dozen), none after the ``deadline``."""
    named: list[tuple[str, Frame | None]] = [
        (f.path, f) for f in reversed(question.frames) if not f.path.startswith("<")
    ]
    named += [(p, None) for p in question.paths]
    if max_files is not None:
        distinct = list(dict.fromkeys(raw for raw, _ in named))[:max_files]
        kept = set(distinct)
        named = [(raw, frame) for raw, frame in named if raw in kept]
    out: list[str] = []
    seen: set[str] = set()
    for raw, frame in named:
        if deadline is not None and deadline.passed:
            break
        path = resolve_path(store, raw, filters)
        if path is None:
            continue
        in_file = replace(filters or Filters(), path=path)
        ids: list[str] = []
        if frame is not None and frame.function and not frame.function.startswith("<"):
            ids += _framed_definition(store, frame, in_file)
        if path not in seen:
            ids += store.keyword_search(
                terms or _path_terms(path), in_file, CHUNKS_PER_NAMED_FILE, (1.0, 0.0, 1.0)
            )
            ids += store.keyword_search(_path_terms(path), in_file, 1, (1.0, 1.0, 1.0))
            seen.add(path)
        # a chunk both look-ups of a named file find is listed (and fused) twice: the
        # named file's best chunk (bug reports: deduplicated, Acc@1 fell 37.7 -> 36.3)
        out += [i for i in ids if i not in out]
    return out


def framed_files(
    store: ReadStore, question: Parts, filters: Filters | None, max_files: int = 8
) -> list[str]:
    """The indexed files that the question's traceback frames and path mentions name
    by a folder and the file name at least (``site-packages/starlette/responses.py``
    names ``starlette/responses.py``; ``node_modules/express/lib/view.js``,
    ``lib/view.js``): a pasted trace through this code says the question is about it.
    A bare file name (``app.py``) names no file here: the reporter's own ``app.py`` is
    as likely. At most ``max_files`` distinct names are resolved."""
    raws = [f.path for f in question.frames if not f.path.startswith("<")]
    out: list[str] = []
    for raw in list(dict.fromkeys([*raws, *question.paths]))[:max_files]:
        path = resolve_path(store, raw, filters)
        if path is None or path in out:
            continue
        tail = [p for p in raw.replace("\\", "/").split("/") if p][-2:]
        if len(tail) == 2 and path.split("/")[-2:] == tail:
            out.append(path)
    return out


def _framed_definition(store: ReadStore, frame: Frame, in_file: Filters) -> list[str]:
    """The definition of a frame's function in its file: of several (``__init__`` in a
    file of classes), the one whose lines hold the frame's line, else the nearest (the
    reporter's version may differ by a few lines)."""
    ids = store.find_symbols(frame.function, "name", in_file, FRAME_DEFINITIONS)
    if len(ids) <= 1:
        return ids
    chunks = store.get_chunks(ids)

    def distance(chunk_id: str) -> int:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            return 1 << 30
        return max(chunk.start_line - frame.line, frame.line - chunk.end_line, 0)

    return [min(ids, key=distance)]


def resolve_path(store: ReadStore, raw: str, filters: Filters | None) -> str | None:
    """The indexed path that ``raw`` (a frame's or a mention's path, possibly absolute
    or from an installed copy) names: the longest matching suffix of up to
    :data:`SUFFIX_DEPTH` folders plus the file name; None when none or ambiguous."""
    parts = [p for p in raw.replace("\\", "/").split("/") if p and p not in (".", "..")]
    if not parts:
        return None
    for depth in range(min(SUFFIX_DEPTH, len(parts) - 1), -1, -1):
        suffix = "/".join(parts[-depth - 1 :])
        pattern = suffix if depth == len(parts) - 1 and not raw.startswith("/") else None
        found = _paths_with_suffix(store, suffix, filters)
        if pattern is not None and pattern in found:
            return pattern
        if len(found) == 1:
            return found.pop()
        if len(found) > 1:
            return None  # ambiguous at this depth; a shorter suffix is more so
    return None


def _paths_with_suffix(store: ReadStore, suffix: str, filters: Filters | None) -> set[str]:
    terms = _path_terms(suffix)
    if not terms:
        return set()
    in_paths = Filters(repo=filters.repo if filters else "", path=f"*{suffix}")
    ids = store.keyword_search(terms, in_paths, 200, (0.0, 1.0, 0.0))
    return {
        c.path
        for c in store.get_chunks(ids).values()
        if c.path == suffix or c.path.endswith("/" + suffix)
    }


def _path_terms(path: str) -> list[str]:
    return list(dict.fromkeys(tokenize(path.rpartition("/")[2].rpartition(".")[0])))


def error_chunks(
    store: ReadStore,
    question: Parts,
    filters: Filters | None,
    limit: int,
    max_phrases: int | None = None,
) -> list[str]:
    """Chunks whose code holds the literal phrases of the question's error (and logged)
    messages, most phrases first (at most ``max_phrases`` phrases, the first messages' first)."""
    phrases: list[str] = []
    for message in question.messages:
        phrases += error_phrases(message)
    if not phrases:
        return []
    unique = list(dict.fromkeys(phrases))[:max_phrases]
    return store.keyword_search(unique, filters, limit, (0.0, 0.0, 1.0))


__all__ = ["framed_files", "informative_terms", "part_lists", "part_weights", "resolve_path"]
