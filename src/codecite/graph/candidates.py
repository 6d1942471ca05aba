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


_GO_TESTING = frozenset({"t", "b"})


def abbreviates(key: str, owner: str, fam: str) -> bool:
    """Whether a variable's name (normalized) abbreviates a class's: its first letter,
    then its other letters in order (``ctx`` → ``Context``, ``req`` → ``Request``). One
    letter only in Go, where a receiver or a short-lived variable is named so by
    convention (``c *Context``)."""
    if not key or not owner or key[0] != owner[0] or key == owner:
        return False
    if len(key) == 1:  # (``t``, ``b``: Go's *testing.T and *testing.B)
        return fam == "go" and key not in _GO_TESTING
    rest = iter(owner[1:])
    return all(letter in rest for letter in key[1:])


def pick(cands: Sequence[Cand], q: str, cls: str, plain: bool) -> list[Cand]:
    """The candidates if they are one definition (overloads allowed), else [].

    Several are first narrowed: a variable qualifier to the class named like it
    (``order`` → ``Order``), else to the class whose name it abbreviates (``ctx`` →
    ``Context``); a plain call to the enclosing class ``cls``, then to top-level
    definitions when unqualified.
    """
    if len(cands) <= 1:
        return list(cands)
    if not plain:
        key = qualifier_key(q)
        narrowed = [c for c in cands if c.owner == key]
        if not narrowed:
            narrowed = [c for c in cands if abbreviates(key, c.owner, c.fam)]
    else:
        narrowed = [c for c in cands if c.parent == cls] if cls else []
        if not narrowed and not q:
            narrowed = [c for c in cands if not c.parent]
    chosen = narrowed or cands
    first = chosen[0]
    if all(c.path == first.path and c.qualname == first.qualname for c in chosen):
        return list(chosen)
    return []
