"""The store protocols: ``SQLiteStore`` conforms to every one of them (checked by mypy and
at run time), and the in-memory test store (``tests/memstore.py``) to the read protocols;
the two backends give the same answers on an indexed fixture, so running the search tests
over both (``test_search.py``) proves retrieval reads storage through the protocols only."""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import numpy as np
import pytest
from memstore import MemoryStore

import codecite
from codecite.config import Config
from codecite.evaluate import load_golden
from codecite.filters import Filters
from codecite.identifiers import keyword_row
from codecite.retrieve.keyword import query_terms
from codecite.store.postgres import PostgresStore
from codecite.store.protocols import (
    ChunkReader,
    GraphReader,
    IndexWriter,
    KeywordIndex,
    KeywordWeights,
    ReadStore,
    VectorSource,
)
from codecite.store.sqlite import SQLiteStore
from codecite.types import Chunk, Edge, sha256_text

FIXTURES = Path(__file__).parent / "fixtures"
READ_PROTOCOLS = (ChunkReader, GraphReader, KeywordIndex, VectorSource, ReadStore)
#: Keyword queries naming one identifier: both backends must rank the same chunk first.
IDENTIFIER_QUERIES = (
    "calculatePriceWithTax",
    "apply_loyalty_discount",
    "Deal.status",
    "checkout",
    "authorize",
    "calculate_tax",
    "cancel_order",
)
#: Agreement of the two BM25s on the golden questions, measured on the shop fixture:
#: identical rankings (overlap 1.00 at 10 and at 50, with and without filters). Pinned a
#: little lower so that a different order among equal scores does not fail the test.
MIN_MEAN_OVERLAP_AT_10 = 0.95
MIN_OVERLAP_AT_10 = 0.8
MIN_TOP1_AGREEMENT = 0.95
FILTERS = (
    None,
    Filters(languages=("typescript",)),
    Filters(path="tests/**"),
    Filters(kinds=("method",)),
    Filters(path="*.go"),
    Filters(repo="shop"),
    Filters(languages=("python",), kinds=("function",), path="shop"),
)


# --- static conformance: mypy fails here when a signature drifts ----------------------------
def _sqlite_conforms(
    store: SQLiteStore,
) -> tuple[ChunkReader, GraphReader, KeywordIndex, VectorSource, ReadStore, IndexWriter]:
    return (store, store, store, store, store, store)


def _postgres_conforms(
    store: PostgresStore,
) -> tuple[ChunkReader, GraphReader, KeywordIndex, VectorSource, ReadStore, IndexWriter]:
    return (store, store, store, store, store, store)


def _memory_conforms(
    store: MemoryStore,
) -> tuple[ChunkReader, GraphReader, KeywordIndex, VectorSource, ReadStore]:
    return (store, store, store, store, store)


# --- fixtures -------------------------------------------------------------------------------
@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def stores(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[SQLiteStore, MemoryStore, Config]]:
    """The shop fixture indexed for real (into SQLite, or into PostgreSQL from
    tests/pg.py: the same tests then hold for that backend), and an in-memory copy."""
    root = tmp_path_factory.mktemp("protocols") / "shop"
    shutil.copytree(FIXTURES / "shop", root)
    overrides: dict[str, object] = {}
    if request.param == "postgres":
        overrides["store"] = request.getfixturevalue("pg_module_url")
    idx = codecite.open_index(root, overrides=overrides)
    idx.update()
    # typed as SQLiteStore for the comparisons; a PostgresStore has the same methods
    store = cast(SQLiteStore, idx.store)
    yield store, MemoryStore.copy_of(store), idx.config
    idx.close()


def _weights(config: Config) -> KeywordWeights:
    s = config.search
    return (s.bm25_symbol_weight, s.bm25_path_weight, s.bm25_body_weight)


def _chunk(
    path: str,
    name: str,
    content: str,
    *,
    kind: str = "function",
    language: str = "python",
    docstring: str = "",
    part: int = 0,
) -> Chunk:
    digest = sha256_text(content)
    return Chunk(
        f"{path}:{name}:{part}",
        "demo",
        path,
        language,
        kind,
        name,
        name,
        1,
        content.count("\n") + 1,
        content,
        "",
        digest,
        f"def {name}():",
        docstring,
        "",
        part,
    )


