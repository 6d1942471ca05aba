"""A tiny in-memory implementation of codecite's read protocols (a test helper, not
shipped): :class:`MemoryStore` is a :class:`~codecite.store.protocols.ReadStore` in plain
Python, with no SQL anywhere, so that running the search tests over it proves retrieval
depends on the protocols only.

Keyword search is a real BM25 (k1=1.2, b=0.75) over the three identifier-split texts of
:func:`codecite.identifiers.keyword_row` (symbol, path, body), computed the way FTS5's
``bm25()`` computes it:

- each text is split like FTS5's ``unicode61`` tokenizer: lower-cased runs of letters and
  digits (``_`` and ``$`` separate tokens, so the whole identifier ``apply_loyalty_discount``
  in a keyword row is the three tokens ``apply loyalty discount``);
- each query term is a *phrase* of its tokens (as ``fts_match`` quotes it), matched at
  consecutive positions inside one column; terms are OR-ed;
- a phrase's frequency in a document is the sum over columns of the column weight times
  its occurrences there; the document length is its token count over all columns (not
  weighted), ``avgdl`` the mean of those over the whole store;
- IDF is ``log((N - n + 0.5) / (n + 0.5))`` with N all documents and n those matching the
  phrase, floored at 1e-6 (as FTS5 does), computed over the whole store: the filters only
  decide which documents may be returned, as the SQL conditions do in the SQLite backend.

How it differs from the SQLite backend: ties (equal scores) are broken by the order the
chunks were given (for :meth:`MemoryStore.copy_of`, ``chunks()`` order: path, start line)
where FTS5 leaves the order of ties unspecified (in practice its rowid, i.e. insertion,
order); diacritics are not removed (``keyword_row`` texts are ASCII, so this never shows);
floating-point sums may differ in the last bits. ``chunks(path_prefix)`` and the edge
orders follow the protocols' docstrings exactly, as the SQLite backend does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from codecite.filters import Filters, path_matches
from codecite.identifiers import keyword_row
from codecite.store.protocols import KeywordWeights, Tier, VectorRows
from codecite.types import Chunk, Edge

if TYPE_CHECKING:
    from codecite.store.sqlite import SQLiteStore

#: FTS5's bm25() constants.
K1, B = 1.2, 0.75
#: The kinds that rank after definitions in a symbol look-up (as the protocol says).
COARSE_KINDS = frozenset({"module", "window", "file"})
#: One token of FTS5's unicode61 tokenizer: a run of letters or digits.
_TOKEN = re.compile(r"[^\W_]+")


def fts_tokens(text: str) -> list[str]:
    """``text`` split the way FTS5's ``unicode61`` tokenizer splits it (folded case)."""
    return _TOKEN.findall(text.lower())


def _take(items: list[str], limit: int) -> list[str]:
    """The first ``limit`` items; a negative limit means all (SQLite's ``LIMIT -1``)."""
    return items if limit < 0 else items[:limit]


