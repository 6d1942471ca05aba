"""Baselines for the search benchmark (used by ``bench/search_bench.py``; run that).

- :class:`BM25Files`: Okapi BM25 (k1=1.2, b=0.75) over whole files with plain
  lower-cased word tokens, in numpy; ranks files.
- :class:`NaiveRAG`: the tutorial pipeline: fixed 2,000-character chunks with
  200 characters of overlap over each file, the raw chunk text embedded with the
  same model as codecite, dense cosine only.

Both return :class:`codecite.evaluate.Retrieved` lists; a file-level result
spans the whole file.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from codecite.embed import Embedder
from codecite.evaluate import Retrieved

WORD = re.compile(r"\w+")
BM25_K1 = 1.2
BM25_B = 0.75
CHUNK_CHARS = 2000
CHUNK_OVERLAP = 200
EMBED_BATCH = 32


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (``\\w+``): no identifier splitting, no stemming."""
    return WORD.findall(text.lower())


class BM25Files:
    """BM25 over whole files: a dense (files x vocabulary) weight matrix in numpy."""

    def __init__(
        self,
        files: dict[str, str],
        k1: float = BM25_K1,
        b: float = BM25_B,
        counts: Mapping[str, Counter[str]] | None = None,
    ) -> None:
        """``counts``: precomputed ``Counter(tokenize(text))`` of some paths (a cache
        keyed by content, e.g. in ``bugs_bench.py``); the others are tokenized here."""
        self.paths = list(files)
        self.lines = [files[p].count("\n") + 1 for p in self.paths]
        given = counts or {}
        counters = [given.get(p) or Counter(tokenize(files[p])) for p in self.paths]
        vocab = sorted(set().union(*counters)) if counters else []
        self.vocab = {term: i for i, term in enumerate(vocab)}
        tf = np.zeros((len(self.paths), len(vocab)), dtype=np.float32)
        for row, counter in enumerate(counters):
            for term, n in counter.items():
                tf[row, self.vocab[term]] = n
        lengths = tf.sum(axis=1, keepdims=True)
        avg = float(lengths.mean()) if len(self.paths) else 1.0
        df = (tf > 0).sum(axis=0)
        n = len(self.paths)
        self.idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
        norm = k1 * (1.0 - b + b * lengths / max(avg, 1e-9))
        self.weights = (tf * (k1 + 1.0) / (tf + norm)).astype(np.float32)

    def search(self, query: str, k: int = 10) -> list[Retrieved]:
        cols = [self.vocab[t] for t in tokenize(query) if t in self.vocab]
        if not cols:
            return []
        # A term repeated in the query counts once per occurrence, as in Okapi BM25.
        scores = self.weights[:, cols] @ self.idf[cols]
        order = [i for i in np.argsort(-scores, kind="stable")[:k] if scores[i] > 0]
        return [Retrieved(self.paths[i], 1, self.lines[i]) for i in order]


@dataclass(frozen=True)
class TextChunk:
    path: str
    start_line: int
    end_line: int
    text: str


def char_chunks(
    path: str, text: str, size: int = CHUNK_CHARS, overlap: int = CHUNK_OVERLAP
) -> list[TextChunk]:
    """Fixed-size character windows, ``overlap`` characters shared by neighbours."""
    out: list[TextChunk] = []
    step = size - overlap
    for start in range(0, max(len(text) - overlap, 1), step):
        piece = text[start : start + size]
        if not piece.strip():
            continue
        first = text.count("\n", 0, start) + 1
        out.append(TextChunk(path, first, first + piece.rstrip("\n").count("\n"), piece))
    return out


class NaiveRAG:
    """Dense-only retrieval over character windows (the tutorial pipeline)."""

    def __init__(
        self,
        files: dict[str, str],
        embedder: Embedder,
        embed_documents: Callable[[Sequence[str]], np.ndarray] | None = None,
    ) -> None:
        self.embedder = embedder
        self.chunks = [c for path, text in files.items() for c in char_chunks(path, text)]
        texts = [c.text for c in self.chunks]
        if embed_documents is None:
            parts = [
                embedder.embed(texts[i : i + EMBED_BATCH], "document")
                for i in range(0, len(texts), EMBED_BATCH)
            ]
            self.matrix = np.vstack(parts) if parts else np.zeros((0, embedder.dim), np.float32)
        else:
            self.matrix = embed_documents(texts)

    def search(self, query: str, k: int = 10) -> list[Retrieved]:
        vector = self.embedder.embed([query], "query")[0]
        scores = self.matrix @ vector
        top = np.argsort(-scores, kind="stable")[:k]
        return [
            Retrieved(self.chunks[i].path, self.chunks[i].start_line, self.chunks[i].end_line)
            for i in top
        ]


def bm25_reference(
    files: dict[str, str], query: str, k1: float = BM25_K1, b: float = BM25_B
) -> dict[str, float]:
    """Plain-Python BM25 scores, to check :class:`BM25Files` against."""
    docs = {p: tokenize(t) for p, t in files.items()}
    avg = sum(len(d) for d in docs.values()) / max(len(docs), 1)
    scores = dict.fromkeys(docs, 0.0)
    for term in tokenize(query):
        df = sum(1 for d in docs.values() if term in d)
        if not df:
            continue
        idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        for path, doc in docs.items():
            tf = doc.count(term)
            scores[path] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avg))
    return scores
