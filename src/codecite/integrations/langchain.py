"""A LangChain retriever over codecite: :class:`CodeciteRetriever`.

It searches either a local index (:meth:`CodeciteRetriever.from_path`, opened read-only
once and reused) or a codecite server (:meth:`CodeciteRetriever.from_server`,
``POST {base_url}/api/v1/search`` with a bearer token), and returns one LangChain
``Document`` per hit: the chunk's code as ``page_content`` and its place as metadata
(``path``, ``start_line``, ``end_line``, ``citation`` = ``path:start-end``, ``qualname``,
``name``, ``kind``, ``language``, ``score``, ``source``, ``repo``)::

    from codecite.integrations.langchain import CodeciteRetriever

    local = CodeciteRetriever.from_path("path/to/repo", k=5, languages=["py"])
    remote = CodeciteRetriever.from_server("http://127.0.0.1:8765", token="cc_...", repos=["shop"])
    docs = local.invoke("how is the loyalty discount computed")

A server's JSON errors become :class:`ServerError` subclasses whose message says what to
fix: :class:`ServerAuthError` (401: the token), :class:`ServerForbiddenError` (403: the
token may not read a repository), :class:`ServerRequestError` (another 4xx),
:class:`ServerUnavailableError` (cannot connect, or no answer within ``timeout``).

Needs the ``langchain`` extra: ``pip install 'codecite[langchain]'``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self

import httpx

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import Field, PrivateAttr, SecretStr, model_validator
except ImportError as exc:
    raise ImportError(
        "codecite.integrations.langchain needs langchain-core, which is not installed: "
        f"pip install 'codecite[langchain]' ({exc})"
    ) from exc

from .. import MAX_K, Filters, Hit, Index, __version__, open_index, server_message
from ..errors import (
    ServerAuthError,
    ServerError,
    ServerForbiddenError,
    ServerProtocolError,
    ServerRequestError,
    ServerUnavailableError,
    UserError,
)

__all__ = [
    "CodeciteRetriever",
    "ServerAuthError",
    "ServerError",
    "ServerForbiddenError",
    "ServerProtocolError",
    "ServerRequestError",
    "ServerUnavailableError",
]

#: The server's search endpoint, under its base URL.
SEARCH_PATH = "/api/v1/search"


def _citation(path: str, start_line: int, end_line: int) -> str:
    return f"{path}:{start_line}-{end_line}"


def _document(content: str, meta: dict[str, Any], doc_id: str | None = None) -> Document:
    meta = dict(meta)
    meta["citation"] = _citation(meta["path"], meta["start_line"], meta["end_line"])
    return Document(page_content=content, metadata=meta, id=doc_id or None)


def hit_document(hit: Hit) -> Document:
    """The ``Document`` of a local search hit."""
    c = hit.chunk
    meta = {
        "path": c.path,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "qualname": c.qualname,
        "name": c.name,
        "kind": c.kind,
        "language": c.language,
        "score": round(hit.score, 6),
        "source": hit.source,
        "repo": c.repo,
    }
    return _document(c.content, meta, c.id)


def result_document(result: Any) -> Document:
    """The ``Document`` of one ``R`` object of a server's search answer; a
    :class:`ServerProtocolError` when it lacks a field or has one of the wrong type."""
    if not isinstance(result, dict):
        raise ServerProtocolError(f"a search result is not a JSON object: {str(result)[:100]}")
    try:
        meta = {
            "path": str(result["path"]),
            "start_line": int(result["start_line"]),
            "end_line": int(result["end_line"]),
            "qualname": str(result["qualname"]),
            "name": str(result["name"]),
            "kind": str(result["kind"]),
            "language": str(result["language"]),
            "score": float(result["score"]),
            "source": str(result["source"]),
            "repo": str(result.get("repo") or ""),
        }
        content = result["content"]
        if not isinstance(content, str):
            raise TypeError(f"content is {type(content).__name__}, not a string")
    except KeyError as exc:
        raise ServerProtocolError(f"a search result lacks the field {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ServerProtocolError(f"a search result has a field of the wrong type: {exc}") from None
    doc_id = result.get("id")
    return _document(content, meta, doc_id if isinstance(doc_id, str) else None)


def _as_list(value: Iterable[str] | str | None) -> list[str]:
    return [value] if isinstance(value, str) else list(value or ())


class CodeciteRetriever(BaseRetriever):
    """Code chunks relevant to a query, from a local codecite index or a codecite server.

    Build it with :meth:`from_path` (local) or :meth:`from_server` (server); setting
    exactly one of ``repo_path`` / ``base_url`` does the same. ``languages`` (aliases such
    as ``ts`` allowed), ``path_glob`` and ``kinds`` filter inside the search, as
    :meth:`codecite.Filters.parse` reads them; ``repos`` picks the server's repositories
    (all the token may read when empty).
    """

    #: Documents per query.
    k: int = Field(default=5, ge=1, le=MAX_K)
    languages: list[str] = Field(default_factory=list)
    path_glob: str = ""
    kinds: list[str] = Field(default_factory=list)
    #: Local mode: the repository folder, and its index folder when not ``.codecite`` in it.
    repo_path: str | None = None
    index_dir: str | None = None
    #: Server mode: the server's base URL, the bearer token, the repositories to search.
    base_url: str | None = None
    token: SecretStr | None = None
    repos: list[str] = Field(default_factory=list)
    #: Seconds to wait for the server (connect, send, each read).
    timeout: float = Field(default=30.0, gt=0)

    _index: Index | None = PrivateAttr(default=None)
    _client: httpx.Client | None = PrivateAttr(default=None)
    _lock: threading.RLock = PrivateAttr(default_factory=threading.RLock)

    @model_validator(mode="after")
    def _check_mode(self) -> Self:
        if (self.repo_path is None) == (self.base_url is None):
            raise ValueError(
                "give exactly one of repo_path (a local index) and base_url (a codecite "
                "server): use CodeciteRetriever.from_path(...) or .from_server(...)"
            )
        if self.repo_path is not None and self.repos:
            raise ValueError(
                "repos= picks repositories on a codecite server; a local index is one "
                "repository (use from_server, or leave repos out)"
            )
        if self.base_url is not None:
            url = httpx.URL(self.base_url)
            if url.scheme not in ("http", "https") or not url.host:
                raise ValueError(
                    f"base_url {self.base_url!r} is not an http(s) URL; give the server's "
                    "address, e.g. http://127.0.0.1:8765"
                )
        Filters.parse(self.languages, self.path_glob, self.kinds)  # a UserError if wrong
        return self

    # --- construction ----------------------------------------------------------------
    @classmethod
    def from_path(
        cls,
        path: str | Path,
        *,
        k: int = 5,
        languages: Iterable[str] | str | None = None,
        path_glob: str = "",
        kinds: Iterable[str] | str | None = None,
        index_dir: str | Path | None = None,
        **kwargs: Any,
    ) -> CodeciteRetriever:
        """A retriever over the index of the repository at ``path`` (built beforehand with
        ``codecite index PATH``), opened read-only now and reused by every query."""
        retriever = cls(
            repo_path=str(path),
            index_dir=str(index_dir) if index_dir is not None else None,
            k=k,
            languages=_as_list(languages),
            path_glob=path_glob,
            kinds=_as_list(kinds),
            **kwargs,
        )
        retriever.local_index()
        return retriever

    @classmethod
    def from_server(
        cls,
        base_url: str,
        *,
        token: str | None = None,
        repos: Iterable[str] | str | None = None,
        k: int = 5,
        languages: Iterable[str] | str | None = None,
        path_glob: str = "",
        kinds: Iterable[str] | str | None = None,
        timeout: float = 30.0,
        **kwargs: Any,
    ) -> CodeciteRetriever:
        """A retriever over a codecite server at ``base_url`` (``codecite serve``),
        sending ``token`` as ``Authorization: Bearer TOKEN``."""
        return cls(
            base_url=base_url,
            token=SecretStr(token) if token else None,
            repos=_as_list(repos),
            k=k,
            languages=_as_list(languages),
            path_glob=path_glob,
            kinds=_as_list(kinds),
            timeout=timeout,
            **kwargs,
        )

    @property
    def filters(self) -> Filters:
        """The validated filters of every query (language aliases resolved)."""
        return Filters.parse(self.languages, self.path_glob, self.kinds)

    @property
    def is_server(self) -> bool:
        return self.base_url is not None

    def local_index(self) -> Index:
        """The local index, opened read-only on first use (an ``IndexMissingError``
        saying how to build it when there is none)."""
        if self.repo_path is None:
            raise UserError("this retriever searches a codecite server, not a local index")
        with self._lock:
            if self._index is None:
                self._index = open_index(self.repo_path, index_dir=self.index_dir, create=False)
            return self._index

    def close(self) -> None:
        """Close the local index and the HTTP connections (a later query reopens them)."""
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None
            if self._client is not None:
                self._client.close()
                self._client = None

    # --- retrieval -------------------------------------------------------------------
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        _check_query(query)
        if self.is_server:
            return self._search_server(query)
        index = self.local_index()
        # One SQLite connection is not for two threads at once.
        with self._lock:
            result = index.search(query, k=self.k, filters=self.filters or None)
        return [hit_document(hit) for hit in result.hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if not self.is_server:  # a local search runs in a worker thread
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        _check_query(query)
        url, headers, body = self._request(query)
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            try:
                response = await client.post(url, json=body, headers=headers)
            except httpx.HTTPError as exc:
                raise self._transport_error(exc) from exc
        return self._read(response)

    # --- server mode -----------------------------------------------------------------
    def _request(self, query: str) -> tuple[str, dict[str, str], dict[str, Any]]:
        assert self.base_url is not None
        url = self.base_url.rstrip("/") + SEARCH_PATH
        headers = {"Accept": "application/json", "User-Agent": f"codecite/{__version__}"}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token.get_secret_value()}"
        body: dict[str, Any] = {"query": query, "k": self.k}
        if self.repos:
            body["repos"] = list(self.repos)
        filters = self.filters
        if filters:
            body["filters"] = {
                "languages": list(filters.languages),
                "path": filters.path,
                "kinds": list(filters.kinds),
            }
        return url, headers, body

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self.timeout)
            return self._client

    def _search_server(self, query: str) -> list[Document]:
        url, headers, body = self._request(query)
        try:
            response = self._http().post(url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc
        return self._read(response)

    def _transport_error(self, exc: httpx.HTTPError) -> ServerError:
        where = f"the codecite server at {self.base_url}"
        if isinstance(exc, httpx.TimeoutException):
            return ServerUnavailableError(
                f"{where} did not answer within {self.timeout:g}s ({type(exc).__name__}); "
                "is it overloaded? raise timeout= for slow searches"
            )
        if isinstance(exc, httpx.TransportError):
            return ServerUnavailableError(
                f"cannot reach {where} ({type(exc).__name__}: {exc}); is `codecite serve` "
                "running there, and is the address right?"
            )
        return ServerProtocolError(f"{where}: {type(exc).__name__}: {exc}")

    def _read(self, response: httpx.Response) -> list[Document]:
        """The documents of a 200 answer; a :class:`ServerError` for anything else."""
        if response.status_code != 200:
            raise self._status_error(response)
        try:
            body = response.json()
        except ValueError:
            raise ServerProtocolError(
                f"{response.request.url} answered 200 with no JSON "
                f"({server_message(response)[:100]}); is {self.base_url} a codecite server?",
                status=200,
            ) from None
        if not isinstance(body, dict) or not isinstance(body.get("results"), list):
            raise ServerProtocolError(
                f"{response.request.url} did not answer with codecite search results "
                f"(no 'results' list); is {self.base_url} a codecite server?",
                status=200,
            )
        return [result_document(r) for r in body["results"]]

    def _status_error(self, response: httpx.Response) -> ServerError:
        """A clear exception for a non-200 answer, from the server's
        ``{"error": {"code", "message"}}`` body when it sent one."""
        status = response.status_code
        code, message = _error_body(response)
        said = f"HTTP {status}{' ' + code if code else ''}: {message}"
        where = f"the codecite server at {self.base_url}"
        repos = ", ".join(self.repos) if self.repos else "the repositories the token may read"
        if 300 <= status < 400:
            target = response.headers.get("location", "")
            return ServerProtocolError(
                f"{where} answered with a redirect ({status}) to {target or '?'}; "
                "give the server's own base URL",
                status=status,
            )
        if status == 401:
            hint = (
                "no token was sent: pass token='cc_...' to CodeciteRetriever.from_server"
                if self.token is None
                else "the token passed to CodeciteRetriever.from_server(token=...) is "
                "wrong, expired or revoked; ask the server's admin for a valid one"
            )
            return ServerAuthError(
                f"{where} refused the token ({said}); {hint}", status=status, code=code
            )
        if status == 403:  # a codecite server answers an unknown name with 403 too
            return ServerForbiddenError(
                f"{where}: the token may not search {repos}, or no such repository "
                f"({said}); check the names in repos=[...] or ask the server's admin to "
                "grant the token access",
                status=status,
                code=code,
            )
        if status == 404:  # the search endpoint itself is missing: a wrong base URL
            return ServerRequestError(
                f"{response.request.url} was not found ({said}); is {self.base_url} the "
                "base URL of a codecite server (`codecite serve`)?",
                status=status,
                code=code,
            )
        if status == 413:
            return ServerRequestError(
                f"{where}: the request is too large ({said}); shorten the query",
                status=status,
                code=code,
            )
        if status == 429:
            wait = response.headers.get("retry-after", "")
            return ServerRequestError(
                f"{where} is limiting this token's requests ({said})"
                + (f"; retry in {wait}s" if wait else "; retry later"),
                status=status,
                code=code,
            )
        if 400 <= status < 500:  # 400/422 a bad request, 409 a repository not indexed yet
            return ServerRequestError(
                f"{where} could not run the search ({said})", status=status, code=code
            )
        return ServerError(f"{where} failed ({said}); its log says more", status=status, code=code)


def _error_body(response: httpx.Response) -> tuple[str, str]:
    """``(code, message)`` of a codecite error body; ``("", a description)`` of another."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        code = str(error.get("code") or "")
        message = str(error.get("message") or "") or response.reason_phrase
        return code, message[:300]
    return "", server_message(response) or response.reason_phrase


def _check_query(query: str) -> None:
    if not isinstance(query, str) or not query.strip():
        raise UserError("the query is empty; say what to look for")
