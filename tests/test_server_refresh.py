"""A server keeps a server-owned clone fresh: a signed push webhook or polling fetches
and fast-forwards the branch, then indexes incrementally. Real git remotes, a real
uvicorn server process, signatures as GitHub and GitLab send them."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from repos import free_port, git, make_git_repo, start_server
from test_server import make_token

import codecite
from codecite.server.config import RepoConfig
from codecite.server.jobs.poll import Poller
from codecite.server.refresh import update_clone, verify_signature

#: real clones, webhooks and polling (run by .ci/run)
pytestmark = pytest.mark.slow

SECRET = "s3cret-webhook-key"


def _push_function(upstream_work: Path, name: str) -> str:
    (upstream_work / f"{name}.py").write_text(f'def {name}():\n    """Brand new {name}."""\n')
    git(upstream_work, "add", "-A")
    git(upstream_work, "commit", "-q", "-m", f"add {name}")
    git(upstream_work, "push", "-q", "origin", "main")
    return git(upstream_work, "rev-parse", "HEAD").strip()


@pytest.fixture
def remotes(tmp_path: Path) -> tuple[Path, Path]:
    """(a developer's working copy that pushes, the server's clone)."""
    work = make_git_repo(tmp_path / "work", {"app.py": "def start():\n    return 1\n"})
    bare = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    git(work, "remote", "add", "origin", str(bare))
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    with codecite.open_index(clone) as index:
        index.update(embed=False)
    return work, clone


def test_signatures() -> None:
    body = b'{"ref": "refs/heads/main"}'
    good = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert verify_signature(SECRET, body, {"X-Hub-Signature-256": good})
    assert not verify_signature(SECRET, body + b" ", {"X-Hub-Signature-256": good})
    assert not verify_signature("other", body, {"X-Hub-Signature-256": good})
    assert verify_signature(SECRET, body, {"X-Gitea-Signature": good[7:]})
    assert verify_signature(SECRET, body, {"X-Gitlab-Token": SECRET})
    assert not verify_signature(SECRET, body, {"X-Gitlab-Token": "nope"})
    assert not verify_signature(SECRET, body, {}) and not verify_signature("", body, {})


def test_polling_fast_forwards_and_reindexes(remotes: tuple[Path, Path]) -> None:
    work, clone = remotes
    repo = RepoConfig("app", clone, clone / ".codecite", branch="main", poll_seconds=1)
    started: list[str] = []

    def reindex(config: RepoConfig) -> None:
        started.append(config.name)
        with codecite.open_index(config.path) as index:
            index.update(embed=False)

    def indexed(config: RepoConfig) -> str:
        with codecite.open_index(config.path, create=False) as index:
            return index.indexed_commit

    poller = Poller([repo], reindex, indexed)
    assert not poller.poll_once(repo) and started == []  # nothing new
    new = _push_function(work, "polled_feature")
    assert poller.poll_once(repo) and started == ["app"]
    assert indexed(repo) == new
    (clone / "app.py").write_text("def start():\n    return 2\n")  # a local change
    _push_function(work, "second_feature")
    with pytest.raises(Exception, match="local changes"):
        update_clone(repo)


@pytest.fixture
def served(remotes: tuple[Path, Path], tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    work, clone = remotes
    config = tmp_path / "server.toml"
    config.write_text(
        'auth = "token"\nstate = "state.db"\n'
        f'[repos.app]\npath = "{clone}"\nbranch = "main"\nwebhook_secret = "{SECRET}"\n'
        f'[repos.plain]\npath = "{clone}"\n'
    )
    token = make_token(config, "admin", "--repos", "*", "--admin")
    port = free_port()
    process = start_server(config, port, tmp_path / "server.log")
    try:
        yield f"http://127.0.0.1:{port}", work, token
    finally:
        process.terminate()
        process.wait(30)


def _webhook(url: str, repo: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{url}/api/v1/repos/{repo}/refresh", content=body, headers=headers)


def test_signed_webhook_refreshes_the_clone(served: tuple[str, Path, str]) -> None:
    url, work, token = served
    _push_function(work, "hooked_feature")
    body = json.dumps({"ref": "refs/heads/main"}).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    for repo, headers in (
        ("app", {"X-Hub-Signature-256": "sha256=" + "0" * 64}),
        ("app", {}),
        ("plain", {"X-Gitlab-Token": SECRET}),
        ("nosuch", {"X-Hub-Signature-256": signature}),
    ):
        refused = _webhook(url, repo, body, headers)
        assert refused.status_code == 404, (repo, refused.text)
    accepted = _webhook(url, "app", body, {"X-Hub-Signature-256": signature})
    assert accepted.status_code == 202, accepted.text
    job_url = f"{url}/api/v1/jobs/{accepted.json()['job']['id']}"
    auth = {"Authorization": f"Bearer {token}"}
    deadline = time.time() + 60
    while time.time() < deadline:
        job = httpx.get(job_url, headers=auth).json()["job"]
        if job["status"] in ("done", "failed"):
            break
        time.sleep(0.2)
    assert job["status"] == "done", job
    found = httpx.post(
        f"{url}/api/v1/search",
        headers=auth,
        json={"query": "hooked_feature", "repos": ["app"], "k": 3},
    ).json()
    assert found["results"][0]["qualname"] == "hooked_feature"
    repos = {r["name"]: r for r in httpx.get(f"{url}/api/v1/repos", headers=auth).json()["repos"]}
    assert repos["app"]["lag_commits"] == 0 and repos["app"]["branch"] == "main"
