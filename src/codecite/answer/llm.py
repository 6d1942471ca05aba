"""Chat models behind any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp
server, LM Studio): ``POST {base}/chat/completions``, streamed (SSE) or not.

``resolve_llm(spec, config)`` picks the answer mode (``extractive``, ``auto`` or
``openai:MODEL``) and says why; ``get_llm("openai:MODEL", config)`` builds a client.
A spec may name its server after an ``@`` (``openai:llama3.2@http://127.0.0.1:11434/v1``),
which is how :func:`detect_auto` hands over an Ollama server it found. Otherwise the
server is the config's :class:`~codecite.config.Endpoint` (``llm_base_url``, else
``OPENAI_BASE_URL``, else OpenAI's; the key from ``CODECITE_LLM_API_KEY`` or
``OPENAI_API_KEY``). A key is required unless the server is local.

Errors: every one raised is a subclass of :class:`~codecite.errors.LLMError` and also
a :class:`~codecite.errors.UserError` (exit 1, a message that says what to check): a
failing endpoint is the endpoint's problem, not a bug in codecite. The hierarchy is
drawn in :mod:`codecite.errors`; the classes are importable from here too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from .._http import (
    RetryPolicy,
    body_text,
    get_json,
    is_html,
    is_local_url,
    json_client,
    list_models,
    retry_after,
    send_with_retries,
    server_message,
)
from ..config import Config, Endpoint
from ..errors import (
    ConfigError,
    LLMAuthError,
    LLMError,
    LLMModelNotFoundError,
    LLMProtocolError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
    LLMStreamError,
    LLMTimeoutError,
    LLMUnavailableError,
    UnknownBackendError,
)

__all__ = [
    "EXTRACTIVE",
    "LLM",
    "LLMS",
    "LLMAuthError",
    "LLMChoice",
    "LLMError",
    "LLMModelNotFoundError",
    "LLMProtocolError",
    "LLMRateLimitError",
    "LLMRequestError",
    "LLMServerError",
    "LLMStreamError",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "OpenAIChat",
    "detect_auto",
    "get_llm",
    "resolve_llm",
]

#: The answer mode that needs no model: quotes and graph facts from the retrieved code.
EXTRACTIVE = "extractive"
OLLAMA_URL = "http://127.0.0.1:11434"
#: Answer modes that are not chat models (handled by the answer stage).
NON_LLM_MODES = ("extractive", "auto")
#: Connection failures worth another try; timeouts are not (they would multiply the wait).
_RETRY_ERRORS: tuple[type[httpx.TransportError], ...] = (
    httpx.ConnectError,
    httpx.ReadError,
    httpx.WriteError,
    httpx.RemoteProtocolError,
)
_NO_MODELS = "no LLM endpoint configured and no Ollama server on localhost"
#: Server-sent event lines that carry no data (comments and other fields).
_SSE_FIELDS = (":", "event:", "id:", "retry:")
_EXTRACTIVE = "or use --llm extractive"


class LLM(Protocol):
    """A chat model: ``complete`` returns the whole text; with ``on_token`` it
    streams and calls it with each piece as it arrives."""

    name: str

    def complete(
        self,
        messages: Sequence[dict[str, str]],
        *,
        max_tokens: int = 800,
        temperature: float = 0.0,
        on_token: Callable[[str], None] | None = None,
    ) -> str: ...


@dataclass(frozen=True)
class LLMChoice:
    """The answer mode picked for a question: a chat model, or None for extractive."""

    llm: LLM | None
    name: str
    #: Why this one ("asked for (--llm)", "Ollama at ... serves ...").
    reason: str


class OpenAIChat:
    """``openai:MODEL``: one chat completion per call, retried on 429/5xx and
    connection errors with exponential backoff (honouring ``Retry-After``)."""

    def __init__(
        self,
        model: str,
        endpoint: Endpoint | None = None,
        *,
        base_url: str = "",
    ) -> None:
        """``base_url`` (from a spec) beats the endpoint's."""
        if not model:
            raise ConfigError('the openai LLM needs a model: --llm "openai:gpt-4.1-mini"')
        self.settings = endpoint or Endpoint()
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = (base_url or self.settings.url).rstrip("/")
        self.api_key = self.settings.api_key
        if not self.api_key and not is_local_url(self.base_url):
            raise ConfigError(
                f"no API key: set OPENAI_API_KEY or use --llm extractive (the LLM at "
                f"{self.base_url} needs one; CODECITE_LLM_API_KEY also works)"
            )
        s = self.settings
        self.policy = RetryPolicy(
            s.max_retries, s.backoff, s.max_backoff, retry_errors=_RETRY_ERRORS
        )
        self._client: httpx.Client | None = None
        #: Inside ``with``: one client (its connections) for every call; outside, each
        #: call opens and closes its own, so a forgotten object leaks no socket.
        self._entered = False

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _http(self) -> httpx.Client:
        if self._client is None:
            timeout = httpx.Timeout(self.settings.timeout, connect=self.settings.connect_timeout)
            self._client = json_client(self.api_key, timeout)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> OpenAIChat:
        self._entered = True
        return self

    def __exit__(self, *exc: object) -> None:
        self._entered = False
        self.close()

    def complete(
        self,
        messages: Sequence[dict[str, str]],
        *,
        max_tokens: int = 800,
        temperature: float = 0.0,
        on_token: Callable[[str], None] | None = None,
    ) -> str:
        """The model's reply to ``messages``; streamed when ``on_token`` is given."""
        payload = {
            "model": self.model,
            "messages": list(messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": on_token is not None,
        }
        try:
            response = self._send(payload)
        except BaseException:
            if not self._entered:
                self.close()
            raise
        try:
            if is_html(response):
                response.read()
                raise self._not_openai(response, body_text(response))
            if on_token is not None and "json" not in response.headers.get("content-type", ""):
                return self._read_stream(response, on_token)
            text = self._read_message(response)  # also a server that ignored "stream"
            if on_token is not None and text:
                on_token(text)
            return text
        except httpx.TimeoutException:
            raise self._timeout() from None
        except httpx.TransportError as exc:
            raise self._cut(0, exc) from None
        finally:
            response.close()
            if not self._entered:
                self.close()

    def _send(self, payload: dict[str, Any]) -> httpx.Response:
        """A 2xx response (its body not read yet), after retries, or an error."""
        client = self._http()
        request = client.build_request("POST", self.url, json=payload)
        outcome = send_with_retries(
            lambda: client.send(request, stream=True), self.policy, what=self.url
        )
        if outcome.error is not None:
            raise self._transport_error(outcome.error, outcome.attempts)
        assert outcome.response is not None
        if outcome.response.status_code >= 300:  # httpx does not follow redirects
            try:
                raise self._http_error(outcome.response, outcome.attempts)
            finally:
                outcome.response.close()
        return outcome.response

    def _read_message(self, response: httpx.Response) -> str:
        response.read()
        try:
            body = response.json()
        except ValueError:
            raise self._not_openai(response, f"non-JSON ({body_text(response, 200)!r})") from None
        if isinstance(body, dict) and body.get("error") and "choices" not in body:
            raise self._failed(_error_message(body["error"]), 0)
        return self._content(body, "message")

    def _read_stream(self, response: httpx.Response, on_token: Callable[[str], None]) -> str:
        """The streamed answer; an error when the stream ends before it finished."""
        parts: list[str] = []
        other: list[str] = []  # lines that are not server-sent events
        finished = events = False
        size = 0
        try:
            for data in _sse_data(response.iter_lines(), other):
                events = True
                if data == "[DONE]":
                    finished = True
                    break
                event = self._stream_event(data, size)
                text = self._content(event, "delta")
                choice = (event.get("choices") or [{}])[0]
                finished = finished or bool(
                    isinstance(choice, dict) and choice.get("finish_reason")
                )
                if text:
                    parts.append(text)
                    size += len(text)
                    on_token(text)
        except httpx.TimeoutException:
            raise self._timeout() from None
        except httpx.TransportError as exc:
            raise self._cut(size, exc) from None
        if not events and other:
            raise self._not_openai(response, f"no server-sent events ({' '.join(other)[:200]!r})")
        if not finished:
            raise self._cut(size)
        return "".join(parts)

    def _stream_event(self, data: str, size: int) -> dict[str, Any]:
        """One ``data:`` payload as JSON; an error event becomes :class:`LLMServerError`."""
        try:
            event = json.loads(data)
        except ValueError:
            raise LLMProtocolError(
                f"the answer stream from {self.url} sent a line that is not JSON: "
                f"{data[:200]!r}; is --base-url ({self.base_url}) the OpenAI-compatible /v1 "
                f"endpoint?"
            ) from None
        if not isinstance(event, dict):
            raise self._unexpected(event, "delta")
        if event.get("error"):
            raise self._failed(_error_message(event["error"]), size)
        return event

    def _content(self, body: Any, key: str) -> str:
        """``choices[0][key].content`` (``key`` is "message" or "delta"); "" when absent."""
        try:
            return _content(body, key)
        except (KeyError, IndexError, TypeError, AttributeError):
            raise self._unexpected(body, key) from None

    def _unexpected(self, body: Any, key: str) -> LLMProtocolError:
        expected = f'{{"choices": [{{"{key}": {{"content": ...}}}}]}}'
        return LLMProtocolError(
            f"{self.url} returned an unexpected response {str(body)[:200]!r}; expected "
            f"{expected}. Is --base-url ({self.base_url}) the OpenAI-compatible /v1 endpoint?"
        )

    def _not_openai(self, response: httpx.Response, what: str) -> LLMProtocolError:
        kind = response.headers.get("content-type", "") or "none"
        return LLMProtocolError(
            f"{self.url} answered HTTP {response.status_code} with {what or 'an empty body'} "
            f"(content-type {kind}), not an OpenAI-compatible chat completion. Is --base-url "
            f"({self.base_url}) the OpenAI-compatible /v1 endpoint (for example "
            f"http://localhost:11434/v1 for Ollama)? A proxy or login page may be in the way"
        )

    def _cut(self, size: int, exc: httpx.TransportError | None = None) -> LLMStreamError:
        how = f" ({type(exc).__name__}: {exc})" if exc else " without finishing the answer"
        return LLMStreamError(
            f"the server closed the stream after {size} characters{how}; the answer is "
            f"incomplete. The LLM server at {self.base_url} may have crashed or run out of "
            f"memory, or a proxy cut the connection: check its logs and try again, "
            f"{_EXTRACTIVE}"
        )

    def _failed(self, message: str, size: int) -> LLMServerError:
        return LLMServerError(
            f"the LLM server failed during the answer: {message} (after {size} characters, "
            f"at {self.url}). Check the server's logs and try again, {_EXTRACTIVE}"
        )

    def _timeout(self) -> LLMTimeoutError:
        return LLMTimeoutError(
            f"the LLM at {self.base_url} did not answer within {self.settings.timeout:g}s: "
            f"raise llm_timeout, use a smaller model, or use --llm extractive"
        )

    def _transport_error(self, exc: httpx.TransportError, attempts: int) -> LLMError:
        connecting = isinstance(exc, httpx.ConnectTimeout)
        if isinstance(exc, httpx.TimeoutException) and not connecting:
            return self._timeout()
        kind = LLMTimeoutError if connecting else LLMUnavailableError
        detail = f"[{type(exc).__name__}: {exc}; {attempts} attempts]"
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
            return kind(
                f"the LLM at {self.base_url} closed the connection without answering: is "
                f"--base-url the OpenAI-compatible /v1 endpoint, and is the server healthy "
                f"(check its logs)? ({_EXTRACTIVE}) {detail}"
            )
        return kind(
            f"cannot reach the LLM at {self.base_url}: is the server running? "
            f"({_EXTRACTIVE}) {detail}"
        )

    def _http_error(self, response: httpx.Response, attempts: int) -> LLMError:
        status = response.status_code
        head = f"{self.url} answered HTTP {status}: {server_message(response)}"
        if status in (401, 403):
            return LLMAuthError(
                f"{head}. The API key was refused: check OPENAI_API_KEY "
                f"(or CODECITE_LLM_API_KEY), or use --llm extractive"
            )
        if status == 404:
            models = list_models(self.base_url, self.api_key, self.settings.connect_timeout)
            listed = f"; it serves: {', '.join(models[:20])}" if models else ""
            return LLMModelNotFoundError(
                f'{head}. Model "{self.model}" not found on {self.base_url}{listed}. Check '
                f"the model name in --llm openai:MODEL and that the base URL ends in /v1"
            )
        if status < 400:
            where = response.headers.get("location", "")
            return LLMProtocolError(
                f"{head}. It redirects{f' to {where}' if where else ''}, which an "
                f"OpenAI-compatible API does not: is --base-url ({self.base_url}) the "
                f"OpenAI-compatible /v1 endpoint? A proxy or login page may be in the way"
            )
        if status == 429:
            wait = retry_after(response)
            advice = (
                f"The server asks to wait {wait:g}s (Retry-After): wait that long and try again"
                if wait is not None
                else "Wait a minute and try again"
            )
            return LLMRateLimitError(
                f"{head} (rate-limited; gave up after {attempts} attempts). {advice}, "
                f"check the quota of your plan or key, raise llm_max_retries, {_EXTRACTIVE}"
            )
        if status < 500:
            return LLMRequestError(
                f"{head}. The request was refused; if the prompt is too long for the "
                f"model's context, lower answer_context_tokens or answer_max_tokens"
            )
        return LLMServerError(
            f"{head} (gave up after {attempts} attempts). The LLM server is failing: check "
            f"its logs and that --base-url ({self.base_url}) is the OpenAI-compatible /v1 "
            f"endpoint, try again later, {_EXTRACTIVE}"
        )


def _sse_data(lines: Iterator[str], other: list[str]) -> Iterator[str]:
    """The payloads of ``data:`` lines. Blank separators, ``: comments`` and the other
    SSE fields are skipped; any other line (a web page, say) is kept in ``other``."""
    for line in lines:
        if line.startswith("data:"):
            yield line[5:].strip()
        elif line.strip() and not line.startswith(_SSE_FIELDS) and len(other) < 20:
            other.append(" ".join(line.split()))


def _error_message(error: Any) -> str:
    message = error.get("message", error) if isinstance(error, dict) else error
    return re.sub(r"\s+", " ", str(message)).strip()[:300]


def _content(body: Any, key: str) -> str:
    """``choices[0][key].content``; "" when absent; KeyError & co. when malformed."""
    choices = body["choices"]
    if not choices and key == "delta":
        return ""  # usage-only chunks
    content = choices[0][key].get("content")
    return content if isinstance(content, str) else ""


def _openai(config: Config, model: str, endpoint: Endpoint) -> LLM:
    model, at, url = model.rpartition("@") if "@http" in model else (model, "", "")
    return OpenAIChat(model, endpoint, base_url=url if at else "")


#: Chat models by spec prefix: ``openai:MODEL`` gives the factory "MODEL".
LLMS: dict[str, Callable[[Config, str, Endpoint], LLM]] = {"openai": _openai}


def resolve_llm(spec: str, config: Config, endpoint: Endpoint | None = None) -> LLMChoice:
    """The answer mode for ``spec``: ``extractive``, ``auto`` (a configured endpoint,
    else Ollama on localhost, else extractive) or ``openai:MODEL``."""
    name = spec.strip() or "auto"
    if name == EXTRACTIVE:
        return LLMChoice(None, EXTRACTIVE, "asked for (--llm extractive)")
    endpoint = endpoint or config.llm_endpoint()
    if name == "auto":
        name, reason = detect_auto(config, endpoint)
        if name == EXTRACTIVE:
            return LLMChoice(None, EXTRACTIVE, reason)
        return LLMChoice(get_llm(name, config, endpoint), name, reason)
    return LLMChoice(get_llm(name, config, endpoint), name, "asked for (--llm)")


def get_llm(spec: str, config: Config, settings: Endpoint | None = None) -> LLM:
    """The chat model for ``spec`` ("openai:MODEL"; "auto" is resolved with
    :func:`detect_auto`). "extractive" is no LLM: callers handle it first."""
    settings = settings or config.llm_endpoint()
    prefix, _, model = spec.strip().partition(":")
    prefix = prefix.strip().lower()
    if prefix == "auto" and not model:
        spec, reason = detect_auto(config, settings)
        if spec == "extractive":
            raise ConfigError(f"--llm auto found no LLM ({reason}); use --llm extractive")
        return get_llm(spec, config, settings)
    if prefix == "extractive" and not model:
        raise ValueError('"extractive" needs no LLM; handle it before calling get_llm')
    factory = LLMS.get(prefix)
    if factory is None:
        choices = ", ".join([*NON_LLM_MODES, *(f"{key}:MODEL" for key in LLMS)])
        raise UnknownBackendError(f'unknown LLM "{spec}"; choose one of: {choices} (--llm)')
    return factory(config, model.strip(), settings)


def _ollama_models(url: str, timeout: float) -> list[str] | None:
    """Models of an Ollama server (``/api/tags``, else ``/v1/models``); None if none answers."""
    body = get_json(f"{url}/api/tags", {}, timeout)
    if isinstance(body, dict) and isinstance(body.get("models"), list):
        return [str(m["name"]) for m in body["models"] if isinstance(m, dict) and m.get("name")]
    return list_models(f"{url}/v1", "", timeout)


def detect_auto(
    config: Config,
    settings: Endpoint | None = None,
    *,
    probe_timeout: float = 0.3,
    ollama_url: str = "",
) -> tuple[str, str]:
    """``(spec, reason)`` for ``--llm auto``: a configured model (settings, then
    ``CODECITE_LLM_MODEL``) at the configured endpoint; else the first model a
    configured *local* endpoint lists; else the first model of an Ollama server
    at ``ollama_url`` (default :data:`OLLAMA_URL`; the spec then names it after
    ``@``); else "extractive".
    A remote endpoint without a model is never guessed at (it would cost money)."""
    settings = settings or config.llm_endpoint()
    base = settings.base_url.rstrip("/")
    model = settings.model
    if model:
        return f"openai:{model}", f"configured model {model} at {settings.url}"
    skipped = ""
    if base and is_local_url(base):
        key = settings.api_key
        models = list_models(base, key, probe_timeout)
        if models:
            return f"openai:{models[0]}", f"configured endpoint {base} serves {models[0]}"
        skipped = f"configured endpoint {base} lists no models; "
    elif base:
        skipped = f"set CODECITE_LLM_MODEL to use {base}; "
    ollama = (ollama_url or OLLAMA_URL).rstrip("/")
    found = _ollama_models(ollama, probe_timeout)
    if found:
        return f"openai:{found[0]}@{ollama}/v1", f"Ollama at {ollama} serves {found[0]}"
    if found is not None:
        return "extractive", f"{skipped}Ollama at {ollama} has no models (ollama pull MODEL)"
    return "extractive", f"{skipped}no Ollama server on localhost" if skipped else _NO_MODELS
