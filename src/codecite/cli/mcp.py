"""``codecite mcp [PATH]``: the tools of :mod:`codecite.server.mcp` for a coding agent,
over stdio, for one local repository. Stdout carries only the MCP protocol."""

from __future__ import annotations

from ..errors import UserError
from ._shared import IndexOpt, RepoArg, app, open_for_query


@app.command(name="mcp")
def mcp_command(
    path: RepoArg = None,
    index_dir: IndexOpt = None,
) -> None:
    """Serve a repository's index to a coding agent over MCP (stdio).

    Tools: search_code, ask_codebase, read_code, find_callers, find_callees,
    find_tests, list_repos, index_status; every result cites path:start-end.
    Build the index first (codecite index PATH); stdout carries only the protocol,
    messages go to stderr.

    To add it to an agent, put this in its MCP configuration (Claude Desktop,
    Cursor: mcpServers in their JSON settings; Claude Code: .mcp.json):

    \b
    {
      "mcpServers": {
        "codecite": {
          "command": "codecite",
          "args": ["mcp", "/path/to/repo"]
        }
      }
    }

    or run: claude mcp add codecite -- codecite mcp /path/to/repo
    """
    try:
        from ..server.mcp import run_stdio
    except ModuleNotFoundError as exc:
        raise UserError(
            f"codecite mcp needs the MCP SDK ({exc.name} is not installed); "
            "install it with: pip install 'codecite[server]'"
        ) from None
    # Open the index first: a missing one is an error here, before the protocol starts.
    with open_for_query(path, index_dir) as index:
        root, folder = index.root, index.dir
    run_stdio(root, folder)
