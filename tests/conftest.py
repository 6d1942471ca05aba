"""Shared fixtures: real temporary repositories, an isolated embedding cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pg import pg_module_url, pg_server, pg_url, store_backend  # noqa: F401 (fixtures)
from repos import make_git_repo

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test gets the same session-wide temporary embedding cache, never the user's."""
    cache = tmp_path_factory.getbasetemp() / "embed-cache"
    cache.mkdir(exist_ok=True)
    monkeypatch.setenv("CODECITE_CACHE_DIR", str(cache))


@pytest.fixture
def shop_repo(tmp_path: Path) -> Path:
    """A git copy of the multi-language shop fixture."""
    dest = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", dest)
    files = {p.relative_to(dest).as_posix(): p.read_text() for p in dest.rglob("*") if p.is_file()}
    return make_git_repo(dest, files)
