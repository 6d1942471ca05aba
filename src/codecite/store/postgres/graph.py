"""The code graph in the PostgreSQL store: imports and references kept per file (so
later files can resolve them), and edges keyed by (repo, src, dst, kind) with an index on
(repo, dst, kind), in the orders the protocols demand."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ...types import Edge, Import, Reference
from ..protocols import FileSize, PathEdge, path_edge_order
from .base import PgTables


class GraphTables(PgTables):
    """The graph methods of :class:`~codecite.store.postgres.PostgresStore`."""

    def paths_pointing_to(self, ids: Iterable[str]) -> set[str]:
        """Files with an edge into one of the chunks ``ids`` (callers, importers, tests)."""
        rows = self._fetchall(
            "SELECT DISTINCT s.path FROM edges e JOIN chunks s ON s.repo = e.repo AND "
            "s.id = e.src WHERE e.repo = %s AND e.dst = ANY(%s)",
            (self.repo, list(ids)),
        )
        return {r[0] for r in rows}

    def add_facts(self, path: str, imports: Sequence[Import], refs: Sequence[Reference]) -> None:
        with self._writing() as conn:
            cur = conn.cursor()
            if imports:
                cur.executemany(
                    "INSERT INTO imports (repo, path, module, names, alias, line) "
                    "VALUES (%s, %s, %s, %s, %s, %s)",
                    [
                        (self.repo, path, i.module, json.dumps(list(i.names)), i.alias, i.line)
                        for i in imports
                    ],
                )
            if refs:
                cur.executemany(
                    "INSERT INTO refs (repo, src, path, name, qualifier, kind, line) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [
                        (self.repo, r.chunk_id, path, r.name, r.qualifier, r.kind, r.line)
                        for r in refs
                    ],
                )

    def imports_by_path(self) -> dict[str, list[Import]]:
        out: dict[str, list[Import]] = {}
        for path, module, names, alias, line in self._fetchall(
            "SELECT path, module, names, alias, line FROM imports WHERE repo = %s "
            "ORDER BY path, line, seq",
            (self.repo,),
        ):
            out.setdefault(path, []).append(Import(module, tuple(json.loads(names)), alias, line))
        return out

    def refs_for(
        self,
        *,
        paths: Iterable[str] = (),
        names: Iterable[str] = (),
        srcs: Iterable[str] = (),
        all_refs: bool = False,
    ) -> list[tuple[str, Reference]]:
        """References by source path, referenced name or source chunk, as (path, Reference)."""
        sql = "SELECT path, src, name, qualifier, kind, line FROM refs WHERE repo = %s"
        rows: list[tuple[str, str, str, str, str, int]] = []
        if all_refs:
            rows = self._fetchall(sql + " ORDER BY seq", (self.repo,))
        else:
            for column, values in (("path", paths), ("name", names), ("src", srcs)):
                wanted = sorted(set(values))
                if wanted:
                    rows += self._fetchall(
                        f"{sql} AND {column} = ANY(%s) ORDER BY seq", (self.repo, wanted)
                    )
        seen: set[tuple[object, ...]] = set()
        out: list[tuple[str, Reference]] = []
        for row in rows:
            key = tuple(row)
            if key not in seen:
                seen.add(key)
                out.append((row[0], Reference(row[1], row[2], row[3], row[4], row[5])))
        return out

    def replace_edges(
        self, srcs: Iterable[str], edges: Iterable[Edge], kinds: Sequence[str]
    ) -> None:
        """Drop the edges of ``kinds`` leaving ``srcs``, then insert ``edges`` (the
        first of duplicates is kept)."""
        new = list(edges)
        with self._writing() as conn:
            conn.execute(
                "DELETE FROM edges WHERE repo = %s AND src = ANY(%s) AND kind = ANY(%s)",
                (self.repo, sorted(set(srcs)), list(kinds)),
            )
            if new:
                conn.execute(
                    "INSERT INTO edges (repo, src, dst, kind, line) SELECT %s, s, d, k, l FROM "
                    "unnest(%s::text[], %s::text[], %s::text[], %s::int[]) AS t(s, d, k, l) "
                    "ON CONFLICT DO NOTHING",
                    (
                        self.repo,
                        [e.src for e in new],
                        [e.dst for e in new],
                        [e.kind for e in new],
                        [e.line for e in new],
                    ),
                )

    def prune_edges(self) -> int:
        """Drop edges whose end chunk no longer exists."""
        with self._writing() as conn:
            cur = conn.execute(
                "DELETE FROM edges e WHERE e.repo = %(r)s AND ("
                "NOT EXISTS (SELECT 1 FROM chunks c WHERE c.repo = %(r)s AND c.id = e.src) OR "
                "NOT EXISTS (SELECT 1 FROM chunks c WHERE c.repo = %(r)s AND c.id = e.dst))",
                {"r": self.repo},
            )
            return max(cur.rowcount, 0)

    def edges_from(self, chunk_id: str, kind: str | None = None) -> list[Edge]:
        sql, args = (
            "SELECT src, dst, kind, line FROM edges WHERE repo = %s AND src = %s",
            [
                self.repo,
                chunk_id,
            ],
        )
        if kind:
            sql, args = sql + " AND kind = %s", [*args, kind]
        return [Edge(*r) for r in self._fetchall(sql + " ORDER BY dst, kind", args)]

    def edges_to(self, chunk_id: str, kind: str | None = None) -> list[Edge]:
        sql, args = (
            "SELECT src, dst, kind, line FROM edges WHERE repo = %s AND dst = %s",
            [
                self.repo,
                chunk_id,
            ],
        )
        if kind:
            sql, args = sql + " AND kind = %s", [*args, kind]
        return [Edge(*r) for r in self._fetchall(sql + " ORDER BY kind, src", args)]

    def edges_among(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        """(src, dst) of every edge whose two ends are both in ``ids``."""
        if not ids:
            return []
        wanted = list(dict.fromkeys(ids))
        return [
            (str(s), str(d))
            for s, d in self._fetchall(
                "SELECT src, dst FROM edges WHERE repo = %s AND src = ANY(%s) AND dst = ANY(%s)",
                (self.repo, wanted, wanted),
            )
        ]

    # --- the whole graph by file (GraphOverview) ---------------------------------
    def file_sizes(self) -> list[FileSize]:
        rows = self._fetchall(
            "SELECT path, min(language), count(*), max(end_line) FROM chunks WHERE repo = %s "
            "GROUP BY path",
            (self.repo,),
        )
        sizes = [FileSize(str(p), str(lang), int(n), int(lines)) for p, lang, n, lines in rows]
        return sorted(sizes, key=lambda f: f.path)  # code-point order, as SQLite's

    def path_edges(self, kinds: Sequence[str]) -> list[PathEdge]:
        if not kinds:
            return []
        rows = self._fetchall(
            "SELECT s.path, d.path, e.kind, e.line, s.start_line, s.end_line, s.qualname, "
            "d.qualname FROM edges e "
            "JOIN chunks s ON s.repo = e.repo AND s.id = e.src "
            "JOIN chunks d ON d.repo = e.repo AND d.id = e.dst "
            "WHERE e.repo = %s AND e.kind = ANY(%s)",
            (self.repo, list(kinds)),
        )
        return sorted((PathEdge(*row) for row in rows), key=path_edge_order)
