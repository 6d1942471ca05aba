"""Upstream failures of the LLM endpoint are the endpoint's problem, not a bug: each
one is a :class:`~codecite.errors.UserError` (exit 1, no traceback) whose message
says what happened and what to check. Through the scripted server
(tests/llm_server.py) and through the real command line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import ChatServer, Reply, running_chat_server
from repos import make_git_repo

import codecite
from codecite.answer.llm import (
    LLMError,
    LLMProtocolError,
    LLMRateLimitError,
    LLMServerError,
    LLMStreamError,
    OpenAIChat,
)
from codecite.config import LLM_ENV_VARS, Endpoint
from codecite.errors import UserError

MESSAGES = [{"role": "user", "content": "Hi?"}]
FAST = Endpoint(max_retries=2, backoff=0.001, max_backoff=0.01, timeout=5.0)
LOGIN_PAGE = (
    b"<!DOCTYPE html>\n<html><head>\n<title>Sign in \xc2\xb7 Corp SSO</title></head>\n"
    b"<body><form action=/login>...</form></body></html>\n"
)


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LLM_ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with running_chat_server() as chat:
        yield chat


@pytest.fixture(autouse=True)
def _fresh(server: ChatServer) -> None:
    server.script, server.default = [], Reply()
    server.requests.clear()
    server.times.clear()


def chat(server: ChatServer) -> OpenAIChat:
    return OpenAIChat("test-model", Endpoint(**{**FAST.__dict__, "base_url": server.base_url}))


def user_error(exc: BaseException) -> bool:
    return isinstance(exc, UserError) and isinstance(exc, LLMError)


@pytest.mark.parametrize("stream", [False, True])
def test_repeated_5xx_names_the_url_status_and_what_to_check(
    server: ChatServer, stream: bool
) -> None:
    server.default = Reply(503, error="model is loading")
    with pytest.raises(LLMServerError) as info:
        chat(server).complete(MESSAGES, on_token=(lambda _: None) if stream else None)
    assert user_error(info.value)
    message = str(info.value)
    assert f"{server.base_url}/chat/completions answered HTTP 503: model is loading" in message
    assert "gave up after 3 attempts" in message and "check its logs" in message
    assert "the OpenAI-compatible /v1 endpoint" in message and "--llm extractive" in message
    assert len(server.requests) == 3


def test_repeated_5xx_html_error_page_is_named_by_its_title(server: ChatServer) -> None:
    page = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    server.default = Reply(502, raw=page)
    with pytest.raises(
        LLMServerError, match="answered HTTP 502: an HTML page titled '502 Bad Gateway'"
    ):
        chat(server).complete(MESSAGES)


def test_repeated_429_says_how_long_to_wait(server: ChatServer) -> None:
    server.default = Reply(
        429, error="Rate limit reached for requests", headers={"Retry-After": "30"}
    )
    with pytest.raises(LLMRateLimitError) as info:
        chat(server).complete(MESSAGES, on_token=lambda _: None)
    assert user_error(info.value)
    message = str(info.value)
    assert "HTTP 429: Rate limit reached for requests" in message
    assert "gave up after 3 attempts" in message
    assert "The server asks to wait 30s (Retry-After)" in message and "quota" in message
    server.default = Reply(429, error="slow down")  # no Retry-After
    with pytest.raises(LLMRateLimitError, match="Wait a minute and try again"):
        chat(server).complete(MESSAGES)


@pytest.mark.parametrize("chunked", [False, True])
def test_stream_closed_before_it_finished(server: ChatServer, chunked: bool) -> None:
    """The connection closes before ``data: [DONE]``: plainly (end of an HTTP/1.0
    body), or in the middle of an HTTP/1.1 chunked body."""
    server.default = Reply(text="one two three four", cut="eof", cut_after=2, chunked=chunked)
    seen: list[str] = []
    with pytest.raises(LLMStreamError) as info:
        chat(server).complete(MESSAGES, on_token=seen.append)
    assert user_error(info.value) and seen == ["one", " two"]
    message = str(info.value)
    assert "the server closed the stream after 7 characters" in message
    assert "the answer is incomplete" in message and server.base_url in message
    assert ("RemoteProtocolError" in message) == chunked  # the incomplete chunked read


def test_chunked_stream_that_finishes_is_read_whole(server: ChatServer) -> None:
    server.default = Reply(text="one two three", chunked=True)
    seen: list[str] = []
    assert chat(server).complete(MESSAGES, on_token=seen.append) == "one two three"


def test_error_event_mid_stream_is_a_server_error(server: ChatServer) -> None:
    server.default = Reply(text="one two three four", cut="error", cut_after=2)
    with pytest.raises(
        LLMServerError,
        match=r"failed during the answer: model crashed "
        r"\(after 7 characters",
    ) as info:
        chat(server).complete(MESSAGES, on_token=lambda _: None)
    assert user_error(info.value)


@pytest.mark.parametrize("stream", [False, True])
def test_html_login_page_with_status_200(server: ChatServer, stream: bool) -> None:
    server.default = Reply(raw=LOGIN_PAGE, content_type="text/html; charset=utf-8")
    seen: list[str] = []
    with pytest.raises(LLMProtocolError) as info:
        chat(server).complete(MESSAGES, on_token=seen.append if stream else None)
    assert user_error(info.value) and seen == []
    message = str(info.value)
    assert (
        f"{server.base_url}/chat/completions answered HTTP 200 with an HTML page "
        "titled 'Sign in · Corp SSO'" in message
    )
    assert f"Is --base-url ({server.base_url}) the OpenAI-compatible /v1 endpoint" in message
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("stream", "what"),
    [(False, "non-JSON ('hello world')"), (True, "no server-sent events ('hello world')")],
)
def test_plain_text_instead_of_a_completion(server: ChatServer, stream: bool, what: str) -> None:
    server.default = Reply(raw=b"hello\nworld\n", content_type="text/plain")
    with pytest.raises(
        LLMProtocolError,
        match=r"HTTP 200 with " + what.replace("(", r"\(").replace(")", r"\)") + r".*/v1 endpoint",
    ):
        chat(server).complete(MESSAGES, on_token=(lambda _: None) if stream else None)


def test_redirect_to_a_login_page(server: ChatServer) -> None:
    server.default = Reply(302, raw=b"", headers={"Location": "https://sso.example.com/login"})
    with pytest.raises(
        LLMProtocolError,
        match=r"HTTP 302.*redirects to https://sso\.example"
        r"\.com/login.*/v1 endpoint",
    ):
        chat(server).complete(MESSAGES)
    assert len(server.requests) == 1


def test_json_of_another_shape(server: ChatServer) -> None:
    server.default = Reply(raw=b'{"response": "hi"}', content_type="application/json")
    with pytest.raises(LLMProtocolError, match=r"unexpected response.*/v1 endpoint"):
        chat(server).complete(MESSAGES)


# --- the real command line: exit 1, no traceback, a helpful message -----------------------


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_git_repo(
        tmp_path_factory.mktemp("llm-errors") / "small",
        {
            "app/tax.py": (
                '"""Tax rules."""\nRATES = {"EU": 0.2}\n\n\n'
                "def get_rate_for_region(region: str) -> float:\n"
                '    """The VAT rate of a region."""\n    return RATES.get(region, 0.0)\n'
            ),
        },
    )
    idx = codecite.open_index(repo)
    idx.update(embed=False)
    idx.close()
    return repo


def ask(
    repo: Path, server: ChatServer, *extra: str, retries: int = 0
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in LLM_ENV_VARS}
    env["CODECITE_LLM_MAX_RETRIES"] = str(retries)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "codecite",
            "ask",
            "how is the tax rate of a region computed",
            str(repo),
            "--llm",
            "openai:test-model",
            "--base-url",
            server.base_url,
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("reply", "extra", "retries", "expected"),
    [
        (
            Reply(500, error="CUDA out of memory"),
            (),
            1,
            ["answered HTTP 500: CUDA out of memory", "gave up after 2 attempts", "/v1 endpoint"],
        ),
        (
            Reply(429, error="Rate limit reached", headers={"Retry-After": "7"}),
            (),
            0,
            ["answered HTTP 429: Rate limit reached", "The server asks to wait 7s"],
        ),
        (
            Reply(text="The rate one two three", cut="eof", cut_after=2),
            (),
            0,
            ["the server closed the stream after 8 characters", "the answer is incomplete"],
        ),
        (
            Reply(text="The rate one two three", cut="eof", cut_after=2, chunked=True),
            (),
            0,
            ["the server closed the stream after 8 characters", "incomplete chunked read"],
        ),
        (
            Reply(raw=LOGIN_PAGE),
            (),
            0,
            ["HTML page titled 'Sign in · Corp SSO'", "the OpenAI-compatible /v1 endpoint"],
        ),
        (
            Reply(raw=LOGIN_PAGE),
            ("--json",),
            0,
            ["HTML page titled 'Sign in · Corp SSO'", "the OpenAI-compatible /v1 endpoint"],
        ),
    ],
    ids=["5xx", "429", "stream-eof", "chunked-cut", "html", "html-json"],
)
def test_cli_upstream_failure_exits_1_with_a_message(
    indexed: Path,
    server: ChatServer,
    reply: Reply,
    extra: tuple[str, ...],
    retries: int,
    expected: list[str],
) -> None:
    server.default = reply
    proc = ask(indexed, server, *extra, retries=retries)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    error = proc.stderr[proc.stderr.index("error: ") :]
    assert server.base_url in error, error
    for words in expected:
        assert words in error, error
    assert len(server.requests) == retries + 1
