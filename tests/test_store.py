"""The stores: migrations, transactions, vectors, format checks. The tests on the
``store`` fixture run over both backends (SQLite, and PostgreSQL from tests/pg.py);
the others check SQLite's own files (FTS5 table, WAL, ``vectors.npy`` snapshot)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from codecite.errors import IndexFormatError
from codecite.store import Store, open_store
from codecite.store.sqlite import SQLiteStore
from codecite.store.sqlite.migrations import FORMAT_VERSION
from codecite.types import Chunk, Edge, Import, Reference, make_chunk_id, sha256_text


def _chunk(path: str, name: str, body: str, start: int = 1) -> Chunk:
    h = sha256_text(body)
    return Chunk(
        id=make_chunk_id("r", path, "function", name, h),
        repo="r",
        path=path,
        language="python",
        kind="function",
        name=name,
        qualname=name,
        start_line=start,
        end_line=start + body.count("\n"),
        content=body,
        context=f"# path: {path}",
        content_hash=h,
        signature=f"def {name}():",
    )


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A new empty store of each backend."""
    location = tmp_path / "idx" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    opened = open_store(location, repo="r", index_dir=tmp_path / "idx")
    yield opened
    opened.close()


def _reader(store: Store) -> Store:
    """A second, independent connection to the same index."""
    location = store.url if hasattr(store, "url") else store.dir
    return open_store(location, repo="r", create=False, readonly=True)


def test_new_store_is_migrated_and_ignored_by_git(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "idx")
    assert store.get_meta("format_version") == str(FORMAT_VERSION)
    assert (tmp_path / "idx" / ".gitignore").read_text().strip().endswith("*")
    mode = store.conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_newer_format_is_refused(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "idx")
    store.set_meta({"format_version": str(FORMAT_VERSION + 1)})
    store.close()
    with pytest.raises(IndexFormatError, match="newer codecite"):
        SQLiteStore(tmp_path / "idx")


def test_transaction_rolls_back_everything(store: Store) -> None:
    chunk = _chunk("a.py", "f", "def f():\n    return 1\n")
    generation = store.generation()
    with pytest.raises(RuntimeError), store.transaction():
        store.add_chunks([chunk], [1.0])
        store.put_file("a.py", "python", "h", 1, 1, "", 1, 0)
        raise RuntimeError("crash in the middle of a batch")
    assert store.counts()["chunks"] == 0 and store.files() == {}
    assert store.keyword_search(["f"], None, 10, (4.0, 2.0, 1.0)) == []
    assert store.document_count() == 0
    if not isinstance(store, SQLiteStore):  # SQLite counts only other connections' commits
        assert store.generation() == generation


def test_keyword_rows_follow_chunks(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "idx")
    chunk = _chunk("billing/tax.py", "getRateForRegion", "def getRateForRegion():\n  pass\n")
    with store.transaction():
        store.add_chunks([chunk], [1.0])
    hits = store.conn.execute(
        "SELECT c.id FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
        "WHERE chunks_fts MATCH 'rate AND region'"
    ).fetchall()
    assert hits == [(chunk.id,)]
    with store.transaction():
        store.delete_file("billing/tax.py")
    assert store.conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == 0


def test_keyword_rows_follow_chunks_in_every_backend(store: Store) -> None:
    chunk = _chunk("billing/tax.py", "getRateForRegion", "def getRateForRegion():\n  pass\n")
    with store.transaction():
        store.add_chunks([chunk], [1.0])
    weights = (4.0, 2.0, 1.0)
    assert store.keyword_search(["rate", "region"], None, 10, weights) == [chunk.id]
    assert store.keyword_search(["getrateforregion", "tax"], None, 10, weights) == [chunk.id]
    assert store.document_frequency("region") == 1 == store.document_count()
    with store.transaction():
        store.delete_file("billing/tax.py")
    assert store.keyword_search(["rate"], None, 10, weights) == []
    assert store.document_count() == 0
    # a term's document frequency is the index's as it is now, not as first asked (a
    # long-lived process searching an index that is re-indexed beside it)
    assert store.document_frequency("region") == 0


def test_delete_file_removes_graph_rows(store: Store) -> None:
    a, b = _chunk("a.py", "a", "def a():\n  b()\n"), _chunk("b.py", "b", "def b():\n  pass\n")
    with store.transaction():
        store.add_chunks([a, b], [1.0, 1.0])
        store.add_facts("a.py", [Import("b", ("b",), "", 1)], [Reference(a.id, "b", "", "call", 2)])
        store.replace_edges([a.id], [Edge(a.id, b.id, "calls", 2)], ("calls",))
    assert store.edges_to(b.id, "calls") == [Edge(a.id, b.id, "calls", 2)]
    with store.transaction():
        store.delete_file("b.py")
    assert store.edges_from(a.id) == []
    assert store.refs_for(paths=["a.py"])[0][1].name == "b"
    assert store.imports_by_path()["a.py"][0].names == ("b",)


