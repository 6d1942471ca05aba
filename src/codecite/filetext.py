"""The one reader of file text for display: a repository file's lines as they are on
disk now, with secrets redacted exactly as indexing redacts them (the same
:func:`~codecite.scrub.scrub` call, with the file's path), so nothing the index hid can
be shown by a code view, a citation check or an agent's ``read_code``.

:meth:`codecite.Index.read_lines` is the public door (it adds "is this file indexed?"
and the line range); :func:`display_lines` is what it and the answerer's citation check
share. Only a clean repository-relative path is read (:func:`clean_path`), never a
symlink's target outside the repository.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .config import Config
from .errors import LineRangeError
from .scrub import scrub
from .types import Skipped
from .walk import read_source

#: Lines one :meth:`Index.read_lines` call returns unless asked for fewer.
DEFAULT_MAX_LINES = 2_000


@dataclass(frozen=True)
class FileLines:
    """Lines ``start_line``-``end_line`` (1-based, inclusive) of an indexed file, as it
    is on disk now, secrets redacted. ``total_lines`` counts the whole file (a final
    newline ends the last line, it does not start another); ``truncated``: the range
    asked for was longer than the limit and was cut (read on from ``end_line + 1``)."""

    path: str
    start_line: int
    end_line: int
    lines: list[str] = field(default_factory=list)
    total_lines: int = 0
    truncated: bool = False
    language: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "language": self.language,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "total_lines": self.total_lines,
            "truncated": self.truncated,
            "lines": list(self.lines),
        }


def clean_path(path: str) -> str | None:
    """``path`` as a clean repository-relative POSIX path, or None when it is not one
    (empty, absolute, ``..``, backslashes, NUL, a drive letter)."""
    raw = path.strip()
    if not raw or "\0" in raw or "\\" in raw or raw.startswith("/") or ":" in raw.split("/")[0]:
        return None
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def display_text(root: Path, path: str, config: Config) -> str | None:
    """The text of the repository file ``path`` now, scrubbed as indexing scrubs it;
    None when it is gone, unreadable, binary or outside ``root`` (a symlink out)."""
    rel = clean_path(path)
    if rel is None:
        return None
    base = root.resolve()
    target = (base / rel).resolve()
    if not target.is_relative_to(base) or target == base:
        return None
    read = read_source(target, rel)
    if isinstance(read, Skipped):
        return None
    return scrub(read[0], config, path=rel).text


def display_lines(root: Path, path: str, config: Config) -> list[str] | None:
    """:func:`display_text` as lines (a final newline starts no line); None as there."""
    text = display_text(root, path, config)
    if text is None:
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def select(
    lines: list[str],
    start: int | None,
    end: int | None,
    *,
    path: str,
    max_lines: int = DEFAULT_MAX_LINES,
    max_chars: int | None = None,
) -> tuple[int, int, list[str], bool]:
    """``(start, end, lines, truncated)`` of the range ``start``-``end`` of ``lines``
    (defaults: from line 1, to the end), cut at ``max_lines`` lines and at the last
    whole line within ``max_chars`` characters (a first line longer than that alone is
    cut to it). Raises :class:`LineRangeError` for a range that does not fit."""
    total = len(lines)
    first = 1 if start is None else start
    if first < 1:
        raise LineRangeError(f"the first line is 1; got start={first}")
    if end is not None and end < first:
        raise LineRangeError(f"end ({end}) is before start ({first}); give end >= start")
    if total == 0:
        return 1, 0, [], False
    if first > total:
        raise LineRangeError(
            f"{path} has {total} lines; line {first} is past the end (start at 1-{total})"
        )
    last = total if end is None else min(end, total)
    truncated = False
    if last - first + 1 > max_lines:
        last, truncated = first + max(1, max_lines) - 1, True
    shown = lines[first - 1 : last]
    if max_chars is not None:
        used, keep = 0, 0
        for line in shown:
            used += len(line) + 1
            if used > max_chars and keep:
                break
            keep += 1
        if keep < len(shown):
            shown, last, truncated = shown[:keep], first + keep - 1, True
        if len(shown[0]) > max_chars:  # one minified line: shown as far as the limit
            shown, truncated = [shown[0][:max_chars], *shown[1:]], True
    return first, last, shown, truncated


__all__ = [
    "DEFAULT_MAX_LINES",
    "FileLines",
    "clean_path",
    "display_lines",
    "display_text",
    "select",
]
