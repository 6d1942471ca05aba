"""The shared SQLite embedding cache and embedding through it."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from codecite.config import Config
from codecite.embed import (
    Embedder,
    EmbeddingCache,
    Kind,
    cache_key,
    default_cache_dir,
    embed_with_cache,
    get_embedder,
)


class CountingEmbedder:
    """Wraps a real embedder and records every text it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def embed(self, texts: Sequence[str], kind: Kind) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed(texts, kind)


class HashEmbedder:
    """A tiny deterministic embedder with a chosen dimension."""

    max_tokens = 100

    def __init__(self, dim: int, name: str = "hash") -> None:
        self.dim = dim
        self.name = name

    def embed(self, texts: Sequence[str], kind: Kind) -> np.ndarray:
        rows = [np.random.default_rng(list(cache_key(t).encode())).random(self.dim) for t in texts]
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return get_embedder("minilm", Config())


def unit(dim: int, seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).random(dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def test_round_trip(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "sub" / "cache.sqlite3")
    items = {cache_key("a"): unit(4, 1), cache_key("b"): unit(4, 2)}
    cache.put_many("m1", items)
    got = cache.get_many("m1", [cache_key("a"), cache_key("b"), cache_key("c")])
    assert set(got) == {cache_key("a"), cache_key("b")}
    for key, vector in items.items():
        assert got[key].dtype == np.float32
        np.testing.assert_array_equal(got[key], vector)
    assert cache.get_many("m2", items) == {}
    assert cache.count() == 2 and cache.count("m1") == 2
    assert cache_key("a") == cache_key("a") != cache_key("a ")
    assert len(cache_key("a")) == 64


def test_two_caches_share_one_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    first, second = EmbeddingCache(path), EmbeddingCache(path)
    first.put_many("m", {"k1": unit(3, 1)})
    second.put_many("m", {"k2": unit(3, 2)})
    assert set(first.get_many("m", ["k1", "k2"])) == {"k1", "k2"}
    assert set(second.get_many("m", ["k1", "k2"])) == {"k1", "k2"}
    first.close()
    second.close()


def test_corrupt_file_is_tolerated(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "cache.sqlite3"
    path.write_bytes(b"this is not a database" * 200)
    embedder = CountingEmbedder(HashEmbedder(8))
    with caplog.at_level(logging.WARNING, logger="codecite.embed.cache"):
        cache = EmbeddingCache(path)
        vectors = embed_with_cache(embedder, cache, ["x", "y"], batch_size=4)
    assert not cache.enabled
    assert "disabled" in caplog.text
    assert vectors.shape == (2, 8)
    assert cache.get_many("hash", ["x"]) == {}


def test_unusable_location_is_tolerated(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cache = EmbeddingCache(blocker / "cache.sqlite3")
    assert not cache.enabled
    cache.put_many("m", {"k": unit(3, 0)})
    assert cache.get_many("m", ["k"]) == {}


def test_embed_with_cache_embeds_each_text_once(tmp_path: Path, minilm: Embedder) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite3")
    counting = CountingEmbedder(minilm)
    texts = ["def a(): pass", "class B: ...", "def a(): pass", "import os", "x = 1"]
    progress: list[tuple[int, int]] = []

    def on_progress(done: int, total: int) -> None:
        progress.append((done, total))

    first = embed_with_cache(counting, cache, texts, batch_size=2, on_progress=on_progress)
    assert [len(call) for call in counting.calls] == [2, 2]  # 4 distinct texts
    assert progress == [(2, 4), (4, 4)]
    assert first.shape == (5, 384) and first.dtype == np.float32
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_allclose(first, minilm.embed(texts, "document"), atol=1e-4)

    counting.calls.clear()
    again = embed_with_cache(counting, cache, texts, batch_size=2, on_progress=on_progress)
    assert counting.calls == [] and progress == [(2, 4), (4, 4)]
    np.testing.assert_array_equal(first, again)

    other = EmbeddingCache(tmp_path / "cache.sqlite3")  # another process, same file
    mixed = embed_with_cache(counting, other, ["import os", "new text"], batch_size=8)
    assert counting.calls == [["new text"]]
    np.testing.assert_array_equal(mixed[0], first[3])


def test_embed_with_cache_without_cache() -> None:
    counting = CountingEmbedder(HashEmbedder(6))
    vectors = embed_with_cache(counting, None, ["p", "q", "p"], batch_size=10)
    assert vectors.shape == (3, 6) and counting.calls == [["p", "q"]]
    assert embed_with_cache(counting, None, [], batch_size=10).shape == (0, 6)


def test_vectors_of_another_dimension_are_re_embedded(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite3")
    cache.put_many("hash", {cache_key("old"): unit(4, 0)})
    counting = CountingEmbedder(HashEmbedder(8))
    vectors = embed_with_cache(counting, cache, ["old", "new"], batch_size=8)
    assert vectors.shape == (2, 8)
    assert sorted(map(sorted, counting.calls)) == [["new"], ["old"]]
    assert cache.get_many("hash", [cache_key("old")])[cache_key("old")].shape == (8,)


def test_default_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_cache_dir(Config(cache_dir=str(tmp_path))) == tmp_path
    monkeypatch.setenv("CODECITE_CACHE_DIR", str(tmp_path / "env"))
    assert default_cache_dir(Config()) == tmp_path / "env"
    monkeypatch.delenv("CODECITE_CACHE_DIR")
    assert "codecite" in str(default_cache_dir(Config()))
    cache = EmbeddingCache.for_config(Config(cache_dir=str(tmp_path)))
    assert cache.path.parent == tmp_path and cache.enabled


WRITER = """
import sys, numpy as np
from codecite.embed import EmbeddingCache
cache = EmbeddingCache(sys.argv[1])
for i in range(40):
    cache.put_many("m", {f"{sys.argv[2]}-{i}-{j}": np.ones(8, np.float32) for j in range(25)})
    cache.get_many("m", [f"{sys.argv[2]}-{i}-0"])
assert cache.enabled
"""


def test_two_processes_write_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "cache.db")
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, path, name], stderr=subprocess.PIPE)
        for name in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        assert b"busy" not in err and b"disabled" not in err
    assert EmbeddingCache(path).count("m") == 2 * 40 * 25


REPORT_REPO = {
    "shop/pricing.py": '''"""Pricing rules."""


def apply_discount(total: float, tier: str) -> float:
    """Loyal customers save a share of the total by tier."""
    return total * (1 - {"gold": 0.10}.get(tier, 0.0))


def add_tax(total: float, rate: float = 0.2) -> float:
    """The total with value-added tax."""
    return total * (1 + rate)
''',
    "shop/orders.py": '''"""Orders."""


def cancel(order_id: str) -> bool:
    """Cancel an order unless its payment was captured."""
    return order_id != ""
''',
}


def test_index_report_counts_cache_and_model(tmp_path: Path) -> None:
    """A re-index whose texts are all in the machine-wide cache computes nothing."""
    import shutil

    from repos import make_git_repo, run_cli

    import codecite

    env = {"CODECITE_CACHE_DIR": str(tmp_path / "cache")}
    repo = make_git_repo(tmp_path / "repo", REPORT_REPO)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CODECITE_CACHE_DIR", env["CODECITE_CACHE_DIR"])
        with codecite.open_index(repo) as idx:
            first = idx.update()
        assert first.embedded == first.chunks_written > 0
        assert (first.embed_computed, first.embed_from_cache) == (first.embedded, 0)

        with codecite.open_index(repo) as idx:
            full = idx.update(full=True)
        assert full.embedded == first.embedded
        assert (full.embed_computed, full.embed_from_cache) == (0, full.embedded)

        clone = tmp_path / "clone"
        shutil.copytree(repo, clone, ignore=shutil.ignore_patterns(".codecite"))
        with codecite.open_index(clone) as idx:
            second = idx.update()
        assert (second.embed_computed, second.embed_from_cache) == (0, first.embedded)

        pricing = repo / "shop/pricing.py"
        pricing.write_text(pricing.read_text().replace("0.10", "0.15"))
        with codecite.open_index(repo) as idx:
            edited = idx.update()
        assert edited.embed_computed == 1  # apply_discount; add_tax is reused or cached
        assert edited.embed_computed + edited.embed_from_cache == edited.embedded

    done = run_cli("index", str(repo), "--wait", "--full", env=env)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert f"0 computed by the model, {first.embedded} from the machine-wide cache" in text


def test_index_of_an_older_embedding_text_is_refused(tmp_path: Path) -> None:
    """Vectors of another text version are never mixed in: rebuild with --full."""
    from repos import make_git_repo

    import codecite
    from codecite.errors import ModelMismatchError

    repo = make_git_repo(tmp_path / "repo", REPORT_REPO)
    with codecite.open_index(repo) as idx:
        idx.update()
        meta = idx.store.get_meta("embedding_text_version")
        idx.store.set_meta({"embedding_text_version": "1"})  # as built by an older codecite
    assert meta == str(codecite.embed.EMBED_TEXT_VERSION)
    with (
        pytest.raises(ModelMismatchError, match=r"embedding text v1.*index --full"),
        codecite.open_index(repo) as idx,
    ):
        idx.update()
    with codecite.open_index(repo) as idx:
        report = idx.update(full=True)
        assert report.embedded == report.chunks_written
        assert idx.store.get_meta("embedding_text_version") == meta


def test_an_open_refused_while_another_process_sets_the_file_up_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two processes making a new cache file at once: switching it to WAL mode can be
    # refused at once ("database is locked") instead of waiting for the other.
    from codecite.store.sqlite import embedding_cache

    real_open = embedding_cache.FileEmbeddingCache._open
    refusals = iter([True, True])

    def contended(self: embedding_cache.FileEmbeddingCache) -> sqlite3.Connection:
        if next(refusals, False):
            raise sqlite3.OperationalError("database is locked")
        return real_open(self)

    monkeypatch.setattr(embedding_cache.FileEmbeddingCache, "_open", contended)
    cache = embedding_cache.FileEmbeddingCache(tmp_path / "cache.db")
    assert cache.enabled
    cache.close()
