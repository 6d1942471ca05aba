"""MCP (Model Context Protocol) tools for coding agents, on the official ``mcp`` SDK (2.x).

:func:`build_mcp` registers nine read-only tools over a :class:`RepoPool`:
``search_code``, ``ask_codebase``, ``read_code``, ``find_callers``, ``find_callees``,
``find_tests``, ``list_repos``, ``index_status`` and ``explain_symbol``. Every result
cites code as ``path:start-end`` (with the repository when the caller can read several).

Access control: every tool call asks ``principal_for_request()`` who is calling and
touches only the repositories that principal may read. A repository that exists but
is not readable gives the same error as one that does not exist
(``no such repository: NAME``), so names of hidden repositories do not leak.

Two transports:

* stdio, one local repository (``codecite mcp [PATH]``): :func:`run_stdio`.
* streamable HTTP, for ``codecite serve``: :func:`mcp_http_app` gives an ASGI app that
  the HTTP server routes ``/mcp`` to, behind its token check. The token check sets
  :data:`CURRENT_PRINCIPAL` for the request; :func:`principal_from_context` reads it.
  The app serves only while :func:`mcp_lifespan` runs — enter it in the FastAPI
  lifespan::

      mcp_server = build_mcp(pool, principal_from_context, limits=config.limits)
      mcp_app = mcp_http_app(mcp_server, limits=config.limits)

      @asynccontextmanager
      async def lifespan(app: FastAPI) -> AsyncIterator[None]:
          async with mcp_lifespan(mcp_app):     # or mcp_lifespan(mcp_server)
              yield

      api = FastAPI(lifespan=lifespan)
      api.add_route("/mcp", mcp_app)            # exact path; mount("/mcp") redirects to /mcp/

  The token check (middleware or an ASGI wrapper around ``mcp_app``) does
  ``token = CURRENT_PRINCIPAL.set(principal)`` before the request and
  ``CURRENT_PRINCIPAL.reset(token)`` after. The app is stateless (no MCP sessions kept
  between requests; JSON responses), so any number of server processes can answer any
  request, and every tool call runs as the caller of the request that carried it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol
from weakref import WeakKeyDictionary

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from starlette.types import Receive, Scope, Send

from ..answer.llm import EXTRACTIVE, LLMChoice, resolve_llm
from ..api import Index, find_index
from ..errors import AmbiguousSymbolError, CodeciteError, IndexMissingError, UserError
from ..filters import Filters
from ..scrub import scrub
from ..store.protocols import ChunkReader, GraphReader
from ..types import Chunk, Edge, Skipped
from ..walk import read_source
from .auth import LOCAL_USER, Principal
from .config import Limits, RepoConfig
from .repos import RepoHit, RepoPool

__all__ = [
    "CURRENT_PRINCIPAL",
    "TOOL_NAMES",
    "MCPHttpApp",
    "NoPrincipalError",
    "build_mcp",
    "mcp_http_app",
    "mcp_lifespan",
    "principal_from_context",
    "run_stdio",
]

log = logging.getLogger(__name__)

#: The caller of the current HTTP request, set by the server's token check before it
#: calls the app of :func:`mcp_http_app` (and reset after). The SDK runs each tool call
#: in the context of the request that carried it, so tools see this value.
CURRENT_PRINCIPAL: ContextVar[Principal | None] = ContextVar("codecite_principal", default=None)

TOOL_NAMES = (
    "search_code",
    "ask_codebase",
    "read_code",
    "find_callers",
    "find_callees",
    "find_tests",
    "list_repos",
    "index_status",
    "explain_symbol",
)
#: Results ``search_code`` returns unless asked for another number.
DEFAULT_K = 8
#: Lines of each hit's code shown in ``search_code``'s text (the rest: ``read_code``).
HIT_LINES = 60
#: Definitions looked at when resolving a symbol; candidates listed when ambiguous.
SYMBOL_LIMIT = 50
#: Callers/callees/tests listed at most.
NEIGHBOUR_LIMIT = 100
#: Kinds that are not definitions (a symbol look-up falls back to them only).
COARSE_KINDS = frozenset({"module", "window", "file", "section"})
#: Stale file names listed by ``index_status`` (the counts are always complete).
STALE_LISTED = 20

SERVER_INSTRUCTIONS = """\
codecite answers questions about indexed code repositories. Every result cites code as \
path:start-end (repository-relative, 1-based, inclusive lines). Start with search_code to \
locate code; read_code shows exact lines around a hit; find_callers, find_callees and \
find_tests follow the code graph from a function, method or class; explain_symbol documents \
one of them (parameters, raises, usage examples, tests); ask_codebase gives a short answer \
with checked citations; list_repos names the repositories you can query."""


class NoPrincipalError(CodeciteError):
    """An MCP request reached the tools without a caller: the HTTP app was mounted
    without the token check that sets :data:`CURRENT_PRINCIPAL`."""


def principal_from_context() -> Principal:
    """The caller of the current request (:data:`CURRENT_PRINCIPAL`); raises
    :class:`NoPrincipalError` when the request was not authenticated."""
    principal = CURRENT_PRINCIPAL.get()
    if principal is None:
        raise NoPrincipalError(
            "not authenticated: this MCP request carries no user (the /mcp app must be "
            "mounted behind the token check that sets CURRENT_PRINCIPAL)"
        )
    return principal


# --- the tools, as plain functions of (principal, arguments) ----------------------------


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns: text for the model, the same facts as JSON for programs."""

    text: str
    data: dict[str, Any]


