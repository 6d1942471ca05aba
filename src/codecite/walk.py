"""Which files to index.

In a git repository the candidates are what git lists (tracked plus untracked
files that are not ignored); elsewhere a plain walk that honours nested
``.gitignore`` files. Both modes then apply ``.codeciteignore`` and
``Config.exclude`` (reason ``excluded``) and the default excludes.
``SourceFile.git_blob`` is git's blob id of a tracked file whose work-tree copy is
unmodified, else "" (so a non-empty id always matches the file's bytes).

Skip reasons: ``excluded``, ``lockfile``, ``vendored``, ``minified``, ``generated``,
``binary``, ``too-large``, ``empty``, ``symlink`` (never followed: no loops; in git
mode a tracked path under a folder that is now a symlink is skipped too, so nothing
outside the repository is read), ``unreadable`` (permissions, FIFOs), ``submodule``,
``invalid-utf8``, ``bad-name`` (a file name that is not valid UTF-8; shown with its
bad bytes as ``\\xNN``). ``lockfile``,
``vendored``, ``minified`` and ``generated`` apply only with
``Config.default_excludes``; the others always. Files ignored by ``.gitignore`` are
not part of the repository and are not listed at all; ``.git``/``.codecite`` folders
are never walked. Content checks while listing read only the first :data:`HEAD_BYTES`
bytes; a file read for parsing is ``binary`` if it holds a NUL byte anywhere.

Encoding: text is UTF-8 (a BOM is dropped). A file with a few invalid bytes (under
1% of its characters, e.g. a Latin-1 comment) is decoded with U+FFFD replacements
and indexed; with more it is skipped as ``invalid-utf8``.

A vendored or excluded *directory* is recorded as ONE :class:`Skipped` (path = the
directory, detail ``"N files"``) instead of one per file. In git mode N is exact
(counted from git's listing); in plain mode the directory is not walked for
indexing, only counted with ``os.scandir`` up to :data:`COUNT_CAP` entries
(detail ``"10000+ files"`` beyond).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from .chunking.grammars import detect_language
from .config import Config
from .errors import PathError
from .types import Skipped, SourceFile

log = logging.getLogger(__name__)

#: Bytes read from each file for the binary/generated/minified checks.
HEAD_BYTES = 8192
#: Most files counted inside one vendored/excluded directory in plain mode.
COUNT_CAP = 10_000
#: A file of more than 2 KB whose lines average more than this is minified...
MINIFIED_AVG_LINE = 300
#: ...or which has a line longer than this.
MINIFIED_MAX_LINE = 5000
MINIFIED_MIN_BYTES = 2048
#: Share of undecodable characters up to which a file is decoded with replacement.
MAX_INVALID_UTF8 = 0.01
#: Folders never walked and never listed.
ALWAYS_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", ".codecite"})


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


LOCKFILES = _words(
    "package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml bun.lockb poetry.lock "
    "Pipfile.lock pdm.lock uv.lock Cargo.lock Gemfile.lock composer.lock go.sum mix.lock "
    "Podfile.lock pubspec.lock flake.lock packages.lock.json gradle.lockfile conda-lock.yml"
)
#: Folders of copied or built code: dependencies, build outputs (Sphinx's and Mix's
#: ``_build``, Jekyll's ``_site``: a rendered copy of the docs beside their sources).
VENDORED_DIRS = _words(
    "node_modules bower_components jspm_packages dist build _build _site vendor third_party "
    "third-party thirdparty .venv venv __pycache__ target .tox .nox site-packages .eggs "
    ".mypy_cache .pytest_cache .ruff_cache .gradle .next .nuxt .svelte-kit .terraform Pods .yarn "
    ".pnpm-store htmlcov .parcel-cache .angular"
)
MINIFIED_SUFFIXES = (".min.js", ".min.css", ".min.mjs", ".map")
_BINARY_EXT_WORDS = (
    "png jpg jpeg gif bmp ico icns webp tif tiff psd heic avif "
    "zip tar gz tgz bz2 xz 7z rar zst lz4 jar war ear whl egg deb rpm "
    "pyc pyo pyd so dylib dll exe o a obj lib class wasm bin elf "
    "woff woff2 ttf otf eot mp3 mp4 m4a wav ogg flac avi mov mkv webm "
    "pdf doc docx xls xlsx ppt pptx odt sqlite sqlite3 db npy npz pkl "
    "pickle parquet h5 hdf5 onnx pt pth safetensors gguf tflite dmg iso"
)
BINARY_EXTENSIONS = frozenset("." + ext for ext in _words(_BINARY_EXT_WORDS))
_GENERATED = re.compile(
    rb"@generated|auto-?generated|automatically generated|do not edit(?! this line)", re.I
)


@dataclass
class WalkResult:
    root: Path
    files: list[SourceFile] = field(default_factory=list)  # sorted by path
    skipped: list[Skipped] = field(default_factory=list)  # every file not indexed, with a reason
    is_git: bool = False
    head_commit: str = ""  # "" when not a git repo or no commits


def file_digest(abspath: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(abspath, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def same_stat(size: int, mtime_ns: int, indexed_size: object, indexed_mtime_ns: object) -> bool:
    """Whether a file's size and modification time are the ones recorded when it was
    indexed: then it is taken as unchanged without reading it."""
    return size == indexed_size and mtime_ns == indexed_mtime_ns


def file_changed(
    abspath: str | Path,
    size: int,
    mtime_ns: int,
    indexed: Mapping[str, object],
) -> bool:
    """Whether the file differs from its indexed version (``indexed``: the store's
    ``size``, ``mtime_ns`` and ``hash`` of it). The same size and modification time
    mean unchanged, without a read; otherwise the hash of its bytes decides, so a touch
    or a checkout of the same content is no change. The index run asks only the first
    half (:func:`same_stat`): its parse stage reads the file anyway and compares the
    hash then. ``OSError`` (the file vanished or is unreadable) propagates."""
    if same_stat(size, mtime_ns, indexed["size"], indexed["mtime_ns"]):
        return False
    return file_digest(abspath) != indexed["hash"]


def decode_text(data: bytes) -> str | None:
    """UTF-8 text of ``data`` (BOM stripped); ``None`` when too much of it is invalid.

    A file with only a few invalid bytes (under :data:`MAX_INVALID_UTF8` of its
    characters, e.g. one Latin-1 comment) is decoded with U+FFFD replacements.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("utf-8-sig", errors="replace")
    if text.count("\ufffd") <= MAX_INVALID_UTF8 * max(len(text), 1):
        return text
    return None


