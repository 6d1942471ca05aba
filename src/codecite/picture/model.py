"""The values of a picture: :class:`Box`, :class:`Arrow` and their :class:`Evidence`,
gathered in a :class:`SystemMap` (``codecite map``) or a :class:`Neighbourhood` (one
symbol's callers, callees, bases and tests). Plain data: the renderers read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def cite(path: str, start: int, end: int) -> str:
    """``path:start-end`` (one line: ``path:line``), as answers cite code."""
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"


@dataclass(frozen=True)
class Evidence:
    """One edge an arrow is made of: where it stands (``path:start-end``) and what it
    links (``caller`` → ``callee``, or the importing file → the imported one)."""

    kind: str
    path: str
    start_line: int
    end_line: int
    source: str
    target: str

    @property
    def citation(self) -> str:
        return cite(self.path, self.start_line, self.end_line)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "citation": self.citation,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "source": self.source,
            "target": self.target,
        }


@dataclass(frozen=True)
class Box:
    """A part of the repository: a folder, a file, the loose files of a folder, or
    several small parts lumped together (``kind`` "folder", "file", "files", "other").

    ``id`` is its path (a folder's without a trailing slash; "files" boxes end in
    ``/*``); ``members`` are the paths it covers; ``outside`` marks a part beyond a
    ``--focus``, shown only for its arrows into or out of the focus."""

    id: str
    label: str
    kind: str
    members: tuple[str, ...]
    files: int
    chunks: int
    lines: int
    languages: tuple[str, ...] = ()
    #: Parts inside it (it can be opened: ``--focus`` its id).
    parts: int = 0
    outside: bool = False
    #: Its largest files, cited whole (``path:1-N``): where to start reading it.
    evidence: tuple[str, ...] = ()
    #: A file box's folder, relative to the map's focus ("" in the focus itself).
    folder: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "kind": self.kind,
            "members": list(self.members),
            "files": self.files,
            "chunks": self.chunks,
            "lines": self.lines,
            "languages": list(self.languages),
            "parts": self.parts,
            "outside": self.outside,
            "citations": list(self.evidence),
            "folder": self.folder,
        }


@dataclass(frozen=True)
class Arrow:
    """``src`` depends on ``dst``: ``weight`` edges (imports and calls) go from code in
    ``src`` to code in ``dst``; ``kinds`` counts them by kind; ``evidence`` holds the
    first of them (at most ``evidence_limit``), each cited."""

    src: str
    dst: str
    weight: int
    kinds: tuple[tuple[str, int], ...]
    evidence: tuple[Evidence, ...]
    #: Drawn in the pictures (False: one of the lighter arrows only the JSON lists).
    drawn: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.src,
            "target": self.dst,
            "weight": self.weight,
            "drawn": self.drawn,
            "kinds": dict(self.kinds),
            "citations": [e.citation for e in self.evidence],
            "evidence": [e.to_json() for e in self.evidence],
        }


@dataclass(frozen=True)
class Stats:
    """What clustering did: parts and arrows of the whole graph by file, and of the map."""

    files: int
    file_edges: int
    boxes: int
    arrows: int
    #: Arrows drawn (the heaviest, and each box's heaviest in and out).
    drawn: int = 0
    #: Test files left out of the map (``tests=False``).
    test_files: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "files": self.files,
            "file_edges": self.file_edges,
            "boxes": self.boxes,
            "arrows": self.arrows,
            "drawn": self.drawn,
            "test_files_left_out": self.test_files,
        }


@dataclass(frozen=True)
class SystemMap:
    """The parts of a repository (or of its ``focus``) and the dependencies between them."""

    repo: str
    focus: str
    boxes: tuple[Box, ...]
    arrows: tuple[Arrow, ...]
    stats: Stats
    #: The parts ``--focus`` can open (folders with more than one part), by size.
    openable: tuple[str, ...] = ()
    edge_kinds: tuple[str, ...] = ("imports", "calls")

    def box(self, box_id: str) -> Box:
        """The box of that id (KeyError when there is none)."""
        for b in self.boxes:
            if b.id == box_id:
                return b
        raise KeyError(box_id)

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "focus": self.focus,
            "edge_kinds": list(self.edge_kinds),
            "nodes": [b.to_json() for b in self.boxes],
            "edges": [a.to_json() for a in self.arrows],
            "stats": self.stats.to_json(),
            "openable": list(self.openable),
        }


@dataclass(frozen=True)
class Node:
    """A symbol in a neighbourhood: its role relative to the centre ("self", "caller",
    "callee", "base", "test") and its hop distance."""

    id: str
    label: str
    role: str
    hops: int
    path: str
    start_line: int
    end_line: int

    @property
    def citation(self) -> str:
        return cite(self.path, self.start_line, self.end_line)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "role": self.role,
            "hops": self.hops,
            "citation": self.citation,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Node:
        """The node :meth:`to_json` wrote."""
        return cls(
            str(data["id"]),
            str(data["label"]),
            str(data["role"]),
            int(data["hops"]),
            str(data["path"]),
            int(data["start_line"]),
            int(data["end_line"]),
        )


@dataclass(frozen=True)
class Link:
    """``src`` → ``dst`` of ``kind`` ("calls", "inherits", "tests"), cited where it stands."""

    src: str
    dst: str
    kind: str
    citation: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "source": self.src,
            "target": self.dst,
            "kind": self.kind,
            "citation": self.citation,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Link:
        """The link :meth:`to_json` wrote."""
        return cls(
            str(data["source"]), str(data["target"]), str(data["kind"]), str(data["citation"])
        )


@dataclass(frozen=True)
class Neighbourhood:
    """A symbol and what is around it in the graph, one or two hops out."""

    centre: str
    nodes: tuple[Node, ...]
    links: tuple[Link, ...]
    #: Neighbours left out to keep the picture small: (role, how many).
    left_out: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "centre": self.centre,
            "nodes": [n.to_json() for n in self.nodes],
            "links": [lk.to_json() for lk in self.links],
            "left_out": dict(self.left_out),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Neighbourhood:
        """The neighbourhood :meth:`to_json` wrote (an answer's, read back from its JSON)."""
        return cls(
            str(data["centre"]),
            tuple(Node.from_json(n) for n in data["nodes"]),
            tuple(Link.from_json(lk) for lk in data["links"]),
            tuple(sorted((str(r), int(n)) for r, n in dict(data.get("left_out", {})).items())),
        )