def citation(path: str, start: int, end: int) -> str:
    return f"{path}:{start}-{end}"


def _chunk_json(chunk: Chunk, repo: str) -> dict[str, Any]:
    return {
        "repo": repo,
        "path": chunk.path,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "citation": citation(chunk.path, chunk.start_line, chunk.end_line),
        "name": chunk.name,
        "qualname": chunk.qualname,
        "kind": chunk.kind,
        "language": chunk.language,
    }


def _label(chunk: Chunk) -> str:
    what = chunk.qualname or chunk.name or chunk.path
    return f"{chunk.kind} {what}" if chunk.kind else what


def _fence(code: str, language: str, max_lines: int) -> str:
    lines = code.split("\n")
    shown = "\n".join(lines[:max_lines])
    more = len(lines) - max_lines
    tail = f"\n… {more} more lines (read_code shows them)" if more > 0 else ""
    ticks = "````" if "```" in shown else "```"
    return f"{ticks}{language}\n{shown}\n{ticks}{tail}"


def _split_list(value: str | list[str] | None) -> list[str]:
    """``"python, go"`` or ``["python", "go"]`` as a list of words."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    return [w.strip() for item in items for w in item.split(",") if w.strip()]


@dataclass(frozen=True)
class Definition:
    """A symbol's definition: its chunks (one, or the parts of a long one)."""

    path: str
    qualname: str
    chunks: tuple[Chunk, ...]

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.chunks]

    @property
    def head(self) -> Chunk:
        return self.chunks[0]

    @property
    def start_line(self) -> int:
        return min(c.start_line for c in self.chunks)

    @property
    def end_line(self) -> int:
        return max(c.end_line for c in self.chunks)

    @property
    def citation(self) -> str:
        return citation(self.path, self.start_line, self.end_line)

    def to_json(self, repo: str) -> dict[str, Any]:
        data = _chunk_json(self.head, repo)
        data.update(start_line=self.start_line, end_line=self.end_line, citation=self.citation)
        return data


def find_definitions(store: ChunkReader, symbol: str) -> list[Definition]:
    """The definitions ``symbol`` names: a qualified name (``Order.mark_paid``), a plain
    name (``mark_paid``), a dotted path ending in a name (``orders.Order.mark_paid``) or
    ``path::qualname``. Exact qualified names win over plain names; definitions win over
    module/file chunks; the parts of a long definition are grouped into one."""
    path, sep, name = symbol.strip().rpartition("::")
    name = name.strip()
    if not sep:
        path = ""
    if not name:
        raise UserError("the symbol is empty; give a function, method or class name")
    ids = store.find_symbols(name, "qualname", None, SYMBOL_LIMIT)
    chunks = [c for c in store.get_chunks(ids).values() if c.qualname == name]
    if not chunks:
        # A plain name, or a dotted path whose last part is the name (pricing.apply_discount).
        ids = store.find_symbols(name.rsplit(".", 1)[-1], "name", None, SYMBOL_LIMIT)
        chunks = list(store.get_chunks(ids).values())
    if path:
        chunks = [c for c in chunks if c.path == path.strip().strip("/")]
    fine = [c for c in chunks if c.kind not in COARSE_KINDS]
    groups: dict[tuple[str, str], list[Chunk]] = {}
    for chunk in fine or chunks:
        groups.setdefault((chunk.path, chunk.qualname), []).append(chunk)
    return [
        Definition(p, q, tuple(sorted(cs, key=lambda c: (c.part, c.start_line))))
        for (p, q), cs in sorted(groups.items(), key=lambda kv: (len(kv[0][0]), kv[0]))
    ]


class GraphStore(ChunkReader, GraphReader, Protocol):
    """What the graph tools read: chunks and edges."""


@dataclass(frozen=True)
class Neighbour:
    """A chunk at the other end of graph edges from a definition."""

    chunk: Chunk
    lines: tuple[int, ...]
    is_test: bool


