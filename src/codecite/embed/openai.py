"""Embeddings from any OpenAI-compatible HTTP endpoint (OpenAI, Ollama, vLLM,
LM Studio, llama.cpp server): ``POST {base}/embeddings``.

The server is the config's :meth:`~codecite.config.Config.embedding_endpoint`:
``embed_base_url``, else ``CODECITE_OPENAI_BASE_URL`` or ``OPENAI_BASE_URL`` (default
``https://api.openai.com/v1``), the key from ``CODECITE_OPENAI_API_KEY`` or
``OPENAI_API_KEY``. A key is required unless the server is local (loopback, a private
network address, or a single-label host name such as a compose service ``ollama``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

import httpx
import numpy as np

from .._http import RETRY_STATUS, RetryPolicy, is_local_url, json_client, send_with_retries
from .._http import server_message as _server_message
from ..config import Endpoint
from ..errors import ConfigError, EmbeddingError
from .base import l2_normalise

__all__ = ["OpenAIEmbedder", "is_local_url"]

log = logging.getLogger(__name__)

#: Dimensions of well-known models, so ``dim`` needs no request for them.
KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
#: Embedding requests are idempotent, so timeouts and conflicts are retried too.
_RETRY_STATUS = RETRY_STATUS | {408, 409, 425}
_PROBE_TEXT = "dimension probe"


class OpenAIEmbedder:
    """``openai:MODEL``: batched requests, retries with backoff, unit rows."""

    def __init__(
        self,
        model: str,
        endpoint: Endpoint | None = None,
        *,
        dim: int | None = None,
        batch_size: int = 64,
        max_tokens: int = 8191,
    ) -> None:
        """``endpoint``: where and how (default: OpenAI's API, no key); ``dim`` is
        learned from the first response when not given. A failed request is retried up
        to ``endpoint.max_retries`` times, waiting ``backoff * 2**attempt`` seconds (at
        most ``max_backoff``, or the server's ``Retry-After``)."""
        if not model:
            raise ConfigError(
                'the openai embedder needs a model: embedder = "openai:text-embedding-3-small"'
            )
        endpoint = endpoint or Endpoint()
        self.model = model
        self.base_url = endpoint.url.rstrip("/")
        self.api_key = endpoint.api_key
        if not self.api_key and not is_local_url(self.base_url):
            raise ConfigError(
                f"no API key: set OPENAI_API_KEY (or CODECITE_OPENAI_API_KEY) to embed with "
                f"{model} at {self.base_url}, or point CODECITE_OPENAI_BASE_URL at a local "
                f"server (Ollama: http://localhost:11434/v1)"
            )
        self.batch_size = max(1, batch_size)
        self.timeout = endpoint.timeout
        self.max_retries = max(0, endpoint.max_retries)
        self.backoff = endpoint.backoff
        self.max_backoff = endpoint.max_backoff
        self.max_tokens = max_tokens
        self._dim = dim if dim is not None else KNOWN_DIMS.get(model)
        self._client: httpx.Client | None = None

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    @property
    def dim(self) -> int:
        """The vector dimension; when neither given nor seen yet, one short probe
        request is made to learn it."""
        if self._dim is None:
            self.embed([_PROBE_TEXT], "query")
        assert self._dim is not None
        return self._dim

    @property
    def url(self) -> str:
        return f"{self.base_url}/embeddings"

    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = json_client(self.api_key, self.timeout)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def embed(
        self, texts: Sequence[str], kind: Literal["document", "query"] = "document"
    ) -> np.ndarray:
        """Embed ``texts`` in requests of ``batch_size``; ``kind`` is ignored
        (the OpenAI API has no query/document modes)."""
        if kind not in ("document", "query"):
            raise ValueError(f"kind must be 'document' or 'query', not {kind!r}")
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            parts.append(self._parse(self._post(batch), len(batch)))
        matrix = np.vstack(parts)
        if self._dim is None:
            self._dim = int(matrix.shape[1])
        elif matrix.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self.name} at {self.base_url} returned {matrix.shape[1]}-d vectors, "
                f"expected {self._dim}; check the model name"
            )
        return l2_normalise(matrix)

    def _post(self, batch: list[str]) -> Any:
        """The JSON body of a successful response, after retries."""
        payload = {"model": self.model, "input": batch}
        policy = RetryPolicy(self.max_retries, self.backoff, self.max_backoff, _RETRY_STATUS)
        outcome = send_with_retries(
            lambda: self._http().post(self.url, json=payload), policy, what=self.url
        )
        if outcome.error is not None:
            exc = outcome.error
            raise EmbeddingError(
                f"cannot reach {self.url} ({type(exc).__name__}: {exc}) after "
                f"{outcome.attempts} attempts; is the server running? "
                f"Set CODECITE_OPENAI_BASE_URL to its address"
            ) from None
        assert outcome.response is not None
        if outcome.response.status_code >= 300:
            raise EmbeddingError(self._http_error(outcome.response, outcome.attempts))
        return self._json(outcome.response)

    def _json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            raise EmbeddingError(
                f"{self.url} answered HTTP {response.status_code} with non-JSON "
                f"({response.text[:200]!r}); is CODECITE_OPENAI_BASE_URL an "
                f"OpenAI-compatible API (usually ending in /v1)?"
            ) from None

    def _http_error(self, response: httpx.Response, attempts: int) -> str:
        status = response.status_code
        head = f"{self.url} answered HTTP {status}: {_server_message(response)}"
        if status in (401, 403):
            return f"{head}. Check OPENAI_API_KEY (or CODECITE_OPENAI_API_KEY)"
        if status == 404:
            return (
                f'{head}. Check the model name in embedder = "{self.name}" and that '
                f"CODECITE_OPENAI_BASE_URL points at the API root (usually ending in /v1)"
            )
        if status in _RETRY_STATUS:
            return (
                f"{head} (gave up after {attempts} attempts). The server is failing or "
                f"rate-limiting; try again later or lower embed_batch_size"
            )
        return f"{head}. The request was refused; check the model name and input size"

    def _parse(self, body: Any, expected: int) -> np.ndarray:
        """Rows of ``data[i].embedding`` ordered by ``index``."""
        try:
            data = body["data"]
            items = sorted(
                ((int(item.get("index", pos)), item["embedding"]) for pos, item in enumerate(data)),
                key=lambda pair: pair[0],
            )
            matrix = np.asarray([vector for _, vector in items], dtype=np.float32)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise EmbeddingError(
                f"{self.url} returned an unexpected response ({type(exc).__name__}: {exc}); "
                f'expected {{"data": [{{"index": i, "embedding": [...]}}]}}'
            ) from None
        if matrix.ndim != 2 or matrix.shape[0] != expected:
            raise EmbeddingError(
                f"{self.url} returned {len(items)} embeddings for {expected} inputs"
            )
        return matrix
