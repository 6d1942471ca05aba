"""The :class:`Embedder` protocol every embedding backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

#: What a text is embedded as; models with separate modes (e5) treat them differently.
Kind = Literal["document", "query"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors, one batch at a time."""

    @property
    def name(self) -> str:
        """Stable model id stored in the index (vectors of two names never mix)."""
        ...

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    @property
    def max_tokens(self) -> int:
        """Tokens the model reads per text; longer texts are truncated."""
        ...

    def embed(self, texts: Sequence[str], kind: Kind) -> np.ndarray:
        """float32 matrix (len(texts), dim) with L2-normalised rows, in input order."""
        ...


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)