def graph_neighbours(
    store: GraphStore, definition: Definition, kind: str, direction: str
) -> list[Neighbour]:
    """Chunks linked to ``definition`` by ``kind`` edges (``calls``, ``tests``...):
    ``direction`` "in" gives sources (callers, tests), "out" gives targets (callees).

    This is the graph look-up a public ``Index.neighbours(symbol, kind, direction)``
    would offer; it reads only the :class:`GraphReader` and :class:`ChunkReader`
    protocols."""
    own = set(definition.ids)
    edges: list[Edge] = []
    for chunk_id in definition.ids:
        found = (
            store.edges_to(chunk_id, kind)
            if direction == "in"
            else store.edges_from(chunk_id, kind)
        )
        edges += found
    other: dict[str, list[int]] = {}
    for edge in edges:
        far = edge.src if direction == "in" else edge.dst
        if far not in own:
            other.setdefault(far, []).append(edge.line)
    tested_by: set[str] = set()
    if direction == "in" and kind == "calls":
        for chunk_id in definition.ids:
            tested_by |= {e.src for e in store.edges_to(chunk_id, "tests")}
    found_chunks = store.get_chunks(list(other))
    result = [
        Neighbour(found_chunks[i], tuple(sorted({ln for ln in lines if ln})), i in tested_by)
        for i, lines in other.items()
        if i in found_chunks
    ]
    result.sort(key=lambda n: (n.is_test, n.chunk.path, n.chunk.start_line))
    return result


def with_members(store: ChunkReader, definition: Definition) -> Definition:
    """A class together with its methods (the tests of a class include the tests of its
    methods); any other definition as it is."""
    if definition.head.kind != "class":
        return definition
    prefix = definition.qualname + "."
    members = [
        c
        for c in store.chunks(definition.path)
        if c.path == definition.path and c.qualname.startswith(prefix)
    ]
    return Definition(definition.path, definition.qualname, (*definition.chunks, *members))


def _line_of(chunk: Chunk, line: int) -> str:
    """The text of ``line`` (a file line number) inside ``chunk``, if it holds it."""
    lines = chunk.content.split("\n")
    index = line - chunk.start_line
    return lines[index].strip() if 0 <= index < len(lines) and chunk.kind != "class" else ""


