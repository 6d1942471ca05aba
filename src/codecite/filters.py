"""Metadata filters of a search (language, path glob, chunk kind, repository), shared by
retrieval and every store backend. :meth:`Filters.parse` is the one place that turns
what a user typed (``--lang ts``, ``kind=["function"]``) into valid filters."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

from .chunking.grammars import GRAMMARS, TEXT_LANGUAGES
from .errors import UserError
from .types import CHUNK_KINDS, Chunk

#: Every language a chunk can have.
LANGUAGES: tuple[str, ...] = (*GRAMMARS, *TEXT_LANGUAGES)
#: Names users type for a language → its name in the index.
LANGUAGE_ALIASES = {
    "py": "python",
    "js": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "golang": "go",
    "rs": "rust",
    "c++": "cpp",
    "cxx": "cpp",
    "cs": "c_sharp",
    "csharp": "c_sharp",
    "c#": "c_sharp",
    "rb": "ruby",
    "md": "markdown",
}


def path_matches(pattern: str, path: str) -> bool:
    """Path filter semantics: a pattern without wildcards matches that file or folder;
    a pattern without ``/`` matches the file name in any folder (``*.ts``); otherwise
    fnmatch on the whole path, ``**`` matching across folders."""
    pattern = pattern.strip().removeprefix("./")
    if not any(ch in pattern for ch in "*?["):
        folder = pattern.rstrip("/")
        return path == folder or path.startswith(folder + "/")
    if "/" not in pattern:
        return fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern)
    return fnmatch.fnmatchcase(path, pattern.replace("**/", "*").replace("**", "*"))


def language_name(name: str) -> str:
    """The index's name of a language a user typed (``ts`` → ``typescript``); a
    :class:`UserError` listing the choices when there is none."""
    value = LANGUAGE_ALIASES.get(name.strip().lower(), name.strip().lower())
    if value not in LANGUAGES:
        raise UserError(
            f"unknown language '{name}'; choose from: {', '.join(LANGUAGES)} "
            f"(or {', '.join(LANGUAGE_ALIASES)})"
        )
    return value


@dataclass(frozen=True)
class Filters:
    """Metadata filters applied inside both searches, not after. Build them from user
    input with :meth:`parse`, which validates; the constructor takes index names as is."""

    languages: tuple[str, ...] = ()
    #: fnmatch-style glob on the repository-relative path (``src/**``, ``*.py``).
    path: str = ""
    kinds: tuple[str, ...] = ()
    repo: str = ""

    def __bool__(self) -> bool:
        return bool(self.languages or self.path or self.kinds or self.repo)

    def allows(self, chunk: Chunk) -> bool:
        """Whether ``chunk`` passes these filters (what the searches apply inside the
        store; graph expansion checks its neighbours with this)."""
        return (
            (not self.languages or chunk.language in self.languages)
            and (not self.kinds or chunk.kind in self.kinds)
            and (not self.repo or chunk.repo == self.repo)
            and (not self.path or path_matches(self.path, chunk.path))
        )

    @classmethod
    def parse(
        cls,
        languages: Iterable[str] | str | None = None,
        path: str | None = None,
        kinds: Iterable[str] | str | None = None,
        repo: str | None = None,
    ) -> Filters:
        """Validated filters from user input: language aliases resolved (``ts``,
        ``golang``), unknown languages or kinds rejected with the list of choices."""
        langs = [languages] if isinstance(languages, str) else list(languages or ())
        kind_list = [kinds] if isinstance(kinds, str) else list(kinds or ())
        for kind in kind_list:
            if kind not in CHUNK_KINDS:
                raise UserError(f"unknown kind '{kind}'; choose from: {', '.join(CHUNK_KINDS)}")
        resolved = tuple(dict.fromkeys(language_name(name) for name in langs))
        return cls(resolved, (path or "").strip(), tuple(dict.fromkeys(kind_list)), repo or "")
