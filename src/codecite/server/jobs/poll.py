"""Polling (docs/DESIGN.md §12): a thread per repository with ``poll_seconds`` fetches and
fast-forwards its server-owned clone (:func:`..refresh.update_clone`) and starts a
re-index job when the commit moved or the index is behind."""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable

from ..config import RepoConfig
from ..refresh import RefreshError, update_clone

log = logging.getLogger("codecite.server.refresh")


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