def safe_relative_path(path: str) -> str | None:
    """``path`` as a clean repository-relative POSIX path, or None when it is not one
    (absolute, ``..``, backslashes, NUL, empty)."""
    raw = path.strip()
    if not raw or "\0" in raw or "\\" in raw or raw.startswith("/") or ":" in raw.split("/")[0]:
        return None
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return None
    return "/".join(parts)


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
            raise UserError(f"no such repository: {name}")
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
        return (self.pool.repos[name].index / "index.db").is_file()

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
    ) -> ToolOutput:
        wanted = [self.check_repo(principal, n) for n in _split_list(repos)]
        # Unasked, a repository without an index yet is left out rather than failing all.
        names = wanted or [n for n in self.readable(principal) if self._indexed(n)]
        if not names:
            raise UserError("no indexed repositories are available to you")
        if not query.strip():
            raise UserError("the query is empty; say what to look for")
        if not 1 <= k <= self.limits.max_k:
            raise UserError(f"k must be between 1 and {self.limits.max_k}, got {k}")
        filters = Filters.parse(_split_list(language), path, _split_list(kind))
        hits = self.pool.search(list(dict.fromkeys(names)), query, k=k, filters=filters)
        several = len(self.readable(principal)) > 1
        return ToolOutput(self._hits_text(query, hits, several), self._hits_json(query, hits))

    def _hits_text(self, query: str, hits: list[RepoHit], several: bool) -> str:
        if not hits:
            return (
                f"No indexed code matches {query!r}. Try other words (names of functions, "
                "files or concepts), fewer filters, or list_repos / index_status."
            )
        out = [f"{len(hits)} results for {query!r} (best first):"]
        for rank, item in enumerate(hits, 1):
            c = item.hit.chunk
            where = f" [{item.repo}]" if several else ""
            why = f" — {item.hit.why}" if item.hit.why else ""
            out.append(
                f"\n{rank}. {citation(c.path, c.start_line, c.end_line)}{where} "
                f"{_label(c)} ({c.language}){why}"
            )
            out.append(_fence(c.content, c.language, HIT_LINES))
        return "\n".join(out)

    def _hits_json(self, query: str, hits: list[RepoHit]) -> dict[str, Any]:
        results = []
        for item in hits:
            data = _chunk_json(item.hit.chunk, item.repo)
            data.update(
                score=round(item.score, 6),
                source=item.hit.source,
                why=item.hit.why,
                content=item.hit.chunk.content,
            )
            results.append(data)
        return {"query": query, "results": results}

    # --- ask_codebase -----------------------------------------------------------
    def ask_codebase(
        self, principal: Principal, question: str, repo: str | None = None
    ) -> ToolOutput:
        name = self.pick_repo(principal, repo)
        if not question.strip():
            raise UserError("the question is empty")
        if len(question) > self.limits.max_question_chars:
            raise UserError(
                f"the question is {len(question):,} characters; at most "
                f"{self.limits.max_question_chars:,} are allowed"
            )
        answer = self.pool.ask(name, question, self._choice(name))
        lines = [answer.answer.strip()]
        if answer.citations:
            lines.append("\nCitations:")
            for c in answer.citations:
                state = "verified" if c.verified else "NOT in the retrieved code"
                lines.append(f"- {citation(c.path, c.start_line, c.end_line)} ({state})")
        if answer.sources:
            lines.append(f"\nSources{self._where(principal, name)}:")
            for hit in answer.sources:
                ch = hit.chunk
                lines.append(f"- {citation(ch.path, ch.start_line, ch.end_line)} {_label(ch)}")
        if answer.flags:
            lines.append("\nFlags: " + "; ".join(answer.flags))
        if answer.llm in ("", EXTRACTIVE):
            mode = "extractive answer: quotes and graph facts from the code, no model"
        else:
            mode = f"answered by {answer.llm}"
        if answer.insufficient:
            mode += "; the index does not hold enough to answer this well"
        lines.append(f"\n({mode})")
        data = {
            "repo": name,
            "question": question,
            "answer": answer.answer,
            "citations": [
                {**c.to_json(), "citation": citation(c.path, c.start_line, c.end_line)}
                for c in answer.citations
            ],
            "sources": [_chunk_json(h.chunk, name) for h in answer.sources],
            "insufficient": answer.insufficient,
            "llm": answer.llm,
            "flags": list(answer.flags),
        }
        return ToolOutput("\n".join(lines), data)

    def _choice(self, name: str) -> LLMChoice:
        """The repository's configured answer mode (``llm`` in its codecite.toml or the
        server's ``[codecite]``), resolved once per repository."""
        with self._llm_lock:
            if name in self._llm:
                return self._llm[name]
        with self.pool.using(name) as index:
            config = index.config
        choice = resolve_llm(config.llm, config)
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
        name = self.pick_repo(principal, repo)
        rel = safe_relative_path(path)
        refused = (
            f"refused: {path!r} is not an indexed file of {name}; give a repository-relative "
            "path as in a citation (search_code finds files)"
        )
        if rel is None:
            raise UserError(refused)
        with self.pool.using(name) as index:
            indexed = _is_indexed(index, rel)
            root, config = index.root, index.config
        if not indexed:
            raise UserError(refused)
        target = (root / rel).resolve()
        if not target.is_relative_to(root):
            raise UserError(refused)
        read = read_source(target, rel)
        if isinstance(read, Skipped):
            raise UserError(f"cannot read {rel}: {read.reason} ({read.detail})")
        # The same redaction the index applied: nothing the index hid is shown here.
        text = scrub(read[0], config, path=rel).text
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = len(lines)
        if start_line < 1:
            raise UserError(f"start_line must be 1 or more, got {start_line}")
        if total == 0:
            return ToolOutput(f"{rel} is empty", {"repo": name, "path": rel, "total_lines": 0})
        if start_line > total:
            raise UserError(f"{rel} has {total} lines; start_line {start_line} is past the end")
        cap = self.limits.max_code_lines
        last = total if end_line is None else min(end_line, total)
        if last < start_line:
            raise UserError(f"end_line ({end_line}) is before start_line ({start_line})")
        note = ""
        if last - start_line + 1 > cap:
            last = start_line + cap - 1
            note = f"\n… cut at {cap} lines (the limit); read on with start_line={last + 1}"
        shown = lines[start_line - 1 : last]
        width = len(str(last))
        body = "\n".join(
            f"{n:>{width}}  {line.rstrip(chr(13))}" for n, line in enumerate(shown, start_line)
        )
        cite = citation(rel, start_line, last)
        header = f"{cite}{self._where(principal, name)} ({total} lines in the file)"
        return ToolOutput(
            f"{header}\n{body}{note}",
            {
                "repo": name,
                "path": rel,
                "start_line": start_line,
                "end_line": last,
                "citation": cite,
                "total_lines": total,
                "truncated": bool(note),
                "content": "\n".join(shown),
            },
        )

    # --- the code graph ---------------------------------------------------------
    def find_callers(
        self, principal: Principal, symbol: str, repo: str | None = None
    ) -> ToolOutput:
        return self._graph(principal, symbol, repo, "calls", "in", "callers")

    def find_callees(
        self, principal: Principal, symbol: str, repo: str | None = None
    ) -> ToolOutput:
        return self._graph(principal, symbol, repo, "calls", "out", "callees")

    def find_tests(self, principal: Principal, symbol: str, repo: str | None = None) -> ToolOutput:
        return self._graph(principal, symbol, repo, "tests", "in", "tests")

    def _graph(
        self,
        principal: Principal,
        symbol: str,
        repo: str | None,
        kind: str,
        direction: str,
        what: str,
    ) -> ToolOutput:
        name = self.pick_repo(principal, repo)
        where = self._where(principal, name)
        with self.pool.using(name) as index:
            definitions = find_definitions(index.store, symbol)
            if not definitions:
                raise UserError(
                    f"no function, method or class named {symbol!r} in {name}; names are "
                    "case-sensitive (search_code finds code by description)"
                )
            if len(definitions) > 1:
                return self._ambiguous(symbol, name, definitions, where)
            target = definitions[0]
            scope = with_members(index.store, target) if what == "tests" else target
            found = graph_neighbours(index.store, scope, kind, direction)[:NEIGHBOUR_LIMIT]
        head = f"{what.capitalize()} of {target.qualname} ({target.citation}){where}"
        if not found:
            text = f"{head}: none found in the index."
            if what == "tests":
                text += " No indexed test calls it directly; search_code may find indirect tests."
        else:
            rows = [f"{head}: {len(found)}"]
            for n in found:
                c = n.chunk
                test = ", test" if n.is_test or what == "tests" else ""
                row = f"- {citation(c.path, c.start_line, c.end_line)} {_label(c)}{test}"
                if n.lines:
                    at = {"callers": "calls it at", "callees": "called at"}.get(what, "at")
                    row += f" — {at} line {', '.join(map(str, n.lines))}"
                    code = _line_of(c, n.lines[0]) if direction == "in" else ""
                    if code:
                        row += f": `{code}`"
                rows.append(row)
            text = "\n".join(rows)
        data = {
            "repo": name,
            "symbol": symbol,
            "definition": target.to_json(name),
            what: [
                {**_chunk_json(n.chunk, name), "lines": list(n.lines), "is_test": n.is_test}
                for n in found
            ],
        }
        return ToolOutput(text, data)

    def _ambiguous(
        self, symbol: str, repo: str, definitions: list[Definition], where: str
    ) -> ToolOutput:
        rows = [
            f"{symbol!r} is ambiguous in {repo}{where}: {len(definitions)} definitions. "
            "Call again with symbol set to one of these (path::qualname):"
        ]
        rows += [f"- {d.path}::{d.qualname}  ({d.citation}, {d.head.kind})" for d in definitions]
        data = {
            "repo": repo,
            "symbol": symbol,
            "ambiguous": True,
            "candidates": [
                {**d.to_json(repo), "symbol": f"{d.path}::{d.qualname}"} for d in definitions
            ],
        }
        return ToolOutput("\n".join(rows), data)

    # --- explain_symbol -----------------------------------------------------------
    def explain_symbol(
        self, principal: Principal, symbol: str, repo: str | None = None
    ) -> ToolOutput:
        """The offline explanation (facts from the index, citations checked): the
        agent that asks writes its own prose from it."""
        name = self.pick_repo(principal, repo)
        with self.pool.using(name) as index:
            try:
                explanation = index.explain(symbol)
            except AmbiguousSymbolError as exc:
                return _ambiguous_explain(symbol, name, self._where(principal, name), exc)
        return ToolOutput(explanation.to_markdown(), {"repo": name, **explanation.to_json()})

    # --- repositories -----------------------------------------------------------
    def list_repos(self, principal: Principal) -> ToolOutput:
        names = self.readable(principal)
        repos = [{"name": n, "indexed": self._indexed(n)} for n in names]
        if not repos:
            return ToolOutput("No repositories are available to you.", {"repos": []})
        rows = [f"{len(repos)} {'repository' if len(repos) == 1 else 'repositories'}:"]
        rows += [f"- {r['name']}" + ("" if r["indexed"] else " (not indexed yet)") for r in repos]
        return ToolOutput("\n".join(rows), {"repos": repos})

    def index_status(self, principal: Principal, repo: str | None = None) -> ToolOutput:
        name = self.pick_repo(principal, repo)
        with self.pool.using(name) as index:
            st = index.status()
        languages = ", ".join(f"{k} {v}" for k, v in sorted(st.files_by_language.items()))
        fresh = (
            "up to date with the files"
            if not st.stale_files
            else f"{st.stale_files} files changed since indexing "
            f"({len(st.added)} added, {len(st.modified)} modified, {len(st.deleted)} deleted)"
        )
        rows = [
            f"{name}: {st.files} files, {st.chunks} chunks, {st.edges} graph edges; {fresh}.",
            f"Languages: {languages or 'none'}.",
            f"Embedder: {st.embedder or 'none'} ({st.embedded_fraction:.0%} of chunks embedded).",
        ]
        if st.indexed_commit or st.head_commit:
            same = st.indexed_commit == st.head_commit
            rows.append(
                f"Indexed commit {st.indexed_commit[:12] or '-'}, current commit "
                f"{st.head_commit[:12] or '-'}" + (" (same)." if same else ".")
            )
        stale = [*st.added, *st.modified, *st.deleted]
        if stale:
            listed = ", ".join(stale[:STALE_LISTED])
            more = f" and {len(stale) - STALE_LISTED} more" if len(stale) > STALE_LISTED else ""
            rows.append(f"Changed: {listed}{more}.")
        data = {
            "repo": name,
            "files": st.files,
            "chunks": st.chunks,
            "vectors": st.vectors,
            "edges": st.edges,
            "embedder": st.embedder,
            "embedded_fraction": round(st.embedded_fraction, 4),
            "indexed_commit": st.indexed_commit,
            "head_commit": st.head_commit,
            "files_by_language": st.files_by_language,
            "chunks_by_kind": st.chunks_by_kind,
            "edges_by_kind": st.edges_by_kind,
            "stale_files": st.stale_files,
            "added": st.added[:STALE_LISTED],
            "modified": st.modified[:STALE_LISTED],
            "deleted": st.deleted[:STALE_LISTED],
        }
        return ToolOutput("\n".join(rows), data)


