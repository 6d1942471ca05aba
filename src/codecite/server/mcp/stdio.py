"""MCP over stdio: one local repository (``codecite mcp [PATH]``)."""

from __future__ import annotations

from pathlib import Path

from ... import find_index, index_exists
from ...errors import IndexMissingError
from ..auth import LOCAL_USER
from ..config import RepoConfig
from ..repos import RepoPool
from .server import build_mcp


def local_pool(path: Path, index_dir: Path | None = None) -> RepoPool:
    """A pool of the one repository at ``path`` (its index: ``index_dir``, else
    ``path/.codecite``), named after its folder; :class:`IndexMissingError` when there
    is no index."""
    root = path.expanduser().resolve()
    folder = index_dir.expanduser().resolve() if index_dir else root / ".codecite"
    if not index_exists(folder):
        raise IndexMissingError(f"no index at {folder}; build one with `codecite index {path}`")
    name = root.name or "repo"
    return RepoPool({name: RepoConfig(name, root, folder)})


def run_stdio(path: Path | None = None, index_dir: Path | None = None) -> None:
    """Serve one local repository over stdio (``codecite mcp``) as :data:`LOCAL_USER`.

    ``path``: the repository (default: the one whose index is nearest above the
    current folder). Raises :class:`IndexMissingError` before serving when there is no
    index. The SDK keeps stdout for the protocol while it serves (stray prints go to
    stderr)."""
    if path is None and index_dir is None:
        found = find_index(".")
        if found is None:
            raise IndexMissingError(
                f"no codecite index in {Path.cwd()} or its parents; build one with "
                "`codecite index PATH` or pass the repository: `codecite mcp PATH`"
            )
        path, index_dir = found.parent, found
    pool = local_pool(path or Path("."), index_dir)
    server = build_mcp(pool, lambda: LOCAL_USER)
    try:
        server.run("stdio")
    finally:
        pool.close()
