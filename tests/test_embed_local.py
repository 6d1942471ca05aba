"""The bundled MiniLM model, for real: shapes, norms, meaning, offline use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import codecite.embed as embed
from codecite.config import Config
from codecite.embed import EMBEDDERS, Embedder, embed_text, get_embedder
from codecite.embed.local import MODEL_NAME, MiniLMEmbedder
from codecite.errors import ConfigError, UnknownBackendError
from codecite.types import Chunk

DISCOUNT = '''def loyalty_discount(customer: Customer, total: Decimal) -> Decimal:
    """Discount granted to returning customers."""
    if customer.orders_count >= 10:
        return total * Decimal("0.15")
    if customer.orders_count >= 3:
        return total * Decimal("0.05")
    return Decimal(0)
'''
PARSER = '''def read_records(path: Path) -> list[dict[str, str]]:
    """Parse a CSV file into a list of rows."""
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        return [dict(row) for row in reader]
'''


def make_chunk(path: str, name: str, content: str, docstring: str = "") -> Chunk:
    first = content.splitlines()[0]
    return Chunk(
        id=name,
        repo="shop",
        path=path,
        language="python",
        kind="function",
        name=name,
        qualname=name,
        start_line=1,
        end_line=len(content.splitlines()),
        content=content,
        context=path,
        content_hash=name,
        signature=first,
        docstring=docstring,
    )


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return get_embedder("minilm", Config())


@pytest.fixture(scope="module")
def models() -> Path:
    """The run's folder of the quantized model (conftest keeps it between runs), for
    embedders whose test is not about building it: quantizing takes seconds."""
    return Path(os.environ["CODECITE_CACHE_DIR"]) / "models"


def test_public_surface_exists() -> None:
    for name in embed.__all__:
        assert hasattr(embed, name), name


def test_shape_dtype_norm(minilm: Embedder) -> None:
    texts = ["def add(a, b): return a + b", "", "x" * 5000, "parse a config file"]
    vectors = minilm.embed(texts, "document")
    assert minilm.name == "all-MiniLM-L6-v2-int8-dq-128t"
    assert minilm.dim == 384 and minilm.max_tokens == 128
    assert vectors.shape == (4, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([], "query").shape == (0, 384)


def test_deterministic_and_order_independent(minilm: Embedder) -> None:
    texts = ["short", "a much longer text " * 20, "medium length text here", "tiny"]
    once = minilm.embed(texts, "document")
    again = minilm.embed(texts, "document")
    np.testing.assert_array_equal(once, again)
    # Sorting by length and padding per batch must not change a text's vector.
    alone = np.vstack([minilm.embed([t], "query") for t in texts])
    np.testing.assert_allclose(once, alone, atol=1e-4)
    reversed_ = minilm.embed(texts[::-1], "document")[::-1]
    np.testing.assert_allclose(once, reversed_, atol=1e-4)


def test_batches_smaller_than_the_call(models: Path) -> None:
    small = MiniLMEmbedder(batch_size=2, model_dir=models)
    texts = [f"function number {i} " * (i + 1) for i in range(5)]
    reference = MiniLMEmbedder(batch_size=64, model_dir=models).embed(texts, "document")
    np.testing.assert_allclose(small.embed(texts, "document"), reference, atol=1e-4)


def test_semantic_sanity(minilm: Embedder) -> None:
    discount = make_chunk("shop/pricing.py", "loyalty_discount", DISCOUNT, "Discount granted.")
    parser = make_chunk("shop/io.py", "read_records", PARSER, "Parse a CSV file.")
    docs = minilm.embed([embed_text(discount), embed_text(parser)], "document")
    query = minilm.embed(["compute the discount for a loyal customer"], "query")[0]
    assert docs[0] @ query > docs[1] @ query + 0.1
    query = minilm.embed(["read rows from a csv file"], "query")[0]
    assert docs[1] @ query > docs[0] @ query + 0.1


def test_unknown_embedder_lists_choices() -> None:
    with pytest.raises(UnknownBackendError) as info:
        get_embedder("bert-large", Config())
    for key in EMBEDDERS:
        assert key in str(info.value)
    with pytest.raises(ConfigError):
        get_embedder("minilm:other", Config())


def test_embeds_with_network_blocked(tmp_path: Path, models: Path) -> None:
    """A fresh interpreter with every socket connection refused still embeds."""
    (tmp_path / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import socket

            def _blocked(*args, **kwargs):
                raise OSError("network disabled by test")

            socket.socket.connect = _blocked
            socket.socket.connect_ex = _blocked
            socket.create_connection = _blocked
            socket.getaddrinfo = _blocked
            """
        )
    )
    script = textwrap.dedent(
        """
        import json, socket
        try:
            socket.create_connection(("127.0.0.1", 9))
            blocked = False
        except OSError:
            blocked = True
        from codecite.config import Config
        from codecite.embed import get_embedder
        vectors = get_embedder("minilm", Config()).embed(["offline text"], "document")
        print(json.dumps({"blocked": blocked, "vector": vectors[0].tolist()}))
        """
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["blocked"] is True
    here = MiniLMEmbedder(model_dir=models).embed(["offline text"], "document")[0]
    np.testing.assert_allclose(np.asarray(result["vector"]), here, atol=1e-5)


def test_as_shipped_settings_keep_the_old_name() -> None:
    """Vector-changing settings are in the name; speed knobs are not."""
    assert MiniLMEmbedder(quantized=False, max_tokens=256).name == MODEL_NAME
    assert MiniLMEmbedder(quantized=False).name == f"{MODEL_NAME}-128t"
    assert MiniLMEmbedder(batch_tokens=99, spinning=True, threads=1).name == MiniLMEmbedder().name


def test_quantized_vectors_stay_close_to_the_float_model(tmp_path: Path) -> None:
    texts = [
        embed_text(make_chunk("shop/pricing.py", "loyalty_discount", DISCOUNT)),
        embed_text(make_chunk("shop/io.py", "read_records", PARSER)),
        "read rows from a csv file",
    ]
    exact = MiniLMEmbedder(quantized=False).embed(texts, "document")
    fast = MiniLMEmbedder(model_dir=tmp_path).embed(texts, "document")
    assert (exact * fast).sum(axis=1).min() > 0.98
    (saved,) = tmp_path.iterdir()  # built once, then loaded from the folder
    assert saved.name.startswith("model-dq") and saved.stat().st_size > 10_000_000
    again = MiniLMEmbedder(model_dir=tmp_path).embed(texts, "document")
    np.testing.assert_array_equal(fast, again)


def test_documents_truncate_at_128_tokens_queries_at_256() -> None:
    from codecite.embed.local import _load_tokenizer, _truncate

    embedder = MiniLMEmbedder(quantized=False)
    words = " ".join(f"word{i}" for i in range(400))
    tokenizer = _load_tokenizer()
    ids = tokenizer.encode(words).ids
    tokenizer.enable_truncation(max_length=128)
    assert _truncate(ids, 128).tolist() == tokenizer.encode(words).ids  # same as the library's
    head = tokenizer.decode(_truncate(ids, 128).tolist())
    document, query = embedder.embed([words], "document")[0], embedder.embed([words], "query")[0]
    np.testing.assert_allclose(document, embedder.embed([head], "document")[0], atol=1e-4)
    assert document @ query < 0.999  # the query read further


def test_batches_respect_the_token_budget() -> None:
    embedder = MiniLMEmbedder(batch_size=4, batch_tokens=100)
    lengths = [5, 5, 10, 20, 30, 30, 60, 200]
    batches = list(embedder._batches(lengths))
    assert [i for b in batches for i in b] == list(range(len(lengths)))
    for batch in batches:
        width = max(lengths[i] for i in batch)
        assert len(batch) <= 4 and (len(batch) == 1 or len(batch) * width <= 100)


def test_damaged_quantized_model_is_rebuilt(tmp_path: Path) -> None:
    from codecite.embed.local import bundled_model_path, bundled_model_sha256
    from codecite.embed.quantize import derived_name

    damaged = tmp_path / derived_name(bundled_model_path(), bundled_model_sha256())
    damaged.write_bytes(b"not a model")
    vector = MiniLMEmbedder(model_dir=tmp_path).embed(["a text"], "document")
    assert vector.shape == (1, 384) and damaged.stat().st_size > 10_000_000
