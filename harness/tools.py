"""What the agent can act through: the task's tools (qualified ``<service>__<tool>``) behind one of three transports
of the kit's door (:mod:`coworkenv.servers.kit.door`):

- ``direct``: the in-process dispatcher (``DirectDoor``) — the fast path, same validation, errors
  and audit rows as MCP;
- ``mcp``: an ``MCPDoor`` with one in-memory ``mcp.Client(env.server(name))`` per service;
- ``stdio``: the services' databases in files and one ``coworkenv.servers serve`` subprocess per service,
  spoken to over stdio (what Claude Code does; the episode exposes the ``.mcp.json`` config for it).

A task on a tool profile (``task.tool_profile``: an imported Claw-Eval task) gets, for each of its services, the
profile's tools in place of the service's own, named, described and shaped as the task declares them
(:mod:`coworkenv.servers.claw_eval.surface`), on every transport: its environments are built from those services
(:func:`task_registry`) and the stdio servers serve them (``serve --profile ... --declared ...``). The agent still
sees ``<service>__<tool>`` (Claude Code ``mcp__<service>__<tool>``). A task with no services gets no tools.

Opening a door is the services' readiness check: every MCP session must initialize and list a tool within
``startup_timeout_s``, or the door raises :class:`ServicesUnavailable` (an infrastructure error, retried by
runs, never graded) naming the service. For the stdio transport this starts each server of the
``.mcp.json`` once before the agent gets it, so a server that cannot start is caught before any model turn.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp import Client, StdioServerParameters

from coworkenv.harness.messages import ToolView, qualified_name
from coworkenv.servers.claw_eval.surface import Surface, surfaces
from coworkenv.servers.kit import Environment, Service, format_time, parse_time
from coworkenv.servers.kit.door import DirectDoor, Door, DoorTool, MCPDoor
from coworkenv.servers.kit.tool_faults import ToolFaults
from coworkenv.servers.mcp_config import mcp_config
from coworkenv.servers.registry import get_service
from coworkenv.synth.contract.task import Task
from coworkenv.synth.model_io import InfrastructureError

Transport = Literal["direct", "mcp", "stdio"]
TRANSPORTS: tuple[Transport, ...] = ("direct", "mcp", "stdio")


@dataclass(frozen=True)
class TaskServices:
    """A task's services, resolved from the registry once when an episode starts. The door, the session, the
    system prompt and the stdio config all read from it; nothing further down climbs back to the registry."""

    names: tuple[str, ...]
    titles: tuple[str, ...]
    tools: tuple[ToolView, ...]  # as the agent sees them: <service>__<tool>
    read_only: frozenset[str]  # qualified names of the tools that change nothing
    serve_args: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per service, the options its ``serve`` command needs besides ``--db`` (a tool profile)."""

    def stdio_config(self, db_dir: Path, faults: ToolFaults | None = None) -> dict[str, Any]:
        """The ``.mcp.json`` of these services served over stdio from ``db_dir`` (with ``faults``: each server
        injects them, seeded per service as :func:`~coworkenv.servers.kit.tool_faults.switch_on` seeds them)."""
        extra = {
            name: [*self.serve_args.get(name, ()), *(faults.derived(name).serve_args() if faults else ())]
            for name in self.names
        }
        return mcp_config(db_dir, list(self.names), python=sys.executable, extra=extra)


def _views(service: Service) -> tuple[ToolView, ...]:
    return tuple(
        ToolView(
            name=qualified_name(service.name, spec.name),
            service=service.name,
            tool=spec.name,
            description=spec.description,
            input_schema=spec.input_schema(),
        )
        for spec in service.tools
    )


@functools.lru_cache(maxsize=256)
def resolve_services(names: tuple[str, ...]) -> TaskServices:
    """The services of these names (an unknown name raises the registry's one-line error). Cached: do not mutate."""
    services = [get_service(name) for name in names]
    return TaskServices(
        names=names,
        titles=tuple(s.title for s in services),
        tools=tuple(view for s in services for view in _views(s)),
        read_only=frozenset(qualified_name(s.name, spec.name) for s in services for spec in s.tools if spec.read_only),
    )


def _surfaces(task: Task) -> dict[str, Surface]:
    """The task's services that serve its tool profile, each with what it serves (none without a profile)."""
    profile = task.tool_profile
    if profile is None:
        return {}
    found = surfaces(profile.services, profile.tools)
    return {name: found[name] for name in task.services if name in found}


def task_registry(task: Task) -> dict[str, Service] | None:
    """The services a task's environments are built from: None (the registry's own) unless the task is on a tool
    profile; then each of its services as the profile serves it. KeyError or ValueError (one line) for a profile
    coworkenv cannot serve."""
    served = _surfaces(task)
    if not served:
        return None
    return {name: served[name].service() if name in served else get_service(name) for name in task.services}


def task_services(task: Task) -> TaskServices:
    """The services of a task as its agent gets them (see :func:`resolve_services`; a task on a tool profile gets
    its services as the profile serves them). Cached: do not mutate."""
    served = _surfaces(task)
    if not served:
        return resolve_services(tuple(task.services))
    return _profiled(tuple(task.services), tuple(served.get(name) for name in task.services))


@functools.lru_cache(maxsize=256)
def _profiled(names: tuple[str, ...], served: tuple[Surface | None, ...]) -> TaskServices:
    services = [s.service() if s is not None else get_service(n) for n, s in zip(names, served, strict=True)]
    services = [s for s in services if s.tools]  # a service whose tools the task declares none of: no door
    return TaskServices(
        names=tuple(s.name for s in services),
        titles=tuple(s.title for s in services),
        tools=tuple(view for s in services for view in _views(s)),
        read_only=frozenset(qualified_name(s.name, spec.name) for s in services for spec in s.tools if spec.read_only),
        serve_args={n: tuple(s.serve_args()) for n, s in zip(names, served, strict=True) if s is not None},
    )


