"""Chunks of text files: markdown by heading, small files whole, the rest in
overlapping line windows (also the fallback for code tree-sitter cannot parse).

Markdown sections run from a heading to the line before the next heading of any
level; a heading with nothing under it is merged into the next section. The
``qualname`` of a section is its heading path joined by `` > `` (``Install >
Linux``) and its ``context`` is ``path: ...`` then ``section: <heading path>``.
A section longer than ``max_chunk_lines`` is cut into line windows, numbered
by ``part``. Chunks made here have an empty ``id``; :func:`codecite.chunking.chunk_file`
assigns ids once all chunks of a file are known.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from ..config import Config
from ..types import Chunk, sha256_text

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def draft(
    *,
    repo: str,
    path: str,
    language: str,
    kind: str,
    name: str,
    qualname: str,
    start_line: int,
    end_line: int,
    content: str,
    context: str,
    **extra: object,
) -> Chunk:
    """A chunk without its id (assigned per file by ``chunk_file``)."""
    return Chunk(
        id="",
        repo=repo,
        path=path,
        language=language,
        kind=kind,
        name=name,
        qualname=qualname,
        start_line=start_line,
        end_line=end_line,
        content=content,
        context=context,
        content_hash=sha256_text(content),
        **extra,  # type: ignore[arg-type]
    )


def split_lines(text: str) -> list[str]:
    """Lines as tree-sitter counts them (``\\n`` only), without a last empty line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def window_ranges(first: int, last: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Inclusive (start, end) windows covering ``first..last`` with ``overlap`` lines shared."""
    size = max(1, size)
    step = max(1, size - max(0, overlap))
    out: list[tuple[int, int]] = []
    start = first
    while start <= last:
        end = min(start + size - 1, last)
        out.append((start, end))
        if end >= last:
            break
        start += step
    return out


def trim(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """``start..end`` (1-based) without blank lines at either end; None when all blank."""
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return (start, end) if start <= end else None


def window_chunks(
    lines: list[str],
    first: int,
    last: int,
    *,
    config: Config,
    repo: str,
    path: str,
    language: str,
    context: str,
) -> list[Chunk]:
    """``window`` chunks over lines ``first..last`` (1-based, inclusive)."""
    out = []
    for start, end in window_ranges(
        first, last, config.index.window_lines, config.index.window_overlap
    ):
        kept = trim(lines, start, end)
        if kept is None:
            continue
        out.append(
            draft(
                repo=repo,
                path=path,
                language=language,
                kind="window",
                name=PurePosixPath(path).name,
                qualname=path,
                start_line=kept[0],
                end_line=kept[1],
                content="\n".join(lines[kept[0] - 1 : kept[1]]),
                context=context,
            )
        )
    return out


def chunk_text(text: str, *, path: str, language: str, repo: str, config: Config) -> list[Chunk]:
    """A config or plain-text file: one ``file`` chunk when small, else windows."""
    lines = split_lines(text)
    kept = trim(lines, 1, len(lines))
    if kept is None:
        return []
    context = f"path: {path}"
    if len(lines) > config.index.small_file_lines:
        return window_chunks(
            lines,
            kept[0],
            kept[1],
            config=config,
            repo=repo,
            path=path,
            language=language,
            context=context,
        )
    return [
        draft(
            repo=repo,
            path=path,
            language=language,
            kind="file",
            name=PurePosixPath(path).name,
            qualname=path,
            start_line=kept[0],
            end_line=kept[1],
            content="\n".join(lines[kept[0] - 1 : kept[1]]),
            context=context,
        )
    ]


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(1-based line, level, title) of each heading, outside fenced code and front matter."""
    found: list[tuple[int, int, str]] = []
    fence = ""
    index = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        index = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
    while index < len(lines):
        line = lines[index]
        match = _FENCE.match(line)
        if match and (not fence or match.group(1)[0] == fence[0]):
            fence = "" if fence else match.group(1)
        elif not fence:
            atx = _ATX.match(line)
            if atx:
                found.append((index + 1, len(atx.group(1)), (atx.group(2) or "").strip()))
            elif (
                index + 1 < len(lines)
                and _SETEXT.match(lines[index + 1])
                and line.strip()
                and not line.startswith(("    ", "\t", "-", "*", ">"))
            ):
                level = 1 if lines[index + 1].strip()[0] == "=" else 2
                found.append((index + 1, level, line.strip()))
                index += 1
        index += 1
    return found


def _sections(lines: list[str]) -> list[tuple[int, int, list[str]]]:
    """(start, end, heading path) of each section; heading-only sections merged forward."""
    raw: list[tuple[int, int, list[str]]] = []
    stack: list[tuple[int, str]] = []
    headings = _headings(lines)
    if not headings or headings[0][0] > 1:
        first = headings[0][0] - 1 if headings else len(lines)
        raw.append((1, first, []))
    for i, (line, level, title) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title or "(untitled)"))
        end = headings[i + 1][0] - 1 if i + 1 < len(headings) else len(lines)
        raw.append((line, end, [t for _, t in stack]))
    merged: list[tuple[int, int, list[str]]] = []
    carry: int | None = None
    for index, (start, end, heading_path) in enumerate(raw):
        body_empty = heading_path and trim(lines, start + 1, end) is None
        if body_empty and index + 1 < len(raw):
            carry = start if carry is None else carry
            continue
        merged.append((start if carry is None else carry, end, heading_path))
        carry = None
    return merged


def chunk_markdown(
    text: str, *, path: str, language: str, repo: str, config: Config
) -> list[Chunk]:
    """Markdown cut by heading: ``section`` chunks with the heading path in context."""
    lines = split_lines(text)
    stem = PurePosixPath(path).stem
    out: list[Chunk] = []
    for start, end, heading_path in _sections(lines):
        kept = trim(lines, start, end)
        if kept is None:
            continue
        name = heading_path[-1] if heading_path else stem
        qualname = " > ".join(heading_path) if heading_path else stem
        context = f"path: {path}\nsection: {qualname}"
        pieces = [kept]
        if kept[1] - kept[0] + 1 > config.index.max_chunk_lines:
            pieces = window_ranges(
                kept[0], kept[1], config.index.window_lines, config.index.window_overlap
            )
        for number, (s, e) in enumerate(pieces, start=1):
            piece = trim(lines, s, e)
            if piece is None:
                continue
            out.append(
                draft(
                    repo=repo,
                    path=path,
                    language=language,
                    kind="section",
                    name=name,
                    qualname=qualname,
                    start_line=piece[0],
                    end_line=piece[1],
                    content="\n".join(lines[piece[0] - 1 : piece[1]]),
                    context=context,
                    part=number if len(pieces) > 1 else 0,
                )
            )
    return out
