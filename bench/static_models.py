"""The static models the benchmarks compare (issue 24): the shipped code model, the
code model it replaced (``static-code-v2-256``, still in the package: answers weigh
their lines with it) and issue 15's model distilled from MiniLM
(``static-minilm-v1-256``), registered here so a benchmark measures them in one run.

The distilled table is read from ``$CODECITE_DISTILLED_TABLE`` (default
``/work/model-data/init/distilled.npy``) when it is there, else distilled now by
``scripts/train_code_model/distil.py`` (~43 CPU-seconds) and kept in the user cache.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from codecite.embed.static import (
    LINE_MODEL_NAME,
    STATIC_MODEL_NAME,
    STATIC_MODELS,
    register_static_model,
)

HERE = Path(__file__).resolve().parent
DISTILLED = "static-minilm-v1-256"
DISTILLED_TABLE = Path(
    os.environ.get("CODECITE_DISTILLED_TABLE", "/work/model-data/init/distilled.npy")
)
SHIPPED = STATIC_MODEL_NAME
#: The code model shipped before this one: still in the package, as the table answers
#: weigh their lines with (``LINE_MODEL_NAME``), so registered there already.
PREVIOUS = LINE_MODEL_NAME


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
    if name not in STATIC_MODELS:
        known = ", ".join((SHIPPED, PREVIOUS, DISTILLED))
        raise SystemExit(f"unknown static model {name}; choose from {known}")
    return name
