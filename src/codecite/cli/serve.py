"""``codecite serve``: the HTTP API (and MCP over HTTP) for a team."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..errors import ConfigError, UserError
from ._shared import app, err

SERVER_EXTRA = "pip install 'codecite[server]'"


@app.command()
def serve(
    config: Annotated[
        Path,
        typer.Option(
            "--config",
            "-c",
            help="Server configuration (codecite-server.toml): repositories, "
            "listen address, auth, limits.",
        ),
    ] = Path("codecite-server.toml"),
    host: Annotated[
        str | None,
        typer.Option(
            "--host", help="Listen on this address (default: from the config, 127.0.0.1)."
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option("--port", min=0, max=65535, help="Listen on this port (default 8765)."),
    ] = None,
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth",
            help="No tokens: everyone may read every repository. Only on a loopback address.",
        ),
    ] = False,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn's log level.")] = "info",
) -> None:
    """Serve the configured repositories over HTTP: /api/v1 (search, ask, code, graph),
    /mcp for coding agents, /docs (OpenAPI), /healthz, /metrics.

    Tokens: `codecite token create NAME --repos a,b --config FILE`.
    Example config:

    \b
        listen = "127.0.0.1:8765"
        auth = "token"
        state = "codecite-state.db"
        [repos.shop]
        path = "/srv/code/shop"
    """
    try:
        import uvicorn

        from ..server.access import uvicorn_log_config
        from ..server.app import create_app
        from ..server.config import load_server_config
    except ImportError as exc:
        raise UserError(
            f"the server needs its extra packages ({exc.name}): {SERVER_EXTRA}"
        ) from None
    settings = load_server_config(config).with_listen(host, port)
    if no_auth:
        from dataclasses import replace

        settings = replace(settings, auth="none")
    if settings.auth == "none" and not settings.is_loopback:
        raise ConfigError(
            f"auth = none would let anyone on the network read every repository; it is "
            f"allowed only on a loopback address, not {settings.host}"
        )
    if settings.auth == "none":
        err.print(
            "[bold red]WARNING: authentication is OFF (auth = none): anyone who can "
            "reach this port reads every repository. Loopback only.[/bold red]"
        )
    from .. import index_exists

    missing = [name for name, repo in settings.repos.items() if not index_exists(repo.index)]
    for name in missing:
        err.print(
            f"[yellow]repository {escape(name)} has no index yet: run `codecite index "
            f"{escape(str(settings.repos[name].path))}`[/yellow]"
        )
    err.print(
        f"codecite serving {len(settings.repos)} repositories on "
        f"http://{settings.host}:{settings.port} (auth: {settings.auth}); "
        f"API docs at /docs, MCP at /mcp"
    )
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=log_level,
        # uvicorn's access log writes the query string, where questions travel (GET
        # /web/search?q=...): the app logs route template, status and time instead
        access_log=False,
        log_config=uvicorn_log_config(log_level),
        proxy_headers=False,
        # SIGTERM: requests still running after this many seconds are cut, so a stuck
        # stream (a slow model) cannot keep the process and its port alive
        timeout_graceful_shutdown=settings.shutdown_seconds,
    )
