"""Where a constant is read. Reading a value is no graph edge (calls, imports, inherits,
tests): the places are the code chunks that write the constant's name as a whole word,
found through the keyword index (``answer.facts``: "what breaks if I change X";
``explain``: "Read by")."""

from __future__ import annotations

import re
from typing import Protocol

from ..store.protocols import ChunkReader, KeywordIndex
from ..types import Chunk

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


def readers(store: ReaderStore, constant: Chunk) -> list[Chunk]:
    """The chunks of code that may read ``constant``: those the keyword index finds for
    its name (best first), less the constant itself, module headers and class outlines.
    The caller finds the line writing the name (:func:`name_pattern`) in each."""
    ids = store.keyword_search([constant.name], None, READERS_LOOKUP, (1.0, 1.0, 1.0))
    found = store.get_chunks(ids)
    return [
        found[i]
        for i in ids
        if i in found and i != constant.id and found[i].kind not in _NOT_READERS
    ]
