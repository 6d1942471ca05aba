"""A visible note at the end of a test run when the browser tests were skipped.

``pytest -q`` shows skips only as a count, so a run without Chromium would look as if the
web page had been tested. The browser fixture (tests/test_web.py) skips with a reason that
starts with :data:`PREFIX`; :func:`write_browser_note` (called from conftest's
``pytest_terminal_summary``) counts those skips and says how to run them."""

from __future__ import annotations

from collections import Counter
from typing import Any

#: How the browser tests' skip reasons start.
PREFIX = "BROWSER TESTS SKIPPED"
HOW_TO_RUN = (
    "to run them: `sudo apt-get install chromium chromium-driver` (Debian/Ubuntu; or set "
    "CODECITE_CHROMIUM to a Chromium binary), then `python -m pytest -q tests/test_web.py`"
)


def _reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def browser_skips(stats: dict[str, list[Any]]) -> Counter[str]:
    """Reason → number of browser tests skipped for it."""
    reasons = (_reason(report) for report in stats.get("skipped", []))
    return Counter(reason for reason in reasons if reason.startswith(PREFIX))


def write_browser_note(reporter: Any) -> None:
    """Write the note into the run's summary (shown with ``-q`` too), if any skipped."""
    skips = browser_skips(reporter.stats)
    if not skips:
        return
    total = sum(skips.values())
    reporter.write_sep("=", f"{total} browser tests (the web page) were SKIPPED", yellow=True)
    for reason, count in skips.most_common():
        reporter.write_line(f"{count} x {reason}", yellow=True)
    reporter.write_line(HOW_TO_RUN, yellow=True)
