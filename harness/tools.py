"""What the agent can act through: the task's tools (qualified ``<service>__<tool>``) behind one of three doors.

- ``direct``: the in-process dispatcher (``Environment.call``) — the fast path, same validation, errors
  and audit rows as MCP;
- ``mcp``: one in-memory ``mcp.Client(env.server(name))`` per service;
- ``stdio``: the services' databases in files and one ``coworkenv.servers serve`` subprocess per service,
  spoken to over stdio (what Claude Code does; the episode exposes the ``.mcp.json`` config for it).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from coworkenv.harness.messages import ToolView, qualified_name
from coworkenv.servers.kit import Environment, format_time, parse_time
from coworkenv.servers.registry import get_service
from coworkenv.synth.task import Task

Transport = Literal["direct", "mcp", "stdio"]
TRANSPORTS: tuple[Transport, ...] = ("direct", "mcp", "stdio")
_VIEWS: dict[str, list[ToolView]] = {}


def tool_views(services: Sequence[str]) -> list[ToolView]:
    """The tools of these services as the agent sees them (from the service registry; cached: do not mutate)."""
    out: list[ToolView] = []
    for name in services:
        if name not in _VIEWS:
            service = get_service(name)
            _VIEWS[name] = [
                ToolView(
                    name=qualified_name(name, spec.name),
                    service=name,
                    tool=spec.name,
                    description=spec.description,
                    input_schema=spec.input_schema(),
                )
                for spec in service.tools
            ]
        out += _VIEWS[name]
    return out


def openai_tools(tools: Sequence[ToolView]) -> list[dict[str, Any]]:
    """OpenAI function schemas (what chat templates and trl expect)."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in tools
    ]


def system_prompt(task: Task) -> str:
    """The agent's instructions: a coworker with these services' tools, on the task's simulated date."""
    now = parse_time(task.now)
    services = []
    for name in task.services:
        service = get_service(name)
        services.append(f"- {name}: {service.title}")
    lines = [
        "You are an AI coworker. A colleague asks you for help with their work, and you do it with the tools of "
        "these workplace services (each tool is named <service>__<tool>):",
        *services,
        "",
        f"Today is {now:%A, %d %B %Y}, {now:%H:%M} UTC ({format_time(now)}). This is the simulated date: "
        "use it for anything that depends on time.",
        "Look things up with the tools instead of guessing. Do what was asked and nothing more; if something "
        "looks wrong, risky or against policy, say so instead of doing it. If you need information that only "
        "the user has, ask them. When you are done, reply to the user with a short account of what you did "
        "or found.",
    ]
    if task.user and task.user.persona:
        lines += ["", f"You are working for: {task.user.persona}"]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- doors
@dataclass(frozen=True)
class CallOutcome:
    text: str
    is_error: bool
    outcome: str


class Door(Protocol):
    tools: list[ToolView]

    async def call(self, service: str, tool: str, arguments: dict[str, Any]) -> CallOutcome: ...


class DirectDoor:
    def __init__(self, env: Environment, services: Sequence[str]) -> None:
        self.env = env
        self.tools = tool_views(services)

    async def call(self, service: str, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        result = await self.env.call(service, tool, arguments, actor="agent")
        return CallOutcome(result.text, result.is_error, result.outcome)


class ClientDoor:
    """MCP clients, one per service (in memory or over stdio)."""

    def __init__(self, clients: dict[str, Client], tools: list[ToolView]) -> None:
        self.clients = clients
        self.tools = tools

    async def call(self, service: str, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        problem = _unsendable(arguments)
        if problem is not None:  # it cannot go over the wire: answer as the server would, and go on
            text = f"Invalid arguments for {tool}: {problem}. Check the tool's input schema and call again."
            return CallOutcome(text, True, "invalid_arguments")
        try:
            result = await self.clients[service].call_tool(tool, arguments)
        except MCPError as exc:
            return CallOutcome(f"Protocol error from {service}: {exc}", True, "protocol_error")
        text = "".join(getattr(part, "text", "") for part in result.content)
        if not text and result.structured_content is not None:
            text = json.dumps(result.structured_content, sort_keys=True)
        return CallOutcome(text, bool(result.is_error), "error" if result.is_error else "ok")


def _unsendable(arguments: Any) -> str | None:
    """Why ``arguments`` cannot be sent as JSON over MCP (a lone surrogate, absurd depth), or None.

    An MCP client that fails to encode a request breaks its session, so such a call never reaches the
    server (and has no audit row there); the agent gets the invalid-arguments answer the server would give."""
    from coworkenv.servers.kit.audit import argument_problem

    return argument_problem(arguments)


async def _listed(service: str, client: Client) -> list[ToolView]:
    listing = await client.list_tools()
    return [
        ToolView(
            name=qualified_name(service, t.name),
            service=service,
            tool=t.name,
            description=t.description or "",
            input_schema=dict(t.input_schema),
        )
        for t in listing.tools
    ]


def stdio_config(db_dir: Path, services: Sequence[str]) -> dict[str, Any]:
    """The ``.mcp.json`` of an episode's services served over stdio from ``db_dir``."""
    from coworkenv.servers.cli import mcp_config

    return mcp_config(db_dir, list(services), python=sys.executable)


@asynccontextmanager
async def open_door(
    env: Environment, services: Sequence[str], transport: Transport = "direct", db_dir: Path | None = None
) -> AsyncIterator[Door]:
    """The door of an episode, open for its duration (clients and subprocesses closed on exit)."""
    if transport == "direct":
        yield DirectDoor(env, services)
        return
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        tools: list[ToolView] = []
        if transport == "stdio":
            if db_dir is None:
                raise ValueError("the stdio transport needs the folder of the services' databases")
            config = stdio_config(db_dir, services)["mcpServers"]
        for name in services:
            target: Any = env.server(name) if transport == "mcp" else StdioServerParameters(**config[name])
            clients[name] = await stack.enter_async_context(Client(target))
            tools += await _listed(name, clients[name])
        yield ClientDoor(clients, tools)
