"""Who is calling over HTTP: the server's token check sets :data:`CURRENT_PRINCIPAL`
for each request; :func:`principal_from_context` reads it for the tools."""

from __future__ import annotations

from contextvars import ContextVar

from ...errors import CodeciteError
from ..auth import Principal

#: The caller of the current HTTP request, set by the server's token check before it
#: calls the app of :func:`mcp_http_app` (and reset after). The SDK runs each tool call
#: in the context of the request that carried it, so tools see this value.
CURRENT_PRINCIPAL: ContextVar[Principal | None] = ContextVar("codecite_principal", default=None)
#: The client address of the current HTTP request (for the tool calls' audit rows), set
#: beside :data:`CURRENT_PRINCIPAL`.
CURRENT_CLIENT: ContextVar[str] = ContextVar("codecite_client", default="")


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
