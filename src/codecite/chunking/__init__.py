"""Chunking: cut a file into natural units with what is needed to read each alone
(docs/DESIGN.md section 3).

``chunk_file`` dispatches on the language: tree-sitter languages go to
:mod:`.treesitter` (functions, methods, class skeletons, a module chunk, line
windows for regions that do not parse), ``markdown`` to sections by heading,
``config``/``text`` (and anything else) to one ``file`` chunk or line windows
(:mod:`.text`). Chunks come back ordered by start line, an enclosing chunk
before what it encloses, with stable ids (``make_chunk_id``); two chunks that
would share an id (identical overloads) get ``#2``, ``#3``... appended to
their qualname in the id key, in file order.
"""

from __future__ import annotations

import dataclasses
import threading

import tree_sitter

from ..config import Config
from ..types import Chunk, make_chunk_id
from .grammars import GRAMMARS, get_parser, is_code_language
from .text import chunk_markdown, chunk_text
from .treesitter import chunk_code

__all__ = ["CHUNKING_VERSION", "chunk_file", "chunking_key", "parse"]

#: Raised when the chunker cuts files differently (2: long class outlines in parts; 3: a
#: JSDoc block one blank line above its function, chained assignments of a function; 4:
#: getters defined by ``defineGetter(obj, 'name', function ...)``; 5: CommonJS exports,
#: ``module.exports = class X {...}`` and ``module.exports = {...}`` of functions; 6:
#: documented top-level constants, a chunk each; 7: a file's description skips a
#: licence or copyright notice at its top): an index made by another version re-chunks
#: every file at its next run.
CHUNKING_VERSION = 7

_KIND_ORDER = {"module": 0, "class": 1, "function": 2, "method": 2, "constant": 2}
_local = threading.local()


def parse(text: str, language: str) -> tree_sitter.Tree:
    """Parse source text with the grammar of a code language (one parser per thread).

    Pass the tree to :func:`chunk_file` (and to the graph extractor) so the file is
    parsed once. Never raises for bad input: tree-sitter recovers from errors.
    """
    if not is_code_language(language):
        raise ValueError(
            f"{language!r} is not a tree-sitter language; choose from {', '.join(GRAMMARS)}"
        )
    parsers: dict[str, tree_sitter.Parser] = _local.__dict__.setdefault("parsers", {})
    parser = parsers.get(language)
    if parser is None:
        parser = parsers[language] = get_parser(language)
    return parser.parse(text.encode("utf-8", "surrogatepass"))


def chunking_key(config: Config) -> str:
    """What decides how files are cut: the chunker's version and its settings. An index
    records it; a run that finds another one re-chunks every file (embeddings are reused
    by content, so only changed chunks are embedded again)."""
    ix = config.index
    sizes = (ix.max_chunk_lines, ix.class_part_lines, ix.small_file_lines, ix.window_lines,
             ix.window_overlap)  # fmt: skip
    return f"v{CHUNKING_VERSION}:" + ",".join(str(n) for n in sizes)


def chunk_file(
    text: str,
    *,
    path: str,
    language: str,
    repo: str,
    config: Config,
    tree: tree_sitter.Tree | None = None,
) -> list[Chunk]:
    """All chunks of one file, ordered by start line (enclosing chunks first).

    ``tree`` is the file's tree from :func:`parse`, when the caller already has it.
    Empty or whitespace-only files give no chunks.
    """
    if not text.strip():
        return []
    if is_code_language(language):
        if tree is None:
            tree = parse(text, language)
        chunks = chunk_code(text, tree, path=path, language=language, repo=repo, config=config)
    elif language == "markdown":
        chunks = chunk_markdown(text, path=path, language=language, repo=repo, config=config)
    else:
        chunks = chunk_text(text, path=path, language=language, repo=repo, config=config)
    return _with_ids(_ordered(chunks))


def _ordered(chunks: list[Chunk]) -> list[Chunk]:
    return sorted(
        chunks,
        key=lambda c: (c.start_line, -c.end_line, _KIND_ORDER.get(c.kind, 3), c.part),
    )


def _with_ids(chunks: list[Chunk]) -> list[Chunk]:
    """Assign ids; a repeated id gets ``#n`` appended to the qualname in its key."""
    seen: dict[str, int] = {}
    out = []
    for chunk in chunks:
        key = (chunk.repo, chunk.path, chunk.kind, chunk.qualname, chunk.content_hash)
        chunk_id = make_chunk_id(*key)
        count = seen.get(chunk_id, 0) + 1
        seen[chunk_id] = count
        if count > 1:
            chunk_id = make_chunk_id(*key[:3], f"{chunk.qualname}#{count}", chunk.content_hash)
        out.append(dataclasses.replace(chunk, id=chunk_id))
    return out
