"""The MCP door: an MCPServer whose tools/list and tools/call go to one ServiceState's dispatcher.

Overriding the two public methods (rather than registering functions with the SDK) keeps argument
validation, errors and the audit row in our dispatcher, identical on every transport and on the
direct in-process door; invalid arguments and unknown tools are audited too.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolRequestParams, CallToolResult, TextContent
from mcp.types import Tool as MCPTool
from starlette.types import ASGIApp

from coworkenv.servers.kit.http_auth import BearerTokenMiddleware, security_settings
from coworkenv.servers.kit.state import ServiceState
from coworkenv.servers.kit.stdio import serve_stdio

log = logging.getLogger("coworkenv.servers")


class ServiceServer(MCPServer[Any]):
    """One service in one environment, served over MCP."""

    def __init__(self, state: ServiceState, actor: str = "agent") -> None:
        service = state.service
        super().__init__(
            name=f"coworkenv-{service.name}",
            title=service.title,
            instructions=service.instructions,
            version=service.version,
            log_level="WARNING",
        )
        self.state = state
        self.actor = actor
        self._listing = [
            MCPTool(
                name=spec.name,
                title=spec.annotations.title,
                description=spec.description,
                input_schema=spec.input_schema(),
                output_schema=spec.output_schema(),
                annotations=spec.annotations,
            )
            for spec in service.tools
        ]

    async def run_stdio_async(self) -> None:
        """stdio, where a line that is not a JSON-RPC message gets a JSON-RPC error, as over HTTP
        (:mod:`.stdio`)."""
        await serve_stdio(self._lowlevel_server)

    async def list_tools(self) -> list[MCPTool]:
        return list(self._listing)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        return await self._answer(name, arguments)

    async def _answer(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """The dispatcher's answer (its async path: a slow injected fault waits without blocking the loop)."""
        result = await self.state.call(name, arguments, self.actor)
        return CallToolResult(
            content=[TextContent(type="text", text=result.text)],
            structured_content=result.data,
            is_error=result.is_error,
        )

    async def _handle_call_tool(self, ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        """The SDK's ``tools/call`` handler less the per-request ``Context`` it builds for its own tools (a
        pydantic model, about a quarter of what the kit adds to a call over the SDK's floor): our tools never
        take it. Same errors as the SDK's handler. Should the SDK stop routing calls through this method, its
        own handler calls :meth:`call_tool` and nothing changes but the speed."""
        try:
            return await self._answer(params.name, params.arguments or {})
        except MCPError:
            raise
        except Exception as exc:  # the dispatcher answers tool failures itself: this is a kit bug
            log.exception("Tool %r raised an unexpected exception", params.name)
            return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)

    def http_app(self, host: str, token: str | None = None, allow_hosts: tuple[str, ...] = ()) -> ASGIApp:
        """The streamable-HTTP ASGI app (endpoint /mcp) for a server bound to ``host``: Host/Origin checked
        against the allowed values (421/403 otherwise), and with a token every request must carry it (401)."""
        app: ASGIApp = self.streamable_http_app(host=host, transport_security=security_settings(host, allow_hosts))
        return BearerTokenMiddleware(app, token) if token else app
