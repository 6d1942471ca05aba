"""The context of an answer: what ``search`` finds for the question, read as ``search``
reads it (docs/DESIGN.md §7), then *bridged* to the code that answers.

Retrieval often ranks the right place second-hand: a test named after the behaviour
(``test_too_many_files_raise``), a documentation section in the asker's words ("Session
expiry time in seconds"). An answer needs the code itself, so each bridge adds, right
after the hit that led to it:

- **messages**: the code that writes a message the question quotes, or that a
  retrieved test asserts (the ``raise`` behind ``"Too many files."``);
- **docs**: the code a retrieved documentation section names (`` `SessionMiddleware` ``,
  ``max_age``) — its definitions, or the code chunks that hold the name;
- **settings**: for a quantity question ("how long are results kept?"), the code that
  best holds its subject together with the words of the unit it asks for (``ttl``,
  ``timeout``, ``max``, ``default``): where a default or a limit is set
  (``DEFAULT_RESULT_TTL = 500``) is often not where the question's words rank best.

Bridged chunks are searched context like any other: an answer may cite them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..chunking.grammars import GRAMMARS
from ..config import Config
from ..filters import Filters
from ..graph.testmap import is_test_path
from ..retrieve import Searcher
from ..retrieve.question import Question, error_phrases
from ..retrieve.types import Hit, SearchResult
from ..types import Chunk
from .evidence import quoted_messages, secondary_path, tested_messages
from .shape import Shape, unit_words
from .terms import TermWeights, stems, variants

#: Code only: where a question's names must be found for it to be about this code.
CODE_FILTER = Filters(languages=tuple(GRAMMARS))
#: Shapes whose answer is often the line that writes a message (a raise, an error).
MESSAGE_SHAPES = frozenset({"what-happens", "error", "quantity", "yesno", "how", "who"})
#: Hits read for bridges; chunks looked up per message (tests asserting a message come
#: first there: the code that writes it follows); code chunks added per bridged hit.
BRIDGE_HITS = 10
MESSAGE_LOOKUP = 20
PER_BRIDGE = 2
#: Top hits whose base classes a quantity question is bridged to: a number is often
#: set on the class a retrieved one inherits from (``exit_code = 2`` on ``UsageError``
#: for a question that finds ``BadOptionUsage(UsageError)``).
BASE_HITS = 3
#: Code chunks added by the settings bridge, and the keyword hits read for them.
SETTINGS = 2
SETTINGS_WHY = "code that sets a value of the kind asked for"
SETTINGS_LOOKUP = 12
#: The share of the question's subject weight (with the code's words for it) a chunk
#: must hold to be added by the settings bridge: its unit's words alone ("max_age",
#: "seconds") do not make it about the question. Answer benchmark, lead hit at 0 / 0.1
#: / 0.15 / 0.2 / 0.25 / 0.3: 0.553 / 0.553 / 0.558 / 0.558 / 0.553 / 0.553.
SETTINGS_MIN_SHARE = 0.2
#: Names a documentation section writes: `code`, CamelCase, snake_case, dotted.
_DOC_NAME = re.compile(
    r"`([A-Za-z_][\w.]*)(?:\(\))?`|\b([A-Z][a-z]+(?:[A-Z][a-z0-9]+)+)\b|\b([a-z]+(?:_[a-z0-9]+)+)\b"
)


@dataclass
class Context:
    """An answer's context: the search result, and the hits after bridging."""

    result: SearchResult
    hits: list[Hit]
    #: Messages the retrieved tests assert.
    tested: list[str] = field(default_factory=list)