def _ambiguous_explain(symbol: str, repo: str, where: str, exc: AmbiguousSymbolError) -> ToolOutput:
    rows = [
        f"{symbol!r} is ambiguous in {repo}{where}: {len(exc.candidates)} definitions. "
        "Call again with symbol set to one of these (path::qualname):"
    ]
    candidates = []
    for path, start, end, qualname, kind in exc.candidates:
        rows.append(f"- {path}::{qualname}  ({citation(path, start, end)}, {kind})")
        candidates.append(
            {"repo": repo, "symbol": f"{path}::{qualname}", "path": path, "start_line": start,
             "end_line": end, "citation": citation(path, start, end), "qualname": qualname,
             "kind": kind}
        )  # fmt: skip
    data = {"repo": repo, "symbol": symbol, "ambiguous": True, "candidates": candidates}
    return ToolOutput("\n".join(rows), data)


def _is_indexed(index: Index, rel: str) -> bool:
    """Whether ``rel`` is a file with chunks in the index (``chunks(path)`` matches a
    folder prefix too: only an exact path counts)."""
    chunks = index.chunks(rel)
    try:
        return any(chunk.path == rel for chunk in chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


# --- the MCP server -------------------------------------------------------------------

Repo = Annotated[
    str | None,
    Field(description="Repository name (see list_repos); needed only when you can read several."),
]
Symbol = Annotated[
    str,
    Field(
        description="A function, method or class: qualified name (Order.mark_paid), plain name "
        "(checkout), or path::qualname (shop/tax.py::_round_cents) to pick one of several."
    ),
]

DESCRIPTIONS = {
    "search_code": (
        "Find code by meaning or by name. Use this FIRST to locate the code for a question or "
        "task (where something happens, how a feature is built, what a name refers to). Returns "
        "ranked chunks (functions, methods, classes, sections) with path:start-end citations, "
        "why each matched, and their code. Narrow with language, path glob or chunk kind. "
        "Follow up with read_code for surrounding lines, or find_callers / find_callees / "
        "find_tests to follow the code graph."
    ),
    "ask_codebase": (
        "Answer a question about the codebase in a few sentences, grounded in retrieved code, "
        "with citations (path:start-end) checked against that code. Use for 'how does X work' "
        "or 'why does Y happen' when you want an explanation rather than raw hits; it says so "
        "when the index does not hold enough to answer. Slower than search_code; to locate "
        "code, prefer search_code."
    ),
    "read_code": (
        "Read exact lines of an indexed file, with line numbers: use it to see the context "
        "around a search hit or citation before editing or explaining code. path is "
        "repository-relative, as in citations. Lines are 1-based and inclusive; a long range "
        "is cut at the server's limit (call again from where it stopped). Only indexed files "
        "can be read."
    ),
    "find_callers": (
        "Who calls this function, method or class? Use before changing a signature or "
        "behaviour to see what depends on it, or to trace how a code path is reached. Returns "
        "each caller with its citation and the calling line; callers that are tests are "
        "marked. An ambiguous name returns the candidates to choose from."
    ),
    "find_callees": (
        "What does this function or method call? Use to understand what a function depends "
        "on, or to walk down a code path. Returns each callee with its citation and the line "
        "of the call."
    ),
    "find_tests": (
        "Which tests exercise this function, method or class? Use before or after changing "
        "code to know which tests to run, read or update. Returns each test with its citation."
    ),
    "list_repos": (
        "List the repositories you can query, with their names for the repo / repos "
        "arguments of the other tools. Use when a tool asks for a repository or to see what "
        "is available."
    ),
    "explain_symbol": (
        "Explain one function, method or class the way its documentation would: a one-line "
        "summary, parameters and return value with their types, exceptions it raises and "
        "values it returns early, what it calls, 2-3 real call sites as usage examples and "
        "the tests that exercise it with their asserting lines; every statement cited "
        "path:start-end and checked. Use it before changing, reviewing or testing a symbol, "
        "or to document it; one call instead of read_code + find_callers + find_tests. "
        "symbol: a name, path::qualname or path:line; an ambiguous name returns the "
        "candidates to choose from."
    ),
    "index_status": (
        "How complete and fresh a repository's index is: files, chunks, languages, embedder, "
        "the indexed and current commits, and files changed since indexing. Use when results "
        "look stale, incomplete or missing a file you expected."
    ),
}

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def _result(output: ToolOutput) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=output.text)], structured_content=output.data
    )


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def build_mcp(
    pool: RepoPool,
    principal_for_request: Callable[[], Principal],
    *,
    limits: Limits | None = None,
    name: str = "codecite",
) -> MCPServer[Any]:
    """An MCP server with the nine codecite tools over ``pool``.

    Each call asks ``principal_for_request()`` (in the request's context) who is calling,
    then runs the tool on a worker thread. Errors come back as MCP tool errors
    (``isError``) with a short message, never a traceback: a :class:`UserError`'s text,
    or "internal error" (the traceback goes to this process's log)."""
    tools = CodeTools(pool, limits)
    # MCPServer() calls logging.basicConfig (a rich handler on the root logger) when
    # the root logger has no handler yet; the host process owns its logging, so a
    # placeholder handler keeps that call from doing anything.
    root = logging.getLogger()
    placeholder = None if root.handlers else logging.NullHandler()
    if placeholder is not None:
        root.addHandler(placeholder)
    try:
        server: MCPServer[Any] = MCPServer(
            name, instructions=SERVER_INSTRUCTIONS, log_level="WARNING"
        )
    finally:
        if placeholder is not None:
            root.removeHandler(placeholder)

    async def call(tool: str, work: Callable[[Principal], ToolOutput]) -> CallToolResult:
        try:
            principal = principal_for_request()
        except CodeciteError as exc:
            return _error(str(exc))
        except Exception:
            log.exception("%s: who is calling could not be found", tool)
            return _error("internal error: who is calling could not be found")
        try:
            output = await anyio.to_thread.run_sync(work, principal)
        except UserError as exc:
            return _error(str(exc))
        except CodeciteError as exc:
            log.warning("%s failed: %s", tool, exc)
            return _error(f"{tool} failed: {exc}")
        except Exception:
            log.exception("%s failed", tool)
            return _error(f"internal error in {tool}; the server's log has the details")
        return _result(output)

    def register(fn: Callable[..., Awaitable[CallToolResult]]) -> None:
        server.add_tool(
            fn,
            description=DESCRIPTIONS[fn.__name__],
            annotations=READ_ONLY,
            structured_output=False,
        )

    async def search_code(
        query: Annotated[
            str, Field(description="What to look for, in plain words or identifiers.")
        ],
        repos: Annotated[
            list[str] | str | None,
            Field(description="Only these repositories (default: all you can read)."),
        ] = None,
        k: Annotated[int, Field(description="How many results (default 8).")] = DEFAULT_K,
        language: Annotated[
            str | None, Field(description="Only these languages, comma-separated: python, ts, go…")
        ] = None,
        path: Annotated[
            str | None, Field(description="Only paths matching this glob: src/**, *.ts, billing/")
        ] = None,
        kind: Annotated[
            str | None,
            Field(description="Only these chunk kinds, comma-separated: function, method, class…"),
        ] = None,
    ) -> CallToolResult:
        return await call(
            "search_code",
            lambda p: tools.search_code(p, query, repos, k, language, path, kind),
        )

    async def ask_codebase(
        question: Annotated[str, Field(description="The question, in plain words.")],
        repo: Repo = None,
    ) -> CallToolResult:
        return await call("ask_codebase", lambda p: tools.ask_codebase(p, question, repo))

    async def read_code(
        path: Annotated[str, Field(description="Repository-relative file path, as in a citation.")],
        start_line: Annotated[int, Field(description="First line (1-based).")] = 1,
        end_line: Annotated[
            int | None,
            Field(description="Last line, inclusive (default: the end, up to the limit)."),
        ] = None,
        repo: Repo = None,
    ) -> CallToolResult:
        return await call(
            "read_code", lambda p: tools.read_code(p, path, start_line, end_line, repo)
        )

    async def find_callers(symbol: Symbol, repo: Repo = None) -> CallToolResult:
        return await call("find_callers", lambda p: tools.find_callers(p, symbol, repo))

    async def find_callees(symbol: Symbol, repo: Repo = None) -> CallToolResult:
        return await call("find_callees", lambda p: tools.find_callees(p, symbol, repo))

    async def find_tests(symbol: Symbol, repo: Repo = None) -> CallToolResult:
        return await call("find_tests", lambda p: tools.find_tests(p, symbol, repo))

    async def list_repos() -> CallToolResult:
        return await call("list_repos", tools.list_repos)

    async def index_status(repo: Repo = None) -> CallToolResult:
        return await call("index_status", lambda p: tools.index_status(p, repo))

    async def explain_symbol(
        symbol: Annotated[
            str,
            Field(
                description="A function, method or class: qualified name (Order.mark_paid), "
                "plain name (checkout), path::qualname (shop/tax.py::_round_cents) or "
                "path:line (shop/orders.py:105)."
            ),
        ],
        repo: Repo = None,
    ) -> CallToolResult:
        return await call("explain_symbol", lambda p: tools.explain_symbol(p, symbol, repo))

    for fn in (
        search_code,
        ask_codebase,
        read_code,
        find_callers,
        find_callees,
        find_tests,
        list_repos,
        index_status,
        explain_symbol,
    ):
        register(fn)
    return server


