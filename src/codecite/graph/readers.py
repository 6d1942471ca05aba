"""Where a constant is read, and where a function is called by name when the graph
resolved no call of it. Reading a value is no graph edge (calls, imports, inherits,
tests): the places are the code chunks that write the constant's name as a whole word,
found through the keyword index (``answer.facts``: "what breaks if I change X";
``explain``: "Read by"). A call the resolver could not tie to one definition (a method
of an untyped receiver, an interface's) is found the same way, by the name it calls."""

from __future__ import annotations

import re
from typing import Protocol

from ..chunking.grammars import GRAMMARS
from ..filters import Filters
from ..store.protocols import ChunkReader, KeywordIndex
from ..types import Chunk

#: Chunks of code: a language tree-sitter parses (a doc or a changelog mentioning a name
#: neither reads nor calls it).
_CODE = Filters(languages=tuple(GRAMMARS))
#: Chunks read for the places that use a constant (the best keyword matches of its name).
READERS_LOOKUP = 60
#: Chunks that write a name without reading it: a module header (its imports), a class
#: outline (its members are chunks of their own).
_NOT_READERS = frozenset({"module", "class"})


class ReaderStore(ChunkReader, KeywordIndex, Protocol):
    """What finding a constant's readers needs: the keyword index and the chunks."""


def name_pattern(name: str) -> re.Pattern[str]:
    """``name`` as a whole word of code (``$`` is a JavaScript name's letter)."""
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


def call_pattern(definition: Chunk) -> re.Pattern[str]:
    """A call of ``definition`` by its name: ``.name(`` for a member of a class or an
    object, ``name(`` (or ``module.name(``) for a function (read line by line with
    :func:`calls`)."""
    name = re.escape(definition.name)
    if definition.parent:  # a member: called on something
        return re.compile(rf"\.\s*{name}\s*\(")
    return re.compile(rf"(?<![\w$]){name}\s*\(")  # a function, or a module's


_DEFINES = re.compile(r"^\s*(export\s+)?(async\s+)?(def|function|func|fn)\b")
_COMMENT = re.compile(r"^\s*(#|//|/\*|\*)")


def calls(line: str, pattern: re.Pattern[str]) -> bool:
    """Whether a line of code calls what ``pattern`` (:func:`call_pattern`) names: not
    a line defining a function (``def``, ``function``, ``func``, ``fn``), not a comment."""
    return bool(pattern.search(line)) and not _DEFINES.match(line) and not _COMMENT.match(line)


def by_name(store: ReaderStore, definition: Chunk, pattern: re.Pattern[str]) -> list[Chunk]:
    """The chunks of code the keyword index finds for ``definition``'s name that are not
    it (nor a part of it, nor a module header or class outline) and whose text matches
    ``pattern``, best first."""
    return [
        c
        for c in _code_chunks(store, definition.name)
        if c.qualname != definition.qualname and pattern.search(c.content)
    ]


def readers(store: ReaderStore, constant: Chunk) -> list[Chunk]:
    """The chunks of code that may read ``constant``: those the keyword index finds for
    its name (best first), less the constant itself, module headers and class outlines.
    The caller finds the line writing the name (:func:`name_pattern`) in each."""
    return [c for c in _code_chunks(store, constant.name) if c.id != constant.id]


def _code_chunks(store: ReaderStore, name: str) -> list[Chunk]:
    """The chunks of code the keyword index finds for ``name``, best first, less module
    headers and class outlines (they write a name without using it)."""
    ids = store.keyword_search([name], _CODE, READERS_LOOKUP, (1.0, 1.0, 1.0))
    found = store.get_chunks(ids)
    return [found[i] for i in ids if i in found and found[i].kind not in _NOT_READERS]
