"""Re-index jobs of the server (``POST /api/v1/repos/{repo}/reindex``, webhooks, branch
polling): :class:`Jobs` (:mod:`.local`) runs them in the server process, one thread per
job, for an index of its own; :class:`QueueJobs` (:mod:`.queue`) defers them into the
PostgreSQL job queue of a shared store, for ``codecite worker`` processes to run. Both
answer ``start`` and ``get`` with a :class:`Job`. :mod:`.poll` starts them for
repositories that poll their branch."""

from __future__ import annotations

from .local import MARKER, Job, Jobs
from .queue import QueueJobs

__all__ = ["MARKER", "Job", "Jobs", "QueueJobs"]
