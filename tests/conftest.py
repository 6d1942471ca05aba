"""Shared fixtures: real temporary repositories, an isolated embedding cache."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import leftovers
import pytest
import skipnote
from pg import pg_module_url, pg_server, pg_url, store_backend  # noqa: F401 (fixtures)
from repos import make_git_repo

import codecite

FIXTURES = Path(__file__).parent / "fixtures"
#: Seconds the processes a run started get to end after its last test.
LEFTOVER_GRACE = 10.0


def pytest_configure(config: pytest.Config) -> None:
    """Mark every process this run starts (they inherit the environment)."""
    os.environ[leftovers.MARKER] = f"{os.getpid()}-{os.urandom(4).hex()}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on a real PostgreSQL are ``slow``: the first one starts a server (``.ci/run``
    runs them all; ``pytest -m "not slow"`` is the inner loop)."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        uses_fixture = "pg_server" in getattr(item, "fixturenames", ())
        if uses_fixture or "postgres" in params.values():
            item.add_marker(pytest.mark.slow)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """No process started by a test outlives the run: one still alive (a server, a
    background worker, the parse workers of a killed indexer) fails the run, and is
    killed."""
    alive = leftovers.wait_for_none(
        os.environ[leftovers.MARKER], LEFTOVER_GRACE, own_helpers_of=os.getpid()
    )
    if not alive:
        return
    leftovers.kill_all(alive)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("=", "processes started by the tests outlived them", red=True)
        for leftover in alive:
            reporter.write_line(f"killed {leftover}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say so, visibly even with ``-q``, when the browser tests were skipped."""
    skipnote.write_browser_note(terminalreporter)


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The whole run, module fixtures included (they run before any function-scoped
    one), uses one temporary embedding cache, never the user's. Its quantized model
    (derived from the bundled one and named by that one's sha256, like the static
    model) lives in pytest's cache folder: quantizing costs ~6 CPU-s a run otherwise."""
    cache = tmp_path_factory.getbasetemp() / "embed-cache"
    cache.mkdir(exist_ok=True)
    store = getattr(request.config, "cache", None)
    if store is not None:
        models = Path(store.mkdir("codecite-quantized-model"))
        (cache / "models").symlink_to(models, target_is_directory=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CODECITE_CACHE_DIR", str(cache))
        yield


@pytest.fixture(scope="session")
def indexed_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop fixture indexed once per run (keyword index, graph, both vector tiers).
    A test or module that only reads an index takes a copy: :func:`repos.copy_index`."""
    root = tmp_path_factory.mktemp("indexed") / "shop"
    shutil.copytree(FIXTURES / "shop", root)
    with codecite.open_index(root) as index:
        index.update()
    return root


@pytest.fixture
def shop_repo(tmp_path: Path) -> Path:
    """A git copy of the multi-language shop fixture."""
    dest = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", dest)
    files = {p.relative_to(dest).as_posix(): p.read_text() for p in dest.rglob("*") if p.is_file()}
    return make_git_repo(dest, files)
