"""How closely the PostgreSQL store's keyword search ranks as SQLite FTS5's bm25().

Indexes each repository given (keyword index and graph only, no vectors) into SQLite,
copies it into PostgreSQL with ``codecite migrate``'s code, then runs questions
through both stores' ``keyword_search`` and reports, over the top 10: identical lists,
mean overlap, top-1 agreement. The questions are the first sentences of the
repository's docstrings (natural language) and its function names (identifiers), a
fixed sample of each.

    python bench/pg_keyword_agreement.py postgresql://USER@HOST/DB REPO [REPO ...]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

import codecite
from codecite.retrieve.keyword import query_terms
from codecite.store.copy import copy_index
from codecite.store.postgres import PostgresStore
from codecite.store.sqlite import SQLiteStore

WEIGHTS = (4.0, 2.0, 1.0)
QUESTIONS = 50
IDENTIFIERS = 25


def questions(store: SQLiteStore, seed: int = 7) -> list[str]:
    chunks = [c for c in store.chunks() if c.kind in ("function", "method", "class")]
    prose = sorted({c.docstring.split(".")[0].strip() for c in chunks if len(c.docstring) > 20})
    names = sorted({c.name for c in chunks if len(c.name) > 3})
    rng = random.Random(seed)
    return rng.sample(prose, min(QUESTIONS, len(prose))) + rng.sample(
        names, min(IDENTIFIERS, len(names))
    )


def compare(url: str, root: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        idx = codecite.open_index(root, index_dir=Path(folder) / "idx")
        idx.update(embed=False)
        sqlite = idx.store
        assert isinstance(sqlite, SQLiteStore)
        pg = PostgresStore(url, repo=f"agreement-{root.name}")
        copy_index(sqlite, pg)
        same = overlap = top1 = n = 0
        times = {"sqlite": 0.0, "postgres": 0.0}
        for question in questions(sqlite):
            terms = query_terms(question)
            started = time.perf_counter()
            want = sqlite.keyword_search(terms, None, 10, WEIGHTS)
            times["sqlite"] += time.perf_counter() - started
            started = time.perf_counter()
            got = pg.keyword_search(terms, None, 10, WEIGHTS)
            times["postgres"] += time.perf_counter() - started
            if not want:
                continue
            n += 1
            same += got == want
            overlap += len(set(got) & set(want)) / len(want)
            top1 += bool(got) and got[0] == want[0]
        print(
            f"{root.name}: {sqlite.document_count():,} chunks, {n} queries: identical top-10 "
            f"{same / n:.2f}, mean overlap@10 {overlap / n:.3f}, top-1 {top1 / n:.2f}; "
            f"mean ms sqlite {1000 * times['sqlite'] / n:.1f}, "
            f"postgres {1000 * times['postgres'] / n:.1f}"
        )
        pg.clear()
        pg.close()
        idx.close()


if __name__ == "__main__":
    for repo in sys.argv[2:]:
        compare(sys.argv[1], Path(repo).resolve())
