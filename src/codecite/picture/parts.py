"""Cutting a repository into parts a reader can take in: the folder tree of the
indexed code files, and a cut through it of at most ``max_boxes`` parts.

The cut starts at the focus folder's parts and opens the largest part (by lines of
code) while the picture stays within ``max_boxes``; a folder with one subfolder and no
file of its own is one part (``src/codecite``); a folder whose files would not fit
one by one keeps them together (``store/*``), and parts that still do not fit are
lumped into one "other" part."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import UserError
from ..graph.testmap import is_test_path
from ..store.protocols import FileSize
from .model import Box, cite

#: Languages that are not code: their files are no part of the map.
NOT_CODE = frozenset({"markdown", "text", "config"})
#: Files cited per box (its largest).
BOX_CITATIONS = 3


@dataclass
class Folder:
    """A folder of the tree with its code files and subfolders (built once, then read)."""

    path: str
    folders: dict[str, Folder] = field(default_factory=dict)
    files: list[FileSize] = field(default_factory=list)

    def all_files(self) -> list[FileSize]:
        out = list(self.files)
        for sub in self.folders.values():
            out += sub.all_files()
        return out

    def compressed(self) -> Folder:
        """This folder, or the one folder it holds alone (``src`` → ``src/codecite``)."""
        here = self
        while not here.files and len(here.folders) == 1:
            here = next(iter(here.folders.values()))
        return here

    def parts(self) -> int:
        return len(self.files) + len(self.folders)


def build_tree(files: Iterable[FileSize], tests: bool = False) -> Folder:
    """The folder tree of the code files (documentation and configuration left out;
    tests too unless ``tests``)."""
    root = Folder("")
    for f in files:
        if f.language in NOT_CODE or (not tests and is_test_path(f.path)):
            continue
        here = root
        *folders, _ = f.path.split("/")
        for name in folders:
            path = f"{here.path}/{name}" if here.path else name
            here = here.folders.setdefault(name, Folder(path))
        here.files.append(f)
    return root


def find_folder(root: Folder, focus: str) -> Folder:
    """The folder ``focus`` names (``""``: the root), compressed; a user error naming the
    parts there are when there is none."""
    path = focus.strip().strip("/").removeprefix("./")
    if path in ("", "."):
        return root.compressed()
    here = root
    for name in path.split("/"):
        if name in here.folders:
            here = here.folders[name]
            continue
        if any(f.path == (f"{here.path}/{name}" if here.path else name) for f in here.files):
            raise UserError(
                f"--focus {focus}: is a file; give a folder (its folder: "
                f"{here.path or '.'}), or see the file with `codecite explain {path}:1`"
            )
        known = ", ".join(openable(root)[:12]) or "none"
        raise UserError(f"--focus {focus}: no part of the indexed code; parts: {known}")
    return here.compressed()


def openable(root: Folder) -> list[str]:
    """Folders that hold more than one part (what ``--focus`` can open), largest first."""
    found: list[tuple[int, str]] = []

    def walk(folder: Folder) -> None:
        folder = folder.compressed()
        if folder.parts() > 1 and folder.path:
            found.append((sum(f.lines for f in folder.all_files()), folder.path))
        for sub in folder.folders.values():
            walk(sub)

    walk(root)
    return [path for _, path in sorted(found, key=lambda x: (-x[0], x[1]))]


@dataclass(frozen=True)
class Unit:
    """One part of a cut: a folder, a file, a folder's loose files, or a lump."""

    kind: str  # "folder", "file", "files", "other"
    key: str  # folder path, file path, folder path of the loose files, "" for a lump
    files: tuple[FileSize, ...]
    inner: tuple[Unit, ...] = ()  # a lump's units
    folder: Folder | None = None

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files)


def folder_unit(folder: Folder) -> Unit:
    folder = folder.compressed()
    return Unit("folder", folder.path, tuple(folder.all_files()), folder=folder)


def _file_units(folder: Folder, together: bool) -> list[Unit]:
    if not folder.files:
        return []
    if together and len(folder.files) > 1:
        return [Unit("files", folder.path, tuple(folder.files), folder=folder)]
    return [Unit("file", f.path, (f,)) for f in folder.files]