# --- stdio: one local repository ------------------------------------------------------


def local_pool(path: Path, index_dir: Path | None = None) -> RepoPool:
    """A pool of the one repository at ``path`` (its index: ``index_dir``, else
    ``path/.codecite``), named after its folder; :class:`IndexMissingError` when there
    is no index."""
    root = path.expanduser().resolve()
    folder = index_dir.expanduser().resolve() if index_dir else root / ".codecite"
    if not (folder / "index.db").is_file():
        raise IndexMissingError(f"no index at {folder}; build one with `codecite index {path}`")
    name = root.name or "repo"
    return RepoPool({name: RepoConfig(name, root, folder)})


def run_stdio(path: Path | None = None, index_dir: Path | None = None) -> None:
    """Serve one local repository over stdio (``codecite mcp``) as :data:`LOCAL_USER`.

    ``path``: the repository (default: the one whose index is nearest above the
    current folder). Raises :class:`IndexMissingError` before serving when there is no
    index. The SDK keeps stdout for the protocol while it serves (stray prints go to
    stderr)."""
    if path is None and index_dir is None:
        found = find_index(".")
        if found is None:
            raise IndexMissingError(
                f"no codecite index in {Path.cwd()} or its parents; build one with "
                "`codecite index PATH` or pass the repository: `codecite mcp PATH`"
            )
        path, index_dir = found.parent, found
    pool = local_pool(path or Path("."), index_dir)
    server = build_mcp(pool, lambda: LOCAL_USER)
    try:
        server.run("stdio")
    finally:
        pool.close()


