"""Every exception codecite raises on purpose. The library raises these; only the
CLI turns them into exit codes (1 for :class:`UserError`, 2 for anything else, 130
for :class:`Interrupted`)::

    CodeciteError
    ├── UserError                   bad input or a setting a user can fix (exit 1)
    │   ├── PathError               path missing, not a folder, unreadable, not writable
    │   │   └── NotIndexedFileError a path that is not an indexed file (read_lines)
    │   ├── LineRangeError          a line range that does not fit the file (read_lines)
    │   ├── TooLargeError           a question or argument over a server limit (HTTP 413)
    │   ├── ConfigError             invalid codecite.toml / CODECITE_* value, missing key
    │   ├── IndexMissingError       no index where one was expected
    │   ├── ModelMismatchError      index built with another embedding model
    │   ├── IndexCorruptError       index files damaged: rebuild with ``index --full``
    │   ├── IndexOutdatedError      a read-only open found an older format: run ``index``
    │   ├── WorkerStartError        parse workers could not start (script without a main guard)
    │   ├── UnknownBackendError     a name not in a registry (--llm, embedder)
    │   └── AmbiguousSymbolError    a name matches several definitions; lists them
    ├── IndexFormatError            index written by a newer codecite
    ├── EmbeddingError              the embedding backend failed
    ├── Interrupted                 Ctrl-C while indexing; carries the report (exit 130)
    └── LLMError                    the chat endpoint failed (base, never raised itself);
        │                           each of these is also a UserError (exit 1): the
        │                           message says what to check
        ├── LLMUnavailableError     cannot connect (is the server running?)
        │   └── LLMTimeoutError     no answer within the timeout
        ├── LLMAuthError            HTTP 401/403: the API key
        ├── LLMModelNotFoundError   HTTP 404: no such model (or a wrong base URL)
        ├── LLMRequestError         another 4xx, e.g. the prompt exceeds the context
        ├── LLMServerError          HTTP 5xx after the retries, or an error event
        ├── LLMRateLimitError       HTTP 429 after the retries (says how long to wait)
        ├── LLMStreamError          the answer stopped mid-way (connection closed)
        └── LLMProtocolError        not an OpenAI-compatible reply (an HTML page,
                                    non-JSON, another shape, a redirect)
    ServerError                     a codecite server (as a client sees it) did not
    │                               answer: a 5xx, or the base of these
    ├── ServerUnavailableError      cannot connect, or no answer in time
    ├── ServerProtocolError         not a codecite server's answer (HTML, a redirect)
    ├── ServerAuthError             HTTP 401: the token                  + UserError
    │   └── ServerForbiddenError    HTTP 403: a repository it may not read + UserError
    └── ServerRequestError          another 4xx (bad request, 404, 409, 413, 429) + UserError
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import IndexReport


class CodeciteError(Exception):
    """Base of every error codecite raises on purpose."""


class UserError(CodeciteError):
    """Something the user can fix; the message says how."""


class PathError(UserError):
    pass


class NotIndexedFileError(PathError):
    """A path that is not an indexed file of the repository (outside it, a folder, a
    file the walker skipped): nothing was read."""


class LineRangeError(UserError):
    """A line range that does not fit the file: it starts past the end or before line
    1, or ends before it starts."""


class TooLargeError(UserError):
    """A question (or another argument) longer than the server's limit; the message
    says the limit. Every surface (API, web page, Slack, MCP) applies the same limits."""


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


class WorkerStartError(UserError):
    """The parse workers could not start (a script calling codecite without a
    ``__main__`` guard: each worker imports it again)."""


class AmbiguousSymbolError(UserError):
    """A symbol name matches several definitions (like an ambiguous git ref). The
    message lists them; ``candidates`` holds ``(path, start_line, end_line, qualname,
    kind)`` of each, sorted, so a caller can offer them as choices."""

    def __init__(self, message: str, candidates: list[tuple[str, int, int, str, str]]) -> None:
        super().__init__(message)
        self.candidates = candidates


class IndexFormatError(CodeciteError):
    pass


class EmbeddingError(CodeciteError):
    pass


class Interrupted(CodeciteError):
    """Ctrl-C during indexing; what was committed stays usable. Carries the report."""

    def __init__(self, report: IndexReport) -> None:
        super().__init__("interrupted; run `codecite index` again to resume")
        self.report = report


class LLMError(CodeciteError):
    """The LLM endpoint failed."""


class LLMUnavailableError(LLMError, UserError):
    """The LLM server cannot be reached."""


class LLMTimeoutError(LLMUnavailableError):
    """The LLM server did not answer in time."""


class LLMAuthError(LLMError, UserError):
    """The server refused the API key."""


class LLMModelNotFoundError(LLMError, UserError):
    """The server has no such model (or the base URL is wrong)."""


class LLMRequestError(LLMError, UserError):
    """The server refused the request (too long a prompt, bad parameters)."""


class LLMServerError(LLMError, UserError):
    """The server kept failing (HTTP 5xx after the retries) or reported an error."""


class LLMRateLimitError(LLMError, UserError):
    """The server kept rate-limiting (HTTP 429 after the retries)."""


class LLMStreamError(LLMError, UserError):
    """The answer stopped mid-way: the connection closed before the reply finished."""


class LLMProtocolError(LLMError, UserError):
    """The reply is not an OpenAI-compatible chat completion (a web page, say)."""


class ServerError(CodeciteError):
    """A codecite server did not answer a search (a 5xx, or a base of the others).
    ``status`` is the HTTP status (0 when there was none) and ``code`` the server's
    error code (``""`` when its body had none)."""

    def __init__(self, message: str, *, status: int = 0, code: str = "") -> None:
        super().__init__(message)
        self.status, self.code = status, code


class ServerUnavailableError(ServerError):
    """Cannot connect to the server, or no answer within the timeout."""


class ServerProtocolError(ServerError):
    """The answer is not a codecite server's (an HTML page, a redirect, another shape)."""


class ServerAuthError(ServerError, UserError):
    """HTTP 401: the token is missing, mistyped, expired or revoked."""


class ServerForbiddenError(ServerAuthError):
    """HTTP 403: the token is valid but may not read a requested repository (or there is
    no repository of that name: a server does not tell the two apart)."""


class ServerRequestError(ServerError, UserError):
    """Another 4xx: a bad request (400/422), no search endpoint at that URL (404), a
    repository not indexed yet (409), a request too large (413), too many requests (429)."""
