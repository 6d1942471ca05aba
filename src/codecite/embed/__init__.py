"""Embedding stage: chunk text → unit-length float32 vectors.

Backends implement :class:`Embedder` (one batch method) and are registered by
name in :data:`EMBEDDERS`; ``get_embedder("minilm", config)`` or
``get_embedder("openai:text-embedding-3-small", config)`` builds one.
:func:`embed_text` makes the compact text embedded for a chunk and
:func:`embed_with_cache` embeds through the machine-wide
:class:`EmbeddingCache`, so unchanged text is never embedded twice.
"""

from __future__ import annotations

from collections.abc import Callable

from ..config import Config
from ..errors import ConfigError, UnknownBackendError
from .base import Embedder, Kind, l2_normalise
from .batch import EmbedCounts, ProgressCallback, embed_with_cache
from .cache import EmbeddingCache, cache_key, default_cache_dir
from .text import DEFAULT_MAX_CHARS, EMBED_TEXT_VERSION, PROSE_MAX_CHARS, embed_text

__all__ = [
    "DEFAULT_MAX_CHARS",
    "EMBEDDERS",
    "EMBED_TEXT_VERSION",
    "PROSE_MAX_CHARS",
    "EmbedCounts",
    "Embedder",
    "EmbeddingCache",
    "Kind",
    "ProgressCallback",
    "cache_key",
    "default_cache_dir",
    "embed_text",
    "embed_with_cache",
    "get_embedder",
    "l2_normalise",
]


def _minilm(config: Config, model: str) -> Embedder:
    if model:
        raise ConfigError(f'embedder "minilm" takes no model name (got "minilm:{model}")')
    from .local import MiniLMEmbedder  # onnxruntime loads only when embedding starts

    return MiniLMEmbedder(
        threads=config.embed.embed_threads, model_dir=default_cache_dir(config) / "models"
    )


def _openai(config: Config, model: str) -> Embedder:
    from .openai import OpenAIEmbedder

    return OpenAIEmbedder(model, config.embedding_endpoint())


#: Embedders by registry name. A name may carry a model after a colon
#: (``openai:text-embedding-3-small``): the factory gets the part after it.
EMBEDDERS: dict[str, Callable[[Config, str], Embedder]] = {
    "minilm": _minilm,
    "openai": _openai,
}


def get_embedder(name: str, config: Config) -> Embedder:
    """The embedder called ``name`` ("minilm", "openai:MODEL"), built from ``config``."""
    prefix, _, model = name.strip().partition(":")
    factory = EMBEDDERS.get(prefix.strip().lower())
    if factory is None:
        choices = ", ".join(f"{key}:MODEL" if key == "openai" else key for key in EMBEDDERS)
        raise UnknownBackendError(
            f'unknown embedder "{name}"; choose one of: {choices} (setting "embedder")'
        )
    return factory(config, model.strip())
