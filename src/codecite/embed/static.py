"""The static tier's embedder: token vectors distilled from the bundled MiniLM.

Built once per machine, with no download and no torch (issue 15, after model2vec):

1. run the bundled ONNX model over its own WordPiece vocabulary, each token alone
   as ``[SEP] token [CLS]`` (model2vec's reversed order measured better than
   ``[CLS] token [SEP]``), and take the mean of the three output vectors;
2. centre and reduce them with PCA to :data:`STATIC_DIM` dimensions (numpy);
3. scale each token by smooth inverse frequency, ``a / (a + p(token))``, with
   ``p`` from token counts over Python's standard library that ship with codecite
   (``data/code-token-counts.npy``; model2vec estimates ``p`` from the token id
   by Zipf's law, which measured worse on code).

A text's vector is then the mean of its tokens' vectors, L2-normalised: thousands
of chunks a second. The matrix is cached as ``.npy`` + ``.json`` in the user cache
folder (``<cache_dir>/static``, or ``$CODECITE_STATIC_MODEL_DIR``), named by model and
:data:`STATIC_VERSION`; a damaged or foreign file is
rebuilt, and two processes building at once wait for one another (a file lock).
The choices were measured by ``bench/static_bench.py --variants`` (docstring
benchmark, vector search alone): on click + requests, file MRR 0.635 against 0.571
with model2vec's recipe (Zipf weights, a=1e-4) and 0.377 for plain mean-pooled
``[CLS] token [SEP]`` outputs; the bundled MiniLM scores 0.746.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..config import Config
from ..errors import EmbeddingError
from ..store.locking import file_lock
from .base import l2_normalise
from .cache import default_cache_dir
from .local import MODEL_NAME as BASE_MODEL
from .local import _load_tokenizer, bundled_model_path

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

#: Bump when the distillation changes: cached matrices and index vectors of another
#: version are then rebuilt (the name below changes with it).
STATIC_VERSION = 1
#: PCA dimensions: 256 scored within 0.01 file MRR of 384, 0.035 above 128, and is
#: smaller (31 MB) and faster than 384.
STATIC_DIM = 256
#: SIF's ``a``: 5e-4, 1e-3, 2e-3, 3e-3, 1e-2, 3e-2 measured; 1e-3 best.
SIF_A = 1e-3
#: The static model's id, stored in the index (``static_model``).
STATIC_MODEL_NAME = f"static-minilm-v{STATIC_VERSION}-{STATIC_DIM}"
#: Token counts (uint32, one per vocabulary id), made by scripts/code_token_counts.py.
COUNTS_FILE = "data/code-token-counts.npy"
#: Tokens per ONNX run while distilling (2 cores: 256 ran ~1,900 tokens/s, 4096 ~1,400).
BUILD_BATCH = 256
#: Tokens read per text (chunk texts average ~130, a few reach ~300; 3,000-character
#: texts scored no better than the 750 of ``embed_text``).
MAX_TOKENS = 512
#: Texts summed per numpy step in :meth:`StaticEmbedder.embed` (bounds memory).
_EMBED_STEP = 128
CACHE_SUBDIR = "static"
#: A folder for the static model other than ``<cache_dir>/static`` (one baked into an
#: image, shared read-only; the test suite's, kept across runs).
STATIC_DIR_ENV = "CODECITE_STATIC_MODEL_DIR"

#: ``on_progress(done, total)`` over vocabulary tokens while distilling.
BuildProgress = Callable[[int, int], None]


def load_tokenizer() -> Tokenizer:
    """The bundled MiniLM tokenizer, reading up to :data:`MAX_TOKENS` tokens."""
    tokenizer = _load_tokenizer()
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    return tokenizer


def code_token_counts() -> np.ndarray:
    """The shipped token counts, as int64 (one per vocabulary id)."""
    try:
        with resources.files("codecite.embed").joinpath(COUNTS_FILE).open("rb") as fh:
            counts = np.load(fh, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise EmbeddingError(
            f"cannot read codecite's {COUNTS_FILE} ({exc}); reinstall codecite"
        ) from None
    return np.asarray(counts, dtype=np.int64)


def sif_weights(counts: np.ndarray, a: float = SIF_A) -> np.ndarray:
    """``a / (a + p)`` per token, ``p`` its add-one smoothed share of ``counts``."""
    p = (counts.astype(np.float64) + 1.0) / float(counts.sum() + len(counts))
    return (a / (a + p)).astype(np.float32)


def pca(matrix: np.ndarray, dims: int) -> np.ndarray:
    """Rows centred and projected on their first ``dims`` principal axes (the top
    eigenvectors of the covariance: far cheaper than an SVD of the whole matrix)."""
    centred = matrix.astype(np.float64) - matrix.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred)  # ascending eigenvalues
    projected: np.ndarray = (centred @ vectors[:, ::-1][:, :dims]).astype(np.float32)
    return projected


def _session(threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads if threads > 0 else (os.cpu_count() or 1)
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    path = bundled_model_path()
    try:
        return ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own unrelated types
        raise EmbeddingError(f"onnxruntime cannot load {path} ({exc})") from None


def token_outputs(
    vocab: int,
    threads: int = 0,
    batch_size: int = BUILD_BATCH,
    on_progress: BuildProgress | None = None,
) -> np.ndarray:
    """(vocab, 384): the model's mean output over ``[SEP] token [CLS]`` for the first
    ``vocab`` token ids."""
    tokenizer = _load_tokenizer()
    session = _session(threads)
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    out: np.ndarray | None = None
    for start in range(0, vocab, batch_size):
        ids = np.arange(start, min(vocab, start + batch_size), dtype=np.int64)
        rows = np.stack([np.full_like(ids, sep_id), ids, np.full_like(ids, cls_id)], axis=1)
        feeds = {
            "input_ids": rows,
            "attention_mask": np.ones_like(rows),
            "token_type_ids": np.zeros_like(rows),
        }
        try:
            (hidden,) = session.run(["last_hidden_state"], feeds)
        except Exception as exc:  # onnxruntime's errors share no useful base class
            raise EmbeddingError(f"the local embedding model failed: {exc}") from None
        pooled = np.asarray(hidden, dtype=np.float32).mean(axis=1)
        if out is None:
            out = np.empty((vocab, pooled.shape[1]), dtype=np.float32)
        out[start : start + len(ids)] = pooled
        if on_progress is not None:
            on_progress(start + len(ids), vocab)
    assert out is not None
    return out


def distil(
    vocab: int | None = None,
    threads: int = 0,
    on_progress: BuildProgress | None = None,
) -> np.ndarray:
    """The static token matrix (vocab, :data:`STATIC_DIM`), float32; ``vocab`` limits
    it to the first ids (tests), default the whole vocabulary."""
    counts = code_token_counts()
    size = len(counts) if vocab is None else min(vocab, len(counts))
    if size <= STATIC_DIM:
        raise ValueError(f"a static model needs more than {STATIC_DIM} tokens, not {size}")
    matrix = pca(token_outputs(size, threads, on_progress=on_progress), STATIC_DIM)
    matrix *= sif_weights(counts)[:size, None]
    return matrix


def model_name(vocab: int | None = None) -> str:
    """The id of the static model (a vocabulary slice, for tests, is named apart)."""
    return STATIC_MODEL_NAME if vocab is None else f"{STATIC_MODEL_NAME}-vocab{vocab}"


def _expected_info(name: str, rows: int) -> dict[str, object]:
    return {
        "model": name,
        "base_model": BASE_MODEL,
        "version": STATIC_VERSION,
        "dim": STATIC_DIM,
        "rows": rows,
        "sif_a": SIF_A,
        "dtype": "float32",
    }


def _read_cached(npy: Path, meta: Path, name: str) -> np.ndarray | None:
    """The cached matrix, or None when missing, damaged or made by another version."""
    if not (npy.exists() and meta.exists()):
        return None
    try:
        info = json.loads(meta.read_text(encoding="utf-8"))
        matrix = np.load(npy, allow_pickle=False)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        log.warning("static model cache %s is damaged (%s); rebuilding it", npy, exc)
        return None
    expected = _expected_info(name, int(matrix.shape[0]) if matrix.ndim == 2 else -1)
    good = (
        isinstance(info, dict)
        and {k: info.get(k) for k in expected} == expected
        and matrix.dtype == np.float32
        and matrix.shape == (info.get("rows"), STATIC_DIM)
        and bool(np.isfinite(matrix).all())
    )
    if not good:
        log.warning("static model cache %s does not match this codecite; rebuilding it", npy)
        return None
    return np.asarray(matrix)


def _write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _save_npy(path: Path, matrix: np.ndarray) -> None:
    with path.open("wb") as fh:
        np.save(fh, matrix)


def static_model_dir(config: Config) -> Path:
    """Where the static model is cached: ``$CODECITE_STATIC_MODEL_DIR``, else the
    ``static`` folder of the embedding cache (:func:`default_cache_dir`)."""
    chosen = os.environ.get(STATIC_DIR_ENV, "")
    return Path(chosen).expanduser() if chosen else default_cache_dir(config) / CACHE_SUBDIR


def load_or_build(
    folder: Path,
    vocab: int | None = None,
    threads: int = 0,
    on_progress: BuildProgress | None = None,
) -> np.ndarray:
    """The static token matrix cached in ``folder``, built and cached first when
    missing or unusable. Another process building it is waited for, not repeated."""
    name = model_name(vocab)
    npy, meta = folder / f"{name}.npy", folder / f"{name}.json"
    matrix = _read_cached(npy, meta, name)
    if matrix is not None:
        return matrix
    with contextlib.ExitStack() as stack:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            stack.enter_context(file_lock(folder / f"{name}.lock"))
        except OSError as exc:  # a read-only cache folder: build in memory, every process
            log.warning("cannot write the static model cache in %s (%s)", folder, exc)
            return distil(vocab, threads, on_progress)
        matrix = _read_cached(npy, meta, name)  # built by another process meanwhile?
        if matrix is not None:
            return matrix
        started = time.perf_counter()
        matrix = distil(vocab, threads, on_progress)
        seconds = time.perf_counter() - started
        info = _expected_info(name, len(matrix)) | {"build_seconds": round(seconds, 1)}
        meta.unlink(missing_ok=True)  # the .json, written last, marks a complete pair
        _write_atomic(npy, lambda tmp: _save_npy(tmp, matrix))
        _write_atomic(meta, lambda tmp: tmp.write_text(json.dumps(info), encoding="utf-8"))
        log.info("built the static model %s in %.1f s (%s)", name, seconds, npy)
        return matrix


class StaticEmbedder:
    """An :class:`~codecite.embed.Embedder` over static token vectors: a text's vector
    is the L2-normalised mean of its tokens' vectors."""

    max_tokens: int = MAX_TOKENS

    def __init__(self, matrix: np.ndarray, name: str = STATIC_MODEL_NAME) -> None:
        self._name = name
        # One zero row at the end stands for the special and out-of-range ids.
        self._matrix = np.vstack([matrix, np.zeros((1, matrix.shape[1]), np.float32)])
        self._rows = int(matrix.shape[0])
        self._tokenizer = load_tokenizer()
        # encode_batch_fast (tokenizers >= 0.21) skips the offsets we do not use.
        self._encode = getattr(self._tokenizer, "encode_batch_fast", self._tokenizer.encode_batch)
        for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"):
            token_id = self._tokenizer.token_to_id(special)
            if token_id is not None and token_id < self._rows:
                self._matrix[token_id] = 0.0

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return int(self._matrix.shape[1])

    def embed(
        self, texts: Sequence[str], kind: Literal["document", "query"] = "document"
    ) -> np.ndarray:
        """float32 (len(texts), dim), unit rows (a text with no known token: zeros)."""
        if kind not in ("document", "query"):
            raise ValueError(f"kind must be 'document' or 'query', not {kind!r}")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _EMBED_STEP):
            part = list(texts[start : start + _EMBED_STEP])
            encodings = self._encode(part, add_special_tokens=False)
            lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64)
            filled = np.flatnonzero(lengths)
            if not len(filled):
                continue
            flat = np.concatenate([np.asarray(encodings[i].ids, np.int64) for i in filled])
            flat[flat >= self._rows] = self._rows
            offsets = np.concatenate([[0], np.cumsum(lengths[filled])[:-1]])
            # Sums, not means: the rows are normalised right after.
            out[start + filled] = np.add.reduceat(self._matrix[flat], offsets, axis=0)
        return l2_normalise(out)


