"""Keeping a server's repositories fresh (DESIGN.md §12): a signed webhook
(``POST /api/v1/repos/{repo}/refresh``, signed like GitHub's, GitLab's or Gitea's) or a
polling interval fetches and fast-forwards a server-owned clone of the configured branch,
then indexes incrementally (a re-index job, see :mod:`.jobs`)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import subprocess
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from ..errors import CodeciteError
from .config import RepoConfig

log = logging.getLogger(__name__)

#: Seconds a ``git fetch`` may take.
FETCH_TIMEOUT = 300


class RefreshError(CodeciteError):
    """The clone could not be brought up to date (no remote, diverged, git failed)."""


def verify_signature(secret: str, body: bytes, headers: Mapping[str, str]) -> bool:
    """Whether a webhook request is signed with ``secret``: GitHub's
    ``X-Hub-Signature-256: sha256=HMAC``, Gitea's ``X-Gitea-Signature: HMAC`` (both
    HMAC-SHA256 of the raw body, hex), or GitLab's ``X-Gitlab-Token: SECRET``. Compared
    in constant time."""
    if not secret:
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    lowered = {k.lower(): v for k, v in headers.items()}
    github = lowered.get("x-hub-signature-256", "")
    if github.startswith("sha256="):
        return hmac.compare_digest(github[7:].strip().lower(), expected)
    gitea = lowered.get("x-gitea-signature", "")
    if gitea:
        return hmac.compare_digest(gitea.strip().lower(), expected)
    gitlab = lowered.get("x-gitlab-token", "")
    if gitlab:
        return hmac.compare_digest(gitlab.encode(), secret.encode())
    return False


def _git(path: Path, *args: str, timeout: float = 60) -> str:
    proc = subprocess.run(
        ["git", "-C", str(path), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RefreshError(f"git {args[0]} in {path} failed: {proc.stderr.strip()[:300]}")
    return proc.stdout.strip()


def head(path: Path) -> str:
    try:
        return _git(path, "rev-parse", "--verify", "-q", "HEAD")
    except RefreshError:
        return ""


def commits_between(path: Path, old: str, new: str) -> int | None:
    """Commits in ``new`` that ``old`` lacks (None when either is unknown)."""
    if not old or not new:
        return None
    try:
        return int(_git(path, "rev-list", "--count", f"{old}..{new}"))
    except (RefreshError, ValueError):
        return None


def update_clone(repo: RepoConfig) -> tuple[str, str]:
    """Fetch the configured branch and fast-forward the clone to it: (old, new) HEAD.
    A clone with local changes or a diverged history is left alone (RefreshError)."""
    if not repo.branch:
        raise RefreshError(f"repository {repo.name} has no branch to follow")
    old = head(repo.path)
    _git(repo.path, "fetch", "--quiet", "origin", repo.branch, timeout=FETCH_TIMEOUT)
    if _git(repo.path, "status", "--porcelain", "--untracked-files=no"):
        raise RefreshError(f"{repo.path} has local changes; not fast-forwarding it")
    _git(repo.path, "merge", "--ff-only", "--quiet", "FETCH_HEAD")
    return old, head(repo.path)


class Poller:
    """One thread per repository with ``poll_seconds``: fetch, fast-forward, and
    call ``reindex(repo)`` when the commit moved or the index is behind."""

    def __init__(
        self,
        repos: list[RepoConfig],
        reindex: Callable[[RepoConfig], object],
        indexed_commit: Callable[[RepoConfig], str],
    ) -> None:
        self.repos = [r for r in repos if r.poll_seconds and r.branch]
        self.reindex, self.indexed_commit = reindex, indexed_commit
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for repo in self.repos:
            thread = threading.Thread(
                target=self._loop, args=(repo,), daemon=True, name=f"codecite-poll-{repo.name}"
            )
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def poll_once(self, repo: RepoConfig) -> bool:
        """One fetch + fast-forward; True when a re-index was started."""
        try:
            _old, new = update_clone(repo)
        except (RefreshError, subprocess.TimeoutExpired, OSError) as exc:
            log.warning("polling %s: %s", repo.name, exc)
            return False
        if new and new != self.indexed_commit(repo):
            self.reindex(repo)
            return True
        return False

    def _loop(self, repo: RepoConfig) -> None:
        while not self._stop.wait(repo.poll_seconds):
            self.poll_once(repo)
