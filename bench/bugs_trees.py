"""Working trees of the bug-report benchmark (``bugs_bench.py``), read from bare git
mirrors at run time: one folder per project, moved from commit to commit.

:class:`Mirror` lists a commit's files (``git ls-tree``) and streams blobs
(``git cat-file --batch``); :class:`Tree` makes a folder hold exactly one commit's
files: the first move in a process reconciles the folder with the commit (hashes
every file on disk, as git does), later moves apply only the difference between
the two listings. So files unchanged between commits keep their mtime and an
incremental ``Index.update()`` re-parses only what changed.

Blobs absent from a mirror (a snapshot may leave out its largest files: images,
HDF5, DICOM data) are left out of the tree and listed in :attr:`Tree.absent`;
submodules are left out as ``git archive`` leaves them empty. :meth:`Tree.verify`
compares the folder with ``git archive COMMIT`` (minus the absent blobs),
byte for byte, file modes and symlinks included.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: path -> (mode, blob id) of one commit's files (no submodules).
Listing = dict[str, tuple[str, str]]


class Mirror:
    """A bare git repository, read with plumbing commands only (nothing is written)."""

    def __init__(self, git_dir: Path) -> None:
        if not (git_dir / "objects").is_dir():
            raise FileNotFoundError(f"{git_dir}: not a bare git repository (no objects/)")
        self.git_dir = git_dir
        self._listings: dict[str, Listing] = {}

    def git(self, *args: str, data: bytes | None = None) -> bytes:
        proc = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), *args],
            input=data,
            capture_output=True,
            check=False,
        )
        if proc.returncode:
            raise RuntimeError(f"git {' '.join(args[:3])}: {proc.stderr.decode(errors='replace')}")
        return proc.stdout

    def commit_time(self, commit: str) -> int:
        return int(self.git("log", "-1", "--format=%ct", commit).strip())

    def listing(self, commit: str) -> Listing:
        if commit not in self._listings:
            out: Listing = {}
            for entry in self.git("ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
                if not entry:
                    continue
                meta, _, path = entry.partition(b"\t")
                mode, kind, blob = meta.decode().split(" ")
                if kind == "blob":
                    out[path.decode("utf-8", "surrogateescape")] = (mode, blob)
            self._listings[commit] = out
        return self._listings[commit]

    def blobs(self, ids: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """(id, content) of each blob, None for a blob absent from the mirror."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return
        proc = subprocess.Popen(
            ["git", "--git-dir", str(self.git_dir), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None
        # 256 ids (10 KB) fit the pipe buffer: write them, then read their blobs.
        try:
            for i in range(0, len(wanted), 256):
                batch = wanted[i : i + 256]
                proc.stdin.write(("\n".join(batch) + "\n").encode())
                proc.stdin.flush()
                for blob in batch:
                    header = proc.stdout.readline().decode().split()
                    if len(header) < 3 or header[1] == "missing":
                        yield blob, None
                        continue
                    data = proc.stdout.read(int(header[2]))
                    proc.stdout.read(1)  # the newline after the content
                    yield blob, data
        finally:
            proc.stdin.close()
            proc.wait()


def blob_id(data: bytes) -> str:
    """git's id of a blob holding ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _disk_files(root: Path) -> Iterator[str]:
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            yield name if rel == "." else f"{rel}/{name}"


def _read(path: Path) -> bytes | None:
    try:
        if path.is_symlink():
            return os.readlink(path).encode("utf-8", "surrogateescape")
        return path.read_bytes()
    except OSError:
        return None


def _mode_of(path: Path) -> str:
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        return "120000"
    return "100755" if st.st_mode & stat.S_IXUSR else "100644"


@dataclass
class Move:
    """What one :meth:`Tree.checkout` did."""

    commit: str
    written: int = 0
    deleted: int = 0
    absent: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Tree:
    """A folder that holds one commit of a mirror at a time (no ``.git`` inside)."""

    def __init__(self, mirror: Mirror, root: Path) -> None:
        self.mirror, self.root = mirror, root
        self.commit = ""
        self.current: Listing = {}
        self.absent: set[str] = set()

    def checkout(self, commit: str) -> Move:
        started = time.perf_counter()
        target = self.mirror.listing(commit)
        move = Move(commit)
        self.root.mkdir(parents=True, exist_ok=True)
        if not self.commit:  # first move in this process: trust nothing on disk
            todo, extra = self._reconcile(target)
        else:
            todo = [p for p, entry in target.items() if self.current.get(p) != entry]
            extra = [p for p in self.current if p not in target]
        for path in extra:
            self._remove(path)
        move.deleted = len(extra)
        by_blob: dict[str, list[str]] = {}
        for path in todo:
            by_blob.setdefault(target[path][1], []).append(path)
        self.absent = {p for p in self.absent if p in target and p not in todo}
        for blob, data in self.mirror.blobs(by_blob):
            for path in by_blob[blob]:
                if data is None:
                    self._remove(path)
                    self.absent.add(path)
                    move.absent.append(path)
                else:
                    self._write(path, target[path][0], data)
                    move.written += 1
        self._prune_empty_dirs()
        self.commit, self.current = commit, dict(target)
        move.seconds = time.perf_counter() - started
        return move

    def _reconcile(self, target: Listing) -> tuple[list[str], list[str]]:
        extra, todo = [], []
        on_disk = set(_disk_files(self.root))
        for path in on_disk:
            entry = target.get(path)
            if entry is None:
                extra.append(path)
                continue
            full = self.root / path
            data = _read(full)
            if data is None or blob_id(data) != entry[1] or _mode_of(full) != entry[0]:
                todo.append(path)
        todo += [p for p in target if p not in on_disk]
        return todo, extra

    def _remove(self, path: str) -> None:
        full = self.root / path
        if full.is_symlink() or full.is_file():
            full.unlink()
        elif full.is_dir():
            shutil.rmtree(full)

    def _write(self, path: str, mode: str, data: bytes) -> None:
        full = self.root / path
        self._remove(path)
        parent = full.parent
        if parent.is_symlink() or parent.is_file():  # a file became a folder
            parent.unlink()
        parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(data.decode("utf-8", "surrogateescape"), full)
            return
        full.write_bytes(data)
        os.chmod(full, 0o755 if mode == "100755" else 0o644)

    def _prune_empty_dirs(self) -> None:
        for folder, _dirs, _files in os.walk(self.root, topdown=False):
            if folder != str(self.root) and not os.listdir(folder):
                os.rmdir(folder)

    def verify(self) -> list[str]:
        """Differences between the folder and ``git archive`` of the current commit
        (absent blobs excluded); ``[]`` when they are identical. A file with git's
        ``export-subst`` keyword (``$Format:``) differs in the archive by design:
        it is compared with its blob instead."""
        problems: list[str] = []
        excludes = [f":(exclude,top){p}" for p in sorted(self.absent)]
        with tempfile.TemporaryDirectory(prefix="bugs-verify-") as tmp:
            archive = Path(tmp) / "a.tar"
            archive.write_bytes(self.mirror.git("archive", self.commit, "--", ".", *excludes))
            with tarfile.open(archive) as tar:
                tar.extractall(Path(tmp) / "x", filter="tar")
            ref = Path(tmp) / "x"
            want = {p for p in _disk_files(ref)}
            have = set(_disk_files(self.root))
            problems += [f"missing: {p}" for p in sorted(want - have)]
            problems += [f"extra: {p}" for p in sorted(have - want)]
            for path in sorted(want & have):
                mine, theirs = _read(self.root / path), _read(ref / path)
                if mine != theirs:
                    entry = self.current.get(path)
                    if not (entry and mine and b"$Format:" in mine and blob_id(mine) == entry[1]):
                        problems.append(f"content: {path}")
                elif _mode_of(self.root / path) != _mode_of(ref / path):
                    problems.append(f"mode: {path}")
            empty = [
                d
                for d, dirs, files in os.walk(self.root)
                if d != str(self.root) and not dirs and not files
            ]
            problems += [f"empty folder: {os.path.relpath(d, self.root)}" for d in empty]
        return problems