def openings(unit: Unit) -> list[list[Unit]]:
    """The ways ``unit`` opens, most detailed first ([] if it does not)."""
    if unit.kind == "files":
        return [[Unit("file", f.path, (f,)) for f in unit.files]]
    if unit.kind != "folder" or unit.folder is None or unit.folder.parts() < 2:
        return []
    folders = [folder_unit(sub) for sub in unit.folder.folders.values()]
    full = folders + _file_units(unit.folder, together=False)
    grouped = folders + _file_units(unit.folder, together=True)
    options = [full] if len(grouped) == len(full) else [full, grouped]
    return [o for o in options if len(o) > 1]  # one box for one box tells nothing new


def lump(units: Sequence[Unit], limit: int) -> list[Unit]:
    """``units`` as they are when they fit in ``limit``; else the largest ``limit - 1``
    and one "other" unit holding the rest."""
    if len(units) <= limit:
        return list(units)
    ordered = sorted(units, key=lambda u: (-u.lines, u.key))
    kept, rest = ordered[: limit - 1], ordered[limit - 1 :]
    files = tuple(f for u in rest for f in u.files)
    return [*kept, Unit("other", "", files, inner=tuple(rest))]


def cut(top: Folder, max_boxes: int) -> list[Unit]:
    """The parts of ``top``: opened, largest first, while they fit ``max_boxes``."""
    first = openings(folder_unit(top))
    units = lump(first[-1], max_boxes) if first else [folder_unit(top)]
    if first and len(first[0]) <= max_boxes:
        units = first[0]
    while True:
        for unit in sorted(units, key=lambda u: (-u.lines, u.key)):
            fits = [o for o in openings(unit) if len(units) - 1 + len(o) <= max_boxes]
            if fits:
                i = units.index(unit)
                units = units[:i] + fits[0] + units[i + 1 :]
                break
        else:
            return units


def context_units(root: Folder, top: Folder) -> list[Unit]:
    """The parts beyond a focus: the other parts of each folder above it."""
    out: list[Unit] = []
    inside = top.path
    names = inside.split("/") if inside else []
    here = root
    for depth in range(len(names)):
        out += _file_units(here, together=True)
        out += [folder_unit(sub) for name, sub in here.folders.items() if name != names[depth]]
        here = here.folders[names[depth]]
    return out


def _label(unit: Unit, top: str) -> str:
    rel = unit.key[len(top) + 1 :] if top and unit.key.startswith(top + "/") else unit.key
    if unit.kind == "files":
        return f"{rel}/*" if rel and unit.key != top else "top-level files"
    if unit.kind == "other":
        return f"{len(unit.inner)} smaller parts"
    if unit.kind == "file":  # its folder is on the box's second line
        return unit.key.rsplit("/", 1)[-1]
    return rel or unit.key or "."


def box_of(unit: Unit, top: str, outside: bool = False) -> Box:
    """The box a unit is drawn as (its id is unique within one cut)."""
    files = sorted(unit.files, key=lambda f: (-f.lines, f.path))
    kind = unit.kind
    box_id = {"files": f"{unit.key}/*", "other": "(other)"}.get(kind, unit.key)
    if outside and kind == "other":
        box_id = "(other outside)"
    members = tuple(u.key for u in unit.inner) if kind == "other" else (box_id,)
    parts = unit.folder.parts() if kind == "folder" and unit.folder else len(unit.inner)
    if kind == "files":
        parts = len(unit.files)
    return Box(
        id=box_id,
        label=_label(unit, top) if not outside else (unit.key or "top-level files"),
        kind=kind,
        members=members,
        files=len(files),
        chunks=sum(f.chunks for f in files),
        lines=sum(f.lines for f in files),
        languages=tuple(sorted({f.language for f in files})),
        parts=parts,
        outside=outside,
        evidence=tuple(cite(f.path, 1, max(f.lines, 1)) for f in files[:BOX_CITATIONS]),
        folder=_folder(unit.key, top) if kind == "file" else "",
    )


def _folder(path: str, top: str) -> str:
    """The folder of ``path`` relative to the focus ``top`` ("" when it is ``top``;
    "top level" for a file at the repository's root)."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    if top and (folder == top or folder.startswith(top + "/")):
        return folder[len(top) + 1 :]
    return folder or "top level"


def owner_index(units: Sequence[tuple[Unit, Box]]) -> dict[str, str]:
    """File path → the id of the box that holds it."""
    return {f.path: box.id for unit, box in units for f in unit.files}
