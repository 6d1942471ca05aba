"""The static-vector stage of an index run (issue 15).

Runs right after the keyword index and the graph, before the model's vectors: every
chunk without a static vector gets one (thousands a second), committed in batches,
so search can fuse keyword, static and (later) model lists within seconds.

Models never mix within a tier: an index whose static vectors came from another
static model or another embedding text is cleared and rebuilt (cheap), where the
model tier refuses instead. The tier is optional: when the static model cannot be
loaded (a damaged install) the run goes on without it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..config import Config
from ..embed.static import StaticEmbedder, static_embedder
from ..embed.text import EMBED_TEXT_VERSION, embed_text
from ..errors import EmbeddingError
from ..progress import Progress, ProgressFn
from ..store.protocols import IndexWriter

log = logging.getLogger(__name__)

#: Chunks per committed batch (~0.1-0.3 s of work each).
STATIC_COMMIT_EVERY = 2000
#: Metadata keys recording the tier's model, width and embedded text version.
MODEL_KEY, DIM_KEY, TEXT_KEY = "static_model", "static_dim", "static_text_version"


@dataclass
class StaticStageResult:
    """What the stage did: its model, vectors computed, vectors reused by content."""

    model: str = ""
    computed: int = 0
    reused: int = 0


def clear_static_tier(store: IndexWriter) -> None:
    """Remove the static tier (the setting turned it off): no stale vectors stay."""
    if store.vector_count("static") or store.get_meta(MODEL_KEY):
        with store.transaction():
            store.clear_vectors("static")
            store.set_meta({MODEL_KEY: "", DIM_KEY: "0", TEXT_KEY: ""})


def update_static_tier(
    store: IndexWriter, config: Config, progress: ProgressFn
) -> StaticStageResult:
    """Give every chunk of ``store`` a static vector (or, with the ``static_tier``
    setting off, remove the tier); returns what was done."""
    if not config.embed.static_tier:
        clear_static_tier(store)
        return StaticStageResult()

    try:
        embedder = static_embedder(config)
    except EmbeddingError as exc:
        log.warning("no static vectors this run: %s", exc)
        return StaticStageResult()
    result = StaticStageResult(embedder.name)
    text_version = str(EMBED_TEXT_VERSION)
    built = (store.get_meta(MODEL_KEY), store.get_meta(TEXT_KEY))
    with store.transaction():
        if built != (embedder.name, text_version) and store.vector_count("static"):
            log.info("static vectors of %s are rebuilt with %s", built[0], embedder.name)
            store.clear_vectors("static")
        # Recorded before the first vector, so a search beside this run knows them.
        store.set_meta(
            {MODEL_KEY: embedder.name, DIM_KEY: str(embedder.dim), TEXT_KEY: text_version}
        )
        # No pruning here: the model stage prunes both tiers after its own reuse by
        # content (pruning first would drop the model vectors a moved file can reuse).
        result.reused = store.reuse_vectors_by_content(tier="static")
    result.computed = _fill(store, embedder, progress)
    store.export_vectors(embedder.dim, tier="static")
    return result


def refresh_static_tier(store: IndexWriter, config: Config) -> int:
    """Static vectors for the chunks an inline refresh (re)wrote, so a just-edited
    function is found by meaning too; only when the index has a current static tier.
    Returns the number of vectors computed."""
    if not config.embed.static_tier:
        return 0
    current = (store.get_meta(MODEL_KEY), store.get_meta(TEXT_KEY))
    try:
        embedder = static_embedder(config)
    except EmbeddingError:
        return 0
    if current != (embedder.name, str(EMBED_TEXT_VERSION)):
        return 0
    done = _fill(store, embedder, lambda _event: None)
    if done:
        store.export_vectors(embedder.dim, tier="static")
    return done


def _fill(store: IndexWriter, embedder: StaticEmbedder, progress: ProgressFn) -> int:
    """Vectors for every chunk without one, committed in batches."""
    total, done = store.count_missing_vectors(tier="static"), 0
    progress(Progress("static", 0, total))
    while True:
        chunks = store.chunks_missing_vectors(STATIC_COMMIT_EVERY, tier="static")
        if not chunks:
            break
        matrix = embedder.embed([embed_text(c) for c in chunks], "document")
        with store.transaction():
            store.put_vectors(chunks, matrix, tier="static")
        done += len(chunks)
        progress(Progress("static", done, total))
    return done
