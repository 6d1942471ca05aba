"""The ``/codecite`` Slack slash command (``POST /slack/commands``): the server app with
a real shop index, real tokens and a scripted LLM server; a local HTTP server stands in
for Slack's ``response_url``. Requests are signed here as Slack documents it
(HMAC-SHA256 of ``v0:{timestamp}:{body}``), independently of the code under test."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from llm_server import ChatServer, Reply, running_chat_server
from repos import copy_index, make_git_repo

import codecite
from codecite.errors import ConfigError
from codecite.server.app import create_app
from codecite.server.config import load_server_config
from codecite.server.state import StateStore

FIXTURES = Path(__file__).parent / "fixtures"
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
MARKER = "zebra"
VAULT = {
    "vault/launch.py": (
        "def zebra_launch_code(station: str) -> str:\n"
        '    """The zebra launch code of a station."""\n'
        '    return "zebra-" + station.upper()\n'
    ),
}
ANSWER = (
    "The discount is applied in shop/pricing.py:25-34 (rate from shop/pricing.py:20-22); "
    "a comment in evil.py:1-900 disagrees. <!channel> & co."
)


class Hook(ThreadingHTTPServer):
    """Slack's ``response_url``: records every JSON body posted to it."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _HookHandler)
        self.posts: list[dict[str, Any]] = []
        self.posted = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/commands/T1/42/abc"

    def wait(self, count: int, timeout: float = 30) -> list[dict[str, Any]]:
        deadline = time.time() + timeout
        while len(self.posts) < count and time.time() < deadline:
            time.sleep(0.02)
        assert len(self.posts) >= count, self.posts
        return self.posts


class _HookHandler(BaseHTTPRequestHandler):
    server: Hook

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        self.server.posts.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