_embedders: dict[tuple[Path, int | None], StaticEmbedder] = {}
_embedders_lock = threading.Lock()


def static_embedder(
    config: Config, vocab: int | None = None, on_progress: BuildProgress | None = None
) -> StaticEmbedder:
    """This process's static embedder for ``config``'s cache folder: loaded once,
    built first (tens of seconds, once per machine) when the cache lacks it."""
    key = (static_model_dir(config).resolve(), vocab)
    with _embedders_lock:
        embedder = _embedders.get(key)
        if embedder is None:
            matrix = load_or_build(key[0], vocab, config.embed_threads, on_progress)
            embedder = _embedders[key] = StaticEmbedder(matrix, model_name(vocab))
        return embedder


def cached_static_embedder(config: Config) -> StaticEmbedder | None:
    """The static embedder when its model is already cached (or loaded), else None:
    for query-time work that must never start a build of tens of seconds."""
    folder = static_model_dir(config)
    with _embedders_lock:
        key = (folder.resolve(), None)
        if key in _embedders:
            return _embedders[key]
        npy, meta = folder / f"{STATIC_MODEL_NAME}.npy", folder / f"{STATIC_MODEL_NAME}.json"
        matrix = _read_cached(npy, meta, STATIC_MODEL_NAME)
        if matrix is None:
            return None
        embedder = _embedders[key] = StaticEmbedder(matrix)
        return embedder


def static_query_vector(text: str, config: Config) -> np.ndarray:
    """The unit static vector (:data:`STATIC_DIM`,) of a query, to search the static
    tier of an index whose ``static_model`` meta is :data:`STATIC_MODEL_NAME`."""
    vector: np.ndarray = static_embedder(config).embed([text], "query")[0]
    return vector
