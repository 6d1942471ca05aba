"""The static vector tier (issue 15): the token model distilled from the bundled
MiniLM, its cache, its embedder, and the index stage, on real small inputs.

The full model is built once per machine (tests/conftest.py keeps it); the cache
tests build a slice of the vocabulary, which takes a second or two."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from repos import git, make_git_repo, run_cli

import codecite
from codecite.embed import Embedder
from codecite.embed.static import (
    STATIC_DIM,
    STATIC_DIR_ENV,
    STATIC_MODEL_NAME,
    STATIC_VERSION,
    StaticEmbedder,
    load_or_build,
    model_name,
    static_embedder,
    static_model_dir,
    static_query_vector,
)

SLICE = 300  # vocabulary ids in the small builds (PCA needs more than STATIC_DIM)

FILES = {
    "billing/pricing.py": '''"""Pricing rules."""


def apply_discount(total: float, tier: str) -> float:
    """Loyal customers save a share of the total by tier."""
    return total * 0.9 if tier == "gold" else total
''',
    "net/http.py": '''def parse_headers(raw: bytes) -> dict[str, str]:
    """Split raw HTTP header lines into a dict."""
    lines = raw.decode().split("\\r\\n")
    return dict(line.split(": ", 1) for line in lines if ": " in line)
''',
}


def _files(folder: Path, name: str) -> tuple[Path, Path]:
    return folder / f"{name}.npy", folder / f"{name}.json"


def test_slice_is_built_cached_and_reused(tmp_path: Path) -> None:
    matrix = load_or_build(tmp_path, vocab=SLICE)
    assert matrix.shape == (SLICE, STATIC_DIM) and matrix.dtype == np.float32
    npy, meta = _files(tmp_path, model_name(SLICE))
    info = json.loads(meta.read_text())
    assert info["version"] == STATIC_VERSION and info["dim"] == STATIC_DIM
    assert f"v{STATIC_VERSION}" in model_name(SLICE)
    stamp = npy.stat().st_mtime_ns
    again = load_or_build(tmp_path, vocab=SLICE)
    assert npy.stat().st_mtime_ns == stamp  # read, not rebuilt
    np.testing.assert_array_equal(again, matrix)


def test_other_version_and_damage_are_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = load_or_build(tmp_path, vocab=SLICE)
    npy, meta = _files(tmp_path, model_name(SLICE))
    info = json.loads(meta.read_text())
    meta.write_text(json.dumps(info | {"version": STATIC_VERSION - 1}))
    with caplog.at_level(logging.WARNING):
        rebuilt = load_or_build(tmp_path, vocab=SLICE)
    assert "does not match" in caplog.text
    assert json.loads(meta.read_text())["version"] == STATIC_VERSION
    np.testing.assert_allclose(rebuilt, first, atol=1e-4)  # the build is deterministic
    npy.write_bytes(npy.read_bytes()[:1000])  # a damaged file
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        again = load_or_build(tmp_path, vocab=SLICE)
    assert "damaged" in caplog.text
    np.testing.assert_allclose(again, first, atol=1e-4)


def test_embed_gives_unit_deterministic_meaningful_vectors() -> None:
    embedder = static_embedder(codecite.Config())
    assert isinstance(embedder, Embedder) and isinstance(embedder, StaticEmbedder)
    assert embedder.name == STATIC_MODEL_NAME and embedder.dim == STATIC_DIM
    texts = [
        "parse the HTTP headers of a response",
        "read the response header lines into a dict",
        "compute the loyalty discount of an order",
        "",
    ]
    vectors = embedder.embed(texts, "document")
    assert vectors.shape == (4, STATIC_DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert not vectors[3].any()  # nothing to average: a zero row
    np.testing.assert_array_equal(vectors, embedder.embed(texts, "document"))
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.1
    query = static_query_vector(texts[0], codecite.Config())
    np.testing.assert_allclose(query, vectors[0], atol=1e-6)
    assert static_embedder(codecite.Config()) is embedder  # loaded once per process


def test_index_fills_the_static_tier_and_status_shows_both(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", FILES)
    with codecite.open_index(repo, overrides={"query_log": False}) as index:
        report = index.update()
        chunks = index.store.counts()["chunks"]
        assert report.static_model == STATIC_MODEL_NAME
        assert report.static_computed == chunks > 0
        assert index.store.vector_count("static") == chunks
        assert index.store.get_meta("static_dim") == str(STATIC_DIM)
        rows = index.store.vector_rows("static")
        assert rows is not None and rows.matrix.shape == (chunks, STATIC_DIM)
        status = index.status()
        assert status.static_vectors == status.vectors == chunks
        assert "static" in report.seconds
        git(repo, "mv", "net/http.py", "net/headers.py")  # same chunks, moved: reused
        moved = index.update()
        assert moved.static_computed == 0 and moved.static_reused > 0
        assert moved.embedded == 0 and index.store.vector_count("static") == chunks
    done = run_cli("status", str(repo), "--json")
    assert done.returncode == 0, done.stderr
    tiers = json.loads(done.stdout)["tiers"]
    assert tiers["static"] == {
        "model": STATIC_MODEL_NAME,
        "vectors": chunks,
        "chunks": chunks,
        "fraction": 1.0,
    }
    assert tiers["model"]["vectors"] == chunks
    text = run_cli("status", str(repo)).stdout
    assert f"static {chunks}/{chunks} (100%), model {chunks}/{chunks} (100%)" in text


def test_no_embed_and_the_setting_build_no_static_vectors(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", FILES)
    with codecite.open_index(repo, overrides={"query_log": False}) as index:
        report = index.update(embed=False)
        assert index.store.vector_count("static") == 0 and report.static_computed == 0
    with codecite.open_index(repo, overrides={"query_log": False}) as index:
        index.update()
        assert index.store.vector_count("static") > 0
    # Turned off (a file, the environment or a flag): the tier is removed, not left stale.
    off = {"query_log": False, "static_tier": False}
    with codecite.open_index(repo, overrides=off) as index:
        report = index.update()
        assert index.store.vector_count("static") == 0 and report.static_computed == 0
        assert index.store.vector_count("model") > 0
        assert index.status().static_model == ""


def test_an_inline_refresh_gives_edited_code_static_vectors(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", FILES)
    with codecite.open_index(repo, overrides={"query_log": False}) as index:
        index.update()
        before = index.store.vector_count("static")
        (repo / "net" / "http.py").write_text(
            FILES["net/http.py"] + "\n\ndef saffron_surcharge(amount: float) -> float:\n"
            "    return amount * 1.07\n"
        )
        assert index.refresh().refreshed == ["net/http.py"]
        chunks = index.store.counts()["chunks"]
        assert index.store.vector_count("static") == chunks > before
        assert index.store.count_missing_vectors("model") > 0  # the model's come later


def test_another_static_model_is_cleared_and_rebuilt(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", FILES)
    with codecite.open_index(repo, overrides={"query_log": False}) as index:
        index.update()
        chunks = index.store.counts()["chunks"]
        with index.store.transaction():
            index.store.set_meta({"static_model": "static-minilm-v0-256"})
        report = index.update()  # the model tier is unchanged: no refusal
        assert report.static_computed == chunks  # every vector again, none kept
        assert index.store.get_meta("static_model") == STATIC_MODEL_NAME
        assert index.store.vector_count("static") == chunks


def test_model_folder_follows_the_cache_or_its_own_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = codecite.Config(cache_dir=str(tmp_path / "cache"))
    monkeypatch.delenv(STATIC_DIR_ENV)
    assert static_model_dir(config) == tmp_path / "cache" / "static"
    monkeypatch.setenv(STATIC_DIR_ENV, str(tmp_path / "shared"))
    assert static_model_dir(config) == tmp_path / "shared"
