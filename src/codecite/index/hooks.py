"""Git hooks that keep an index fresh (``codecite hooks install|uninstall``).

``post-commit``, ``post-merge``, ``post-checkout`` and ``post-rewrite`` each get a
marked block that starts ``codecite hooks run`` in the background (detached, output
appended to ``.codecite/hooks.log``) and returns at once, so git never waits::

    # >>> codecite (.) >>> added by `codecite hooks install`; ...
    if [ -f './.codecite/index.db' ]; then
      ( ... exec /abs/python -m codecite hooks run ... ) </dev/null >>... 2>&1 &
    fi
    # <<< codecite (.) <<<

The hooks folder is git's own (``git rev-parse --git-path hooks``: ``core.hooksPath``
and worktrees honoured). Hooks run in the top folder of the work tree that changed,
so in a repository with several worktrees each one with an index at the installed
place (``.`` above: the path from the top folder) is refreshed. An existing shell
hook keeps its content: the block goes right after its ``#!`` line, and
``uninstall`` takes exactly those lines out again. Any other existing hook (another
language, a symlink, not executable) is chained: renamed to ``NAME.codecite-chained``
and run by a small wrapper; ``uninstall`` renames it back. A hook file that install
created is deleted by uninstall once no block is left in it.

The runner (:func:`run_hook`) indexes under the index's writer lock. A burst of
hooks starts one indexer: each run first records a request, and a run that finds
another one already holding ``hooks.lock`` exits at once; the holder indexes again
until no request came in while it worked.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import PathError, UserError
from ..store.sqlite.base import DB_NAME
from ..types import INDEX_DIRNAME, IndexReport

if TYPE_CHECKING:
    from .protocols import Updatable

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no hooks runner locking
    fcntl = None  # type: ignore[assignment]

HOOKS = ("post-commit", "post-merge", "post-checkout", "post-rewrite")
LOG_NAME = "hooks.log"
#: Held by the one hook run that indexes; the others exit at once.
RUNNER_LOCK = "hooks.lock"
#: A counter of hook requests; the runner indexes again while it grows.
REQUESTS_NAME = "hooks.requests"
#: hooks.log is emptied when it grows past this many bytes.
LOG_MAX_BYTES = 1 << 20
CHAIN_SUFFIX = ".codecite-chained"
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox"})
CREATED_HEADER = "#!/bin/sh\n# created by `codecite hooks install`; removed by uninstall\n"


@dataclass(frozen=True)
class HookChange:
    """What install/uninstall did to one hook file."""

    hook: str
    path: Path
    action: str  # created, added, updated, chained, removed, deleted, restored, absent, kept
    note: str = ""


# --- where ------------------------------------------------------------------------
def _git(cwd: Path, *args: str) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    except OSError:
        raise UserError("git is not installed; hooks need git (use `codecite watch`)") from None
    if proc.returncode != 0:
        raise PathError(
            f"{cwd}: not inside a git work tree; hooks need git "
            "(`codecite watch` keeps any folder fresh)"
        )
    return proc.stdout.strip()


@dataclass(frozen=True)
class HookSite:
    """Where the hooks of ``root`` live and how they find it again."""

    root: Path
    hooks_dir: Path
    rel: str  # ``root`` relative to the top of its work tree ("." at the top)


def hook_site(root: Path) -> HookSite:
    root = root.resolve()
    if not root.is_dir():
        raise PathError(f"{root}: no such folder; give the repository folder")
    if _git(root, "rev-parse", "--is-inside-work-tree") != "true":
        raise PathError(f"{root}: not inside a git work tree; hooks need one")
    hooks = root / _git(root, "rev-parse", "--git-path", "hooks")
    rel = _git(root, "rev-parse", "--show-prefix").rstrip("/") or "."
    if "\n" in rel or "\n" in str(hooks):
        raise PathError(f"{root}: a path with a line break cannot go into a hook")
    return HookSite(root, Path(os.path.normpath(hooks)), rel)


# --- the block --------------------------------------------------------------------
def _begin(rel: str) -> str:
    return f"# >>> codecite ({rel}) >>>"


def _end(rel: str) -> str:
    return f"# <<< codecite ({rel}) <<<"


def hook_block(hook: str, rel: str, *, python: str, embed: bool = True) -> str:
    """The lines one hook gets for the index at ``rel`` (from the work tree's top)."""
    folder = f"{rel}/{INDEX_DIRNAME}" if rel != "." else f"./{INDEX_DIRNAME}"
    args = ["hooks", "run", "--hook", hook, *([] if embed else ["--no-embed"]), "--", rel]
    own = shlex.join([python, "-m", "codecite", *args])
    on_path = shlex.join(["codecite", *args])
    q = shlex.quote
    return (
        f"{_begin(rel)} added by `codecite hooks install`; `codecite hooks uninstall` "
        "removes it\n"
        f"if [ -f {q(folder + '/' + DB_NAME)} ]; then\n"
        f"  ( if [ -x {q(python)} ]; then exec {own}; fi; exec {on_path} ) "
        f"</dev/null >>{q(folder + '/' + LOG_NAME)} 2>&1 &\n"
        "fi\n"
        f"{_end(rel)}\n"
    )


def _chain_wrapper(hook: str) -> str:
    chained = hook + CHAIN_SUFFIX
    return (
        "#!/bin/sh\n"
        f"# codecite: the hook that was here is {chained}, run below; "
        "`codecite hooks uninstall` puts it back\n"
        f'chained="$(dirname -- "$0")/{chained}"\n'
        'if [ -x "$chained" ]; then exec "$chained" "$@"; fi\n'
    )


def _find_block(text: str, rel: str) -> tuple[int, int] | None:
    """Character span of the block for ``rel`` (whole lines), or None."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if ln.startswith(_begin(rel))]
    if not starts:
        return None
    first = starts[0]
    last = next((i for i in range(first, len(lines)) if lines[i].rstrip("\r\n") == _end(rel)), -1)
    if last < 0:
        raise UserError(f"the codecite block for {rel} has no end line; remove it by hand")
    offset = sum(map(len, lines[:first]))
    return offset, offset + sum(map(len, lines[first : last + 1]))


def _is_shell_script(data: bytes) -> bool:
    """Can the block go into this hook (a shell script with its ``#!`` line ended)?"""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if not text.startswith("#!"):
        return bool(text)  # git runs a hook without "#!" with sh
    line, newline, _ = text.partition("\n")
    words = line[2:].split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    return bool(newline and words) and os.path.basename(words[0]) in SHELLS


def _insert(text: str, block: str) -> str:
    """``block`` right after the ``#!`` line (before anything that may ``exit``)."""
    if text.startswith("#!"):
        line, _, rest = text.partition("\n")
        return f"{line}\n{block}{rest}"
    return block + text


def _write(path: Path, text: str, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.codecite-tmp")
    tmp.write_bytes(text.encode("utf-8"))
    os.chmod(tmp, mode)
    os.replace(tmp, path)


# --- install / uninstall ----------------------------------------------------------
def install(root: str | Path, *, python: str | None = None, embed: bool = True) -> list[HookChange]:
    """Add the codecite block to each hook of ``root``'s repository (idempotent: an
    earlier block for the same folder is replaced). ``python``: the interpreter the
    hooks run codecite with (default: this one; ``codecite`` on PATH as fallback)."""
    site = hook_site(Path(root))
    site.hooks_dir.mkdir(parents=True, exist_ok=True)
    interpreter = python or sys.executable
    return [_install_one(site, hook, interpreter, embed) for hook in HOOKS]


def _install_one(site: HookSite, hook: str, python: str, embed: bool) -> HookChange:
    path = site.hooks_dir / hook
    block = hook_block(hook, site.rel, python=python, embed=embed)
    if not os.path.lexists(path):
        _write(path, _insert(CREATED_HEADER, block), 0o755)
        return HookChange(hook, path, "created")
    data = path.read_bytes() if not path.is_symlink() else b""
    mode = path.lstat().st_mode
    if data and _is_shell_script(data) and mode & stat.S_IXUSR and stat.S_ISREG(mode):
        text = data.decode("utf-8")
        span = _find_block(text, site.rel)
        if span is not None:
            _write(path, text[: span[0]] + block + text[span[1] :], stat.S_IMODE(mode))
            return HookChange(hook, path, "updated")
        _write(path, _insert(text, block), stat.S_IMODE(mode))
        return HookChange(hook, path, "added")
    chained = path.with_name(hook + CHAIN_SUFFIX)
    if os.path.lexists(chained):
        raise UserError(f"{chained} exists already; move it away, then install again")
    os.rename(path, chained)
    _write(path, _insert(_chain_wrapper(hook), block), 0o755)
    note = "" if mode & stat.S_IXUSR else "it was not executable, so git skipped it; still so"
    return HookChange(hook, path, "chained", note)


def uninstall(root: str | Path) -> list[HookChange]:
    """Take out what :func:`install` added for ``root``: its block, then a file it
    created (now empty of blocks) or its chain wrapper (the old hook is put back)."""
    site = hook_site(Path(root))
    return [_uninstall_one(site, hook) for hook in HOOKS]


def _uninstall_one(site: HookSite, hook: str) -> HookChange:
    path = site.hooks_dir / hook
    if path.is_symlink() or not path.is_file():
        return HookChange(hook, path, "absent")
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    span = _find_block(text, site.rel)
    if span is None:
        return HookChange(hook, path, "absent")
    rest = text[: span[0]] + text[span[1] :]
    chained = path.with_name(hook + CHAIN_SUFFIX)
    if rest == CREATED_HEADER:
        path.unlink()
        return HookChange(hook, path, "deleted")
    if rest == _chain_wrapper(hook) and os.path.lexists(chained):
        os.replace(chained, path)
        return HookChange(hook, path, "restored")
    path.write_bytes(rest.encode("utf-8", "surrogateescape"))
    return HookChange(hook, path, "removed")


# --- the runner -------------------------------------------------------------------
@contextmanager
def _try_lock(path: Path) -> Iterator[bool]:
    """An exclusive ``flock`` on ``path`` if free (True), else False at once."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


def _requests(path: Path, add: int = 0) -> int:
    """The request counter in ``path`` (read under its own lock), after adding ``add``."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        raw = os.read(fd, 32).decode("ascii", "replace").strip()
        count = (int(raw) if raw.isdigit() else 0) + add
        if add:
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, str(count).encode("ascii"))
        return count
    finally:
        os.close(fd)


def run_hook(
    root: str | Path,
    open_index: Callable[[Path], Updatable],
    *,
    embed: bool = True,
    on_log: Callable[[str], None] | None = None,
) -> list[IndexReport]:
    """What a hook runs, in its own process: an incremental index of ``root``, or
    nothing when another hook run is already on it (that one indexes again after its
    current run, so this change is not lost). ``GIT_*`` variables that git sets for
    hooks (a temporary ``GIT_INDEX_FILE``, ...) are removed from this process first.
    ``open_index`` opens the repository's index for writing (:func:`codecite.open_index`).
    Returns the reports of the index runs it made."""
    say = on_log or (lambda _line: None)
    for name in [n for n in os.environ if n.startswith("GIT_")]:
        del os.environ[name]
    folder = Path(root).resolve() / INDEX_DIRNAME
    if not (folder / DB_NAME).is_file():
        say(f"no index at {folder}; run `codecite index {root}` once")
        return []
    _trim_log(folder / LOG_NAME)
    _requests(folder / REQUESTS_NAME, add=1)
    reports: list[IndexReport] = []
    while True:
        with _try_lock(folder / RUNNER_LOCK) as held:
            if not held:
                say("another hook run is indexing; it will include this change")
                return reports
            while True:
                seen = _requests(folder / REQUESTS_NAME)
                say("indexing")
                with closing(open_index(Path(root))) as index:
                    reports.append(index.update(embed=embed, on_wait=_waiting(say)))
                say(_describe(reports[-1]))
                if _requests(folder / REQUESTS_NAME) == seen:
                    break
        # A request that came in after the last look but before the unlock found the
        # lock held and left: index again for it, unless a new run holds the lock now.
        if _requests(folder / REQUESTS_NAME) == seen:
            return reports


def _waiting(say: Callable[[str], None]) -> Callable[[str], None]:
    return lambda pid: say(f"waiting for codecite process {pid or '?'} writing this index")


def _describe(report: IndexReport) -> str:
    total = sum(report.seconds.values())
    return (
        f"indexed {report.changed} changed files, {report.chunks_written} chunks, "
        f"{report.embedded} embedded, {total:.1f}s"
    )


def _trim_log(path: Path) -> None:
    """Empty ``hooks.log`` past :data:`LOG_MAX_BYTES` (writers append: no torn lines)."""
    try:
        if path.stat().st_size > LOG_MAX_BYTES:
            os.truncate(path, 0)
    except OSError:
        pass


def log_line(text: str) -> str:
    """A line of ``hooks.log``: local time (ms), pid, text."""
    now = datetime.now().isoformat(sep=" ", timespec="milliseconds")
    return f"{now} [{os.getpid()}] {text}"
