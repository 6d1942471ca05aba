"""The tools' logic over a :class:`RepoPool`, for one principal per call: which
repositories the caller may read, what the arguments mean, what the index says.
The MCP layer (:mod:`.server`) exposes these methods; :mod:`.results` writes what they return."""

from __future__ import annotations

import threading

from ... import Filters, Index, LLMChoice, clean_path, index_exists
from ...errors import AmbiguousSymbolError, NotIndexedFileError, UserError
from ..auth import Principal
from ..config import Limits
from ..repos import RepoPool
from . import results
from .results import ToolOutput
from .symbols import find_definitions, graph_neighbours, with_members

#: Results ``search_code`` returns unless asked for another number.
DEFAULT_K = 8
#: Callers/callees/tests listed at most.
NEIGHBOUR_LIMIT = 100


class Refused(UserError):
    """A repository the caller may not read (the same answer as for one that does not
    exist: HTTP-like ``status`` 403), or a path that is not an indexed file (404)."""

    def __init__(self, message: str, status: int = 403) -> None:
        super().__init__(message)
        self.status = status


def split_list(value: str | list[str] | None) -> list[str]:
    """``"python, go"`` or ``["python", "go"]`` as a list of words."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    return [w.strip() for item in items for w in item.split(",") if w.strip()]


def safe_relative_path(path: str) -> str | None:
    """``path`` as a clean repository-relative POSIX path, or None when it is not one
    (absolute, ``..``, backslashes, NUL, empty)."""
    return clean_path(path)


def is_indexed(index: Index, rel: str) -> bool:
    """Whether ``rel`` is a file with chunks in the index (``chunks(path)`` matches a
    folder prefix too: only an exact path counts)."""
    chunks = index.chunks(rel)
    try:
        return any(chunk.path == rel for chunk in chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


class CodeTools:
    """The tools' logic over a pool, for one principal per call; synchronous (the MCP
    layer runs each call on a worker thread)."""

    def __init__(self, pool: RepoPool, limits: Limits | None = None) -> None:
        self.pool = pool
        self.limits = limits or Limits()
        self._llm: dict[str, LLMChoice] = {}
        self._llm_lock = threading.Lock()

    # --- access -----------------------------------------------------------------
    def readable(self, principal: Principal) -> list[str]:
        return principal.readable(self.pool.names())

    def check_repo(self, principal: Principal, name: str) -> str:
        """``name`` when the principal may read it; the same error for a hidden
        repository as for one that does not exist."""
        if name not in self.readable(principal):
            raise Refused(f"no such repository: {name}")
        return name

    def pick_repo(self, principal: Principal, name: str | None) -> str:
        if name:
            return self.check_repo(principal, name.strip())
        names = self.readable(principal)
        if len(names) == 1:
            return names[0]
        if not names:
            raise UserError("no repositories are available to you")
        raise UserError(f"several repositories are available ({', '.join(names)}); pass repo=NAME")

    def _indexed(self, name: str) -> bool:
        return index_exists(self.pool.repos[name].index)

    def _where(self, principal: Principal, repo: str) -> str:
        """`` [repo]`` when the principal reads several repositories."""
        return f" [{repo}]" if len(self.readable(principal)) > 1 else ""

    # --- search_code ------------------------------------------------------------
    def search_code(
        self,
        principal: Principal,
        query: str,
        repos: list[str] | str | None = None,
        k: int = DEFAULT_K,
        language: str | list[str] | None = None,
        path: str | None = None,
        kind: str | list[str] | None = None,
        files: bool = False,
    ) -> ToolOutput:
        self.limits.check_question(query, "query")  # the API's limits, on every surface
        self.limits.check_name(path or "", "path glob")
        wanted = [self.check_repo(principal, n) for n in split_list(repos)]
        # Unasked, a repository without an index yet is left out rather than failing all.
        names = wanted or [n for n in self.readable(principal) if self._indexed(n)]
        if not names:
            raise UserError("no indexed repositories are available to you")
        if not 1 <= k <= self.limits.max_k:
            raise UserError(f"k must be between 1 and {self.limits.max_k}, got {k}")
        filters = Filters.parse(split_list(language), path, split_list(kind))
        several = len(self.readable(principal)) > 1
        if files:
            ranked = self.pool.search_files(list(dict.fromkeys(names)), query, k=k, filters=filters)
            return results.files_output(query, ranked, several)
        hits = self.pool.search(list(dict.fromkeys(names)), query, k=k, filters=filters)
        return results.hits_output(query, hits, len(self.readable(principal)) > 1)

    # --- ask_codebase -----------------------------------------------------------
    def ask_codebase(
        self, principal: Principal, question: str, repo: str | None = None
    ) -> ToolOutput:
        self.limits.check_question(question)
        name = self.pick_repo(principal, repo)
        answer = self.pool.ask(name, question, self._choice(name))
        return results.answer_output(name, self._where(principal, name), question, answer)

    def _choice(self, name: str) -> LLMChoice:
        """The repository's configured answer mode (``llm`` in its codecite.toml or the
        server's ``[codecite]``), resolved once per repository."""
        with self._llm_lock:
            if name in self._llm:
                return self._llm[name]
        with self.pool.using(name) as index:
            config = index.config
        choice = index.choose_llm(config.answer.llm)  # outside the lock: it may ask a server
        with self._llm_lock:
            return self._llm.setdefault(name, choice)

    # --- read_code --------------------------------------------------------------
    def read_code(
        self,
        principal: Principal,
        path: str,
        start_line: int = 1,
        end_line: int | None = None,
        repo: str | None = None,
    ) -> ToolOutput:
        """Lines of an indexed file, read as every surface reads file text
        (:meth:`codecite.Index.read_lines`: redacted as the index was), cut at the
        server's ``max_code_lines`` / ``max_code_chars`` with a note saying so."""
        self.limits.check_name(path, "path")
        name = self.pick_repo(principal, repo)
        try:
            with self.pool.using(name) as index:
                shown = index.read_lines(
                    path,
                    start_line,
                    end_line,
                    max_lines=self.limits.max_code_lines,
                    max_chars=self.limits.max_code_chars,
                )
        except NotIndexedFileError:
            raise Refused(
                f"refused: {path!r} is not an indexed file of {name}; give a "
                "repository-relative path as in a citation (search_code finds files)",
                404,
            ) from None
        if shown.total_lines == 0:
            data = {"repo": name, "path": shown.path, "total_lines": 0}
            return ToolOutput(f"{shown.path} is empty", data)
        return results.lines_output(name, self._where(principal, name), shown, self.limits)

    # --- the code graph ---------------------------------------------------------
    def find_callers(
        self, principal: Principal, symbol: str, repo: str | None = None
    ) -> ToolOutput:
        return self._graph(principal, symbol, repo, "callers")

    def find_callees(
        self, principal: Principal, symbol: str, repo: str | None = None
    ) -> ToolOutput:
        return self._graph(principal, symbol, repo, "callees")

    def find_tests(self, principal: Principal, symbol: str, repo: str | None = None) -> ToolOutput:
        return self._graph(principal, symbol, repo, "tests")

    def _graph(
        self, principal: Principal, symbol: str, repo: str | None, relation: str
    ) -> ToolOutput:
        """The ``relation`` (callers, callees, tests) of the definition ``symbol`` names."""
        self.limits.check_name(symbol, "symbol")
        name = self.pick_repo(principal, repo)
        where = self._where(principal, name)
        with self.pool.using(name) as index:
            definitions = find_definitions(index, symbol)
            if not definitions:
                raise UserError(
                    f"no function, method or class named {symbol!r} in {name}; names are "
                    "case-sensitive (search_code finds code by description)"
                )
            if len(definitions) > 1:
                return results.ambiguous_definitions(symbol, name, where, definitions)
            target = definitions[0]
            scope = with_members(index, target) if relation == "tests" else target
            found = graph_neighbours(index, scope, relation)[:NEIGHBOUR_LIMIT]
        return results.graph_output(name, where, symbol, target, relation, found)

    # --- explain_symbol -----------------------------------------------------------
    def explain_symbol(
        self, principal: Principal, symbol: str, repo: str | None = None
    ) -> ToolOutput:
        """The offline explanation (facts from the index, citations checked): the
        agent that asks writes its own prose from it."""
        self.limits.check_name(symbol, "symbol")
        name = self.pick_repo(principal, repo)
        with self.pool.using(name) as index:
            try:
                explanation = index.explain(symbol)
            except AmbiguousSymbolError as exc:
                return results.ambiguous_explain(symbol, name, self._where(principal, name), exc)
        return ToolOutput(explanation.markdown, {"repo": name, **explanation.to_json()})

    # --- repositories -----------------------------------------------------------
    def list_repos(self, principal: Principal) -> ToolOutput:
        names = self.readable(principal)
        return results.repos_output([{"name": n, "indexed": self._indexed(n)} for n in names])

    def index_status(self, principal: Principal, repo: str | None = None) -> ToolOutput:
        name = self.pick_repo(principal, repo)
        with self.pool.using(name) as index:
            st = index.status()
        return results.status_output(name, st)
