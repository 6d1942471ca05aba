"""The model-vector stage of an index run: every chunk without a vector of the
configured embedder gets one, most useful first, committed in batches, so an
interrupted run resumes where it stopped and a search fuses whatever exists.

It runs in two ways. In the index run itself (``codecite index --wait``, the library's
``Index.update()``), whose caller holds the single-writer lock throughout. Or in a
background worker (:mod:`codecite.index.background`, issue 23) beside other writers: the
vectors are computed without the lock, and each batch is written under it, keeping
only the chunks that still exist and only while the index still records this
embedder, so a re-index, a query-time refresh or ``index --full`` running meanwhile
is never blocked for more than one write and never gets stale vectors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..config import Config
from ..embed.base import Embedder
from ..embed.batch import EmbedCounts, embed_with_cache
from ..embed.cache import CACHE_FILENAME, EmbeddingCache, cache_key, default_cache_dir
from ..embed.text import EMBED_TEXT_VERSION, embed_text
from ..errors import ModelMismatchError
from ..progress import Progress, ProgressFn
from ..store.protocols import IndexWriter, VectorCache
from ..types import Chunk


class StopRequested(Exception):
    """``should_stop()`` said so between two batches (the in-flight batch's vectors
    are in the embedding cache: the next run reads them from there)."""


@dataclass
class ModelCounts:
    """What the stage did so far (updated after every committed batch)."""

    #: Vectors written: ``computed`` by the model + ``from_cache``.
    embedded: int = 0
    computed: int = 0
    from_cache: int = 0
    #: Vectors given by content from another chunk of the index (not in ``embedded``).
    reused: int = 0


def model_meta(embedder: Embedder, config: Config) -> dict[str, str]:
    """The metadata that names the model tier's embedder (written before any vector)."""
    return {
        "embedder": embedder.name,
        "embedder_spec": config.embed.embedder,  # registry name, to load it again
        "embedding_dim": str(embedder.dim),
        "embedding_text_version": str(EMBED_TEXT_VERSION),
    }


def prepare_model_tier(store: IndexWriter, embedder: Embedder, config: Config) -> int:
    """Record the embedder, give chunks the vectors of chunks with the same content,
    drop vectors of deleted chunks (one transaction; the caller holds the writer
    lock). Returns the vectors reused by content."""
    with store.transaction():
        # The model is recorded before the first vector, so a search running while
        # this embeds (or after a crash) knows what the vectors are.
        store.set_meta(model_meta(embedder, config))
        reused = store.reuse_vectors_by_content()
        store.prune_vectors()
    return reused


def fill_model_tier(
    store: IndexWriter,
    embedder: Embedder,
    config: Config,
    counts: ModelCounts,
    progress: ProgressFn,
    *,
    shared: bool = False,
    should_stop: Callable[[], bool] | None = None,
) -> None:
    """Embed every chunk still missing a model vector, ``embed_commit_every`` per
    committed batch. ``shared``: other processes may write between batches (see the
    module docstring); else the caller holds the writer lock. ``should_stop`` is asked
    between embedding batches: True raises :class:`StopRequested`."""
    stop = should_stop or (lambda: False)
    total = store.count_missing_vectors()
    # A PostgreSQL store's cache is in its database, shared by every worker.
    cache = store.embedding_cache() or EmbeddingCache(default_cache_dir(config) / CACHE_FILENAME)
    progress(Progress("embed", 0, total))
    done, embed_counts = 0, EmbedCounts()
    while True:
        if stop():
            raise StopRequested
        chunks = store.chunks_missing_vectors(config.embed.embed_commit_every)
        if not chunks:
            break
        if shared:  # chunks added since the start count too
            total = max(total, done + store.count_missing_vectors())

        computed_now = [0]  # texts the model embedded so far in this batch

        def on_batch(
            n: int,
            _needed: int,
            base: int = done,
            total: int = total,
            computed_now: list[int] = computed_now,
        ) -> None:
            computed_now[0] = n
            if stop():
                raise StopRequested
            progress(Progress("embed", base + n, total))

        texts = [embed_text(c) for c in chunks]
        try:
            matrix = embed_with_cache(
                embedder,
                cache,
                texts,
                config.embed.embed_batch_size,
                on_progress=on_batch,
                counts=embed_counts,
            )
        except StopRequested:
            # keep what this batch computed before the stop (it is in the cache), so
            # a stop reports and keeps every vector it paid for
            written = _write_cached(store, embedder, cache, chunks, texts, shared)
            counts.embedded += written
            counts.computed = embed_counts.computed + min(written, computed_now[0])
            counts.from_cache = embed_counts.from_cache + max(0, written - computed_now[0])
            progress(Progress("embed", done + written, total))
            raise
        written = _write_batch(store, embedder, chunks, matrix, shared)
        done += len(chunks)
        counts.embedded += written
        counts.computed, counts.from_cache = embed_counts.computed, embed_counts.from_cache
        progress(Progress("embed", done, total))


def _write_batch(
    store: IndexWriter, embedder: Embedder, chunks: list[Chunk], matrix: np.ndarray, shared: bool
) -> int:
    """Write one batch's vectors; returns how many were written (``shared``: only the
    chunks that still exist, under the writer lock, while the index records this model)."""
    if not chunks:
        return 0
    if shared:
        with store.writer_lock(), store.transaction():
            _check_still_this_model(store, embedder)
            live = store.get_chunks(c.id for c in chunks)
            keep = [i for i, c in enumerate(chunks) if c.id in live]
            store.put_vectors([chunks[i] for i in keep], matrix[np.asarray(keep, dtype=int)])
        return len(keep)
    with store.transaction():
        store.put_vectors(chunks, matrix)
    return len(chunks)


def _write_cached(
    store: IndexWriter,
    embedder: Embedder,
    cache: VectorCache,
    chunks: list[Chunk],
    texts: list[str],
    shared: bool,
) -> int:
    """Write the vectors of a stopped batch that the cache already holds."""
    keys = [cache_key(text) for text in texts]
    found = cache.get_many(embedder.name, keys)
    have = [i for i, key in enumerate(keys) if len(found.get(key, ())) == embedder.dim]
    if not have:
        return 0
    matrix = np.stack([found[keys[i]] for i in have]).astype(np.float32, copy=False)
    return _write_batch(store, embedder, [chunks[i] for i in have], matrix, shared)


def _check_still_this_model(store: IndexWriter, embedder: Embedder) -> None:
    """A background batch is written only while the index records this embedder and
    embedding text (``index --full --embedder ...`` may have run meanwhile)."""
    recorded = (store.get_meta("embedder"), store.get_meta("embedding_text_version"))
    if recorded != (embedder.name, str(EMBED_TEXT_VERSION)):
        raise ModelMismatchError(
            f"the index now records {recorded[0] or 'no model'} (embedding text "
            f"v{recorded[1] or '?'}), not {embedder.name}: these vectors were not written; "
            "`codecite index` embeds with the index's model"
        )
