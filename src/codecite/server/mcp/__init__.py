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

Modules: :mod:`.tools` (the tools' logic and access checks), :mod:`.symbols` (which
definition a symbol names; the code graph around it), :mod:`.results` (text and JSON of
the results), :mod:`.descriptions` (what an agent reads about the tools), :mod:`.server`
(:func:`build_mcp`), :mod:`.principal` (who is calling), :mod:`.stdio` and
:mod:`.http_app` (the transports).
"""

from __future__ import annotations

from .descriptions import TOOL_NAMES
from .http_app import MCPHttpApp, mcp_http_app, mcp_lifespan
from .principal import CURRENT_CLIENT, CURRENT_PRINCIPAL, NoPrincipalError, principal_from_context
from .server import build_mcp
from .stdio import local_pool, run_stdio
from .tools import CodeTools, safe_relative_path

__all__ = [
    "CURRENT_CLIENT",
    "CURRENT_PRINCIPAL",
    "TOOL_NAMES",
    "CodeTools",
    "MCPHttpApp",
    "NoPrincipalError",
    "build_mcp",
    "local_pool",
    "mcp_http_app",
    "mcp_lifespan",
    "principal_from_context",
    "run_stdio",
    "safe_relative_path",
]
