"""A test run that skips the browser tests says so in its summary, even with ``-q``
(tests/skipnote.py): a real pytest run in a subprocess over two small test files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import skipnote

HERE = Path(__file__).resolve().parent
CONFTEST = """\
import pytest
import skipnote


def pytest_terminal_summary(terminalreporter):
    skipnote.write_browser_note(terminalreporter)
"""
BROWSER_TESTS = f"""\
import pytest


@pytest.fixture(scope="module")
def browser():
    pytest.skip("{skipnote.PREFIX}: no Chromium found; install it")


def test_page(browser):
    pass


def test_other_page(browser):
    pass


def test_other():
    pytest.skip("not a browser test")
"""


def _run(folder: Path) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_skipped_browser_tests_are_named_in_the_quiet_summary(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_page.py").write_text(BROWSER_TESTS)
    out = _run(tmp_path)
    assert "2 browser tests (the web page) were SKIPPED" in out
    assert "2 x BROWSER TESTS SKIPPED: no Chromium found; install it" in out
    assert "apt-get install chromium chromium-driver" in out
    assert "not a browser test" not in out


def test_no_note_when_no_browser_test_skipped(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_plain.py").write_text("def test_one():\n    pass\n")
    assert "SKIPPED" not in _run(tmp_path)


def test_the_suite_wires_the_note() -> None:
    """tests/conftest.py's summary hook is the one tested above."""
    text = (HERE / "conftest.py").read_text()
    assert "def pytest_terminal_summary" in text
    assert "skipnote.write_browser_note(terminalreporter)" in text
