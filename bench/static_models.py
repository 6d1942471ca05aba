"""The static models the benchmarks compare (issue 24): the shipped code model, the
code model it replaced (``static-code-v1-256``, read from the git history) and issue
15's model distilled from MiniLM (``static-minilm-v1-256``), registered here so a
benchmark measures them in one run.

The previous code model's table is read with ``git show`` from the commit that last
shipped it (:data:`PREVIOUS_COMMIT`) and checked against its manifest's sha256.

The distilled table is read from ``$CODECITE_DISTILLED_TABLE`` (default
``/work/model-data/init/distilled.npy``) when it is there, else distilled now by
``scripts/train_code_model/distil.py`` (~43 CPU-seconds) and kept in the user cache.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from codecite.embed.static import STATIC_MODEL_NAME, STATIC_MODELS, register_static_model

HERE = Path(__file__).resolve().parent
DISTILLED = "static-minilm-v1-256"
DISTILLED_TABLE = Path(
    os.environ.get("CODECITE_DISTILLED_TABLE", "/work/model-data/init/distilled.npy")
)
SHIPPED = STATIC_MODEL_NAME
#: The code model shipped before this one, and the commit whose tree holds it.
PREVIOUS = "static-code-v1-256"
PREVIOUS_COMMIT = "c74c7b2"
PREVIOUS_FILE = "src/codecite/embed/data/static-code-v1.npy"
PREVIOUS_SHA256 = "41b9a0724c5bc781fcc0ac56a4a016f758962ee74c812c33e0e6b05054ad515b"


def _previous() -> np.ndarray:
    import hashlib
    import io
    import subprocess

    spec = f"{PREVIOUS_COMMIT}:{PREVIOUS_FILE}"
    try:
        raw = subprocess.run(
            ["git", "-C", str(HERE.parent), "show", spec], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"{PREVIOUS} needs the git history ({spec}): {exc}") from None
    if hashlib.sha256(raw).hexdigest() != PREVIOUS_SHA256:
        raise SystemExit(f"{spec} is not the table {PREVIOUS} shipped")
    return np.asarray(np.load(io.BytesIO(raw)), dtype=np.float32)


def _distilled() -> np.ndarray:
    path = DISTILLED_TABLE
    if not path.exists():
        path = Path.home() / ".cache" / "codecite-bench" / "distilled.npy"
    if not path.exists():
        sys.path.insert(0, str(HERE.parent / "scripts" / "train_code_model"))
        from distil import distil

        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, distil())
    return np.asarray(np.load(path), dtype=np.float32)


def register(name: str) -> str:
    """Make the static model ``name`` choosable (``static_model`` setting; the path of
    a ``.npy`` table needs no registering)."""
    if name.endswith(".npy"):
        return name
    if name == DISTILLED and name not in STATIC_MODELS:
        register_static_model(DISTILLED, _distilled)
    if name == PREVIOUS and name not in STATIC_MODELS:
        register_static_model(PREVIOUS, _previous)
    if name not in STATIC_MODELS:
        known = ", ".join((SHIPPED, PREVIOUS, DISTILLED))
        raise SystemExit(f"unknown static model {name}; choose from {known}")
    return name
