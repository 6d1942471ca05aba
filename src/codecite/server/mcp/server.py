"""The MCP server: :func:`build_mcp` registers the nine tools of :class:`CodeTools`
with the SDK, each asking who is calling and running on a worker thread."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from ...errors import CodeciteError, IndexMissingError, LLMError, TooLargeError, UserError
from ..auth import Principal
from ..config import Limits
from ..repos import RepoPool
from ..state import AuditRecord
from .descriptions import DESCRIPTIONS, READ_ONLY, SERVER_INSTRUCTIONS, Repo, Symbol
from .principal import CURRENT_CLIENT
from .results import ToolOutput
from .tools import DEFAULT_K, CodeTools, Refused, split_list

log = logging.getLogger(__name__)


#: Where each tool call's audit row goes (the HTTP server's state database).
AuditSink = Callable[[AuditRecord], None]
#: Locations kept in one audit row (a long result list is cut, never code).
MAX_AUDITED_LOCATIONS = 200


def build_mcp(
    pool: RepoPool,
    principal_for_request: Callable[[], Principal],
    *,
    limits: Limits | None = None,
    name: str = "codecite",
    audit: AuditSink | None = None,
) -> MCPServer[Any]:
    """An MCP server with the nine codecite tools over ``pool``.

    Each call asks ``principal_for_request()`` (in the request's context) who is calling,
    then runs the tool on a worker thread. Errors come back as MCP tool errors
    (``isError``) with a short message, never a traceback: a :class:`UserError`'s text,
    or "internal error" (the traceback goes to this process's log). With ``audit``,
    every tool call leaves one row, as a REST request does: user, client, the tool
    (endpoint ``/mcp/tools/NAME``), repositories, the question (scrubbed when stored),
    result and citation locations, and a status (403/404 for a refusal, 413 over a
    limit, 400 for another mistake, 500 for an internal error)."""
    server = _new_server(name)
    handlers = ToolHandlers(CodeTools(pool, limits), principal_for_request, audit)
    for fn in handlers.all():
        server.add_tool(
            fn,
            description=DESCRIPTIONS[fn.__name__],
            annotations=READ_ONLY,
            structured_output=False,
        )
    return server


def _new_server(name: str) -> MCPServer[Any]:
    # MCPServer() calls logging.basicConfig (a rich handler on the root logger) when
    # the root logger has no handler yet; the host process owns its logging, so a
    # placeholder handler keeps that call from doing anything.
    root = logging.getLogger()
    placeholder = None if root.handlers else logging.NullHandler()
    if placeholder is not None:
        root.addHandler(placeholder)
    try:
        return MCPServer(name, instructions=SERVER_INSTRUCTIONS, log_level="WARNING")
    finally:
        if placeholder is not None:
            root.removeHandler(placeholder)


def _result(output: ToolOutput) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=output.text)], structured_content=output.data
    )


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def status_of(exc: BaseException) -> int:
    """The HTTP-like status a failed tool call is audited with."""
    if isinstance(exc, Refused):
        return exc.status
    if isinstance(exc, TooLargeError):
        return 413
    if isinstance(exc, IndexMissingError):
        return 409
    if isinstance(exc, LLMError):
        return 502
    if isinstance(exc, UserError):
        return 400
    return 500


def locations(data: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(result locations, citation locations) ``repo:path:start-end`` in a tool's JSON
    (never code), each list at most :data:`MAX_AUDITED_LOCATIONS` long."""
    default = str(data.get("repo", ""))
    results: list[str] = []
    cited: list[str] = []

    def walk(value: Any, into: list[str], repo: str) -> None:
        if isinstance(value, dict):
            repo = str(value.get("repo") or repo)
            if {"path", "start_line", "end_line"} <= set(value):
                into.append(f"{repo}:{value['path']}:{value['start_line']}-{value['end_line']}")
            for key, item in value.items():
                walk(item, cited if key == "citations" else into, repo)
        elif isinstance(value, list):
            for item in value:
                walk(item, into, repo)

    walk(data, results, default)
    return (
        list(dict.fromkeys(results))[:MAX_AUDITED_LOCATIONS],
        list(dict.fromkeys(cited))[:MAX_AUDITED_LOCATIONS],
    )


class ToolHandlers:
    """The tools as the SDK registers them: each method's name is a tool's name and its
    parameters (with their descriptions) the tool's input schema."""

    def __init__(
        self,
        tools: CodeTools,
        principal_for_request: Callable[[], Principal],
        audit: AuditSink | None = None,
    ) -> None:
        self.tools = tools
        self.principal_for_request = principal_for_request
        self.audit = audit

    def all(self) -> tuple[Callable[..., Awaitable[CallToolResult]], ...]:
        """The tools, in the order of :data:`TOOL_NAMES`."""
        return (
            self.search_code,
            self.ask_codebase,
            self.read_code,
            self.find_callers,
            self.find_callees,
            self.find_tests,
            self.list_repos,
            self.index_status,
            self.explain_symbol,
        )

    async def _call(
        self,
        tool: str,
        work: Callable[[Principal], ToolOutput],
        *,
        question: str = "",
        repos: list[str] | str | None = None,
    ) -> CallToolResult:
        """Run one tool call as its caller; one audit row for it, whatever happens."""
        call = _Call(self, tool, question, split_list(repos))
        try:
            principal = self.principal_for_request()
        except CodeciteError as exc:
            await call.audit(None, 401, detail=str(exc))
            return _error(str(exc))
        except Exception:
            log.exception("%s: who is calling could not be found", tool)
            await call.audit(None, 500, detail="who is calling could not be found")
            return _error("internal error: who is calling could not be found")
        try:
            output = await anyio.to_thread.run_sync(work, principal)
        except UserError as exc:
            status = status_of(exc)
            refused = "refused: " if status in (403, 404) else ""
            await call.audit(principal, status, detail=f"{refused}{exc}")
            return _error(str(exc))
        except CodeciteError as exc:
            log.warning("%s failed: %s", tool, exc)
            await call.audit(principal, status_of(exc), detail=str(exc))
            return _error(f"{tool} failed: {exc}")
        except Exception:
            log.exception("%s failed", tool)
            await call.audit(principal, 500, detail="internal error")
            return _error(f"internal error in {tool}; the server's log has the details")
        await call.audit(principal, 200, output=output)
        return _result(output)

    async def search_code(
        self,
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
        files: Annotated[
            bool,
            Field(
                description="Rank files instead of chunks: the k best files, each with its "
                "best chunks (for a pasted bug report, the files to look at first)."
            ),
        ] = False,
    ) -> CallToolResult:
        return await self._call(
            "search_code",
            lambda p: self.tools.search_code(p, query, repos, k, language, path, kind, files),
            question=query,
            repos=repos,
        )

    async def ask_codebase(
        self,
        question: Annotated[str, Field(description="The question, in plain words.")],
        repo: Repo = None,
    ) -> CallToolResult:
        return await self._call(
            "ask_codebase",
            lambda p: self.tools.ask_codebase(p, question, repo),
            question=question,
            repos=repo,
        )

    async def read_code(
        self,
        path: Annotated[str, Field(description="Repository-relative file path, as in a citation.")],
        start_line: Annotated[int, Field(description="First line (1-based).")] = 1,
        end_line: Annotated[
            int | None,
            Field(description="Last line, inclusive (default: the end, up to the limit)."),
        ] = None,
        repo: Repo = None,
    ) -> CallToolResult:
        return await self._call(
            "read_code",
            lambda p: self.tools.read_code(p, path, start_line, end_line, repo),
            repos=repo,
        )

    async def find_callers(self, symbol: Symbol, repo: Repo = None) -> CallToolResult:
        return await self._call(
            "find_callers",
            lambda p: self.tools.find_callers(p, symbol, repo),
            question=symbol,
            repos=repo,
        )

    async def find_callees(self, symbol: Symbol, repo: Repo = None) -> CallToolResult:
        return await self._call(
            "find_callees",
            lambda p: self.tools.find_callees(p, symbol, repo),
            question=symbol,
            repos=repo,
        )

    async def find_tests(self, symbol: Symbol, repo: Repo = None) -> CallToolResult:
        return await self._call(
            "find_tests",
            lambda p: self.tools.find_tests(p, symbol, repo),
            question=symbol,
            repos=repo,
        )

    async def list_repos(self) -> CallToolResult:
        return await self._call("list_repos", self.tools.list_repos)

    async def index_status(self, repo: Repo = None) -> CallToolResult:
        return await self._call(
            "index_status", lambda p: self.tools.index_status(p, repo), repos=repo
        )

    async def explain_symbol(
        self,
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
        return await self._call(
            "explain_symbol",
            lambda p: self.tools.explain_symbol(p, symbol, repo),
            question=symbol,
            repos=repo,
        )


class _Call:
    """One tool call being audited: what it was asked, when it started."""

    def __init__(self, handlers: ToolHandlers, tool: str, question: str, repos: list[str]):
        self.handlers, self.tool, self.question, self.repos = handlers, tool, question, repos
        self.started = time.perf_counter()

    async def audit(
        self,
        principal: Principal | None,
        status: int,
        *,
        detail: str = "",
        output: ToolOutput | None = None,
    ) -> None:
        sink = self.handlers.audit
        if sink is None:
            return
        results, cited = locations(output.data) if output is not None else ([], [])
        repos = self.repos or _repos_of(output.data if output is not None else {}, results)
        record = AuditRecord(
            time=time.time(),
            user=principal.user if principal else "-",
            client=CURRENT_CLIENT.get(),
            method="MCP",
            endpoint=f"/mcp/tools/{self.tool}",
            status=status,
            latency_ms=round((time.perf_counter() - self.started) * 1000, 3),
            repos=repos,
            question=self.question,
            results=results,
            citations=cited,
            detail=detail,
        )
        try:
            await anyio.to_thread.run_sync(sink, record)
        except Exception:  # an audit failure is logged loudly but does not hide the answer
            log.exception("could not write the audit row of an MCP tool call")


def _repos_of(data: dict[str, Any], results: list[str]) -> list[str]:
    """The repositories a tool's result came from (its ``repo``, else its locations')."""
    if data.get("repo"):
        return [str(data["repo"])]
    return list(dict.fromkeys(loc.partition(":")[0] for loc in results if loc.partition(":")[0]))
