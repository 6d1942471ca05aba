"""Query-time freshness: search and ask never answer from code that changed on disk
without saying so. Real git repositories, real processes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from repos import copy_index, make_git_repo, run_cli

import codecite

PRICING = (
    '"""Prices."""\n\n\n'
    "def loyalty_discount(amount: float, tier: str) -> float:\n"
    '    """Amount after the loyalty discount of a tier."""\n'
    '    rate = {"gold": 0.1, "silver": 0.05}.get(tier, 0.0)\n'
    "    return round(amount * (1 - rate), 2)\n\n\n"
    "def legacy_coupon(amount: float) -> float:\n"
    '    """Apply the retired paper coupon."""\n'
    "    return amount - 5\n"
)


@pytest.fixture(scope="module")
def indexed_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository indexed by the CLI once per module; each test edits a copy."""
    files = {
        "shop/pricing.py": PRICING,
        "shop/orders.py": "def total(items):\n    return sum(items)\n",
    }
    files |= {f"shop/extra_{i}.py": f"def extra_{i}():\n    return {i}\n" for i in range(4)}
    root = make_git_repo(tmp_path_factory.mktemp("fresh") / "repo", files)
    assert run_cli("index", str(root), "--wait").returncode == 0
    return root


@pytest.fixture
def repo(indexed_once: Path, tmp_path: Path) -> Path:
    return copy_index(indexed_once, tmp_path / "repo")


