"""The exception hierarchy. The library raises these; only ``cli.py`` turns them
into exit codes (1 for :class:`UserError`, 2 for anything else).

::

    CodeciteError
    ├── UserError                 bad input a user can fix (exit 1)
    │   ├── PathError             path missing, not a folder, unreadable
    │   ├── ConfigError           invalid codecite.toml / CODECITE_* value
    │   ├── IndexMissingError     no index where one was expected
    │   ├── ModelMismatchError    index built with another embedding model
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


class UnknownBackendError(UserError):
    pass


class IndexFormatError(CodeciteError):
    pass


class EmbeddingError(CodeciteError):
    pass
