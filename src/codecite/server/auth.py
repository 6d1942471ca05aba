"""Who is asking, and what they may read. A :class:`Principal` comes from a bearer
token (:mod:`.state`), from a trusted reverse proxy's user header, or is the local user
of ``auth = "none"`` / stdio MCP. The check runs before retrieval: a repository the
caller may not read is never opened for them."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    """A user, the repository globs they may read (``"*"``: all), and whether they
    may run admin actions (re-index)."""

    user: str
    repos: tuple[str, ...]
    admin: bool = False

    def can_read(self, repo: str) -> bool:
        return any(fnmatch.fnmatchcase(repo, pattern) for pattern in self.repos)

    def readable(self, names: Iterable[str]) -> list[str]:
        """The names (in order) this principal may read."""
        return [name for name in names if self.can_read(name)]


#: The principal of ``auth = "none"`` (loopback only) and of a local stdio MCP session.
LOCAL_USER = Principal("local", ("*",), admin=True)