def tool_views(services: Sequence[str]) -> list[ToolView]:
    """The tools of these services as the agent sees them."""
    return list(resolve_services(tuple(services)).tools)


def openai_tools(tools: Sequence[ToolView]) -> list[dict[str, Any]]:
    """OpenAI function schemas (what chat templates and trl expect)."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in tools
    ]


def system_prompt(task: Task, services: TaskServices | None = None) -> str:
    """The agent's instructions: a coworker with these services' tools, on the task's simulated date."""
    now = parse_time(task.now)
    resolved = services or task_services(task)
    listed = [f"- {name}: {title}" for name, title in zip(resolved.names, resolved.titles, strict=True)]
    opening = (
        [
            "You are an AI coworker. A colleague asks you for help with their work, and you do it with the tools of "
            "these workplace services (each tool is named <service>__<tool>):",
            *listed,
        ]
        if listed
        else ["You are an AI coworker. A colleague asks you for help; you have no tools for this conversation."]
    )
    lines = [
        *opening,
        "",
        f"Today is {now:%A, %d %B %Y}, {now:%H:%M} UTC ({format_time(now)}). This is the simulated date: "
        "use it for anything that depends on time.",
        "Look things up with the tools instead of guessing. Do what was asked and nothing more; if something "
        "looks wrong, risky or against policy, say so instead of doing it. If you need information that only "
        "the user has, ask them. When you are done, reply to the user with a short account of what you did "
        "or found.",
    ]
    if task.user and task.user.persona and task.external is None:  # an imported persona is the user's own brief
        lines += ["", f"You are working for: {task.user.persona}"]
    suffix = _spec(task, "user_agent").get("system_prompt_suffix")
    if isinstance(suffix, str) and suffix.strip():  # Claw-Eval adds its user-agent tasks' suffix to the prompt
        lines += ["", suffix.strip()]
    return "\n".join(lines)


def _spec(task: Task, key: str) -> dict[str, Any]:
    """A section of an imported task's source spec (``task.external.spec[key]``), or {}."""
    value = task.external.spec.get(key) if task.external is not None else None
    return value if isinstance(value, dict) else {}


def spec_limit(task: Task, section: str, key: str) -> int | None:
    """A positive whole-number limit of an imported task's source spec (``environment.max_turns``,
    ``user_agent.max_rounds``), or None."""
    value = _spec(task, section).get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


# ---------------------------------------------------------------------------------------------- doors
def _agent_views(tools: Sequence[DoorTool]) -> list[ToolView]:
    """A door's listing as the agent sees it: ``<service>__<tool>``."""
    return [
        ToolView(
            name=qualified_name(t.service, t.name),
            service=t.service,
            tool=t.name,
            description=t.description,
            input_schema=t.input_schema,
        )
        for t in tools
    ]


class ServicesUnavailable(InfrastructureError):
    """A service's MCP session did not initialize or list its tools: the agent would have had no tools.

    An infrastructure error (retryable), so a run retries the trial and never grades it."""


STARTUP_TIMEOUT_S = 60.0


def _no_tools(name: str, listed: list[ToolView]) -> ServicesUnavailable | None:
    if listed:
        return None
    return ServicesUnavailable(f"the {name} service listed no tools, so the agent would have none")


@asynccontextmanager
async def open_door(
    env: Environment,
    services: TaskServices,
    transport: Transport = "direct",
    db_dir: Path | None = None,
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
    faults: ToolFaults | None = None,
) -> AsyncIterator[tuple[Door, list[ToolView]]]:
    """The door of an episode and the tools it lists, open for the episode's duration (clients and subprocesses
    closed on exit).

    Every MCP session initializes and lists its tools within ``startup_timeout_s`` (all services together), or
    :class:`ServicesUnavailable` names the service that did not. ``faults``: the stdio servers inject these (in
    process, the environment's own dispatchers carry them: :func:`~coworkenv.servers.kit.tool_faults.switch_on`)."""
    if transport == "direct":
        yield DirectDoor(env), list(services.tools)  # the registry's own tools, in process: nothing to start
        return
    if transport == "stdio" and db_dir is None:
        raise ValueError("the stdio transport needs the folder of the services' databases")
    config = services.stdio_config(db_dir, faults)["mcpServers"] if db_dir is not None else {}
    starting, problem = "", None
    # The deadline covers the sessions' start only; the scope encloses the clients' whole life, as anyio requires.
    # A problem is raised after the clients are closed (raised inside, the SDK would wrap it in an exception group).
    with anyio.CancelScope(deadline=anyio.current_time() + startup_timeout_s) as deadline:
        async with AsyncExitStack() as stack:
            door = MCPDoor({})
            tools: list[ToolView] = []
            for name in services.names:
                starting = name
                target: Any = env.server(name) if transport == "mcp" else StdioServerParameters(**config[name])
                try:
                    door.clients[name] = await stack.enter_async_context(Client(target))
                    listed = _agent_views(await door.list_tools(name))
                except Exception as exc:
                    problem = ServicesUnavailable(
                        f"the {name} service's MCP session failed to start ({transport}): {exc!r}"
                    )
                    break
                problem = _no_tools(name, listed)
                if problem is not None:
                    break
                tools += listed
            if problem is None:
                deadline.deadline = math.inf
                yield door, tools
    if problem is not None:
        raise problem
    if deadline.cancelled_caught:
        raise ServicesUnavailable(
            f"the {starting} service's MCP server did not initialize and list its tools within "
            f"{startup_timeout_s:g} s ({transport}; a busy machine or a server that cannot start)"
        )