def read_source(abspath: str | Path, path: str = "") -> tuple[str, str] | Skipped:
    """``(text, sha256 of the bytes)`` of a file, or a :class:`Skipped` saying why not.

    Never raises for one bad file. ``path`` (repository-relative) names the file in
    the :class:`Skipped`; the absolute path is used when it is not given.
    """
    name = path or str(abspath)
    try:
        if not os.path.isfile(abspath):  # a FIFO would block
            return Skipped(name, "unreadable", "not a regular file")
        fd = os.open(abspath, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with open(fd, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return Skipped(name, "unreadable", exc.strerror or type(exc).__name__)
    if b"\0" in data:  # anywhere: no text we store holds one (PostgreSQL's cannot)
        return Skipped(name, "binary", "NUL byte")
    text = decode_text(data)
    if text is None:
        return Skipped(name, "invalid-utf8", "more than 1% invalid bytes")
    return text, hashlib.sha256(data).hexdigest()


def _load_spec(path: Path, extra: list[str] | None = None) -> pathspec.GitIgnoreSpec | None:
    """The gitignore-style rules of a file (missing: none) plus ``extra`` patterns."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    lines = [ln for ln in [*lines, *(extra or [])] if ln.strip() and not ln.startswith("#")]
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


@dataclass
class _Rules:
    """The per-repository filters shared by both walk modes."""

    config: Config
    excluded: pathspec.GitIgnoreSpec | None
    _dir_cache: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def for_root(cls, root: Path, config: Config) -> _Rules:
        return cls(config, _load_spec(root / ".codeciteignore", list(config.index.exclude)))

    def dir_reason(self, rel_dir: str) -> str | None:
        """``excluded``/``vendored`` when a whole directory is skipped, else None."""
        if rel_dir not in self._dir_cache:
            name = rel_dir.rsplit("/", 1)[-1]
            reason = None
            if self.excluded is not None and self.excluded.match_file(rel_dir + "/"):
                reason = "excluded"
            elif self.config.index.default_excludes and (
                name in VENDORED_DIRS or name.endswith(".egg-info")
            ):
                reason = "vendored"
            self._dir_cache[rel_dir] = reason
        return self._dir_cache[rel_dir]

    def name_reason(self, rel: str) -> str | None:
        """A skip reason decided by the path alone."""
        if self.excluded is not None and self.excluded.match_file(rel):
            return "excluded"
        name = rel.rsplit("/", 1)[-1]
        lower = name.lower()
        if self.config.index.default_excludes:
            if name in LOCKFILES or lower.endswith(".lock"):
                return "lockfile"
            if lower.endswith(MINIFIED_SUFFIXES):
                return "minified"
        if os.path.splitext(lower)[1] in BINARY_EXTENSIONS:
            return "binary"
        return None

    def content_reason(self, head: bytes, size: int) -> str | None:
        """A skip reason decided by the first bytes of the file."""
        if b"\0" in head:
            return "binary"
        if not self.config.index.default_excludes:
            return None
        first_lines = b"\n".join(head.split(b"\n", 5)[:5])
        if _GENERATED.search(first_lines):
            return "generated"
        if size > MINIFIED_MIN_BYTES and _looks_minified(head, size):
            return "minified"
        return None


def _looks_minified(head: bytes, size: int) -> bool:
    """Judged on the first bytes only: a very long line later in the file is missed."""
    lines = head.split(b"\n")
    if max(map(len, lines)) > MINIFIED_MAX_LINE:
        return True
    if len(head) < size and len(lines) > 1:  # the last line of the head is cut short
        lines = lines[:-1]
    return sum(map(len, lines)) / len(lines) > MINIFIED_AVG_LINE


def shown_name(rel: str) -> str:
    """A path as text that can be stored and printed: bytes that are not UTF-8 (kept by
    ``surrogateescape``) become ``\\xNN``."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _check_file(abspath: str, rel: str, rules: _Rules, blob: str = "") -> SourceFile | Skipped:
    """Decide one candidate file by its path, metadata and first bytes; never raises."""
    shown = shown_name(rel)
    if shown != rel:
        return Skipped(shown, "bad-name", "the file name is not valid UTF-8")
    try:
        return _decide(abspath, rel, rules, blob)
    except OSError as exc:
        return Skipped(rel, "unreadable", exc.strerror or type(exc).__name__)


def _decide(abspath: str, rel: str, rules: _Rules, blob: str) -> SourceFile | Skipped:
    st = os.lstat(abspath)
    if stat.S_ISLNK(st.st_mode):
        return Skipped(rel, "symlink", shown_name(os.readlink(abspath)))
    if not stat.S_ISREG(st.st_mode):  # a FIFO or device: never opened
        return Skipped(rel, "unreadable", "not a regular file")
    reason = rules.name_reason(rel)
    if reason is None and st.st_size == 0:
        reason = "empty"
    if reason is None and st.st_size > rules.config.index.max_file_bytes:
        return Skipped(rel, "too-large", f"{st.st_size} bytes")
    if reason is None:
        with open(abspath, "rb") as fh:
            head = fh.read(HEAD_BYTES)
        reason = rules.content_reason(head, st.st_size)
        if reason is None and decode_text(head) is None:
            reason = "invalid-utf8"
    if reason is not None:
        return Skipped(rel, reason)
    return SourceFile(rel, abspath, detect_language(rel), st.st_size, st.st_mtime_ns, blob)


def _git(root: Path, *args: str) -> str | None:
    """Output of a git command run in ``root``; None when git is missing or fails."""
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=root,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
            check=False,
        )
    except OSError as exc:
        log.debug("git unavailable: %s", exc)
        return None
    if proc.returncode != 0:
        log.debug("git %s failed in %s: %s", args[0], root, proc.stderr.strip())
        return None
    return proc.stdout


def _git_listing(root: Path) -> dict[str, str] | None:
    """path → blob id ("" when untracked or modified) of git's files under ``root``."""
    tracked = _git(root, "ls-files", "-z", "-s", "--cached")
    others = _git(root, "ls-files", "-z", "--others", "--exclude-standard")
    modified = _git(root, "ls-files", "-z", "--modified")
    if tracked is None or others is None or modified is None:
        return None
    listing: dict[str, str] = {}
    for entry in filter(None, tracked.split("\0")):
        meta, _, path = entry.partition("\t")
        mode, blob, stage = meta.split(" ")
        blob = "submodule" if mode == "160000" else blob
        if stage == "0" or path not in listing:
            listing[path] = blob if stage == "0" else ""
    for path in filter(None, modified.split("\0")):
        if listing.get(path) != "submodule":
            listing[path] = ""
    for path in filter(None, others.split("\0")):  # "dir/" is a nested repository
        listing.setdefault(path.rstrip("/"), "submodule" if path.endswith("/") else "")
    return listing


def git_head(root: str | Path) -> str:
    """The commit id of HEAD, "" when not a git repository or no commits yet."""
    out = _git(Path(root), "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() if out else ""


def git_changed_paths(root: str | Path, since_commit: str) -> set[str] | None:
    """Paths (relative to ``root``) changed since a commit: committed, staged, unstaged
    (deleted included) and untracked-not-ignored files. None when ``root`` is not in a
    git repository or the commit is unknown."""
    root = Path(root)
    commit = f"{since_commit}^{{commit}}"
    if not since_commit or _git(root, "rev-parse", "-q", "--verify", commit) is None:
        return None
    diff = _git(root, "diff", "--name-only", "-z", "--no-renames", "--relative", since_commit)
    others = _git(root, "ls-files", "-z", "--others", "--exclude-standard")
    if diff is None or others is None:
        return None
    return {p for p in (diff + "\0" + others).split("\0") if p}


def _check_root(root: str | Path) -> Path:
    path = Path(root).expanduser()
    if not path.exists():
        raise PathError(f"{path}: no such folder; pass the path of a repository or folder")
    if not path.is_dir():
        raise PathError(f"{path}: is a file, not a folder; pass the folder that contains it")
    if not os.access(path, os.R_OK | os.X_OK):
        raise PathError(f"{path}: cannot read this folder; check its permissions")
    return path.resolve()


def _symlinked_folder(root: Path, rel: str, cache: dict[str, str]) -> str:
    """ "" when every folder above ``rel`` is a real folder of the repository, else the
    first one that is a symlink (``conf -> /etc``), as ``conf -> TARGET``."""
    parts = rel.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/".join(parts[:depth])
        if folder not in cache:
            full = os.path.join(root, folder)
            cache[folder] = (
                shown_name(f"{folder} -> {os.readlink(full)}") if os.path.islink(full) else ""
            )
        if cache[folder]:
            return cache[folder]
    return ""


def _walk_git(root: Path, listing: dict[str, str], rules: _Rules, result: WalkResult) -> None:
    groups: Counter[tuple[str, str]] = Counter()
    links: dict[str, str] = {}
    for rel, blob in listing.items():
        parts = rel.split("/")
        if parts[0] in ALWAYS_SKIPPED_DIRS:
            continue
        group = None
        for depth in range(1, len(parts)):
            reason = rules.dir_reason("/".join(parts[:depth]))
            if reason is not None:
                group = ("/".join(parts[:depth]), reason)
                break
        if group is not None:
            groups[group] += 1
            continue
        abspath = os.path.join(root, rel)
        if blob == "submodule":
            result.skipped.append(Skipped(shown_name(rel), "submodule"))
        elif link := _symlinked_folder(root, rel, links):
            result.skipped.append(Skipped(shown_name(rel), "symlink", f"under {link}"))
        elif os.path.lexists(abspath):  # deleted-but-tracked files are not files
            _add(result, _check_file(abspath, rel, rules, blob))
    for (rel_dir, reason), count in groups.items():
        result.skipped.append(Skipped(shown_name(rel_dir), reason, _files(count)))


def _count_files(top: str) -> str:
    count, stack = 0, [top]
    while stack and count < COUNT_CAP:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        count += 1
        except OSError:
            continue
    return f"{COUNT_CAP}+ files" if count >= COUNT_CAP else _files(count)


def _files(count: int) -> str:
    return "1 file" if count == 1 else f"{count} files"


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, pathspec.GitIgnoreSpec]]) -> bool:
    """Whether the .gitignore files in force (root first) ignore ``rel``."""
    ignored = False
    for base, spec in specs:
        sub = rel[len(base) + 1 :] if base else rel
        check = spec.check_file(sub + "/" if is_dir else sub)
        if check.include is not None:
            ignored = check.include
    return ignored


