"""Copy an embedded SQLite index into the PostgreSQL store (``codecite migrate``):
files, chunks (with their priorities; keyword texts rebuilt by the same
:func:`codecite.identifiers.keyword_row` the indexer uses), imports, references, edges,
both vector tiers (the stored floats, never re-embedded) and the metadata. The target
repository is replaced in one transaction under its writer lock, so a failed copy
leaves it as it was."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..types import Edge, Import, Reference
from .postgres.store import PostgresStore
from .postgres.vectors import DIM_KEYS
from .protocols import TIERS, Tier
from .sqlite.base import row_to_chunk
from .sqlite.store import SQLiteStore

#: Rows read and written per step.
BATCH = 2000
#: Metadata the target keeps its own value of.
OWN_META = frozenset({"format_version"})


@dataclass
class CopyReport:
    """What :func:`copy_index` copied."""

    repo: str
    counts: dict[str, int] = field(default_factory=dict)


def copy_index(
    source: SQLiteStore,
    target: PostgresStore,
    on_step: Callable[[str, int], None] | None = None,
) -> CopyReport:
    """Replace the target repository by a copy of ``source``; ``on_step(what, n)``
    reports progress."""
    step = on_step or (lambda _what, _n: None)
    report = CopyReport(target.repo)
    with target.writer_lock(), target.transaction():
        target.clear()
        conn = source.conn
        files = conn.execute(
            "SELECT path, language, hash, size, mtime_ns, git_blob, n_chunks, secrets, "
            "indexed_at FROM files ORDER BY path"
        ).fetchall()
        for path, language, digest, size, mtime_ns, blob, n_chunks, secrets, at in files:
            target.put_file(
                path, language, digest, size, mtime_ns, blob, n_chunks, secrets, indexed_at=at
            )
        report.counts["files"] = len(files)
        step("files", len(files))
        report.counts["chunks"] = _copy_chunks(source, target, step)
        report.counts["facts"] = _copy_facts(source, target)
        edges = conn.execute("SELECT src, dst, kind, line FROM edges ORDER BY src, dst").fetchall()
        target.replace_edges((), [Edge(*e) for e in edges], ())
        report.counts["edges"] = len(edges)
        step("edges", len(edges))
        for tier in TIERS:
            report.counts[f"{tier}_vectors"] = _copy_vectors(source, target, tier)
            step(f"{tier} vectors", report.counts[f"{tier}_vectors"])
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        target.set_meta({k: str(v) for k, v in meta.items() if k not in OWN_META})
    for each in TIERS:  # build the HNSW indexes (outside the transaction)
        dim = int(meta.get(DIM_KEYS[each], 0) or 0)
        if dim and report.counts[f"{each}_vectors"]:
            target.export_vectors(dim, each)
    target.analyze()
    return report


def _copy_chunks(
    source: SQLiteStore, target: PostgresStore, step: Callable[[str, int], None]
) -> int:
    from ..identifiers import keyword_row
    from .sqlite.base import CHUNK_COLS

    cur = source.conn.execute(f"SELECT {CHUNK_COLS}, priority FROM chunks ORDER BY rowid")
    done = 0
    while rows := cur.fetchmany(BATCH):
        chunks = [row_to_chunk(r[:-1]) for r in rows]
        target.add_chunks(chunks, [float(r[-1]) for r in rows], [keyword_row(c) for c in chunks])
        done += len(rows)
        step("chunks", done)
    return done


def _copy_facts(source: SQLiteStore, target: PostgresStore) -> int:
    imports: dict[str, list[Import]] = {}
    for path, module, names, alias, line in source.conn.execute(
        "SELECT path, module, names, alias, line FROM imports ORDER BY rowid"
    ):
        imports.setdefault(path, []).append(Import(module, tuple(json.loads(names)), alias, line))
    refs: dict[str, list[Reference]] = {}
    for src, path, name, qualifier, kind, line in source.conn.execute(
        "SELECT src, path, name, qualifier, kind, line FROM refs ORDER BY rowid"
    ):
        refs.setdefault(path, []).append(Reference(src, name, qualifier, kind, line))
    for path in sorted({*imports, *refs}):
        target.add_facts(path, imports.get(path, []), refs.get(path, []))
    return sum(map(len, imports.values())) + sum(map(len, refs.values()))


def _copy_vectors(source: SQLiteStore, target: PostgresStore, tier: Tier) -> int:
    table = {"model": "vectors", "static": "static_vectors"}[tier]
    cur = source.conn.execute(f"SELECT chunk_id, content_hash, vec FROM {table} ORDER BY rowid")
    done = 0
    while rows := cur.fetchmany(BATCH):
        by_width: dict[int, list[tuple[str, str, bytes]]] = {}
        for chunk_id, digest, blob in rows:
            by_width.setdefault(len(blob), []).append((chunk_id, digest, blob))
        for group in by_width.values():
            matrix = np.frombuffer(b"".join(b for _, _, b in group), dtype=np.float32)
            target.put_vector_rows(
                [g[0] for g in group],
                [g[1] for g in group],
                matrix.reshape(len(group), -1),
                tier,
            )
        done += len(rows)
    return done


def migrate(folder: Path, url: str, repo_name: str | None = None) -> CopyReport:
    """Copy the SQLite index in ``folder`` into the PostgreSQL store at ``url`` as
    repository ``repo_name`` (default: the index's own name); vectors are copied, not
    recomputed, and the repository's rows in the target are replaced."""
    from ..errors import IndexMissingError, UserError
    from .postgres.store import PostgresStore
    from .sqlite.base import DB_NAME
    from .urls import is_postgres_url

    if not is_postgres_url(url):
        raise UserError("--to takes a postgresql:// URL: postgresql://USER@HOST/DATABASE")
    if not (folder / DB_NAME).is_file():
        raise IndexMissingError(f"no index at {folder}; give the index folder with --from DIR")
    sqlite = SQLiteStore(folder, create=False, readonly=True)
    try:
        name = repo_name or sqlite.get_meta("repo") or folder.parent.name
        root = Path(sqlite.get_meta("root") or folder.parent)
        postgres = PostgresStore(url, repo=name, index_dir=root / ".codecite")
        try:
            return copy_index(sqlite, postgres)
        finally:
            postgres.close()
    finally:
        sqlite.close()
