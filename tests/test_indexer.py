"""End-to-end incremental indexing on real temporary git repositories, with the
real chunker, graph, store and the bundled embedding model. The tests on the ``repo``
fixture run over both stores: SQLite, and PostgreSQL (tests/pg.py; ``store_backend``)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from repos import git, make_git_repo

import codecite
from codecite.errors import ModelMismatchError

ORDERS = '''"""Orders: creation and cancellation."""
from billing.pricing import apply_discount


def cancel(order_id: str) -> bool:
    """Cancel an order unless its payment was captured."""
    return order_id != ""


def checkout(order_id: str, total: float) -> float:
    """Charge the order total after the loyalty discount."""
    return apply_discount(total, "gold")
'''

PRICING = '''"""Pricing rules."""

TIERS = {"gold": 0.10, "silver": 0.05}


def apply_discount(total: float, tier: str) -> float:
    """Loyal customers save a share of the total by tier: gold saves 10%."""
    return total * (1 - TIERS.get(tier, 0.0))
'''

SECRETS = '''"""Settings."""
AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLQ"
password = "hunter2-Very-Secret"
DATABASE_URL = "postgres://admin:S3cr3tPassw0rd@db.internal:5432/shop"
'''


@pytest.fixture
def repo(tmp_path: Path, store_backend: str) -> Path:
    return make_git_repo(
        tmp_path / "repo",
        {
            "billing/orders.py": ORDERS,
            "billing/pricing.py": PRICING,
            "billing/settings.py": SECRETS,
            "README.md": "# Shop\n\nOrders and pricing.\n\n## Discounts\n\nGold saves 10%.\n",
            "package-lock.json": "{}\n",
        },
    )


def _index(repo: Path, **kw: object) -> codecite.IndexReport:
    with codecite.open_index(repo) as idx:
        return idx.update(**kw)  # type: ignore[arg-type]


def test_first_run_indexes_everything_and_embeds(repo: Path) -> None:
    report = _index(repo)
    assert sorted(report.added) == [
        "README.md",
        "billing/orders.py",
        "billing/pricing.py",
        "billing/settings.py",
    ]
    assert report.skipped_by_reason().get("lockfile") == 1
    assert report.embed_pending == 0 and report.embedded == report.chunks_written
    with codecite.open_index(repo) as idx:
        quals = {c.qualname for c in idx.chunks("billing")}
        status = idx.status()
    assert {"cancel", "checkout", "apply_discount"} <= quals
    assert status.vectors == status.chunks and status.stale_files == 0
    assert status.embedder and status.embedding_dim == 384
    assert status.indexed_commit == git(repo, "rev-parse", "HEAD").strip()


def test_second_run_changes_nothing_and_embeds_nothing(repo: Path) -> None:
    _index(repo)
    again = _index(repo)
    assert again.changed == 0 and again.embedded == 0 and again.chunks_written == 0
    assert again.unchanged == 4


def test_edit_reembeds_only_changed_chunks_and_rebuilds_edges(repo: Path) -> None:
    _index(repo)
    (repo / "billing" / "orders.py").write_text(
        ORDERS.replace('return order_id != ""', "return bool(order_id.strip())")
    )
    report = _index(repo)
    assert report.modified == ["billing/orders.py"] and not report.added
    # cancel changed; checkout and the module chunk kept their ids and vectors
    assert report.embedded == 1
    with codecite.open_index(repo) as idx:
        checkout = next(c for c in idx.chunks("billing/orders.py") if c.name == "checkout")
        callees = {
            idx.store.get_chunks([e.dst])[e.dst].qualname
            for e in idx.store.edges_from(checkout.id, "calls")
        }
    assert callees == {"apply_discount"}


def test_another_chunker_cuts_every_file_again_once(repo: Path) -> None:
    _index(repo)
    with codecite.open_index(repo) as idx:
        before = {c.id for c in idx.chunks("billing")}
        idx.store.set_meta({"chunking": "v1:150"})  # as an older codecite recorded it
    again = _index(repo)
    assert again.rechunked and len(again.modified) == 4 and again.unchanged == 0
    assert again.embedded == 0  # the same chunks: their vectors stay
    with codecite.open_index(repo) as idx:
        assert {c.id for c in idx.chunks("billing")} == before
    third = _index(repo)
    assert not third.rechunked and third.unchanged == 4 and third.chunks_written == 0


def test_edges_an_older_resolver_drew_are_drawn_again_once(repo: Path) -> None:
    """The resolver's rules change between releases (GRAPH_VERSION): an index whose
    edges an older one drew gets every edge drawn again on its next update, with no
    file changed and nothing cut or embedded again."""
    from codecite.graph.resolve import GRAPH_VERSION
    from codecite.index.run import GRAPH_KEY

    _index(repo)
    with codecite.open_index(repo) as idx:
        assert idx.store.get_meta(GRAPH_KEY) == str(GRAPH_VERSION)
        checkout = next(c for c in idx.chunks("billing/orders.py") if c.name == "checkout")
        ids = [c.id for c in idx.chunks("billing")]
        with idx.store.transaction():  # as an older resolver left it: no call found
            idx.store.replace_edges(set(ids), [], ("calls",))
            idx.store.set_meta({GRAPH_KEY: "1"})
    again = _index(repo)
    assert again.changed == 0 and again.chunks_written == 0 and again.embedded == 0
    with codecite.open_index(repo) as idx:
        assert idx.store.get_meta(GRAPH_KEY) == str(GRAPH_VERSION)
        assert [e.dst for e in idx.store.edges_from(checkout.id, "calls")]


def test_touched_but_identical_file_is_not_reparsed(repo: Path) -> None:
    _index(repo)
    path = repo / "billing" / "orders.py"
    path.write_text(path.read_text())  # new mtime, same bytes
    report = _index(repo)
    assert report.changed == 0 and report.chunks_written == 0 and report.embedded == 0


def test_deleted_file_disappears_with_chunks_and_edges(repo: Path) -> None:
    _index(repo)
    (repo / "billing" / "pricing.py").unlink()
    report = _index(repo)
    assert report.deleted == ["billing/pricing.py"]
    with codecite.open_index(repo) as idx:
        assert list(idx.chunks("billing/pricing.py")) == []
        with idx.store.transaction():  # nothing dangling is left to prune
            assert idx.store.prune_edges() == 0
            assert idx.store.prune_vectors() == 0


def test_renamed_file_is_not_reembedded(repo: Path) -> None:
    _index(repo)
    git(repo, "mv", "billing/pricing.py", "billing/prices.py")
    report = _index(repo)
    assert report.added == ["billing/prices.py"] and report.deleted == ["billing/pricing.py"]
    assert report.embedded == 0 and report.embed_reused > 0 and report.embed_pending == 0


def test_no_secret_reaches_the_database(repo: Path, store_backend: str) -> None:
    report = _index(repo)
    assert sum(report.secrets_redacted.values()) >= 3
    if store_backend == "postgres":
        _no_secret_in_postgres(os.environ["CODECITE_STORE"])
        return
    raw = (repo / ".codecite" / "index.db").read_bytes()
    for secret in (b"AKIAIOSFODNN7EXAMPLQ", b"hunter2-Very-Secret", b"S3cr3tPassw0rd"):
        assert secret not in raw
    db = sqlite3.connect(repo / ".codecite" / "index.db")
    content = db.execute("SELECT content FROM chunks WHERE path='billing/settings.py'").fetchone()
    assert "«redacted:" in content[0]


def _no_secret_in_postgres(url: str) -> None:
    import psycopg

    with psycopg.connect(url) as conn:
        for table in ("chunks", "files", "refs", "imports", "meta"):
            for (text,) in conn.execute(f"SELECT t::text FROM codecite.{table} t"):
                for secret in ("AKIAIOSFODNN7EXAMPLQ", "hunter2-Very-Secret", "S3cr3tPassw0rd"):
                    assert secret not in text, table
        (content,) = conn.execute(
            "SELECT content FROM codecite.chunks WHERE path = 'billing/settings.py'"
        ).fetchone()
    assert "«redacted:" in content


def test_no_embed_then_embed_resumes(repo: Path) -> None:
    first = _index(repo, embed=False)
    assert first.embedded == 0
    with codecite.open_index(repo) as idx:
        assert idx.status().vectors == 0
    second = _index(repo)
    assert second.changed == 0 and second.embedded == first.chunks_written


def test_other_model_is_refused_until_full(repo: Path) -> None:
    _index(repo)
    with codecite.open_index(repo) as idx:
        idx.store.set_meta({"embedder": "some-other-model"})
    with pytest.raises(ModelMismatchError, match="--full"):
        _index(repo)
    report = _index(repo, full=True)
    assert report.embedded == report.chunks_written


def test_dry_run_writes_nothing(repo: Path) -> None:
    report = _index(repo, dry_run=True)
    assert report.dry_run and report.chunks_written > 0 and report.embed_pending > 0
    assert report.estimated_embed_seconds > 0
    with codecite.open_index(repo) as idx:
        assert idx.status().chunks == 0


def test_plain_folder_and_gitignore(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "build").mkdir(parents=True)
    (root / "app.py").write_text("def main():\n    return 0\n")
    (root / "secret_notes.txt").write_text("ignored by .gitignore\n")
    (root / ".gitignore").write_text("secret_notes.txt\n")
    (root / "build" / "out.js").write_text("var x = 1;\n")
    report = _index(root, embed=False)
    assert "app.py" in report.added and "secret_notes.txt" not in report.added
    assert not any(p.startswith("build/") for p in report.added)


def _edge_set(repo: Path, index_dir: Path) -> set[tuple[str, str, str]]:
    with codecite.open_index(repo, index_dir=index_dir) as idx:
        rows = idx.store.conn.execute(
            "SELECT s.path || '::' || s.qualname, d.path || '::' || d.qualname, e.kind "
            "FROM edges e JOIN chunks s ON s.id = e.src JOIN chunks d ON d.id = e.dst"
        ).fetchall()
    return set(rows)


def test_incremental_graph_equals_a_full_rebuild(shop_repo: Path, tmp_path: Path) -> None:
    inc = tmp_path / "inc-index"
    with codecite.open_index(shop_repo, index_dir=inc) as idx:
        idx.update(embed=False)
    pricing = shop_repo / "shop" / "pricing.py"
    text = pricing.read_text()
    assert "rate = discount_rate_for_tier(tier)" in text  # an edited body: a new chunk id
    text = text.replace(
        "rate = discount_rate_for_tier(tier)", "rate = discount_rate_for_tier(tier.strip())"
    )
    pricing.write_text(
        text
        + (
            "\n\ndef loyalty_bonus_points(total):\n"
            '    """Points earned on an order."""\n'
            "    return int(total)\n"
        )
    )
    orders = shop_repo / "shop" / "orders.py"
    orders.write_text(
        orders.read_text()
        + (
            "\n\ndef award_points(order_total):\n"
            "    from shop.pricing import loyalty_bonus_points\n\n"
            "    return loyalty_bonus_points(order_total)\n"
        )
    )
    with codecite.open_index(shop_repo, index_dir=inc) as idx:
        report = idx.update(embed=False)
    assert sorted(report.modified) == ["shop/orders.py", "shop/pricing.py"]
    full = tmp_path / "full-index"
    with codecite.open_index(shop_repo, index_dir=full) as idx:
        idx.update(embed=False)
    inc_edges, full_edges = _edge_set(shop_repo, inc), _edge_set(shop_repo, full)
    assert (
        "shop/orders.py::award_points",
        "shop/pricing.py::loyalty_bonus_points",
        "calls",
    ) in inc_edges
    assert inc_edges == full_edges


def test_two_builds_of_one_tree_write_their_chunks_in_the_same_order(tmp_path: Path) -> None:
    """Parse workers finish in any order; their results are written in the order of the
    files, so two builds store the same rows in the same order (tied hits rank alike)."""
    files = {
        f"pkg/mod_{n:02d}.py": "".join(
            f"def step_{n}_{i}(value):\n    return value * {i} + {n}\n\n\n"
            for i in range(1 + n % 5)
        )
        for n in range(60)
    }
    repo = make_git_repo(tmp_path / "repo", files)
    orders = []
    for build in ("first", "second"):
        folder = tmp_path / build
        with codecite.open_index(repo, index_dir=folder, overrides={"workers": 2}) as index:
            index.update(embed=False)
        with sqlite3.connect(folder / "index.db") as db:
            orders.append([row[0] for row in db.execute("SELECT id FROM chunks ORDER BY rowid")])
    assert len(orders[0]) > 60 and orders[0] == orders[1]
