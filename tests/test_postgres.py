"""The PostgreSQL + pgvector store, on a real PostgreSQL 18 with pgvector (tests/pg.py):
it answers exactly as the SQLite store does on the indexed shop fixture (copied over with
``codecite migrate``'s code, vectors included), keeps repositories in one database apart,
migrates once under concurrency, survives ``kill -9`` of an indexer and serves queries
while one runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest
from repos import make_git_repo, run_cli

import codecite
from codecite.config import Config
from codecite.errors import ConfigError, IndexFormatError, IndexMissingError, IndexOutdatedError
from codecite.evaluate import load_golden
from codecite.filters import Filters, path_matches
from codecite.identifiers import keyword_row
from codecite.retrieve.keyword import query_terms
from codecite.store import open_store
from codecite.store.copy import copy_index
from codecite.store.postgres import PostgresStore, repositories
from codecite.store.postgres.base import path_condition
from codecite.store.postgres.migrations import FORMAT_VERSION, LOCK_CLASS
from codecite.store.postgres.vectors import INDEX_LOCK, hnsw_index_name
from codecite.store.protocols import (
    ChunkReader,
    GraphReader,
    IndexWriter,
    KeywordIndex,
    ReadStore,
    Store,
    Tier,
    VectorRows,
    VectorSource,
)
from codecite.store.sqlite import SQLiteStore
from codecite.types import Chunk, Edge, sha256_text

#: a real PostgreSQL (run by .ci/run)
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures"
WEIGHTS = (4.0, 2.0, 1.0)
FILTERS = (
    None,
    Filters(languages=("typescript",)),
    Filters(path="tests/**"),
    Filters(kinds=("method",)),
    Filters(path="*.go"),
    Filters(path="shop"),
    Filters(repo="shop"),
    Filters(languages=("python",), kinds=("function",), path="shop"),
)
#: HNSW recall@10 against exact search on the shop fixture's vectors (measured 1.0).
MIN_HNSW_RECALL_AT_10 = 0.95


Protocols = tuple[ChunkReader, GraphReader, KeywordIndex, VectorSource, ReadStore, IndexWriter]


def _conforms(store: PostgresStore) -> tuple[Protocols, Store]:
    """mypy fails here when a signature drifts from the protocols."""
    return (store, store, store, store, store, store), store


# --- the shop fixture in both backends --------------------------------------------------
@pytest.fixture(scope="module")
def both(
    tmp_path_factory: pytest.TempPathFactory, pg_module_url: str
) -> Iterator[tuple[SQLiteStore, PostgresStore, Config]]:
    """The shop fixture indexed for real into SQLite, copied into PostgreSQL."""
    root = tmp_path_factory.mktemp("pg") / "shop"
    shutil.copytree(FIXTURES / "shop", root)
    idx = codecite.open_index(root)
    idx.update()
    sqlite = idx.store
    assert isinstance(sqlite, SQLiteStore)
    pg = PostgresStore(pg_module_url, repo="shop", index_dir=root / ".codecite")
    report = copy_index(sqlite, pg)
    assert report.counts["model_vectors"] == sqlite.vector_count() > 0
    yield sqlite, pg, idx.config
    pg.close()
    idx.close()


def test_conforms_to_every_protocol(both: tuple[SQLiteStore, PostgresStore, Config]) -> None:
    _, pg, _ = both
    protocols, whole = _conforms(pg)
    assert whole is pg and all(s is pg for s in protocols)
    for protocol in (ChunkReader, GraphReader, KeywordIndex, VectorSource, ReadStore, IndexWriter):
        assert isinstance(pg, protocol), protocol.__name__
    assert isinstance(pg, Store)


def test_same_chunks_metadata_and_counts(both: tuple[SQLiteStore, PostgresStore, Config]) -> None:
    sqlite, pg, _ = both
    everything = list(sqlite.chunks())
    assert list(pg.chunks()) == everything
    for prefix in ("shop", "shop/", "tests", "web/src", "sho", "SHOP", "nowhere", ""):
        assert list(pg.chunks(prefix)) == list(sqlite.chunks(prefix)), prefix
    ids = [c.id for c in everything[::3]] + ["missing", everything[0].id]
    assert list(pg.get_chunks(ids).items()) == list(sqlite.get_chunks(ids).items())
    for key in ("repo", "root", "embedder", "embedder_spec", "embedding_dim", "missing"):
        assert pg.get_meta(key) == sqlite.get_meta(key), key
    assert pg.get_meta("format_version") == str(FORMAT_VERSION)  # the PostgreSQL schema's
    assert pg.counts() == sqlite.counts()
    assert pg.files() == sqlite.files()
    for table, column in (("files", "language"), ("chunks", "kind"), ("edges", "kind")):
        assert pg.group_counts(table, column) == sqlite.group_counts(table, column)
    assert sorted(pg.definitions(), key=repr) == sorted(sqlite.definitions(), key=repr)
    assert pg.imports_by_path() == sqlite.imports_by_path()
    assert sorted(pg.refs_for(all_refs=True), key=repr) == sorted(
        sqlite.refs_for(all_refs=True), key=repr
    )
    paths = sorted(sqlite.files())[:5]
    assert sorted(pg.refs_for(paths=paths, names=["apply_discount"]), key=repr) == sorted(
        sqlite.refs_for(paths=paths, names=["apply_discount"]), key=repr
    )
    assert sorted(pg.chunk_ids_by_path(paths)) == sorted(sqlite.chunk_ids_by_path(paths))
    assert pg.names_by_id(paths[0]) == sqlite.names_by_id(paths[0])
    assert pg.paths_pointing_to(ids) == sqlite.paths_pointing_to(ids)


def test_same_symbols_and_edges_in_the_same_order(
    both: tuple[SQLiteStore, PostgresStore, Config],
) -> None:
    sqlite, pg, _ = both
    chunks = list(sqlite.chunks())
    names = sorted({n for c in chunks for n in (c.name, c.qualname) if n})
    for name in [*names, "nothing_named_so"]:
        for column in ("qualname", "name"):
            for filters, limit in ((None, 50), (Filters(kinds=("method", "function")), 1)):
                assert pg.find_symbols(name, column, filters, limit) == sqlite.find_symbols(
                    name, column, filters, limit
                ), (name, column)
    total = 0
    for chunk in chunks:
        for kind in (None, "calls", "tests", "imports"):
            assert pg.edges_from(chunk.id, kind) == sqlite.edges_from(chunk.id, kind)
            assert pg.edges_to(chunk.id, kind) == sqlite.edges_to(chunk.id, kind)
        total += len(pg.edges_from(chunk.id))
    assert total > 50
    ids = [c.id for c in chunks]
    for pool in (ids, ids[::2], ids[:1], []):
        assert sorted(pg.edges_among(pool)) == sorted(sqlite.edges_among(pool))


def test_keyword_search_ranks_as_fts5(both: tuple[SQLiteStore, PostgresStore, Config]) -> None:
    """Exact BM25 in SQL: the same ids in the same order as FTS5's bm25() for every
    golden question under every filter (measured: identical on all 336 lists)."""
    sqlite, pg, _ = both
    golden = [q.query for q in load_golden(FIXTURES / "shop_golden.jsonl")]
    compared = identical = 0
    for query in golden:
        terms = query_terms(query)
        for filters in FILTERS:
            want = sqlite.keyword_search(terms, filters, 10, WEIGHTS)
            got = pg.keyword_search(terms, filters, 10, WEIGHTS)
            assert set(got) == set(want), (query, filters)
            compared, identical = compared + 1, identical + (got == want)
    assert compared > 300 and identical / compared >= 0.98
    for terms, limit, weights in (
        ([], 10, WEIGHTS),
        (["zzznothing"], 10, WEIGHTS),
        (['quo"te', "order"], 5, WEIGHTS),
        (["order"], 0, WEIGHTS),
        (["order", "order"], 3, WEIGHTS),
        (["apply_loyalty_discount"], 5, WEIGHTS),
        (["ORDER", "$"], 5, WEIGHTS),
        (["discount"], 10, (0.0, 0.0, 1.0)),
        (["discount", "tax"], -1, (1.0, 1.0, 1.0)),
    ):
        assert pg.keyword_search(terms, None, limit, weights) == sqlite.keyword_search(
            terms, None, limit, weights
        ), terms
    vocabulary = {t for c in sqlite.chunks() for text in keyword_row(c) for t in text.split()}
    assert pg.document_count() == sqlite.document_count()
    for term in [*sorted(vocabulary)[::5], "discount", "zzznothing", "DISCOUNT", "a_b"]:
        assert pg.document_frequency(term) == sqlite.document_frequency(term), term


def test_vectors_are_the_same_and_hnsw_finds_the_exact_neighbours(
    both: tuple[SQLiteStore, PostgresStore, Config],
) -> None:
    sqlite, pg, _ = both
    want, got = sqlite.vector_rows(), pg.vector_rows()
    assert want is not None and got is not None
    assert got.ids == want.ids and np.array_equal(got.matrix, want.matrix)
    assert (got.languages, got.kinds, got.paths, got.repos) == (
        want.languages,
        want.kinds,
        want.paths,
        want.repos,
    )
    static, static_pg = sqlite.vector_rows("static"), pg.vector_rows("static")
    if static is None:
        assert static_pg is None and pg.vector_count("static") == 0
    else:
        assert static_pg is not None and static_pg.ids == static.ids
        assert np.array_equal(static_pg.matrix, static.matrix)
    recalls = []
    for row in range(0, len(want.ids), 7):
        query = want.matrix[row]
        exact = [i for i, _ in pg.vector_search(query, None, 10, exact=True)]
        numpy = [want.ids[i] for i in np.argsort(-(want.matrix @ query), kind="stable")[:10]]
        assert set(exact) == set(numpy)
        found = [i for i, _ in pg.vector_search(query, None, 10)]
        recalls.append(len(set(found) & set(exact)) / 10)
    assert sum(recalls) / len(recalls) >= MIN_HNSW_RECALL_AT_10
    typescript = pg.vector_search(want.matrix[0], Filters(languages=("typescript",)), 5)
    chunks = pg.get_chunks(i for i, _ in typescript)
    assert len(typescript) == 5 and {c.language for c in chunks.values()} == {"typescript"}


def test_filters_in_sql_match_path_matches(pg_url: str) -> None:
    paths = [
        "shop/a.py",
        "shop/sub/b.py",
        "shopping/c.py",
        "tests/test_a.py",
        "web/src/cart.ts",
        "README.md",
        "a[1].py",
        "x.go",
        "dir.v2/f.txt",
        "^odd$(x).py",
    ]
    patterns = ["*.py", "shop/**", "shop/*.py", "**/*.ts", "tests/**", "?.go", "a[[]1].py"]
    patterns += ["[!s]*", "shop", "shop/", "./shop", "*.[tp][sy]", "dir.v2/*", "*[", "web/**/c*"]
    patterns += ["^odd$(x).py", "*/*", "[^s]*", "[]a]*", "*.PY"]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for pattern in patterns:
            cond, args = path_condition(pattern, "p")
            got = [
                r[0]
                for r in conn.execute(
                    f"SELECT p FROM unnest(%s::text[]) WITH ORDINALITY AS t(p, n) WHERE {cond} "
                    "ORDER BY n",
                    [paths, *args],
                )
            ]
            assert got == [p for p in paths if path_matches(pattern, p)], pattern


# --- many repositories in one database -----------------------------------------------------
def _chunk(repo: str, path: str, name: str, body: str) -> Chunk:
    digest = sha256_text(body)
    return Chunk(f"{path}:{name}", repo, path, "python", "function", name, name, 1,
                 body.count("\n") + 1, body, "", digest, f"def {name}():")  # fmt: skip


def _fill(store: PostgresStore, repo: str, word: str) -> list[Chunk]:
    chunks = [
        _chunk(repo, "app/a.py", "alpha", f"def alpha():\n    return '{word} alpha'\n"),
        _chunk(repo, "app/b.py", "beta", f"def beta():\n    alpha()  # {word}\n"),
    ]
    with store.transaction():
        store.add_chunks(chunks, [1.0, 0.5])
        store.put_file("app/a.py", "python", "h1", 10, 1, "", 1, 0)
        store.replace_edges(
            [chunks[1].id], [Edge(chunks[1].id, chunks[0].id, "calls", 2)], ["calls"]
        )
        store.put_vectors(chunks, np.eye(2, 4, dtype=np.float32))
        store.set_meta({"repo": repo, "embedding_dim": "4"})
    return chunks


def test_two_repositories_never_see_each_other(pg_url: str, tmp_path: Path) -> None:
    one = PostgresStore(pg_url, repo="one")
    two = PostgresStore(pg_url, repo="two")
    try:
        a = _fill(one, "one", "apple")
        b = _fill(two, "two", "banana")
        assert [c.id for c in a] == [c.id for c in b]  # the same chunk ids in both
        assert [c.repo for c in one.chunks()] == ["one", "one"]
        assert [c.content for c in two.chunks()] == [c.content for c in b]
        assert one.keyword_search(["banana"], None, 10, WEIGHTS) == []
        assert sorted(two.keyword_search(["banana"], None, 10, WEIGHTS)) == [b[0].id, b[1].id]
        assert one.document_count() == two.document_count() == 2
        assert one.document_frequency("banana") == 0 and two.document_frequency("banana") == 2
        assert one.edges_to(a[0].id) == [Edge(a[1].id, a[0].id, "calls", 2)]
        assert one.vector_count() == two.vector_count() == 2
        assert one.get_meta("repo") == "one" and two.get_meta("repo") == "two"
        assert repositories(pg_url) == ["one", "two"]
        found = two.vector_search(np.array([1, 0, 0, 0], dtype=np.float32), None, 10)
        assert [i for i, _ in found] == [b[0].id, b[1].id]
        with one.transaction():
            one.delete_file("app/a.py")
        assert [c.path for c in one.chunks()] == ["app/b.py"]
        assert len(list(two.chunks())) == 2 and two.edges_to(b[0].id)
        generation = two.generation()
        one.clear()
        assert one.counts()["chunks"] == 0 and two.counts()["chunks"] == 2
        assert two.generation() == generation  # another repository's writes do not count
        assert one.files() == {} and len(two.files()) == 1
        assert one.vector_count() == 0 and two.vector_count() == 2
    finally:
        one.close()
        two.close()


def test_generation_changes_when_another_process_commits(pg_url: str) -> None:
    reader = PostgresStore(pg_url, repo="r")
    writer = PostgresStore(pg_url, repo="r")
    try:
        before = reader.generation()
        _fill(writer, "r", "x")
        assert reader.generation() != before
        assert reader.document_count() == 2  # autocommit reads see the committed batch
    finally:
        reader.close()
        writer.close()


# --- schema, format versions, locks ---------------------------------------------------------
def _open_in_thread(url: str, errors: list[BaseException], barrier: threading.Barrier) -> None:
    try:
        barrier.wait()
        PostgresStore(url, repo="same").close()
    except BaseException as exc:
        errors.append(exc)


def test_concurrent_first_opens_create_the_schema_once(pg_url: str) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)
    threads = [
        threading.Thread(target=_open_in_thread, args=(pg_url, errors, barrier)) for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT version FROM codecite.schema_migrations").fetchall()
        repos = conn.execute("SELECT repo FROM codecite.repos").fetchall()
    assert sorted(r[0] for r in rows) == list(range(1, FORMAT_VERSION + 1))
    assert repos == [("same",)]


def test_format_checks(pg_url: str) -> None:
    assert repositories(pg_url) == []
    with pytest.raises(IndexOutdatedError, match="holds no codecite schema"):
        PostgresStore(pg_url, repo="x", readonly=True)
    PostgresStore(pg_url, repo="x").close()
    with pytest.raises(IndexMissingError, match="indexed: x"):
        PostgresStore(pg_url, repo="other", readonly=True)
    store = PostgresStore(pg_url, repo="x", readonly=True)
    assert store.get_meta("anything", "d") == "d"
    with pytest.raises(codecite.UserError), store.transaction():
        pass
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO codecite.schema_migrations (version) VALUES (%s)", (FORMAT_VERSION + 1,)
        )
    for readonly in (False, True):
        with pytest.raises(IndexFormatError, match="newer codecite"):
            PostgresStore(pg_url, repo="x", readonly=readonly)


def _as_before_migration_3(url: str, *, with_cache_table: bool) -> None:
    """Make the database as the code before migration 3 left it: format 2, and the
    embedding cache's table made on first use by its cache (same columns), or none."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM codecite.schema_migrations WHERE version = 3")
        conn.execute("DROP TABLE codecite.embedding_cache")
        if with_cache_table:
            conn.execute(
                "CREATE TABLE codecite.embedding_cache (model text NOT NULL, key text NOT "
                "NULL, dim integer NOT NULL, vector bytea NOT NULL, PRIMARY KEY (model, key))"
            )


