"""Keeping a server's repositories fresh (docs/DESIGN.md §12): a signed webhook
(``POST /api/v1/repos/{repo}/refresh``, signed like GitHub's, GitLab's or Gitea's) or a
polling interval (:mod:`.jobs.poll`) fetches and fast-forwards a server-owned clone of the
configured branch, then indexes incrementally (a re-index job, see :mod:`.jobs`)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import subprocess
from collections.abc import Mapping
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