TINY = [
    _chunk(
        "app/pricing.py",
        "apply_discount",
        "def apply_discount(total):\n    return total * 0.9  # loyalty discount\n",
        docstring="Apply the discount.",
    ),
    _chunk(
        "app/orders.py",
        "cancel_order",
        "def cancel_order(order):\n    refund(order)\n    order.status = 'cancelled'\n",
    ),
    _chunk("app/orders.py", "refund", "def refund(order):\n    pay_back(order.total)\n"),
    _chunk(
        "web/cart.ts",
        "cartTotal",
        "function cartTotal(items) {\n"
        "  return items.reduce((a, b) => a + b.price, 0) // discount later\n}\n",
        language="typescript",
    ),
    _chunk("app/orders.py", "orders", "import pricing\n", kind="module"),
    _chunk(
        "docs/discounts.md",
        "Discounts",
        "# Discounts\nA loyalty discount of ten "
        "percent; discount codes stack with the loyalty discount.\n",
        kind="section",
        language="markdown",
    ),
]
TINY_EDGES = [
    Edge(TINY[1].id, TINY[2].id, "calls", 2),
    Edge(TINY[0].id, TINY[3].id, "calls", 1),
    Edge(TINY[4].id, TINY[0].id, "imports", 1),
]


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[SQLiteStore, MemoryStore]:
    """A hand-made index in both backends (SQLite filled through ``IndexWriter``)."""
    store = SQLiteStore(tmp_path / "index")
    with store.transaction():
        store.add_chunks(TINY, [0.0] * len(TINY))
        store.replace_edges([e.src for e in TINY_EDGES], TINY_EDGES, ["calls", "imports"])
        store.set_meta({"repo": "demo"})
    return store, MemoryStore(TINY, TINY_EDGES, {"repo": "demo"})


# --- conformance ----------------------------------------------------------------------------
def test_sqlite_store_conforms_to_every_protocol(
    stores: tuple[SQLiteStore, MemoryStore, Config],
) -> None:
    sqlite_store, _, _ = stores
    assert all(s is sqlite_store for s in _sqlite_conforms(sqlite_store))
    if isinstance(sqlite_store, PostgresStore):
        assert all(s is sqlite_store for s in _postgres_conforms(sqlite_store))
    for protocol in (*READ_PROTOCOLS, IndexWriter):
        assert isinstance(sqlite_store, protocol), protocol.__name__


def test_memory_store_conforms_to_the_read_protocols(
    stores: tuple[SQLiteStore, MemoryStore, Config],
) -> None:
    _, memory, _ = stores
    assert all(s is memory for s in _memory_conforms(memory))
    for protocol in READ_PROTOCOLS:
        assert isinstance(memory, protocol), protocol.__name__
    assert not isinstance(memory, IndexWriter)  # read-only: it cannot index


def test_memory_store_uses_no_sql() -> None:
    """The helper proves something only if it shares no storage code with SQLite."""
    source = (Path(__file__).parent / "memstore.py").read_text()
    tree = ast.parse(source)
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "sqlite3" not in imported
    # codecite.store.sqlite only for the type of copy_of's argument (under TYPE_CHECKING)
    assert not any(m.startswith("codecite.store.sqlite.") for m in imported)
    assert source.count("conn.execute") == 1  # copy_of reads the metadata table, only


# --- the two backends agree -----------------------------------------------------------------
def test_same_chunks(stores: tuple[SQLiteStore, MemoryStore, Config]) -> None:
    sqlite_store, memory, _ = stores
    everything = list(sqlite_store.chunks())
    assert everything and list(memory.chunks()) == everything
    for prefix in ("shop", "shop/", "tests", "web/src", "sho", "nowhere", ""):
        assert list(memory.chunks(prefix)) == list(sqlite_store.chunks(prefix)), prefix
    ids = [c.id for c in everything[::3]] + ["missing", everything[0].id]
    assert list(memory.get_chunks(ids).items()) == list(sqlite_store.get_chunks(ids).items())
    assert memory.get_chunks([]) == sqlite_store.get_chunks([]) == {}


