"""The store decides its backend once, and every SQL string lives under ``store/``
(docs/DESIGN.md §2, §5; issue 22): checked on the package's source with :mod:`ast`.

Outside ``src/codecite/store/`` no string constant (an f-string's literal parts
included) may open an SQL statement, no code may name ``is_postgres_url``, and no
``isinstance`` may test for a backend's class (``SQLiteStore``, ``PostgresStore``):
callers ask the store (``Store.shared``, ``embedding_cache()``, ``index_exists``,
``is_shared_store``) instead."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import codecite

PACKAGE = Path(codecite.__file__).parent
#: What opens an SQL statement (case-insensitive, after blanks and ``--`` comments):
#: a keyword with the word that makes it SQL, so that prose ("Update the index",
#: "select files") does not count.
SQL = re.compile(
    r"""(
      SELECT\s.*\bFROM\b | SELECT\s+[\w.]+\s*\( | SELECT\s+\d
    | INSERT\s+(OR\s+\w+\s+)?INTO\b | REPLACE\s+INTO\b
    | UPDATE\s+[\w."]+\s+SET\b | DELETE\s+FROM\b
    | (CREATE|DROP)\s+(OR\s+REPLACE\s+)?(TEMP(ORARY)?\s+)?(UNIQUE\s+)?(VIRTUAL\s+)?
      (TABLE|INDEX|TRIGGER|SCHEMA|EXTENSION|FUNCTION|VIEW|SEQUENCE|TYPE|DATABASE)\b
    | ALTER\s+(TABLE|INDEX|SCHEMA|DATABASE|SYSTEM)\b
    | WITH\s+(RECURSIVE\s+)?\w+(\s*\([^)]*\))?\s+AS\s*\(
    | PRAGMA\s+\w+
    | BEGIN\s+(IMMEDIATE|EXCLUSIVE|DEFERRED|TRANSACTION)\s*;?\s*$
    | (SAVEPOINT|RELEASE\s+SAVEPOINT|ROLLBACK\s+TO)\s+\w+
    | TRUNCATE\s+TABLE\b | LOCK\s+TABLE\b | ANALYZE\s+[\w."]+\s*;?\s*$
    | SET\s+(LOCAL|SESSION)\s | SET\s+(search_path|default_transaction_\w+)\b
    | COPY\s+[\w."]+(\s*\([^)]*\))?\s+(FROM|TO)\s+(STDIN|STDOUT)\b
    | EXPLAIN\s+(ANALYZE|SELECT)\b
    )""",
    re.IGNORECASE | re.DOTALL | re.VERBOSE,
)
#: A statement of one keyword: upper case only ("commit" is git's, "begin" English).
BARE = re.compile(r"(BEGIN|COMMIT|ROLLBACK|VACUUM|ANALYZE|END)\s*;?\s*$")
_LEAD = re.compile(r"(\s+|--[^\n]*(\n|$))*")
BACKEND_CLASSES = frozenset({"SQLiteStore", "PostgresStore"})


def is_sql(text: str) -> bool:
    """Whether ``text`` opens an SQL statement."""
    start = _LEAD.match(text).end()  # type: ignore[union-attr]
    return SQL.match(text, start) is not None or BARE.match(text, start) is not None


def _outside_store(root: Path) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] != "store":
            yield rel.as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path))


def sql_strings(root: Path) -> list[str]:
    """``path:line: text`` of every string constant opening an SQL statement (an
    f-string's first literal part counts) in a module outside ``store/``."""
    found = []
    for rel, tree in _outside_store(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                parts = node.values[:1]
            elif isinstance(node, ast.Constant):
                parts = [node]
            else:
                continue
            for part in parts:
                text = part.value if isinstance(part, ast.Constant) else None
                if isinstance(text, str) and is_sql(text):
                    found.append(f"{rel}:{node.lineno}: {text.strip()[:60]!r}")
    return sorted(set(found))


def _names(node: ast.expr) -> set[str]:
    if isinstance(node, ast.Tuple):
        return {name for element in node.elts for name in _names(element)}
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    return set()


def backend_checks(root: Path) -> list[str]:
    """``path:line: what`` of every use of ``is_postgres_url`` and every ``isinstance``
    test for a backend's class in a module outside ``store/``."""
    found = []
    for rel, tree in _outside_store(root):
        for node in ast.walk(tree):
            named = (
                (isinstance(node, ast.Name) and node.id == "is_postgres_url")
                or (isinstance(node, ast.Attribute) and node.attr == "is_postgres_url")
                or (
                    isinstance(node, ast.ImportFrom)
                    and any(a.name == "is_postgres_url" for a in node.names)
                )
            )
            if named:
                found.append(f"{rel}:{node.lineno}: is_postgres_url")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance"
                and len(node.args) == 2
                and _names(node.args[1]) & BACKEND_CLASSES
            ):
                found.append(f"{rel}:{node.lineno}: isinstance({ast.unparse(node.args[1])})")
    return sorted(set(found))


def test_every_sql_string_lives_under_store() -> None:
    assert sql_strings(PACKAGE) == []


def test_the_store_alone_tells_its_backends_apart() -> None:
    assert backend_checks(PACKAGE) == []


def test_the_checks_see_sql_and_backend_tests(tmp_path: Path) -> None:
    """The scanner finds what it must (as the code before issue 22 had it) and leaves
    prose alone."""
    for sql in (
        "SELECT key, value FROM meta",
        "\n-- the cache\nCREATE TABLE IF NOT EXISTS embeddings (model TEXT)",
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        "UPDATE codecite_job_runs SET finished_at = %s",
        "DELETE FROM audit WHERE time < ?",
        "PRAGMA busy_timeout = 10000",
        "BEGIN IMMEDIATE",
        "COMMIT",
        "SELECT pg_advisory_xact_lock(%s)",
        "WITH gone AS (DELETE FROM chunks RETURNING id) SELECT 1",
        "COPY chunks (repo, id) FROM STDIN",
        "SET LOCAL search_path TO codecite",
    ):
        assert is_sql(sql), sql
    for prose in (
        "Update the index with what changed.",
        "select a model with --embedder",
        "create one with `codecite index`",
        "set CODECITE_LLM_MODEL to use a model",
        "Delete the saved quantized model (it failed to load).",
        "with --mine give only the repository PATH",
        "Copy the SQLite index folder into PostgreSQL",
        "begin",
        "commit",
        "replace",
    ):
        assert not is_sql(prose), prose
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "ok.py").write_text('Q = "SELECT 1 FROM t"\nis_postgres_url("x")\n')
    (tmp_path / "state.py").write_text(
        "from .store.urls import is_postgres_url\n"
        'TABLE = f"CREATE TABLE {SCHEMA}.embedding_cache (k text)"\n'
        "def f(store, where):\n"
        '    store.execute(f"SELECT value FROM {where} WHERE key = ?")\n'
        "    return isinstance(store, (SQLiteStore, int)) or isinstance(store, x.PostgresStore)\n"
    )
    assert sql_strings(tmp_path) == [
        "state.py:2: 'CREATE TABLE'",
        "state.py:4: 'SELECT value FROM'",
    ]
    assert backend_checks(tmp_path) == [
        "state.py:1: is_postgres_url",
        "state.py:5: isinstance((SQLiteStore, int))",
        "state.py:5: isinstance(x.PostgresStore)",
    ]