@pytest.mark.parametrize("with_cache_table", [True, False])
def test_a_database_of_format_2_still_serves_and_upgrades(
    pg_url: str, with_cache_table: bool
) -> None:
    """Migration 3 (the embedding cache's table, issue 22) on an existing deployment:
    servers (read-only) keep reading a format-2 database; the next writer upgrades it,
    keeping the table the old code made and its vectors."""
    assert FORMAT_VERSION == 3
    PostgresStore(pg_url, repo="x").close()
    _as_before_migration_3(pg_url, with_cache_table=with_cache_table)
    vector = np.array([1.0, 0.0], dtype=np.float32)
    if with_cache_table:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO codecite.embedding_cache VALUES ('m', 'k', 2, %s)",
                (vector.astype("<f4").tobytes(),),
            )
    reader = PostgresStore(pg_url, repo="x", readonly=True)
    assert reader.embedding_cache() is None  # only writers cache
    reader.close()
    writer = PostgresStore(pg_url, repo="x", create=False)
    try:
        cache = writer.embedding_cache()
        assert cache is not None and cache.enabled
        cache.put_many("m", {"k2": vector})
        assert cache.count("m") == (2 if with_cache_table else 1)
        assert cache.enabled
    finally:
        writer.close()
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT version FROM codecite.schema_migrations").fetchall()
    assert sorted(r[0] for r in rows) == [1, 2, 3]