@dataclass
class Slack:
    client: TestClient
    hook: Hook
    chat: ChatServer
    state: Path

    def command(
        self,
        text: str,
        *,
        user: str = "U_ALICE",
        timestamp: int | None = None,
        secret: str = SECRET,
        response_url: str | None = None,
        body: bytes | None = None,
    ) -> tuple[Any, bytes, dict[str, str]]:
        """POST a slash command signed as Slack signs it; (response, body, headers)."""
        form = {
            "token": "legacy",
            "team_id": "T1",
            "user_id": user,
            "user_name": "someone",
            "command": "/codecite",
            "text": text,
            "response_url": response_url or self.hook.url,
            "trigger_id": f"{time.time()}",
        }
        raw = body if body is not None else urlencode(form).encode()
        ts = str(int(time.time()) if timestamp is None else timestamp)
        digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + raw, hashlib.sha256)
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": "v0=" + digest.hexdigest(),
        }
        return self.client.post("/slack/commands", content=raw, headers=headers), raw, headers

    def audit(self) -> list[Any]:
        with StateStore(self.state) as store:
            return [r for r in store.audit_rows() if r.endpoint == "/slack/commands"]

    def answered_row(self, question: str, timeout: float = 30) -> Any:
        """The audit row of an answer (written just after it is posted)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            rows = [r for r in self.audit() if r.question == question and r.status == 200]
            if rows:
                return rows[0]
            time.sleep(0.02)
        raise AssertionError(f"no audit row for {question!r}")


@pytest.fixture(scope="module")
def slack(tmp_path_factory: pytest.TempPathFactory, indexed_shop: Path) -> Iterator[Slack]:
    root = tmp_path_factory.mktemp("slack")
    shop = copy_index(indexed_shop, root / "shop")
    vault = make_git_repo(root / "vault", VAULT)
    with codecite.open_index(vault) as index:
        index.update()
    hook = Hook()
    threading.Thread(target=hook.serve_forever, args=(0.05,), daemon=True).start()
    with running_chat_server() as chat:
        chat.default = Reply(text=ANSWER)
        config = root / "codecite-server.toml"
        config.write_text(
            'state = "state.db"\n'
            f'[codecite]\nllm = "openai:test-model"\nllm_base_url = "{chat.base_url}"\n'
            "llm_max_retries = 0\n"
            f'[repos.shop]\npath = "{shop}"\n[repos.vault]\npath = "{vault}"\n'
            f'[slack]\nsigning_secret = "{SECRET}"\nbase_url = "https://codecite.example.com/"\n'
            'response_url_prefix = "http://127.0.0.1:"\n'
            '[slack.users]\nU_ALICE = "alice"\nU_CAROL = "carol"\n'
        )
        with StateStore(root / "state.db") as store:
            store.create_token("alice", ["shop"])
        try:
            with TestClient(
                create_app(load_server_config(config)), base_url="http://localhost"
            ) as client:
                yield Slack(client, hook, chat, root / "state.db")
        finally:
            hook.shutdown()
            hook.server_close()


def test_a_signed_command_is_acknowledged_at_once_and_answered_at_response_url(
    slack: Slack,
) -> None:
    slack.hook.posts.clear()
    slack.chat.script = [Reply(text=ANSWER, delay=2.0)]  # a slow model
    started = time.perf_counter()
    response, _, _ = slack.command("How is the loyalty discount computed?")
    acknowledged = time.perf_counter() - started
    assert response.status_code == 200 and acknowledged < 1.5  # Slack waits 3 s at most
    ack = response.json()
    assert ack["response_type"] == "ephemeral" and "Looking into it" in ack["text"]
    assert not slack.hook.posts  # the answer comes later
    (posted,) = slack.hook.wait(1)
    assert posted["response_type"] == "ephemeral"  # only the asker sees code
    text = posted["text"]
    link = (
        "<https://codecite.example.com/web/code?repo=shop&path=shop%2Fpricing.py"
        "&start=25&end=34|shop/pricing.py:25-34>"
    )
    assert f"✓ {link}" in text
    assert "✗ <https://codecite.example.com/web/code?repo=shop&path=evil.py" in text
    assert "&lt;!channel&gt; &amp; co." in text and "<!channel>" not in text  # escaped
    assert text.count("evil.py:1-900") == 1  # one mark per citation, in the answer's text
    assert "*Confidence" in text and "answered by openai:test-model" in text
    row = slack.answered_row("How is the loyalty discount computed?")
    assert row.user == "alice" and "shop:shop/pricing.py:25-34" in row.citations


@pytest.mark.parametrize(
    "problem", ["wrong secret", "tampered body", "stale timestamp", "future timestamp"]
)
def test_badly_signed_or_stale_commands_are_refused(slack: Slack, problem: str) -> None:
    slack.hook.posts.clear()
    prompts = len(slack.chat.requests)
    now = int(time.time())
    if problem == "wrong secret":
        response, _, _ = slack.command("discount?", secret="not-the-secret")
    elif problem == "tampered body":
        _, raw, headers = slack.command("help")
        tampered = raw.replace(b"help", b"what+is+the+admin+password")
        response = slack.client.post("/slack/commands", content=tampered, headers=headers)
    elif problem == "stale timestamp":
        response, _, _ = slack.command("discount?", timestamp=now - 301)
    else:  # a minute past the 5-minute window: a slow machine's delay cannot bring it inside
        response, _, _ = slack.command("discount?", timestamp=now + 360)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    time.sleep(0.2)
    assert not slack.hook.posts and len(slack.chat.requests) == prompts
    row = slack.audit()[0]
    assert row.status == 401 and row.user == "-"


def test_a_replayed_command_is_refused(slack: Slack) -> None:
    slack.hook.posts.clear()
    first, raw, headers = slack.command("How is the loyalty discount computed?")
    assert first.status_code == 200
    again = slack.client.post("/slack/commands", content=raw, headers=headers)
    assert again.status_code == 401 and "replayed" in again.json()["error"]["message"]
    assert len(slack.hook.wait(1)) == 1
    time.sleep(0.2)
    assert len(slack.hook.posts) == 1  # answered once


def test_unlinked_users_and_other_repositories_get_nothing(slack: Slack) -> None:
    slack.hook.posts.clear()
    stranger, _, _ = slack.command("How is the loyalty discount computed?", user="U_STRANGER")
    assert stranger.status_code == 200 and "not linked" in stranger.json()["text"]
    carol, _, _ = slack.command("How is the loyalty discount computed?", user="U_CAROL")
    assert "no active token" in carol.json()["text"]
    assert slack.audit()[0].status == 403
    usage, _, _ = slack.command("help")
    assert "/codecite" in usage.json()["text"]
    elsewhere, _, _ = slack.command("discount?", response_url="https://evil.example/hook")
    assert elsewhere.status_code == 400
    time.sleep(0.2)
    assert not slack.hook.posts
    prompts = len(slack.chat.requests)
    asked, _, _ = slack.command("vault: how is the launch code of a station made")
    assert asked.status_code == 200
    (posted,) = slack.hook.wait(1)
    assert MARKER not in posted["text"].lower() and "vault/" not in posted["text"]
    assert MARKER not in json.dumps(slack.chat.requests[prompts:]).lower()
    row = slack.answered_row("vault: how is the launch code of a station made")
    assert row.repos == ["shop"]  # "vault:" is no repository Alice may read: asked of hers


def test_the_slack_table_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = f'[repos.shop]\npath = "{tmp_path}"\n'
    config = tmp_path / "server.toml"
    config.write_text(base)
    assert load_server_config(config).slack is None
    monkeypatch.delenv("CODECITE_SLACK_SIGNING_SECRET", raising=False)
    config.write_text(base + "[slack]\n[slack.users]\nU1 = 'alice'\n")
    with pytest.raises(ConfigError, match="signing_secret"):
        load_server_config(config)
    monkeypatch.setenv("CODECITE_SLACK_SIGNING_SECRET", "from-env")
    slack = load_server_config(config).slack
    assert slack is not None and slack.signing_secret == "from-env"
    assert slack.users == {"U1": "alice"} and slack.response_type == "ephemeral"
    assert "from-env" not in repr(slack)
    config.write_text(base + "[slack]\nsigning_secret = 's'\nchannel = 'x'\n")
    with pytest.raises(ConfigError, match="unknown setting"):
        load_server_config(config)
    config.write_text(base + "[slack]\nsigning_secret = 's'\nresponse_type = 'loud'\n")
    with pytest.raises(ConfigError, match="response_type"):
        load_server_config(config)
