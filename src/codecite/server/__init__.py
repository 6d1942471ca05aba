"""``codecite serve``: an HTTP API (FastAPI), tokens and per-repository access control,
an audit log, many repositories, MCP for coding agents — all on the public API
(:class:`codecite.Index`), never on store internals (docs/DESIGN.md §11).

Needs the ``server`` extra: ``pip install 'codecite[server]'``.
"""
