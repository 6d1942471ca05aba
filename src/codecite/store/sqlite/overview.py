"""The whole graph by file in the SQLite store (:class:`~codecite.store.protocols.GraphOverview`):
file sizes and edges with the paths of their ends, one query each."""

from __future__ import annotations

from collections.abc import Sequence

from ..protocols import FileSize, PathEdge
from .base import Tables


class OverviewTables(Tables):
    """The :class:`GraphOverview` methods of :class:`~codecite.store.sqlite.SQLiteStore`."""

    def file_sizes(self) -> list[FileSize]:
        rows = self.conn.execute(
            "SELECT path, min(language), count(*), max(end_line) FROM chunks "
            "GROUP BY path ORDER BY path"
        )
        return [FileSize(str(p), str(lang), int(n), int(lines)) for p, lang, n, lines in rows]

    def path_edges(self, kinds: Sequence[str]) -> list[PathEdge]:
        if not kinds:
            return []
        marks = ",".join("?" * len(kinds))
        rows = self.conn.execute(
            "SELECT s.path, d.path, e.kind, e.line, s.start_line, s.end_line, s.qualname, "
            "d.qualname FROM edges e JOIN chunks s ON s.id = e.src JOIN chunks d ON d.id = e.dst "
            f"WHERE e.kind IN ({marks}) ORDER BY s.path, e.line, d.path, e.kind",
            list(kinds),
        )
        return [PathEdge(*row) for row in rows]