def _search(root: Path, query: str, *extra: str, env: dict[str, str] | None = None) -> dict:
    proc = run_cli("search", query, str(root), "--json", *extra, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_an_edit_is_searchable_without_an_explicit_index(repo: Path) -> None:
    pricing = repo / "shop" / "pricing.py"
    pricing.write_text(
        PRICING + "\n\ndef saffron_surcharge(amount: float) -> float:\n"
        '    """Surcharge for saffron-wrapped deliveries."""\n    return amount * 1.07\n'
    )
    data = _search(repo, "saffron surcharge for deliveries")
    assert data["refreshed_files"] == ["shop/pricing.py"] and data["stale_files"] == []
    top = data["results"][0]
    assert top["qualname"] == "saffron_surcharge" and top["stale"] is False
    again = _search(repo, "saffron surcharge for deliveries")
    assert again["refreshed_files"] == []  # the refresh was stored


def test_a_deleted_function_is_never_returned(repo: Path) -> None:
    pricing = repo / "shop" / "pricing.py"
    pricing.write_text(PRICING.split("\n\n\ndef legacy_coupon")[0] + "\n")
    data = _search(repo, "legacy_coupon retired paper coupon", "-k", "20")
    assert all(r["qualname"] != "legacy_coupon" for r in data["results"])
    (repo / "shop" / "orders.py").unlink()
    data = _search(repo, "total of items", "-k", "20")
    assert all(r["path"] != "shop/orders.py" for r in data["results"])
    assert "shop/orders.py" in data["refreshed_files"]


def test_changes_beyond_the_inline_limit_are_marked_stale(repo: Path) -> None:
    for i in range(3):
        path = repo / "shop" / f"extra_{i}.py"
        path.write_text(path.read_text() + f"\n\ndef more_{i}():\n    return {i}\n")
    env = {"CODECITE_REFRESH_MAX_FILES": "2"}
    data = _search(repo, "extra", "-k", "20", env=env)
    assert data["refreshed_files"] == []
    assert data["stale_files"] == [f"shop/extra_{i}.py" for i in range(3)]
    marks = {r["path"]: r["stale"] for r in data["results"]}
    assert marks["shop/extra_0.py"] is True and marks.get("shop/pricing.py", False) is False
    human = run_cli("search", "extra", str(repo), env=env)
    assert human.stdout.count("changed since indexing") == 1 and "[stale]" in human.stdout


def test_a_touched_but_unchanged_file_is_not_a_change(repo: Path) -> None:
    pricing = repo / "shop" / "pricing.py"
    os.utime(pricing, (time.time() + 5, time.time() + 5))
    with codecite.open_index(repo, create=False) as index:
        fresh = index.refresh(max_files=0)
    assert fresh.paths == [] and fresh.stale == []


def test_a_citation_whose_lines_changed_on_disk_is_not_verified(repo: Path) -> None:
    question = "How is the loyalty discount of a tier computed?"
    with codecite.open_index(repo, create=False, overrides={"refresh": False}) as index:
        before = index.ask(question, llm="extractive")
        cited = [c for c in before.citations if c.path == "shop/pricing.py" and c.verified]
        assert cited
        pricing = repo / "shop" / "pricing.py"
        pricing.write_text(PRICING.replace("0.1, ", "0.15, ").replace("round(", "int("))
        after = index.ask(question, llm="extractive")
    moved = [c for c in after.citations if c.path == "shop/pricing.py"]
    assert moved and not any(
        c.verified
        for c in moved
        if c.start_line <= 7 <= c.end_line or c.start_line <= 6 <= c.end_line
    )
    assert any("changed on disk" in flag for flag in after.flags)


def test_another_writer_means_stale_not_waiting(repo: Path) -> None:
    (repo / "shop" / "orders.py").write_text("def total(items):\n    return sum(items) + 1\n")
    with (
        codecite.open_index(repo) as writer,
        writer.store.writer_lock(),
        codecite.open_index(repo, create=False) as reader,
    ):
        started = time.monotonic()
        fresh = reader.refresh()
    assert time.monotonic() - started < 5
    assert fresh.stale == ["shop/orders.py"] and "writing" in fresh.reason


@pytest.mark.slow
def test_a_branch_switch_there_and_back_computes_nothing_already_computed(tmp_path: Path) -> None:
    files = {
        f"pkg/m{i}.py": f'def f{i}(x):\n    """Step {i}."""\n    return x + {i}\n'
        for i in range(30)
    }
    root = make_git_repo(tmp_path / "branches", files)
    env = {"CODECITE_CACHE_DIR": str(tmp_path / "cache")}

    def index() -> dict:
        proc = run_cli("index", str(root), "--wait", "--json", env=env)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    first = index()
    assert first["embed_computed"] == first["embedded"] > 0
    from repos import git

    git(root, "checkout", "-q", "-b", "feature")
    (root / "pkg" / "m3.py").write_text(
        'def f3(x):\n    """Step three, doubled."""\n    return 2 * x\n'
    )
    git(root, "commit", "-qam", "double step 3")
    there = index()
    assert there["modified"] == ["pkg/m3.py"] and there["embed_computed"] == 1
    git(root, "checkout", "-q", "main")
    back = index()
    assert back["modified"] == ["pkg/m3.py"] and back["unchanged"] == 29
    assert back["embedded"] == 1 and back["embed_computed"] == 0  # from the cache


def test_between_full_checks_the_files_of_the_results_are_still_checked(repo: Path) -> None:
    overrides = {"refresh_interval": 3600, "query_log": False}
    with codecite.open_index(repo, create=False, overrides=overrides) as index:
        first = index.search("loyalty discount of a tier", k=3)
        assert first.hits[0].chunk.path == "shop/pricing.py" and not first.refreshed_files
        (repo / "shop" / "pricing.py").write_text(
            PRICING.replace("loyalty discount", "gold discount")
        )
        again = index.search("loyalty discount of a tier", k=3)
    assert again.refreshed_files == ["shop/pricing.py"]
    top = [h for h in again.hits if h.chunk.path == "shop/pricing.py"]
    assert top and all("loyalty discount of a tier" not in h.chunk.content for h in top)


def test_the_pages_freshness_line_reads_in_and_out_of_git() -> None:
    """The page's line under an answer: against the commit indexed in git; outside git
    (an unpacked archive) "changed since indexing", never a dangling "since"."""
    from codecite.server.web.data import Freshness

    in_git = Freshness(
        "shop", True, indexed_commit="abc1234def", head_commit="abc1234def", changed=2
    )
    assert in_git.summary == "indexed at commit abc1234 · 2 files changed since"
    moved = Freshness("shop", True, indexed_commit="abc1234def", head_commit="9f8e7d6c", changed=1)
    assert (
        moved.summary
        == "indexed at commit abc1234 · 1 file changed since · the branch is now at 9f8e7d6"
    )
    plain = Freshness("shop", True, changed=0)
    assert plain.summary == "indexed · 0 files changed since indexing"
    assert Freshness("shop", False).summary == "not indexed yet"
