"""The fast variant of the bundled model, derived once per machine.

The bundled ``model.onnx`` stores its weights as int8 but computes in float32
(each weight is cast back to float at load), so its 36 linear layers, 70% of
the time, run as float matrix products. Dynamic quantization (activations
quantized to uint8 per run, weights int8 per output channel) lets ONNX Runtime
use integer kernels (VNNI/AVX2): about 2x the texts per CPU-second, with vectors
at cosine ~0.995 of the float ones (per-tensor weights would fall to ~0.95).

The derived file is written to the cache folder (``models/``), named by the
source file's hash, the recipe version and the onnxruntime version, so it is
built once (about 3 s) and a changed recipe or runtime never reuses a stale
one. Without a writable folder it is built in memory for the process.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from ..errors import EmbeddingError

log = logging.getLogger(__name__)

#: Bump when the derivation below changes (a new file name, new vectors).
RECIPE_VERSION = 1
_lock = threading.Lock()


def derived_name(source: Path, sha256: str) -> str:
    """File name of the quantized variant of ``source`` (whose hash is ``sha256``)."""
    import onnxruntime

    return f"{source.stem}-dq{RECIPE_VERSION}-{sha256[:12]}-ort{onnxruntime.__version__}.onnx"


def quantized_model(source: Path, sha256: str, folder: Path | None) -> bytes:
    """The dynamically quantized ``source`` as ONNX bytes, from ``folder`` when
    built there before, else built now (and saved there when possible)."""
    with _lock:
        target = folder / derived_name(source, sha256) if folder is not None else None
        if target is not None and target.is_file():
            with contextlib.suppress(OSError):
                return target.read_bytes()
        data = _build(source)
        if target is not None:
            _save(target, data)
        return data


def forget_quantized(source: Path, sha256: str, folder: Path) -> None:
    """Delete the saved quantized model (it failed to load)."""
    with _lock, contextlib.suppress(OSError):
        (folder / derived_name(source, sha256)).unlink()


def _build(source: Path) -> bytes:
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise EmbeddingError(
            f"cannot quantize the embedding model ({exc}); `pip install onnx` "
            "(a dependency of codecite) and try again"
        ) from None
    log.info("deriving the quantized embedding model from %s (once per machine)", source)
    with tempfile.TemporaryDirectory(prefix="codecite-model-") as tmp:
        folded, out = Path(tmp) / "folded.onnx", Path(tmp) / "quantized.onnx"
        try:
            # Constant folding turns the int8 weights + scales back into float
            # initializers, which quantize_dynamic then quantizes per channel.
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
            options.optimized_model_filepath = str(folded)
            options.log_severity_level = 3
            ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
            with _quiet_root_logger():  # "consider pre-processing" advice on the root logger
                quantize_dynamic(folded, out, per_channel=True, weight_type=QuantType.QInt8)
            return out.read_bytes()
        except Exception as exc:  # onnx / onnxruntime raise many unrelated types
            raise EmbeddingError(f"cannot quantize the embedding model {source}: {exc}") from None


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    def drop(record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR

    root = logging.getLogger()
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)


def _save(target: Path, data: bytes) -> None:
    tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except OSError as exc:
        log.warning(
            "cannot save the quantized model to %s (%s); it is rebuilt next time", target, exc
        )
        with contextlib.suppress(OSError):
            tmp.unlink()
