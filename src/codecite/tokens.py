"""Identifier-aware tokenisation shared by the keyword index and keyword search.

``getUserName`` → ``get user name getusername``; ``HTTPServer_v2`` →
``http server v 2 httpserver_v2``... Both the parts and the whole identifier
are kept so that ``calculatePriceWithTax`` and "price with tax" both match.
"""

from __future__ import annotations

import re

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|\d+")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|_)|[A-Z]?[a-z]+|[A-Z]+|\d+")


def split_identifier(ident: str) -> list[str]:
    """Lower-cased parts of one identifier (camel, Pascal, snake, kebab, digits)."""
    return [p.lower() for p in _PARTS.findall(ident)]


def tokenize(text: str) -> list[str]:
    """Tokens of a text for BM25: each identifier's parts, then the whole
    identifier (lower-cased) when it has more than one part."""
    out: list[str] = []
    for match in _IDENT.finditer(text):
        ident = match.group(0)
        parts = split_identifier(ident)
        out.extend(parts)
        whole = ident.lower().strip("_$")
        if len(parts) > 1 and whole:
            out.append(whole)
    return out


def token_text(text: str) -> str:
    """``tokenize`` joined by spaces, the column FTS5 indexes."""
    return " ".join(tokenize(text))
