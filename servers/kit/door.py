"""One door onto an environment's services, whoever walks through it (the harness's agents, the task contract's
player, the trl environment): call a tool of a service, list a service's tools, one result type.

Two implementations reach the same dispatcher, so the same audit rows come out:

- :class:`DirectDoor`: the in-process dispatcher (``Environment.call``), the fast path;
- :class:`MCPDoor`: one MCP client per service, over whatever transport the client was opened on: in memory
  (``mcp.Client(env.server(name))``), stdio (``StdioServerParameters``) or streamable HTTP (a URL).
  :func:`open_mcp_door` opens one from a target per service; :func:`memory_targets` names an environment's own
  servers as targets.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from mcp import Client
from mcp.shared.exceptions import MCPError

from coworkenv.servers.kit.audit import argument_problem
from coworkenv.servers.kit.context import ToolResult
from coworkenv.servers.kit.environment import Environment


@dataclass(frozen=True)
class CallOutcome:
    """What one tool call through a door returned: the text the caller reads, whether it is an error, the
    dispatcher's outcome (``ok``, ``error``, ``invalid_arguments``, ``unknown_tool``, ``internal_error``; over MCP
    also ``protocol_error``) and the structured result of a successful call."""

    text: str
    is_error: bool
    outcome: str
    data: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.is_error

    @classmethod
    def of(cls, result: ToolResult) -> CallOutcome:
        """The outcome of a call the dispatcher answered."""
        return cls(result.text, result.is_error, result.outcome, result.data)


@dataclass(frozen=True)
class DoorTool:
    """One tool of a service as a door lists it."""

    service: str
    name: str
    description: str
    input_schema: dict[str, Any]


class Door(Protocol):
    """Tool calls onto the services of one environment, acting as one actor."""

    async def call(self, service: str, tool: str, arguments: Mapping[str, Any]) -> CallOutcome:
        """Run one tool call of ``service``. A bad call is an error outcome, never an exception."""
        ...

    async def list_tools(self, service: str) -> list[DoorTool]:
        """The tools of ``service``, in the service's order."""
        ...


class DirectDoor:
    """The in-process dispatcher: same validation, errors and audit rows as MCP, without the protocol."""

    def __init__(self, env: Environment, actor: str = "agent") -> None:
        self.env = env
        self.actor = actor

    async def call(self, service: str, tool: str, arguments: Mapping[str, Any]) -> CallOutcome:
        if service not in self.env.states:
            return _no_service(service)
        return CallOutcome.of(await self.env.call(service, tool, arguments, actor=self.actor))

    async def list_tools(self, service: str) -> list[DoorTool]:
        tools = self.env.state(service).service.tools
        return [DoorTool(service, spec.name, spec.description, spec.input_schema()) for spec in tools]


class MCPDoor:
    """MCP clients, one per service, already open (see :func:`open_mcp_door`)."""

    def __init__(self, clients: Mapping[str, Client]) -> None:
        self.clients = dict(clients)

    async def call(self, service: str, tool: str, arguments: Mapping[str, Any]) -> CallOutcome:
        client = self.clients.get(service)
        if client is None:
            return _no_service(service)
        problem = argument_problem(arguments)
        if problem is not None:
            # An MCP client that fails to encode a request breaks its session, so such a call never reaches the
            # server (and has no audit row there): answer as the server would, and go on.
            text = f"Invalid arguments for {tool}: {problem}. Check the tool's input schema and call again."
            return CallOutcome(text, True, "invalid_arguments")
        try:
            result = await client.call_tool(tool, dict(arguments))
        except MCPError as exc:
            return CallOutcome(f"Protocol error from {service}: {exc}", True, "protocol_error")
        text = "".join(getattr(part, "text", "") for part in result.content)
        if not text and result.structured_content is not None:
            text = json.dumps(result.structured_content, sort_keys=True)
        if result.is_error:
            return CallOutcome(text, True, outcome_of(text))
        return CallOutcome(text, False, "ok", result.structured_content)

    async def list_tools(self, service: str) -> list[DoorTool]:
        listing = await self.clients[service].list_tools()
        return [DoorTool(service, t.name, t.description or "", dict(t.input_schema)) for t in listing.tools]


def outcome_of(text: str) -> str:
    """The outcome of a failed call over MCP, from the answer our dispatcher wrote (MCP carries only is_error)."""
    if text.startswith("Invalid arguments for "):
        return "invalid_arguments"
    return "unknown_tool" if text.startswith("Unknown tool ") else "error"


def _no_service(service: str) -> CallOutcome:
    return CallOutcome(f"service {service!r} is not in this environment", True, "unknown_tool")


def memory_targets(env: Environment, actor: str = "agent") -> dict[str, Any]:
    """The environment's own MCP servers, one per service, acting as ``actor``: targets for :func:`open_mcp_door`."""
    return {name: env.server(name, actor) for name in env.states}


@asynccontextmanager
async def open_mcp_door(targets: Mapping[str, Any]) -> AsyncIterator[MCPDoor]:
    """An :class:`MCPDoor` with one client per service, open for the block (closed on exit). A target is what
    ``mcp.Client`` takes: a server object (in memory), ``StdioServerParameters`` (a subprocess) or a URL
    (streamable HTTP)."""
    async with AsyncExitStack() as stack:
        clients = {name: await stack.enter_async_context(Client(target)) for name, target in targets.items()}
        yield MCPDoor(clients)