def test_same_metadata_counts_and_vectors(stores: tuple[SQLiteStore, MemoryStore, Config]) -> None:
    sqlite_store, memory, _ = stores
    for key in ("repo", "embedder_spec", "embedding_dim", "format_version", "missing"):
        assert memory.get_meta(key) == sqlite_store.get_meta(key)
    assert memory.get_meta("missing", "x") == sqlite_store.get_meta("missing", "x") == "x"
    assert memory.document_count() == sqlite_store.document_count() > 100
    vocabulary = {
        token
        for chunk in sqlite_store.chunks()
        for text in keyword_row(chunk)
        for token in text.split()
    }
    for term in [*sorted(vocabulary)[::7], "discount", "order", "zzznothing", "DISCOUNT"]:
        assert memory.document_frequency(term) == sqlite_store.document_frequency(term), term
    assert memory.vector_count() == sqlite_store.vector_count() > 0
    got, want = memory.vector_rows(), sqlite_store.vector_rows()
    assert got is not None and want is not None
    assert got.ids == want.ids and np.array_equal(got.matrix, want.matrix)
    assert (got.languages, got.kinds, got.paths, got.repos) == (
        want.languages,
        want.kinds,
        want.paths,
        want.repos,
    )


def test_same_symbol_lookups_in_the_same_order(
    stores: tuple[SQLiteStore, MemoryStore, Config],
) -> None:
    sqlite_store, memory, _ = stores
    names = sorted({n for c in sqlite_store.chunks() for n in (c.name, c.qualname) if n})
    assert len(names) > 50
    for name in [*names, "nothing_named_so"]:
        for column in ("qualname", "name"):
            for filters, limit in (
                (None, 50),
                (Filters(languages=("python",)), 50),
                (Filters(kinds=("method", "function")), 1),
            ):
                assert memory.find_symbols(name, column, filters, limit) == (
                    sqlite_store.find_symbols(name, column, filters, limit)
                ), (name, column)


def test_same_edges(stores: tuple[SQLiteStore, MemoryStore, Config]) -> None:
    """Same edges out of and into every chunk, for every kind. Compared as sorted lists:
    the protocols do not say in which order a backend returns them."""
    sqlite_store, memory, _ = stores
    ids = [c.id for c in sqlite_store.chunks()]
    total = 0
    for chunk_id in ids:
        for kind in (None, "calls", "tests", "imports", "inherits"):
            out = sorted(sqlite_store.edges_from(chunk_id, kind), key=_edge_key)
            into = sorted(sqlite_store.edges_to(chunk_id, kind), key=_edge_key)
            assert sorted(memory.edges_from(chunk_id, kind), key=_edge_key) == out
            assert sorted(memory.edges_to(chunk_id, kind), key=_edge_key) == into
            total += len(out) if kind is None else 0
    assert total > 50
    for pool in (ids, ids[:20], ids[::2], ids[:1], []):
        assert sorted(memory.edges_among(pool)) == sorted(sqlite_store.edges_among(pool))
    assert sqlite_store.edges_among(ids)


def _edge_key(edge: Edge) -> tuple[str, str, str, int]:
    return (edge.src, edge.dst, edge.kind, edge.line)


def test_keyword_search_agrees(stores: tuple[SQLiteStore, MemoryStore, Config]) -> None:
    sqlite_store, memory, config = stores
    weights = _weights(config)
    for query in IDENTIFIER_QUERIES:
        terms = query_terms(query)
        want = sqlite_store.keyword_search(terms, None, 10, weights)
        assert want and memory.keyword_search(terms, None, 10, weights)[:1] == want[:1], query
    golden = [q.query for q in load_golden(FIXTURES / "shop_golden.jsonl")]
    overlaps, top1 = [], []
    for query in golden:
        for filters in FILTERS:
            terms = query_terms(query)
            want = sqlite_store.keyword_search(terms, filters, 10, weights)
            got = memory.keyword_search(terms, filters, 10, weights)
            assert len(got) == len(want), (query, filters)
            if want:
                overlaps.append(len(set(got) & set(want)) / len(want))
                top1.append(got[0] == want[0])
    assert len(overlaps) > 100
    assert min(overlaps) >= MIN_OVERLAP_AT_10
    assert sum(overlaps) / len(overlaps) >= MIN_MEAN_OVERLAP_AT_10
    assert sum(top1) / len(top1) >= MIN_TOP1_AGREEMENT


