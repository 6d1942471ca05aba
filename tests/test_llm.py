"""The OpenAI-compatible chat client against real HTTP servers: a scripted one on
127.0.0.1 (tests/llm_server.py) for the protocol, errors and retries, and a real
small model (SmolLM2-135M under llama.cpp server, see scripts/start-llm-server)
when ``CODECITE_TEST_LLM_URL`` points at one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from llm_server import ChatServer, Reply, closed_port, pieces, running_chat_server

from codecite._http import RetryPolicy
from codecite.answer.llm import (
    LLMAuthError,
    LLMError,
    LLMModelNotFoundError,
    LLMProtocolError,
    LLMRequestError,
    LLMServerError,
    LLMTimeoutError,
    LLMUnavailableError,
    OpenAIChat,
    detect_auto,
    get_llm,
)
from codecite.config import LLM_ENV_VARS, Config, Endpoint, load_config
from codecite.errors import ConfigError, UnknownBackendError, UserError

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}]
FAST = Endpoint(max_retries=2, backoff=0.001, timeout=5.0)


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own LLM settings must not leak into these tests."""
    for name in LLM_ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with running_chat_server() as chat:
        yield chat


def chat(server: ChatServer, model: str = "test-model", **settings: object) -> OpenAIChat:
    options = {**FAST.__dict__, "base_url": server.base_url, **settings}
    return OpenAIChat(model, Endpoint(**options))


def test_complete_without_streaming(server: ChatServer) -> None:
    server.default = Reply(text="It says hello.")
    llm = chat(server, api_key="sk-test")
    assert llm.complete(MESSAGES, max_tokens=42, temperature=0.2) == "It says hello."
    assert server.requests == [
        {
            "model": "test-model",
            "messages": MESSAGES,
            "max_tokens": 42,
            "temperature": 0.2,
            "stream": False,
        }
    ]
    assert server.headers_seen[0]["Authorization"] == "Bearer sk-test"
    assert llm.name == "openai:test-model"


def test_streaming_calls_on_token_per_delta(server: ChatServer) -> None:
    text = "The parser lives in parse.py:10-20 and is called by main."
    server.default = Reply(text=text)
    seen: list[str] = []
    assert chat(server).complete(MESSAGES, on_token=seen.append) == text
    assert seen == pieces(text) and len(seen) > 5
    assert server.requests[0]["stream"] is True
    assert "Authorization" not in server.headers_seen[0]  # local server, no key


def test_retries_429_then_succeeds_honouring_retry_after(server: ChatServer) -> None:
    server.script = [Reply(429, error="slow down", headers={"Retry-After": "0.3"})]
    assert chat(server).complete(MESSAGES, on_token=lambda _: None) == server.default.text
    assert len(server.requests) == 2
    assert server.times[1] - server.times[0] >= 0.29  # not the 1 ms backoff


def test_5xx_retried_with_exponential_backoff_then_gives_up(server: ChatServer) -> None:
    server.default = Reply(500, error="model crashed")
    with pytest.raises(LLMServerError) as info:
        chat(server, backoff=0.05).complete(MESSAGES)
    assert isinstance(info.value, UserError)  # the endpoint's fault, not a bug: exit 1
    message = str(info.value)
    assert "HTTP 500" in message and "model crashed" in message and "3 attempts" in message
    gaps = [b - a for a, b in zip(server.times, server.times[1:], strict=False)]
    assert len(server.requests) == 3 and gaps[0] >= 0.05 and gaps[1] >= 0.1


def test_401_is_a_key_problem_and_not_retried(server: ChatServer) -> None:
    server.default = Reply(401, error="Incorrect API key provided")
    with pytest.raises(LLMAuthError, match=r"Incorrect API key.*OPENAI_API_KEY") as info:
        chat(server, api_key="sk-wrong").complete(MESSAGES)
    assert isinstance(info.value, UserError)
    assert len(server.requests) == 1


def test_404_names_the_model_and_lists_what_the_server_has(server: ChatServer) -> None:
    server.default = Reply(404, error="model 'gpt-9' not found")
    server.models = ["llama3.2", "qwen2.5-coder"]
    with pytest.raises(LLMModelNotFoundError) as info:
        chat(server, model="gpt-9").complete(MESSAGES, on_token=lambda _: None)
    message = str(info.value)
    assert 'Model "gpt-9" not found' in message and "llama3.2, qwen2.5-coder" in message
    assert len(server.requests) == 1


def test_other_4xx_is_not_retried(server: ChatServer) -> None:
    server.default = Reply(400, error="Requested tokens (4000) exceed context window of 2048")
    with pytest.raises(LLMRequestError, match=r"exceed context window.*answer_context_tokens"):
        chat(server).complete(MESSAGES)
    assert len(server.requests) == 1