def _walk_plain(root: Path, rules: _Rules, result: WalkResult) -> None:
    stack: list[tuple[str, list[tuple[str, pathspec.GitIgnoreSpec]]]] = [("", [])]
    while stack:
        rel_dir, specs = stack.pop()
        folder = os.path.join(root, rel_dir) if rel_dir else str(root)
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            result.skipped.append(
                Skipped(shown_name(rel_dir) or ".", "unreadable", exc.strerror or "")
            )
            continue
        if any(e.name == ".gitignore" for e in entries):
            own = _load_spec(Path(folder, ".gitignore"))
            specs = [*specs, (rel_dir, own)] if own is not None else specs
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if (is_dir and entry.name in ALWAYS_SKIPPED_DIRS) or _ignored(rel, is_dir, specs):
                continue
            if not is_dir:
                _add(result, _check_file(entry.path, rel, rules))
            elif (reason := rules.dir_reason(rel)) is not None:
                result.skipped.append(Skipped(shown_name(rel), reason, _count_files(entry.path)))
            else:
                stack.append((rel, specs))


def _add(result: WalkResult, item: SourceFile | Skipped) -> None:
    if isinstance(item, SourceFile):
        result.files.append(item)
    else:
        result.skipped.append(item)


def walk_paths(root: str | Path, config: Config, paths: Iterable[str]) -> WalkResult:
    """The decision of :func:`walk` for just ``paths`` (repository-relative): each that
    exists and would be indexed is a file, the others are skipped with their reason;
    paths that no longer exist are in neither (they are deleted files). Ignore rules of
    ``.gitignore`` are not re-read here: these are files that were indexed already."""
    path = _check_root(root)
    rules = _Rules.for_root(path, config)
    result = WalkResult(root=path)
    links: dict[str, str] = {}
    for rel in sorted(set(paths)):
        abspath = os.path.join(path, rel)
        parts = rel.split("/")
        if parts[0] in ALWAYS_SKIPPED_DIRS or not os.path.lexists(abspath):
            continue
        reason = next(
            (
                r
                for depth in range(1, len(parts))
                if (r := rules.dir_reason("/".join(parts[:depth]))) is not None
            ),
            None,
        )
        if reason is not None:
            result.skipped.append(Skipped(shown_name(rel), reason))
        elif link := _symlinked_folder(path, rel, links):
            result.skipped.append(Skipped(shown_name(rel), "symlink", f"under {link}"))
        else:
            _add(result, _check_file(abspath, rel, rules))
    return result


def walk(root: str | Path, config: Config) -> WalkResult:
    """The files of ``root`` to index, and every file not indexed with its reason.

    Raises :class:`PathError` when ``root`` is missing, not a folder or unreadable.
    Falls back to a plain walk when git is not installed or fails.
    """
    path = _check_root(root)
    rules = _Rules.for_root(path, config)
    listing = _git_listing(path)
    if not listing:  # not a repository, or a folder git ignores: walk it plainly
        listing = None
    result = WalkResult(root=path, is_git=listing is not None)
    if listing is not None:
        result.head_commit = git_head(path)
        _walk_git(path, listing, rules, result)
    else:
        _walk_plain(path, rules, result)
    result.files.sort(key=lambda f: f.path)
    result.skipped.sort(key=lambda s: s.path)
    log.debug("walked %s: %d files, %d skipped", path, len(result.files), len(result.skipped))
    return result


def folder_prefix(folder: Path) -> str:
    """``folder`` resolved, with a trailing separator: ``path.startswith(prefix)`` then
    tells whether a path under the (resolved) repository root lies inside it."""
    return os.path.join(str(folder.resolve()), "")