def test_open_store_picks_the_backend(pg_url: str, tmp_path: Path) -> None:
    pg = open_store(pg_url, repo="r", index_dir=tmp_path / "local")
    sqlite = open_store(tmp_path / "idx")
    try:
        assert isinstance(pg, PostgresStore) and isinstance(sqlite, SQLiteStore)
        assert (tmp_path / "local" / ".gitignore").is_file()  # the query log's folder
    finally:
        pg.close()
        sqlite.close()
    with pytest.raises(codecite.UserError, match="cannot connect"):
        open_store("postgresql://nobody@127.0.0.1:1/none", repo="r")


def _hold_lock(url: str) -> None:  # runs in a child process
    store = PostgresStore(url, repo="locked")
    with store.writer_lock():
        print("held", flush=True)
        time.sleep(120)


def test_writer_lock_is_per_repository_and_freed_by_kill_9(pg_url: str) -> None:
    PostgresStore(pg_url, repo="locked").close()
    child = subprocess.Popen(
        [sys.executable, "-c", f"import test_postgres as t; t._hold_lock({pg_url!r})"],
        cwd=Path(__file__).parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    store = PostgresStore(pg_url, repo="locked")
    other = PostgresStore(pg_url, repo="unlocked")
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with store.try_writer_lock() as held:
            assert not held
        with other.try_writer_lock() as held:
            assert held  # another repository's writer is not blocked
        waited: list[str] = []
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
        with store.writer_lock(on_wait=waited.append), store.try_writer_lock() as again:
            assert not again  # held by us now, on its own connection
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
        store.close()
        other.close()


def test_waiting_for_a_lock_never_deadlocks_with_an_index_build(pg_url: str) -> None:
    """A process waiting for a lock another holds polls it: a statement waiting for it
    would hold a snapshot that the holder's ``CREATE INDEX CONCURRENTLY`` waits to end,
    and PostgreSQL would fail one of the two (two workers' runs failed so)."""
    store = PostgresStore(pg_url, repo="waiter")
    failed: list[BaseException] = []

    def build() -> None:
        try:
            store.ensure_hnsw_index("model", 8)
        except BaseException as exc:  # reported by the test below
            failed.append(exc)

    try:
        with psycopg.connect(pg_url, autocommit=True) as holder:
            holder.execute("SET statement_timeout = '30s'")
            holder.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_CLASS, INDEX_LOCK))
            waiter = threading.Thread(target=build)
            waiter.start()
            time.sleep(1.0)  # the waiter asks for the lock meanwhile
            holder.execute("CREATE INDEX CONCURRENTLY probe ON codecite.chunks (path)")
            holder.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_CLASS, INDEX_LOCK))
        waiter.join(60)
        assert not waiter.is_alive() and not failed, failed
        with psycopg.connect(pg_url) as conn:
            names = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes").fetchall()}
        assert "probe" in names and hnsw_index_name("model", 8) in names
    finally:
        store.close()


