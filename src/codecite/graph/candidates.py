"""Definitions as resolution candidates, and how to choose among several."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from codecite.graph.testmap import normalize
from codecite.types import Definition

#: Families where an unqualified call cannot reach a method (no implicit ``this``).
NO_IMPLICIT_THIS = frozenset({"python", "js", "go", "rust", "c"})


class Cand:
    """A definition with the derived fields the resolver reads on every lookup."""

    __slots__ = ("d", "fam", "kind", "own_class", "owner", "parent", "path", "qualname")

    def __init__(self, d: Definition, fam: str) -> None:
        self.d = d
        self.fam = fam
        self.kind = d.kind
        self.path = d.path
        self.qualname = d.qualname
        self.parent = d.qualname.rpartition(".")[0] if d.kind != "module" else ""
        #: normalized name of the owning class ("" for top-level definitions)
        self.owner = normalize(self.parent.rpartition(".")[2])
        #: the class a reference made inside this chunk belongs to
        self.own_class = d.qualname if d.kind == "class" else self.parent


@lru_cache(maxsize=1 << 16)
def qualifier_key(qualifier: str) -> str:
    """``self.order_repo`` → ``orderrepo``; ``$cart`` → ``cart``; ``Order`` → ``order``."""
    for sep in (".", "::", "->", "\\"):
        qualifier = qualifier.rpartition(sep)[2]
    return normalize(qualifier.lstrip("$@&*"))


def pick(cands: Sequence[Cand], q: str, cls: str, plain: bool) -> list[Cand]:
    """The candidates if they are one definition (overloads allowed), else [].

    Several are first narrowed: a variable qualifier to the class named like it
    (``order`` → ``Order``); a plain call to the enclosing class ``cls``, then to
    top-level definitions when unqualified.
    """
    if len(cands) <= 1:
        return list(cands)
    if not plain:
        key = qualifier_key(q)
        narrowed = [c for c in cands if c.owner == key]
    else:
        narrowed = [c for c in cands if c.parent == cls] if cls else []
        if not narrowed and not q:
            narrowed = [c for c in cands if not c.parent]
    chosen = narrowed or cands
    first = chosen[0]
    if all(c.path == first.path and c.qualname == first.qualname for c in chosen):
        return list(chosen)
    return []