def test_vectors_reuse_by_content_in_every_backend(store: Store) -> None:
    old = _chunk("old.py", "f", "def f():\n  return 42\n")
    with store.transaction():
        store.add_chunks([old], [1.0])
        store.put_vectors([old], np.ones((1, 4), dtype=np.float32), "static")
        store.put_vectors([old], np.full((1, 4), 0.5, dtype=np.float32))
        store.delete_file("old.py")  # a rename: same content at a new path
        new = _chunk("new.py", "f", old.content)
        store.add_chunks([new], [1.0])
    assert store.count_missing_vectors() == 1 == store.count_missing_vectors("static")
    with store.transaction():
        assert store.reuse_vectors_by_content() == 1
        assert store.reuse_vectors_by_content("static") == 1
        assert store.prune_vectors() == 2
    assert store.count_missing_vectors() == 0
    assert store.export_vectors(4) == 1 == store.export_vectors(4, "static")
    rows, static = store.vector_rows(), store.vector_rows("static")
    assert rows is not None and static is not None and rows.ids == static.ids == [new.id]
    assert np.allclose(rows.matrix, 0.5) and np.allclose(static.matrix, 1.0)
    with store.transaction():
        store.clear_vectors("static")
    assert store.vector_rows("static") is None and store.vector_count() == 1
    assert [c.id for c in store.chunks_missing_vectors(5, "static")] == [new.id]


def test_vectors_snapshot_and_reuse_by_content(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "idx")
    old = _chunk("old.py", "f", "def f():\n  return 42\n")
    with store.transaction():
        store.add_chunks([old], [1.0])
        store.put_vectors([old], np.ones((1, 4), dtype=np.float32))
        store.delete_file("old.py")  # a rename: same content at a new path
        new = _chunk("new.py", "f", old.content)
        store.add_chunks([new], [1.0])
    assert store.count_missing_vectors() == 1
    with store.transaction():
        assert store.reuse_vectors_by_content() == 1
        assert store.prune_vectors() == 1
    assert store.count_missing_vectors() == 0
    assert store.export_vectors(4) == 1
    ids, matrix = store.load_vectors()  # type: ignore[misc]
    assert ids == [new.id]
    assert matrix.shape == (1, 4) and np.allclose(matrix, 1.0)


def test_a_snapshot_of_chunks_replaced_one_for_one_is_not_used(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "idx")
    old = _chunk("a.py", "f", "def f():\n  return 1\n")
    with store.transaction():
        store.add_chunks([old], [1.0])
        store.put_vectors([old], np.ones((1, 4), dtype=np.float32))
    store.set_meta({"embedding_dim": "4"})
    assert store.export_vectors(4) == 1
    edited = _chunk("a.py", "f", "def f():\n  return 2\n")  # the same count, a new id
    with store.transaction():
        store.delete_file("a.py")
        store.add_chunks([edited], [1.0])
        store.put_vectors([edited], np.full((1, 4), 0.5, dtype=np.float32))
    rows = store.vector_rows()
    assert rows is not None and rows.ids == [edited.id]
    assert np.allclose(rows.matrix, 0.5)


def test_snapshot_mismatch_is_ignored(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "idx")
    assert store.load_vectors() is None
    np.save(tmp_path / "idx" / "vectors.npy", np.zeros((2, 4), dtype=np.float32))
    (tmp_path / "idx" / "vectors.ids.json").write_text('["only-one"]')
    assert store.load_vectors() is None


def test_chunks_under_a_folder_do_not_match_prefix_siblings(store: Store) -> None:
    with store.transaction():
        store.add_chunks(
            [
                _chunk("src/a.py", "a", "x\n"),
                _chunk("src2/b.py", "b", "y\n"),
                _chunk("src_x/c.py", "c", "z\n"),
            ],
            [1.0, 1.0, 1.0],
        )
    assert [c.path for c in store.chunks("src")] == ["src/a.py"]
    assert [c.path for c in store.chunks("src/a.py")] == ["src/a.py"]


def test_two_connections_see_committed_batches_only(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "idx")
    reader = sqlite3.connect(tmp_path / "idx" / "index.db")
    store.conn.execute("BEGIN IMMEDIATE")
    store.add_chunks([_chunk("a.py", "a", "x\n")], [1.0])
    assert reader.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0
    store.conn.execute("COMMIT")
    assert reader.execute("SELECT count(*) FROM chunks").fetchone()[0] == 1


def test_other_connections_see_committed_batches_only(store: Store) -> None:
    reader = _reader(store)
    try:
        with store.transaction():
            store.add_chunks([_chunk("a.py", "a", "x\n")], [1.0])
            assert reader.counts()["chunks"] == 0
        assert reader.counts()["chunks"] == 1
        assert [c.path for c in reader.chunks()] == ["a.py"]
    finally:
        reader.close()


def test_clear_empties_the_index_but_keeps_the_metadata(store: Store) -> None:
    a = _chunk("a.py", "a", "def a():\n  b()\n")
    with store.transaction():
        store.add_chunks([a], [1.0])
        store.put_file("a.py", "python", "h", 1, 1, "", 1, 0)
        store.put_vectors([a], np.ones((1, 4), dtype=np.float32))
        store.set_meta({"repo": "r"})
    store.clear()
    assert store.counts() == {
        "files": 0,
        "chunks": 0,
        "edges": 0,
        "vectors": 0,
        "static_vectors": 0,
    }
    assert store.get_meta("repo") == "r" and store.document_count() == 0