# --- streamable HTTP ------------------------------------------------------------------


class MCPHttpApp:
    """The ASGI app of MCP over streamable HTTP (stateless, JSON responses).

    Route ``/mcp`` to it behind the token check (``api.add_route("/mcp", app)``; an
    ``api.mount("/mcp", app)`` works too, but answers ``POST /mcp`` with a redirect
    to ``/mcp/``) and run :func:`mcp_lifespan` in the host app's lifespan. Run alone
    (``uvicorn``) it handles the ASGI lifespan itself. Until the lifespan runs,
    requests get 503."""

    def __init__(
        self,
        server: MCPServer[Any],
        security: TransportSecuritySettings | None = None,
        max_body_bytes: int = Limits.max_body_bytes,
    ) -> None:
        self.server = server
        self.security = security or TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.max_body_bytes = max_body_bytes
        self._manager: StreamableHTTPSessionManager | None = None

    @property
    def running(self) -> bool:
        return self._manager is not None

    def _new_manager(self) -> StreamableHTTPSessionManager:
        """A fresh SDK session manager (one can run only once; an app's lifespan may
        run again, e.g. under a second test client). Its Starlette routing is not used:
        the mounting app routes /mcp here."""
        self.server.streamable_http_app(
            streamable_http_path="/",
            stateless_http=True,
            json_response=True,
            transport_security=self.security,
            max_request_body_size=self.max_body_bytes,
        )
        return self.server.session_manager

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Serve MCP requests for the duration of the block."""
        if self._manager is not None:
            raise RuntimeError("the MCP app is already running (mcp_lifespan entered twice)")
        manager = self._new_manager()
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._serve_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        manager = self._manager
        if manager is None:
            await _json_error(
                send, 503, "MCP is not started: run mcp_lifespan(app) in the lifespan"
            )
            return
        await manager.handle_request(scope, receive, send)

    async def _serve_lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        async with self.lifespan():
            await send({"type": "lifespan.startup.complete"})
            while (await receive())["type"] != "lifespan.shutdown":
                pass
        await send({"type": "lifespan.shutdown.complete"})


async def _json_error(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": {"code": status, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


#: The HTTP app of each server given to :func:`mcp_http_app` (for :func:`mcp_lifespan`).
_APPS: WeakKeyDictionary[MCPServer[Any], MCPHttpApp] = WeakKeyDictionary()


def mcp_http_app(
    target: RepoPool | MCPServer[Any],
    principal_for_request: Callable[[], Principal] = principal_from_context,
    *,
    limits: Limits | None = None,
    security: TransportSecuritySettings | None = None,
) -> MCPHttpApp:
    """The ``/mcp`` ASGI app: the tools of :func:`build_mcp` over streamable HTTP.

    ``target``: a pool (the server is built here, asking ``principal_for_request``
    who calls) or a server from :func:`build_mcp`. Stateless (every request stands
    alone, so several server processes can share the traffic) with plain JSON
    responses. ``limits.max_body_bytes`` caps a request body. ``security``: the SDK's
    Host/Origin checks (DNS-rebinding protection); off by default, since the mounting
    app owns the HTTP front."""
    lim = limits or Limits()
    if isinstance(target, MCPServer):
        server = target
    else:
        server = build_mcp(target, principal_for_request, limits=lim)
    app = MCPHttpApp(server, security, lim.max_body_bytes)
    _APPS[server] = app
    return app


def mcp_lifespan(target: MCPHttpApp | MCPServer[Any]) -> AbstractAsyncContextManager[None]:
    """The async context manager that must wrap the host app's life (FastAPI
    ``lifespan``): MCP requests are served only inside it. ``target``: the app of
    :func:`mcp_http_app`, or the server that was given to it."""
    if isinstance(target, MCPHttpApp):
        return target.lifespan()
    app = _APPS.get(target)
    if app is None:
        raise RuntimeError("mcp_lifespan(server): call mcp_http_app(server) first")
    return app.lifespan()