class ContextBuilder:
    """Retrieves and bridges the context of answers over one searcher."""

    def __init__(self, searcher: Searcher, config: Config) -> None:
        self.searcher, self.config = searcher, config

    def build(
        self,
        question: str,
        read: Question,
        shape: Shape,
        filters: Filters | None,
        sought: TermWeights,
    ) -> Context:
        """The context of ``question``; ``sought``: the weights of the terms its evidence
        looks for (:meth:`~codecite.answer.answerer.Answerer.term_weights`), which a
        chunk of the settings bridge must hold a share of."""
        result = self.retrieve(question, read, filters)
        tested = tested_messages(result.hits[:BRIDGE_HITS])
        found: dict[str, list[str]] = {}
        if shape.kind in MESSAGE_SHAPES:
            # what the asker saw printed: logged or quoted (a report's traceback error is
            # often raised far from its cause: its file ranking decides that)
            own = [*read.logged, *quoted_messages(read)]
            for source, messages in (("question", own), *tested.items()):
                ids = self._writing(messages)
                if ids:
                    found[source] = ids
        for hit in result.hits[:BRIDGE_HITS]:
            chunk = hit.chunk
            if secondary_path(chunk.path) and not is_test_path(chunk.path):
                found[chunk.id] = self._named_by(chunk, filters)
        settings: list[str] = []
        if shape.kind == "quantity" and not read.long:
            settings = self._settings(question, shape, filters, sought)
            for hit in result.hits[:BASE_HITS]:
                bases = self._bases(hit.chunk)
                if bases:
                    found[hit.chunk.id] = [*found.get(hit.chunk.id, []), *bases]
        hits = self._insert(result.hits, found, settings)
        return Context(result, hits, [m for ms in tested.values() for m in ms])

    def retrieve(self, question: str, read: Question, filters: Filters | None) -> SearchResult:
        """The question searched exactly as ``search`` would: a long question (a bug
        report) by its file ranking (``search --files``: the best files, each with its
        best chunks), a short one by its best chunks."""
        cfg = self.config
        if read.long:
            return self.searcher.search(
                question, k=cfg.answer.answer_files, filters=filters, files=True
            )
        return self.searcher.search(question, k=cfg.answer.answer_chunks, filters=filters)

    def in_code(self, spellings: Sequence[str]) -> bool:
        """Whether a chunk of code (not docs or text) holds one of ``spellings``."""
        return bool(self.searcher.store.keyword_search(list(spellings), CODE_FILTER, 1, _ALL))

    # --- bridges ---------------------------------------------------------------------
    def _writing(self, messages: Sequence[str]) -> list[str]:
        """Chunks whose text holds the literal phrases of ``messages``."""
        phrases = [p for m in messages for p in error_phrases(m)]
        if not phrases:
            return []
        return self.searcher.store.keyword_search(
            list(dict.fromkeys(phrases)), None, MESSAGE_LOOKUP, _BODY
        )

    def _settings(
        self, question: str, shape: Shape, filters: Filters | None, sought: TermWeights
    ) -> list[str]:
        """Code chunks (not tests, docs or examples) that best hold the question's
        subject with the words of its unit and "default" (see the module), and hold at
        least :data:`SETTINGS_MIN_SHARE` of the weight ``sought``."""
        terms = [v for t in shape.subject for v in variants(t)]
        if not terms:
            return []
        terms += [*unit_words(question), "default", "DEFAULT"]
        scope = (
            filters
            if filters and filters.languages
            else replace(filters or CODE_FILTER, languages=CODE_FILTER.languages)
        )
        ids = self.searcher.store.keyword_search(
            list(dict.fromkeys(terms)), scope, SETTINGS_LOOKUP, _ALL
        )
        chunks = self.searcher.store.get_chunks(ids)

        def held(chunk: Chunk) -> float:
            return sought.share(stems(f"{chunk.qualname} {chunk.docstring} {chunk.content}"))

        return [
            i
            for i in ids
            if i in chunks
            and not secondary_path(chunks[i].path)
            and held(chunks[i]) >= SETTINGS_MIN_SHARE
        ][:SETTINGS]

    def _bases(self, chunk: Chunk) -> list[str]:
        """The classes a class of code (not a test, doc or example) inherits from."""
        if chunk.kind != "class" or secondary_path(chunk.path):
            return []
        return [e.dst for e in self.searcher.store.edges_from(chunk.id, "inherits")]

    def _named_by(self, doc: Chunk, filters: Filters | None) -> list[str]:
        """Code chunks of the names a documentation chunk writes: definitions by that
        name, else chunks of code holding it (a parameter, a setting)."""
        names = []
        for m in _DOC_NAME.finditer(doc.content):
            name = next(g for g in m.groups() if g)
            if len(name) > 3 and name not in names:
                names.append(name)
        store = self.searcher.store
        out: list[str] = []
        for name in names[:8]:
            last = name.rpartition(".")[2]
            ids = store.find_symbols(name, "qualname", filters, 2) or store.find_symbols(
                last, "name", filters, 2
            )
            if not ids and "_" in last:
                ids = store.keyword_search([last], CODE_FILTER, 2, _ALL)
            out += [i for i in ids if i not in out]
            if len(out) >= PER_BRIDGE * 2:
                break
        return out

    def _insert(
        self, hits: list[Hit], found: dict[str, list[str]], settings: Sequence[str] = ()
    ) -> list[Hit]:
        """``hits`` with each bridge's code chunks right after the hit that led to it
        (the question's own messages first of all; the settings bridge after the first
        hit)."""
        if not found and not settings:
            return hits
        store = self.searcher.store
        chunks = store.get_chunks({*(i for ids in found.values() for i in ids), *settings})
        have = {h.chunk.id for h in hits}
        out: list[Hit] = []
        for n, hit in enumerate([None, *hits]):
            if hit is not None:
                out.append(hit)
            source = "question" if hit is None else hit.chunk.id
            bridges = [(i, PER_BRIDGE, _why(hit)) for i in found.get(source, [])]
            if n == 1:
                bridges += [(i, SETTINGS, SETTINGS_WHY) for i in settings]
            added: dict[str, int] = {}
            for chunk_id, most, why in bridges:
                chunk = chunks.get(chunk_id)
                if chunk is None or chunk_id in have or secondary_path(chunk.path):
                    continue
                if added.get(why, 0) == most:
                    continue
                have.add(chunk_id)
                out.append(Hit(chunk, hit.score if hit else 1.0, "keyword", why))
                added[why] = added.get(why, 0) + 1
        return out


_ALL = (1.0, 1.0, 1.0)
_BODY = (0.0, 0.0, 1.0)


def _why(hit: Hit | None) -> str:
    if hit is None:
        return "writes a message the question quotes"
    if is_test_path(hit.chunk.path):
        return f"code that {hit.chunk.qualname} tests or asserts"
    return f"code that {hit.chunk.qualname} names"