def test_keyword_search_edge_cases_agree(stores: tuple[SQLiteStore, MemoryStore, Config]) -> None:
    sqlite_store, memory, config = stores
    weights = _weights(config)
    for terms, limit in (
        ([], 10),
        (["zzznothing"], 10),
        (['quo"te', "order"], 5),
        (["order"], 0),
        (["order", "order"], 3),
        (["apply_loyalty_discount"], 5),
        (["ORDER"], 5),
        (["$"], 5),
    ):
        assert memory.keyword_search(terms, None, limit, weights) == (
            sqlite_store.keyword_search(terms, None, limit, weights)
        ), terms


# --- the in-memory BM25 on a hand-made index ------------------------------------------------
def test_tiny_index_agrees_exactly(tiny: tuple[SQLiteStore, MemoryStore]) -> None:
    sqlite_store, memory = tiny
    weights: KeywordWeights = (4.0, 2.0, 1.0)
    for terms in (
        ["discount"],
        ["loyalty", "discount"],
        ["order"],
        ["apply_discount"],
        ["cart", "total"],
        ["refund", "cancel"],
        ["app"],
        ["percent"],
    ):
        for filters in (
            None,
            Filters(languages=("python",)),
            Filters(kinds=("section",)),
            Filters(path="app/**"),
            Filters(repo="other"),
        ):
            assert memory.keyword_search(terms, filters, 10, weights) == (
                sqlite_store.keyword_search(terms, filters, 10, weights)
            ), (terms, filters)
    assert list(memory.chunks()) == list(sqlite_store.chunks())
    assert memory.find_symbols("orders", "name", None, 5) == sqlite_store.find_symbols(
        "orders", "name", None, 5
    )
    assert memory.edges_from(TINY[1].id) == sqlite_store.edges_from(TINY[1].id)
    assert memory.edges_to(TINY[0].id, "imports") == sqlite_store.edges_to(TINY[0].id, "imports")
    assert memory.vector_rows() is None and sqlite_store.vector_rows() is None
    assert memory.vector_count() == sqlite_store.vector_count() == 0


def test_tiny_index_bm25_behaviour(tiny: tuple[SQLiteStore, MemoryStore]) -> None:
    _, memory = tiny
    by_id = {c.id: c for c in TINY}

    def names(
        terms: list[str],
        filters: Filters | None = None,
        limit: int = 10,
        weights: KeywordWeights = (4.0, 2.0, 1.0),
    ) -> list[str]:
        return [by_id[i].name for i in memory.keyword_search(terms, filters, limit, weights)]

    # OR semantics: either term matches
    assert set(names(["refund", "cart"])) == {"cancel_order", "refund", "cartTotal"}
    # the symbol column's weight lifts a definition over a text that repeats the word
    assert names(["discount"])[0] == "apply_discount"
    assert names(["discount"], weights=(0.0, 0.0, 1.0))[0] == "Discounts"
    # a whole identifier is a phrase of its parts
    assert names(["apply_discount"]) == ["apply_discount"]
    # filters apply inside: the best allowed chunk comes back even with limit 1
    assert names(["discount"], Filters(languages=("typescript",)), limit=1) == ["cartTotal"]
    assert names(["discount"], Filters(path="docs/**")) == ["Discounts"]
    assert names(["discount"], Filters(repo="other")) == []
    # symbol look-ups: definitions before module chunks
    assert memory.find_symbols("orders", "name", None, 5) == [TINY[4].id]
    assert memory.document_frequency("discount") == 3
    assert memory.edges_among([TINY[1].id, TINY[2].id, TINY[3].id]) == [(TINY[1].id, TINY[2].id)]


def test_chunks_under_a_path_prefix_are_case_sensitive(tmp_path: Path) -> None:
    """``chunks("SHOP")`` must not return ``shop/`` (SQLite's LIKE ignored ASCII case)."""
    from repos import make_git_repo

    repo = make_git_repo(
        tmp_path / "case",
        {"shop/a.py": "def a():\n    return 1\n", "shopping/b.py": "def b():\n    return 2\n"},
    )
    with codecite.open_index(repo) as index:
        index.update(embed=False)
        assert list(index.chunks("SHOP")) == []
        assert {c.path for c in index.chunks("shop")} == {"shop/a.py"}
        assert {c.path for c in index.chunks("shop/a.py")} == {"shop/a.py"}