def test_connection_refused_says_what_to_do() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    llm = OpenAIChat("m", Endpoint(base_url=url, max_retries=1, backoff=0.001))
    with pytest.raises(LLMUnavailableError) as info:
        llm.complete(MESSAGES)
    message = str(info.value)
    assert message.startswith(
        f"cannot reach the LLM at {url}: is the server running? (or use --llm extractive)"
    )
    assert "2 attempts" in message


def test_slow_server_times_out_without_retrying(server: ChatServer) -> None:
    server.default = Reply(delay=1.0)
    started = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"did not answer within 0\.2s.*llm_timeout"):
        chat(server, timeout=0.2).complete(MESSAGES)
    assert time.monotonic() - started < 0.9 and len(server.requests) == 1


def test_stream_stalling_mid_way_times_out(server: ChatServer) -> None:
    server.default = Reply(text="one two three", piece_delay=0.5)
    seen: list[str] = []
    with pytest.raises(LLMTimeoutError):
        chat(server, timeout=0.2).complete(MESSAGES, on_token=seen.append)
    assert seen == []


@pytest.mark.parametrize(
    ("cut", "match"),
    [
        ("eof", "closed the stream after 7 characters without finishing"),
        ("reset", r"closed the stream after 7 characters \(\w+Error"),
        ("error", "failed during the answer: model crashed"),
    ],
)
def test_stream_cut_mid_way(server: ChatServer, cut: str, match: str) -> None:
    server.default = Reply(text="one two three four", cut=cut, cut_after=2)  # type: ignore[arg-type]
    seen: list[str] = []
    with pytest.raises(LLMError, match=match) as info:
        chat(server).complete(MESSAGES, on_token=seen.append)
    assert seen == ["one", " two"] and isinstance(info.value, UserError)


def test_server_that_ignores_stream_still_answers(server: ChatServer) -> None:
    server.default = Reply(
        raw=b'{"choices": [{"message": {"content": "whole"}}]}', content_type="application/json"
    )
    seen: list[str] = []
    assert chat(server).complete(MESSAGES, on_token=seen.append) == "whole"
    assert seen == ["whole"]


def test_not_an_openai_server(server: ChatServer) -> None:
    server.default = Reply(raw=b"<html>welcome</html>")
    with pytest.raises(LLMProtocolError, match=r"HTML page.*the OpenAI-compatible /v1 endpoint"):
        chat(server).complete(MESSAGES)