def _phrase_count(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """Occurrences of ``phrase`` at consecutive positions of ``tokens``."""
    n = len(phrase)
    if n == 1:
        return tokens.count(phrase[0])
    want = list(phrase)
    return sum(1 for i in range(len(tokens) - n + 1) if list(tokens[i : i + n]) == want)


class MemoryStore:
    """Chunks, edges, metadata and vectors held in Python objects, read through the
    read protocols (:class:`~codecite.store.protocols.ReadStore`)."""

    def __init__(
        self,
        chunks: Iterable[Chunk],
        edges: Iterable[Edge] = (),
        meta: Mapping[str, str] | None = None,
        vectors: tuple[Sequence[str], np.ndarray] | None = None,
    ) -> None:
        """``vectors``: chunk ids with their row-aligned float32 matrix (rows whose chunk
        is not in ``chunks`` are ignored, like vectors the SQLite store has not pruned)."""
        self._chunks: dict[str, Chunk] = {}
        for chunk in chunks:
            self._chunks.setdefault(chunk.id, chunk)
        # edges are unique by (src, dst, kind), the first kept (SQLite: INSERT OR IGNORE)
        unique: dict[tuple[str, str, str], Edge] = {}
        for edge in edges:
            unique.setdefault((edge.src, edge.dst, edge.kind), edge)
        self._edges = list(unique.values())
        self._out: dict[str, list[Edge]] = {}
        self._in: dict[str, list[Edge]] = {}
        for edge in self._edges:
            self._out.setdefault(edge.src, []).append(edge)
            self._in.setdefault(edge.dst, []).append(edge)
        self._meta = dict(meta or {})
        self._set_vectors(vectors)
        self._build_keyword_index()

    @classmethod
    def copy_of(cls, store: SQLiteStore) -> MemoryStore:
        """Everything a real SQLite store holds for queries, read out of it: chunks with
        ``chunks()``, edges with ``edges_from`` for every chunk, vectors with
        ``vector_rows()`` (all public methods); the metadata with a plain ``SELECT`` on
        ``store.conn``, as no public method lists every key (a PostgreSQL store's
        ``all_meta()``)."""
        chunks = list(store.chunks())
        edges = [edge for chunk in chunks for edge in store.edges_from(chunk.id)]
        if hasattr(store, "all_meta"):  # the PostgreSQL store lists its metadata itself
            meta = dict(store.all_meta())
        else:
            meta = {str(k): str(v) for k, v in store.conn.execute("SELECT key, value FROM meta")}
        rows = store.vector_rows()
        vectors = (list(rows.ids), np.array(rows.matrix, dtype=np.float32)) if rows else None
        return cls(chunks, edges, meta, vectors)

    # --- building --------------------------------------------------------------
    def _set_vectors(self, vectors: tuple[Sequence[str], np.ndarray] | None) -> None:
        self._vector_ids: list[str] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        if vectors is None:
            return
        ids, matrix = vectors
        if len(ids) != len(matrix):
            raise ValueError(f"{len(ids)} vector ids for {len(matrix)} rows")
        keep = [i for i, chunk_id in enumerate(ids) if chunk_id in self._chunks]
        self._vector_ids = [ids[i] for i in keep]
        self._matrix = np.asarray(matrix, dtype=np.float32)[keep]

    def _build_keyword_index(self) -> None:
        """Per document, the token lists of its three keyword texts; per token, the
        documents holding it (positions in ``self._docs``)."""
        self._ids = list(self._chunks)
        self._docs: list[tuple[list[str], list[str], list[str]]] = []
        self._lengths: list[int] = []
        self._postings: dict[str, set[int]] = {}
        for i, chunk in enumerate(self._chunks.values()):
            symbol, path, body = (fts_tokens(text) for text in keyword_row(chunk))
            self._docs.append((symbol, path, body))
            self._lengths.append(len(symbol) + len(path) + len(body))
            for token in {*symbol, *path, *body}:
                self._postings.setdefault(token, set()).add(i)
        self._avgdl = sum(self._lengths) / len(self._docs) if self._docs else 0.0

    # --- ChunkReader -------------------------------------------------------------
    def get_chunks(self, ids: Iterable[str]) -> dict[str, Chunk]:
        return {i: self._chunks[i] for i in ids if i in self._chunks}

    def chunks(self, path_prefix: str | None = None) -> Iterator[Chunk]:
        """Chunks ordered by path and start line (longer first), optionally under a
        path or folder."""
        found: Iterable[Chunk] = self._chunks.values()
        if path_prefix:
            prefix = path_prefix.rstrip("/")
            found = [c for c in found if c.path == prefix or c.path.startswith(prefix + "/")]
        yield from sorted(found, key=lambda c: (c.path, c.start_line, -c.end_line))

    def find_symbols(
        self, name: str, column: Literal["qualname", "name"], filters: Filters | None, limit: int
    ) -> list[str]:
        """Ids of chunks whose ``column`` (or qualname) is ``name``: definitions before
        module/window/file chunks, first parts first, shorter paths first."""
        assert column in ("qualname", "name")
        found = [
            c
            for c in self._chunks.values()
            if (getattr(c, column) == name or c.qualname == name) and self._allowed(c, filters)
        ]
        found.sort(key=lambda c: (c.kind in COARSE_KINDS, c.part, len(c.path)))
        return _take([c.id for c in found], limit)

    def get_meta(self, key: str, default: str = "") -> str:
        return self._meta.get(key, default)

    # --- GraphReader -------------------------------------------------------------
    def edges_from(self, chunk_id: str, kind: str | None = None) -> list[Edge]:
        found = [e for e in self._out.get(chunk_id, ()) if not kind or e.kind == kind]
        return sorted(found, key=lambda e: (e.dst, e.kind))  # the protocol's order

    def edges_to(self, chunk_id: str, kind: str | None = None) -> list[Edge]:
        found = [e for e in self._in.get(chunk_id, ()) if not kind or e.kind == kind]
        return sorted(found, key=lambda e: (e.kind, e.src))  # the protocol's order

    def edges_among(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        """(src, dst) of every edge whose two ends are both in ``ids``."""
        wanted = set(ids)
        return [(e.src, e.dst) for e in self._edges if e.src in wanted and e.dst in wanted]

    # --- KeywordIndex ------------------------------------------------------------
    def keyword_search(
        self, terms: Sequence[str], filters: Filters | None, limit: int, weights: KeywordWeights
    ) -> list[str]:
        """Ids of chunks matching any of ``terms``, best BM25 first."""
        n_docs = len(self._docs)
        scores: dict[int, float] = {}
        for term in terms:
            phrase = fts_tokens(term)
            if not phrase or not n_docs:
                continue
            candidates = set.intersection(*(self._postings.get(t, set()) for t in phrase))
            freqs: dict[int, float] = {}
            for doc in candidates:
                counts = [_phrase_count(col, phrase) for col in self._docs[doc]]
                if any(counts):
                    freqs[doc] = sum(w * n for w, n in zip(weights, counts, strict=True))
            if not freqs:
                continue
            idf = math.log((n_docs - len(freqs) + 0.5) / (len(freqs) + 0.5))
            idf = idf if idf > 0 else 1e-6
            for doc, f in freqs.items():
                norm = K1 * (1 - B + B * self._lengths[doc] / self._avgdl)
                scores[doc] = scores.get(doc, 0.0) + idf * f * (K1 + 1) / (f + norm)
        allowed = [doc for doc in scores if self._allowed(self._chunks[self._ids[doc]], filters)]
        allowed.sort(key=lambda doc: (-scores[doc], doc))
        return _take([self._ids[doc] for doc in allowed], limit)

    def document_count(self) -> int:
        return len(self._docs)

    def document_frequency(self, term: str) -> int:
        """Chunks whose keyword texts hold the token ``term`` (a term the tokenizer
        would split, such as ``a_b``, is no token: 0, as from FTS5's vocabulary)."""
        return len(self._postings.get(term, ()))

    # --- VectorSource ------------------------------------------------------------
    def vector_count(self, tier: Tier = "model") -> int:
        return len(self._vector_ids) if tier == "model" else 0

    def generation(self) -> int:
        return 0  # never changes: nothing else writes to it

    def vector_rows(self, tier: Tier = "model") -> VectorRows | None:
        """The model tier's vectors; this store holds no static tier."""
        if tier != "model" or not self._vector_ids:
            return None
        chunks = [self._chunks[i] for i in self._vector_ids]
        return VectorRows(
            list(self._vector_ids),
            self._matrix,
            [c.language for c in chunks],
            [c.kind for c in chunks],
            [c.path for c in chunks],
            [c.repo for c in chunks],
        )

    # --- helpers -------------------------------------------------------------------
    @staticmethod
    def _allowed(chunk: Chunk, filters: Filters | None) -> bool:
        if not filters:
            return True
        return (
            (not filters.languages or chunk.language in filters.languages)
            and (not filters.kinds or chunk.kind in filters.kinds)
            and (not filters.path or path_matches(filters.path, chunk.path))
            and (not filters.repo or chunk.repo == filters.repo)
        )
