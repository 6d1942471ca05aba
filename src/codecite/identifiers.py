"""Identifier-aware tokenisation shared by the keyword index and keyword search.

``getUserName`` → ``get user name getusername``; ``HTTPServer_v2`` →
``http server v 2 httpserver_v2``... Both the parts and the whole identifier
are kept so that ``calculatePriceWithTax`` and "price with tax" both match.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import Chunk

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|\d+")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|_)|[A-Z]?[a-z]+|[A-Z]+|\d+")


def split_identifier(ident: str) -> list[str]:
    """Lower-cased parts of one identifier (camel, Pascal, snake, kebab, digits)."""
    return [p.lower() for p in _PARTS.findall(ident)]


@lru_cache(maxsize=200_000)
def _expand(ident: str) -> tuple[str, ...]:
    """One identifier's tokens: its parts, then the whole when it has several
    (cached: code repeats its identifiers a lot)."""
    parts = split_identifier(ident)
    whole = ident.lower().strip("_$")
    return (*parts, whole) if len(parts) > 1 and whole else tuple(parts)


def tokenize(text: str) -> list[str]:
    """Tokens of a text for BM25: each identifier's parts, then the whole
    identifier (lower-cased) when it has more than one part."""
    out: list[str] = []
    for ident in _IDENT.findall(text):
        out.extend(_expand(ident))
    return out


#: A name with its version written apart ("HTTP/2", "utf-8", "OAuth-2"): code names it
#: as one identifier (``http2``, ``utf8``), which the parts alone do not find.
_VERSIONED = re.compile(r"\b([A-Za-z]{2,})[/-](\d{1,2})\b")


def joined_names(text: str) -> list[str]:
    """The identifiers a question's "HTTP/2" or "utf-8" stands for in code (``http2``,
    ``utf8``), lower-cased; for query terms only (the index keeps its own tokens)."""
    return list(
        dict.fromkeys(f"{m.group(1)}{m.group(2)}".lower() for m in _VERSIONED.finditer(text))
    )


def token_text(text: str) -> str:
    """``tokenize`` joined by spaces, the column FTS5 indexes."""
    return " ".join(tokenize(text))


def keyword_row(chunk: Chunk) -> tuple[str, str, str]:
    """The identifier-split (symbol, path, body) texts the keyword index holds."""
    return (
        token_text(f"{chunk.name} {chunk.qualname} {chunk.signature}"),
        token_text(chunk.path),
        token_text(f"{chunk.docstring}\n{chunk.content}"),
    )