def test_base_url_and_key_from_the_endpoint_config_then_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(
        ConfigError,
        match=r"^no API key: set OPENAI_API_KEY or use --llm "
        r"extractive.*api\.openai\.com",
    ):
        OpenAIChat("gpt-4.1-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://example.com/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert OpenAIChat("m", load_config().llm_endpoint()).base_url == "https://example.com/v1"
    monkeypatch.setenv("CODECITE_LLM_BASE_URL", "http://localhost:11434/v1/")
    llm = OpenAIChat("m", load_config().llm_endpoint())
    assert (llm.base_url, llm.api_key) == ("http://localhost:11434/v1", "sk-env")
    llm = OpenAIChat("m", Endpoint(base_url="http://gpu:8000/v1", api_key="sk-s"))
    assert (llm.url, llm.api_key) == ("http://gpu:8000/v1/chat/completions", "sk-s")
    with pytest.raises(ConfigError, match="needs a model"):
        OpenAIChat("")


def test_get_llm_by_spec() -> None:
    config = Config()
    llm = get_llm("openai:qwen2.5:7b@http://127.0.0.1:11434/v1", config)
    assert isinstance(llm, OpenAIChat)
    assert (llm.name, llm.base_url) == ("openai:qwen2.5:7b", "http://127.0.0.1:11434/v1")
    llm = get_llm("openai:m", config, Endpoint(base_url="http://localhost:1/v1"))
    assert isinstance(llm, OpenAIChat) and llm.base_url == "http://localhost:1/v1"
    with pytest.raises(UnknownBackendError, match="choose one of: extractive, auto, openai:MODEL"):
        get_llm("claude:opus", config)
    with pytest.raises(ValueError, match="extractive"):
        get_llm("extractive", config)


def test_detect_auto_prefers_a_configured_model(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Endpoint(base_url="http://gpu:8000/v1", model="qwen2.5-coder")
    assert detect_auto(Config(), settings) == (
        "openai:qwen2.5-coder",
        "configured model qwen2.5-coder at http://gpu:8000/v1",
    )
    monkeypatch.setenv("CODECITE_LLM_MODEL", "gpt-4.1-mini")
    spec, reason = detect_auto(load_config(), ollama_url=f"http://127.0.0.1:{closed_port()}")
    assert spec == "openai:gpt-4.1-mini" and "api.openai.com" in reason


def test_detect_auto_asks_a_configured_local_server(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.models = ["smollm2", "other"]
    monkeypatch.setenv("CODECITE_LLM_BASE_URL", server.base_url)
    config = load_config()
    spec, reason = detect_auto(config, ollama_url=f"http://127.0.0.1:{closed_port()}")
    assert spec == "openai:smollm2" and server.base_url in reason
    llm = get_llm(spec, config)
    assert llm.complete(MESSAGES) == server.default.text


def test_detect_auto_finds_ollama(server: ChatServer) -> None:
    server.tags = ["llama3.2:latest", "nomic-embed-text:latest"]
    spec, reason = detect_auto(Config(), ollama_url=server.url)
    assert spec == f"openai:llama3.2:latest@{server.url}/v1"
    assert reason == f"Ollama at {server.url} serves llama3.2:latest"
    llm = get_llm(spec, Config(), FAST)
    assert llm.complete(MESSAGES, on_token=lambda _: None) == server.default.text
    assert server.requests[0]["model"] == "llama3.2:latest"
    server.tags = None  # an OpenAI-style server on that port: /v1/models
    assert detect_auto(Config(), ollama_url=server.url)[0] == f"openai:test-model@{server.url}/v1"
    server.tags = []
    assert detect_auto(Config(), ollama_url=server.url) == (
        "extractive",
        f"Ollama at {server.url} has no models (ollama pull MODEL)",
    )


def test_detect_auto_falls_back_to_extractive(monkeypatch: pytest.MonkeyPatch) -> None:
    nowhere = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    assert detect_auto(Config(), ollama_url=nowhere) == (
        "extractive",
        "no LLM endpoint configured and no Ollama server on localhost",
    )
    assert time.monotonic() - started < 1.0
    monkeypatch.setenv("OPENAI_BASE_URL", "https://example.com/v1")
    spec, reason = detect_auto(Config(), ollama_url=nowhere)
    assert spec == "extractive" and reason.startswith("set CODECITE_LLM_MODEL to use https")
    with pytest.raises(ConfigError, match="--llm auto found no LLM"):
        monkeypatch.setattr("codecite.answer.llm.OLLAMA_URL", nowhere)
        get_llm("auto", Config())


def test_retry_policy_delays() -> None:
    policy = RetryPolicy(max_retries=5, backoff=0.5, max_backoff=3.0)
    assert [policy.delay(n) for n in range(4)] == [0.5, 1.0, 2.0, 3.0]
    assert policy.delay(0, server_wait=2.5) == 2.5
    assert policy.delay(0, server_wait=60.0) == 3.0


# --- a real small model ------------------------------------------------------------------

REAL_URL = os.environ.get("CODECITE_TEST_LLM_URL", "")
real = pytest.mark.skipif(
    not REAL_URL,
    reason="set CODECITE_TEST_LLM_URL to an OpenAI-compatible server, e.g. "
    "CODECITE_TEST_LLM_URL=$(scripts/start-llm-server 8765) (llama.cpp + SmolLM2)",
)
ASK = [{"role": "user", "content": "Name three colours."}]


@pytest.fixture
def real_llm() -> OpenAIChat:
    return OpenAIChat("smollm2", Endpoint(base_url=REAL_URL, timeout=30.0, max_retries=1))


@real
def test_real_model_streams(real_llm: OpenAIChat) -> None:
    seen: list[str] = []
    text = real_llm.complete(ASK, max_tokens=24, on_token=seen.append)
    assert len(seen) >= 3 and "".join(seen) == text and text.strip()


@real
def test_real_model_without_streaming(real_llm: OpenAIChat) -> None:
    assert real_llm.complete(ASK, max_tokens=24).strip()


@real
def test_real_model_respects_max_tokens(real_llm: OpenAIChat) -> None:
    seen: list[str] = []
    text = real_llm.complete(ASK, max_tokens=4, on_token=seen.append)
    assert 1 <= len(seen) <= 4 and len(text) < 60  # one delta per token in llama.cpp


@real
def test_real_server_picked_by_detect_auto() -> None:
    settings = Endpoint(base_url=REAL_URL, timeout=30.0)
    spec, reason = detect_auto(
        Config(), settings, probe_timeout=2.0, ollama_url=f"http://127.0.0.1:{closed_port()}"
    )
    assert spec.startswith("openai:") and REAL_URL.rstrip("/") in reason
    assert get_llm(spec, Config(), settings).complete(ASK, max_tokens=8).strip()


@real
def test_real_server_refuses_a_prompt_over_its_context(real_llm: OpenAIChat) -> None:
    huge = [{"role": "user", "content": "word " * 5000}]  # > n_ctx 2048
    with pytest.raises(LLMRequestError, match="answer_context_tokens") as info:
        real_llm.complete(huge, max_tokens=8)
    assert "HTTP 400" in str(info.value)