# --- indexing and queries through the CLI ---------------------------------------------------
#: Chunks of the repository the kill -9 test indexes (12 files of 8 functions).
BIG_CHUNKS = 96


def _big_repo(root: Path) -> Path:
    files = {
        f"pkg/mod_{i}.py": "\n\n".join(
            f'def handler_{i}_{j}(order, amount):\n    """Handle step {j} of flow {i}."""\n'
            f"    return amount * {j} + len(order)"
            for j in range(8)
        )
        for i in range(12)
    }
    return make_git_repo(root, files)


def _vectors(url: str, repo: str) -> int:
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            row = conn.execute(
                "SELECT count(*) FROM codecite.vectors WHERE repo = %s AND tier = 'model'",
                (repo,),
            ).fetchone()
            return int(row[0]) if row else 0
    except psycopg.Error:
        return 0


def test_kill_9_mid_index_then_queries_and_the_next_run_completes(
    pg_url: str, tmp_path: Path
) -> None:
    """kill -9 of a real `codecite index --store` while it embeds: what it committed
    stays searchable (from another folder), and the next run — searched while it runs —
    embeds only what is left."""
    big = _big_repo(tmp_path / "big")
    env = {
        "CODECITE_EMBED_COMMIT_EVERY": "16",
        "CODECITE_EMBED_BATCH_SIZE": "16",
        "CODECITE_CACHE_DIR": str(tmp_path / "fresh-cache"),
    }
    store = ["--store", pg_url, "--repo-name", "big"]
    command = [sys.executable, "-m", "codecite", "index", str(big), "--wait", "--json", *store]
    first = subprocess.Popen(
        command, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.time() + 300
        while time.time() < deadline and first.poll() is None and _vectors(pg_url, "big") == 0:
            time.sleep(0.02)
        assert first.poll() is None, "indexing finished before the first vectors were seen"
        assert _vectors(pg_url, "big") > 0, "no vector committed in 5 minutes"
        os.kill(first.pid, signal.SIGKILL)
    finally:
        first.kill()
        first.wait()
    partial = _vectors(pg_url, "big")
    assert 0 < partial < BIG_CHUNKS
    after_kill = run_cli("search", "handle step of flow", "--json", *store, cwd=tmp_path, env=env)
    assert after_kill.returncode == 0, after_kill.stderr
    assert json.loads(after_kill.stdout)["results"]

    out, err = tmp_path / "out.json", tmp_path / "err.txt"
    searched_during = 0
    with codecite.open_index(big, create=False, overrides={"store": pg_url}) as idx:
        idx.config.freshness.refresh = False
        assert idx.search("handle step 3 of flow 7", k=5).hits  # model and vectors loaded
        with out.open("wb") as stdout, err.open("wb") as stderr:
            second = subprocess.Popen(
                command, env={**os.environ, **env}, stdout=stdout, stderr=stderr
            )
        try:  # a few searches while it runs (each one takes CPU from it)
            while second.poll() is None and searched_during < 3:
                assert idx.search("handle step 3 of flow 7", k=5).hits
                searched_during += second.poll() is None
                time.sleep(0.2)
            second.wait(600)
        finally:
            second.kill()
            second.wait()
    assert second.returncode == 0, err.read_text()
    assert searched_during > 0
    report = json.loads(out.read_text())
    assert report["embedded"] == BIG_CHUNKS - partial and report["embed_pending"] == 0
    assert report["chunks_written"] == 0  # the keyword index and graph were committed
    status = run_cli("status", "--json", *store, cwd=tmp_path, env=env)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["vectors"] == BIG_CHUNKS == _vectors(pg_url, "big")


def test_migrate_round_trip_keeps_results_and_vectors(
    shop_repo: Path, pg_url: str, tmp_path: Path
) -> None:
    with codecite.open_index(shop_repo) as idx:
        idx.update()
        queries = [q.query for q in load_golden(FIXTURES / "shop_golden.jsonl")][:12]
        before = [[h.chunk.id for h in idx.search(q, k=10).hits] for q in queries]
        vectors = idx.store.vector_rows()
    proc = run_cli(
        "migrate", "--from", str(shop_repo / ".codecite"), "--to", pg_url, "--json", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout)["counts"]
    assert counts["model_vectors"] == counts["chunks"] > 100
    overrides: dict[str, object] = {"store": pg_url}
    with codecite.open_index(shop_repo, create=False, overrides=overrides) as idx:
        assert isinstance(idx.store, PostgresStore) and idx.store.repo == "shop"
        after = [[h.chunk.id for h in idx.search(q, k=10).hits] for q in queries]
        moved = idx.store.vector_rows()
    assert after == before
    assert vectors is not None and moved is not None
    assert moved.ids == vectors.ids and np.array_equal(moved.matrix, vectors.matrix)
    with codecite.open_index(shop_repo, overrides=overrides) as idx:
        report = idx.update()
    assert report.embedded == 0 and report.chunks_written == 0  # nothing recomputed


def test_index_and_search_from_any_folder(shop_repo: Path, pg_url: str, tmp_path: Path) -> None:
    store = ["--store", pg_url, "--repo-name", "shopx"]
    indexed = run_cli("index", str(shop_repo), "--no-embed", "--json", *store)
    assert indexed.returncode == 0, indexed.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = run_cli("search", "loyalty discount", "--json", *store, cwd=elsewhere)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"]
    chunks = run_cli("chunks", "--json", "--no-content", *store, cwd=elsewhere)
    assert chunks.returncode == 0 and json.loads(chunks.stdout)["chunks"]
    missing = run_cli("search", "x", "--store", pg_url, "--repo-name", "nope", cwd=elsewhere)
    assert missing.returncode == 1 and "no repository named 'nope'" in missing.stderr
    assert not (shop_repo / ".codecite" / "index.db").exists()  # nothing went to SQLite


def test_codecite_imports_without_psycopg_and_says_what_to_install(tmp_path: Path) -> None:
    """psycopg is optional: without it codecite works, and a postgresql:// store says
    how to install the driver."""
    code = (
        "import sys; sys.modules['psycopg'] = None; sys.modules['psycopg_pool'] = None\n"
        "import codecite, codecite.cli\n"
        "from codecite.store import open_store\n"
        "open_store(sys.argv[1]).close()\n"
        "try:\n"
        "    open_store('postgresql://db/x', repo='r')\n"
        "except codecite.UserError as exc:\n"
        "    print(exc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "idx")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "pip install 'codecite[postgres]'" in proc.stdout


def test_a_waiting_writer_is_told_who_holds_the_lock(pg_url: str) -> None:
    holder = PostgresStore(pg_url, repo="busy")
    waiter = PostgresStore(pg_url, repo="busy")
    told: list[str] = []
    order: list[str] = []

    def wait_for_it() -> None:
        with waiter.writer_lock(on_wait=told.append):
            order.append("waiter")

    try:
        with holder.writer_lock():
            thread = threading.Thread(target=wait_for_it)
            thread.start()
            deadline = time.time() + 30
            while not told and time.time() < deadline:
                time.sleep(0.01)
            order.append("holder")
        thread.join(30)
    finally:
        holder.close()
        waiter.close()
    assert order == ["holder", "waiter"]
    assert told and told[0].startswith(f"{os.getpid()}@")


# --- term statistics and the terms set aside (postgres_search) ---------------------------
def _terms_table(url: str, repo: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return dict(
            conn.execute("SELECT term, df FROM codecite.terms WHERE repo = %s", (repo,)).fetchall()
        )


def _recounted(url: str, repo: str) -> dict[str, int]:
    """Each token's document frequency counted from the chunks' keyword vectors."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT u.lexeme, count(*) FROM codecite.chunks c, unnest(c.kw) u "
            "WHERE c.repo = %s GROUP BY u.lexeme",
            (repo,),
        ).fetchall()
    return {term: int(n) for term, n in rows}


@pytest.fixture(scope="module")
def own_code(
    tmp_path_factory: pytest.TempPathFactory, pg_module_url: str
) -> Iterator[tuple[SQLiteStore, PostgresStore]]:
    """codecite's own source (real code, ~2,000 chunks; keyword index only) in SQLite,
    copied into PostgreSQL as repository "own"."""
    root = tmp_path_factory.mktemp("own") / "codecite"
    shutil.copytree(Path(codecite.__file__).parent, root, ignore=shutil.ignore_patterns("*.pyc"))
    idx = codecite.open_index(root, overrides={"static_tier": False})
    idx.update(embed=False)
    sqlite = idx.store
    assert isinstance(sqlite, SQLiteStore)
    pg = PostgresStore(pg_module_url, repo="own", index_dir=root / ".codecite")
    copy_index(sqlite, pg)
    yield sqlite, pg
    pg.close()
    idx.close()


def test_terms_table_follows_every_write(pg_url: str) -> None:
    """Document frequencies are kept by add_chunks, delete_file and clear, and migration 2
    builds them for a database written before it."""
    store = PostgresStore(pg_url, repo="t")
    other = PostgresStore(pg_url, repo="u")
    try:
        _fill(store, "t", "apple")
        _fill(other, "u", "apple banana")
        with store.transaction():
            store.put_file("app/c.py", "python", "h3", 3, 1, "", 1, 0)
            store.add_chunks([_chunk("t", "app/c.py", "gamma", "apple cherry cherry")], [0.0])
        for repo in ("t", "u"):
            assert _terms_table(pg_url, repo) == _recounted(pg_url, repo) != {}
        assert _terms_table(pg_url, "t")["apple"] == 3
        with store.transaction():
            store.delete_file("app/c.py")
        assert _terms_table(pg_url, "t") == _recounted(pg_url, "t")
        assert "cherry" not in _terms_table(pg_url, "t")  # no chunk holds it any more
        assert store.document_frequency("apple") == 2 and store.document_frequency("cherry") == 0
        store.clear()
        assert _terms_table(pg_url, "t") == {} and store.document_frequency("apple") == 0
        assert _terms_table(pg_url, "u") == _recounted(pg_url, "u")  # another repository's
        # a database of format 1 (no terms table) gets it, counted, on its next writable open
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP TABLE codecite.terms")
            conn.execute("DELETE FROM codecite.schema_migrations WHERE version >= 2")
    finally:
        store.close()
        other.close()
    PostgresStore(pg_url, repo="u").close()
    assert _terms_table(pg_url, "u") == _recounted(pg_url, "u") != {}


def test_terms_set_aside_leave_the_ranking_as_fts5(
    own_code: tuple[SQLiteStore, PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On real code, queries that mix common and rare terms set the common ones aside
    (and retry with fewer when the bound fails), yet return what FTS5 returns."""
    from codecite.store.postgres import search as postgres_search

    sqlite, pg = own_code
    assert pg.document_count() == sqlite.document_count() > 1000
    calls: list[tuple[int, float | list[str]]] = []
    real = PostgresStore._with_terms_aside

    def spy(self: PostgresStore, queries: list[str], aside: dict[int, float], *a: object) -> object:
        found = real(self, queries, aside, *a)  # type: ignore[arg-type]
        calls.append((len(aside), found))
        return found

    monkeypatch.setattr(PostgresStore, "_with_terms_aside", spy)
    questions = [
        "return self path",  # all common: nothing set aside
        "import the chunk from the store and return its path",
        "self return none scrub secrets from text",
        "parse tree sitter node children for python functions",
        "def self return if not none in for the keyword index weights",
        "the reciprocal rank fusion of keyword and vector lists",
        "config self return load toml file error",
        "str int none self return list dict bool true false tuple",
        "self return none if minified",  # the rare term matches under 50: retried
    ]
    compared = identical = 0
    for question in questions:
        terms = query_terms(question)
        for filters, limit in ((None, 10), (None, 50), (Filters(kinds=("function",)), 10)):
            want = sqlite.keyword_search(terms, filters, limit, WEIGHTS)
            got = pg.keyword_search(terms, filters, limit, WEIGHTS)
            assert set(got) == set(want), (question, filters, limit)
            compared, identical = compared + 1, identical + (got == want)
    # the same scores: orders differ only where floating-point sums tie
    assert identical / compared >= 0.9, (identical, compared)
    answered = [found for _, found in calls if isinstance(found, list)]
    retried = [found for _, found in calls if not isinstance(found, list)]
    assert answered and retried, calls  # both paths ran
    assert postgres_search.within({0: 1.0, 1: 2.0}, 2.2 * 1.0) == {0: 1.0}


def test_searcher_searches_vectors_in_the_database(
    both: tuple[SQLiteStore, PostgresStore, Config], monkeypatch: pytest.MonkeyPatch
) -> None:
    """vector_search = "auto" on PostgreSQL asks pgvector's HNSW index and loads no
    vectors (nothing for a server to reload after a re-index); the results are those of
    the in-memory exact search ("memory") on every golden question."""
    from codecite.retrieve.search import Searcher

    sqlite, pg, config = both
    loaded: list[str] = []
    real = PostgresStore.vector_rows

    def spy(self: PostgresStore, tier: Tier = "model") -> VectorRows | None:
        loaded.append(tier)
        return real(self, tier)

    monkeypatch.setattr(PostgresStore, "vector_rows", spy)
    in_db, in_memory = Searcher(pg, config), Searcher(pg, config.replace(vector_search="memory"))
    assert in_db.in_database and not in_memory.in_database
    golden = [q.query for q in load_golden(FIXTURES / "shop_golden.jsonl")]
    for query in golden:
        for filters in (None, Filters(languages=("python",))):
            got = [h.chunk.id for h in in_db.search(query, k=10, filters=filters).hits]
            assert loaded == [], query
            want = [h.chunk.id for h in in_memory.search(query, k=10, filters=filters).hits]
            assert got == want, (query, filters)
            loaded.clear()
    assert len(in_db.vectors or []) == pg.vector_count() > 0
    assert not Searcher(sqlite, config).in_database  # SQLite: vectors in memory
    with pytest.raises(ConfigError, match="PostgreSQL"):
        Searcher(sqlite, config.replace(vector_search="database")).search("discount")


def test_vector_search_setting_is_checked(tmp_path: Path) -> None:
    from codecite.config import load_config

    config = load_config(tmp_path, environ={"CODECITE_VECTOR_SEARCH": "memory"})
    assert config.search.vector_search == "memory"
    (tmp_path / "codecite.toml").write_text('vector_search = "hnsw"\n')
    with pytest.raises(ConfigError, match=r"'vector_search' \(one of: auto, memory, database"):
        load_config(tmp_path, environ={})


def test_index_a_repository_with_nul_escapes_into_postgres(pg_url: str, tmp_path: Path) -> None:
    """Found by the 500k store benchmark: a docstring whose value holds a NUL (written
    ``'\\x00'``) stopped a whole index run into PostgreSQL, whose text refuses NUL."""
    repo = make_git_repo(
        tmp_path / "sock",
        {
            "sock.py": 'def listen(path):\n    """A path may begin with C{\'\\x00\'}."""\n'
            "    return path\n"
        },
    )
    proc = run_cli("index", str(repo), "--no-embed", "--store", pg_url, "--repo-name", "sock")
    assert proc.returncode == 0, proc.stderr
    store = PostgresStore(pg_url, repo="sock", readonly=True)
    try:
        (chunk,) = [c for c in store.chunks() if c.name == "listen"]
        assert chunk.docstring == "A path may begin with C{'\\x00'}."
    finally:
        store.close()
    raw = PostgresStore(pg_url, repo="raw")
    try:  # a chunk made by other means
        nul = _chunk("raw", "a.py", "nul", "x = '\0'\n")
        with raw.transaction():
            raw.add_chunks([nul], [0.0])
        assert raw.get_chunks([nul.id])[nul.id].content == "x = '\ufffd'\n"
    finally:
        raw.close()
