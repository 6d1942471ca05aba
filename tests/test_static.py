"""The static vector tier: codecite's own code model (issue 24), shipped in the
package; its manifest, its embedder, and the index stage, on real small inputs."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from repos import git, make_git_repo, run_cli

import codecite
from codecite.embed import Embedder
from codecite.embed.static import (
    MANIFEST_FILE,
    STATIC_DIM,
    STATIC_MODEL_NAME,
    STATIC_MODELS,
    STATIC_VERSION,
    TABLE_FILE,
    StaticEmbedder,
    load_tokenizer,
    register_static_model,
    shipped_manifest,
    shipped_table,
    static_embedder,
    static_query_vector,
)
from codecite.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
#: The name the index recorded for issue 15's distilled model.
OLD_STATIC_MODEL = "static-minilm-v1-256"

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


def test_the_shipped_table_loads_and_matches_its_manifest() -> None:
    matrix = shipped_table()
    vocab = load_tokenizer().get_vocab_size()
    assert matrix.shape == (vocab, STATIC_DIM) and matrix.dtype == np.float32
    assert np.isfinite(matrix).all() and np.abs(matrix).sum(axis=1).min() >= 0
    info = shipped_manifest()
    assert info["model"] == STATIC_MODEL_NAME and info["version"] == STATIC_VERSION
    assert (info["rows"], info["dim"]) == (vocab, STATIC_DIM)
    raw = resources.files("codecite.embed").joinpath(TABLE_FILE).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == info["table"]["sha256"]
    assert info["table"]["dtype"] == "float16" and len(raw) < 20_000_000
    assert Path(MANIFEST_FILE).stem == Path(TABLE_FILE).stem
    assert f"v{STATIC_VERSION}" in STATIC_MODEL_NAME


def test_answers_weigh_lines_with_the_table_their_weights_were_fitted_on() -> None:
    # the previous code model ships as the answers' line model, checked like the
    # tier's table (the evidence weights were fitted on its geometry)
    from codecite.answer.answerer import line_embedder
    from codecite.embed.static import LINE_MANIFEST_FILE, LINE_MODEL_NAME, line_table

    table, tier = line_table(), shipped_table()
    assert table.shape == tier.shape and LINE_MODEL_NAME != STATIC_MODEL_NAME
    assert shipped_manifest(LINE_MANIFEST_FILE)["model"] == LINE_MODEL_NAME
    assert not np.array_equal(table, tier)
    embed = line_embedder()
    assert embed is not None
    expected = StaticEmbedder(table, LINE_MODEL_NAME).sums(["gzip the body"])
    assert np.allclose(embed(["gzip the body"]), expected)


def test_the_manifest_records_open_data_without_the_excluded_projects() -> None:
    info = shipped_manifest()
    data, training = info["data"], info["training"]
    assert data["docstrings"]["pairs"] > 10_000 and data["docstrings"]["sources_used"] > 1000
    assert data["commits"]["pairs"] > 1000 and data["commits"]["sources_used"] >= 10
    assert training["recipe"]["seed"] and training["cpu_seconds"] < 2 * 3600
    sources = json.loads((ROOT / info["sources"]).read_text())
    sys.path.insert(0, str(ROOT / "scripts" / "train_code_model"))
    try:
        from exclusions import EXCLUDED, excluded_name, excluded_repo, normalise
        from fetch_npm import excluded_package
    finally:
        sys.path.pop(0)
    used = [s["name"] for s in sources["docstrings"] if s["pairs"]]
    repos = [s["repo"] for s in sources["commits"] if s["pairs"]]
    assert len(used) == data["docstrings"]["sources_used"]
    assert sum(s["pairs"] for s in sources["docstrings"]) == data["docstrings"]["pairs"]
    assert not [n for n in used if excluded_name(n) or normalise(n) in EXCLUDED]
    assert not [r for r in repos if excluded_repo(r)]
    licences = {s["licence"] for s in sources["docstrings"] + sources["commits"] if s["pairs"]}
    assert licences and not licences & {"", "GPL", "AGPL"}
    # JavaScript/TypeScript doc comments from npm packages (fetch_npm.py)
    assert "npm" in data["kinds"]
    packages = [s for s in sources["npm"] if s["pairs"]]
    assert len(packages) == data["npm"]["sources_used"] > 100
    assert sum(s["pairs"] for s in packages) == data["npm"]["pairs"]
    assert not [s["name"] for s in packages if excluded_package(s["name"])]
    assert not {s["licence"] for s in packages} & {"", "GPL", "AGPL"}


def test_no_model_is_run_or_built_to_load_the_static_model(tmp_path: Path) -> None:
    code = (
        "import sys; from codecite.embed.static import static_embedder; "
        "e = static_embedder(); e.embed(['parse the headers']); "
        "print(e.name, 'onnxruntime' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert done.stdout.split() == [STATIC_MODEL_NAME, "False"]


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
    assert isinstance(static_embedder(), StaticEmbedder)
    query = static_query_vector(texts[0], codecite.Config())
    np.testing.assert_allclose(query, vectors[0], atol=1e-6)
    assert static_embedder(codecite.Config()) is embedder  # loaded once per process


def test_token_sums_add_up_and_normalise_to_the_embedding() -> None:
    embedder = static_embedder(codecite.Config())
    whole, first, second = embedder.sums(["session cookie max_age", "session cookie", "max_age"])
    np.testing.assert_allclose(whole, first + second, rtol=1e-5, atol=1e-5)
    unit = embedder.embed(["session cookie max_age"], "document")[0]
    np.testing.assert_allclose(whole / np.linalg.norm(whole), unit, atol=1e-6)


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


def test_a_search_after_an_update_in_the_same_process_sees_the_new_code(
    tmp_path: Path,
) -> None:
    """The searcher reloads its vectors and term statistics after an update made through
    the same index (one connection: SQLite's data_version counts only other ones')."""
    repo = make_git_repo(tmp_path / "repo", FILES)
    with codecite.open_index(repo, overrides={"query_log": False}) as index:
        index.update()
        index.search("discount", tiers=("static",))  # loads the static tier, the statistics
        before = index.searcher.tier("static")
        assert before is not None and index.searcher.term_stats.documents == len(before)
        (repo / "billing" / "saffron.py").write_text(
            "def saffron_surcharge(amount: float) -> float:\n"
            '    """Add the spice market surcharge."""\n'
            "    return amount * 1.07\n"
        )
        index.update()
        found = index.search("spice market surcharge", tiers=("static",))
        static = index.searcher.tier("static")
        new = next(c for c in index.store.chunks() if c.name == "saffron_surcharge")
        assert static is not None and new.id in static.ids and len(static) > len(before)
        assert index.searcher.term_stats.documents == index.store.counts()["chunks"]
        assert found.hits and found.hits[0].chunk.id == new.id
        assert "static #" in found.hits[0].why


def test_an_index_of_the_old_static_model_rebuilds_that_tier(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", FILES)
    with codecite.open_index(repo, overrides={"query_log": False}) as index:
        index.update()
        chunks = index.store.counts()["chunks"]
        with index.store.transaction():  # as an index made before issue 24 records it
            index.store.set_meta({"static_model": OLD_STATIC_MODEL})
        assert index.search("split header lines", tiers=("static",)).hits  # keyword only
        report = index.update()  # the model tier is unchanged: no refusal
        assert report.static_computed == chunks  # every vector again, none kept
        assert report.embedded == 0
        assert index.store.get_meta("static_model") == STATIC_MODEL_NAME
        assert index.store.vector_count("static") == chunks


def test_another_registered_static_model_is_chosen_by_the_setting(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", FILES)
    rng = np.random.default_rng(7)
    other = rng.standard_normal((load_tokenizer().get_vocab_size(), 32)).astype(np.float32)
    register_static_model("static-test-random-32", lambda: other)
    try:
        chosen = {"query_log": False, "static_model": "static-test-random-32"}
        with codecite.open_index(repo, overrides=chosen) as index:
            report = index.update()
            assert report.static_model == "static-test-random-32"
            assert index.store.get_meta("static_dim") == "32"
            query = static_query_vector("split headers", index.config)
            assert query.shape == (32,)
        with codecite.open_index(repo, overrides={"query_log": False}) as index:
            assert index.update().static_model == STATIC_MODEL_NAME  # rebuilt
            assert index.store.get_meta("static_dim") == str(STATIC_DIM)
    finally:
        STATIC_MODELS.pop("static-test-random-32")
    with pytest.raises(ConfigError, match="choose from"):
        static_embedder(codecite.Config(static_model="static-test-random-32"))


def test_a_table_file_of_ones_own_is_a_static_model(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", FILES)
    table = shipped_table()[:, :64].astype(np.float16)  # e.g. retrained and cut
    np.save(tmp_path / "ours.npy", table)
    chosen = {"query_log": False, "static_model": str(tmp_path / "ours.npy")}
    with codecite.open_index(repo, overrides=chosen) as index:
        report = index.update(embed=False)
        assert report.static_computed == 0  # --no-embed builds no tier
        report = index.update()
        assert report.static_model.startswith("static-file-") and report.static_model.endswith(
            "-64"
        )
        assert index.search("split raw header lines", tiers=("static",)).hits
    np.save(tmp_path / "bad.npy", table[:10])
    with pytest.raises(ConfigError, match="expected a finite"):
        static_embedder(codecite.Config(static_model=str(tmp_path / "bad.npy")))
