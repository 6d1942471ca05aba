"""Store locations as text: whether one names the shared PostgreSQL store, and a URL
with its password hidden. Standard library only, so that commands which only look at
a location (the server's configuration, its state database) load no backend."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

#: URL schemes of the PostgreSQL store.
SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: str | Path) -> bool:
    return isinstance(location, str) and location.startswith(SCHEMES)


def redact(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))
