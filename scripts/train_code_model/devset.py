"""The quick development check of a static model during training: vector search
alone over the docstring benchmark's click and requests corpora (``bench/
search_corpus.py``: the same sdists, docstrings stripped, first sentences as
queries), file MRR@10, exact cosine over every chunk. Built once into a JSON file
(chunk texts as codecite embeds them, their paths and lines, the queries).

The full dev benchmarks (``bench/model_bench.py``) decide what ships; this one only
follows a training run (issue 15's ``static_bench.py`` measured the same way).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "bench"))

#: The corpora of the quick check (the first two of search_corpus.PROJECTS).
DEV_PROJECTS = ("click==8.1.8", "requests==2.32.3")
K = 10


def build(workdir: Path) -> dict[str, Any]:
    """Download, strip and chunk the dev corpora; the check's data (cached)."""
    cached = workdir / "devset.json"
    if cached.exists():
        data: dict[str, Any] = json.loads(cached.read_text())
        return data
    from search_corpus import prepare

    import codecite
    from codecite.embed import embed_text

    corpora = []
    for corpus in prepare(DEV_PROJECTS, workdir):
        with codecite.open_index(corpus.root, overrides={"query_log": False}) as index:
            index.update(embed=False)
            chunks = list(index.store.chunks())
        corpora.append(
            {
                "name": corpus.name,
                "texts": [embed_text(c) for c in chunks],
                "spans": [[c.path, c.start_line, c.end_line] for c in chunks],
                "queries": [
                    [g.query, g.relevant[0].path, g.relevant[0].start_line] for g in corpus.golden
                ],
            }
        )
    data = {"projects": list(DEV_PROJECTS), "corpora": corpora}
    cached.write_text(json.dumps(data))
    return data


def file_mrr(data: dict[str, Any], embed: Any) -> float:
    """File MRR@10 of vector search alone; ``embed(texts) -> unit rows``."""
    total, count = 0.0, 0
    for corpus in data["corpora"]:
        docs = embed(corpus["texts"])
        queries = embed([q for q, _, _ in corpus["queries"]])
        paths = [s[0] for s in corpus["spans"]]
        for row, (_, path, _) in zip(queries @ docs.T, corpus["queries"], strict=True):
            files: list[str] = []
            for i in np.argsort(-row):
                if paths[i] not in files:
                    files.append(paths[i])
                if len(files) == K:
                    break
            total += 1.0 / (files.index(path) + 1) if path in files else 0.0
            count += 1
    return total / max(count, 1)
