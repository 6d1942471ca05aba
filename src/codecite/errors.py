"""The exception hierarchy. The library raises these; only ``cli.py`` turns them
into exit codes (1 for :class:`UserError`, 2 for anything else).

::

    CodeciteError
    ├── UserError                 bad input a user can fix (exit 1)
    │   ├── PathError             path missing, not a folder, unreadable
    │   ├── ConfigError           invalid codecite.toml / CODECITE_* value
    │   ├── IndexMissingError     no index where one was expected
    │   ├── ModelMismatchError    index built with another embedding model
    │   ├── IndexCorruptError     index files damaged: rebuild with ``index --full``
    │   ├── IndexOutdatedError    a read-only open found an older format: run ``index``
    │   └── UnknownBackendError   a name not in a registry
    ├── IndexFormatError          index written by a newer codecite
    └── EmbeddingError            the embedding backend failed
"""

from __future__ import annotations


class CodeciteError(Exception):
    """Base of every error codecite raises on purpose."""


class UserError(CodeciteError):
    """Something the user can fix; the message says how."""


class PathError(UserError):
    pass


class ConfigError(UserError):
    pass


class IndexMissingError(UserError):
    pass


class ModelMismatchError(UserError):
    pass


class IndexCorruptError(UserError):
    """The index database is damaged (garbage, truncated, empty); ``index --full`` fixes it."""


class IndexOutdatedError(UserError):
    """A read-only open found an index of an older format; ``codecite index`` upgrades it."""


class UnknownBackendError(UserError):
    pass


class IndexFormatError(CodeciteError):
    pass


class EmbeddingError(CodeciteError):
    pass
