"""Playing a list of steps in a fresh environment of a task, through either door of the services.

The direct door (``Environment.call``) is the fast path; ``via_mcp=True`` goes through the real MCP
in-memory client (``mcp.Client(env.server(name))``) instead. Both reach the same dispatcher, so the
same audit rows come out. ``$ref`` arguments are resolved from earlier results by lookup only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
from mcp import Client

from coworkenv.servers.kit import AuditRow, Environment
from coworkenv.synth.grader import Grade, grade
from coworkenv.synth.task import RefError, SayStep, Step, Task, resolve_refs

Row = dict[str, Any]


@dataclass(frozen=True)
class StepOutcome:
    index: int
    step: Step
    ok: bool
    data: dict[str, Any] | None
    text: str


@dataclass
class Trial:
    """What one run left: final state per service, the audit log, the agent's messages, each step's outcome."""

    state: dict[str, dict[str, list[Row]]]
    audit: list[AuditRow]
    messages: list[str]
    outcomes: list[StepOutcome] = field(default_factory=list)

    def grade(self, task: Task) -> Grade:
        return grade(task, self.state, self.audit, self.messages)

    def failures(self) -> list[StepOutcome]:
        return [o for o in self.outcomes if not o.ok]


class Door(Protocol):
    async def call(
        self, service: str, tool: str, arguments: Mapping[str, Any]
    ) -> tuple[bool, dict[str, Any] | None, str]:
        """(ok, structured result, text) of one tool call."""
        ...


class DirectDoor:
    def __init__(self, env: Environment, actor: str = "agent") -> None:
        self.env = env
        self.actor = actor

    async def call(
        self, service: str, tool: str, arguments: Mapping[str, Any]
    ) -> tuple[bool, dict[str, Any] | None, str]:
        result = await self.env.call(service, tool, arguments, actor=self.actor)
        return not result.is_error, result.data, result.text


class MCPDoor:
    """One in-memory MCP client per service; enter with ``async with``."""

    def __init__(self, env: Environment, actor: str = "agent") -> None:
        self.env = env
        self.actor = actor
        self.clients: dict[str, Client] = {}
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> MCPDoor:
        for name in self.env.states:
            self.clients[name] = await self._stack.enter_async_context(Client(self.env.server(name, self.actor)))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def call(
        self, service: str, tool: str, arguments: Mapping[str, Any]
    ) -> tuple[bool, dict[str, Any] | None, str]:
        client = self.clients.get(service)
        if client is None:
            return False, None, f"service {service!r} is not in this environment"
        result = await client.call_tool(tool, dict(arguments))
        text = "".join(getattr(part, "text", "") for part in result.content)
        return not result.is_error, result.structured_content, text


async def play_steps(door: Door, steps: Sequence[Step], start: int = 0) -> tuple[list[StepOutcome], list[str]]:
    """Run steps in order; a step whose $ref cannot resolve is skipped (its outcome says why)."""
    results: dict[str, Any] = {}
    outcomes: list[StepOutcome] = []
    messages: list[str] = []
    for offset, step in enumerate(steps):
        index = start + offset
        if isinstance(step, SayStep):
            messages.append(step.say)
            outcomes.append(StepOutcome(index, step, True, None, step.say))
            continue
        try:
            arguments = resolve_refs(step.arguments, results)
        except RefError as exc:
            outcomes.append(StepOutcome(index, step, False, None, f"skipped: {exc}"))
            continue
        ok, data, text = await door.call(step.service, step.tool, arguments)
        if ok and step.id:
            results[step.id] = data
        outcomes.append(StepOutcome(index, step, ok, data, text))
    return outcomes, messages


def fresh_environment(task: Task) -> Environment:
    """A fresh environment of the task: a fork of one pristine environment seeded once per task object
    (validation plays a task 10-20 times; a fork costs ~0.2 ms, seeding several ms)."""
    pristine = task._cache.get("pristine_env")
    if not isinstance(pristine, Environment):
        pristine = Environment.create(task.seeds(), now=task.now)
        task._cache["pristine_env"] = pristine
    return pristine.fork()


async def run_steps(task: Task, steps: Sequence[Step], *, via_mcp: bool = False, timeout: float = 60) -> Trial:
    """Play steps in a fresh environment of the task and collect the trial."""
    env = fresh_environment(task)
    try:
        with anyio.fail_after(timeout):
            if via_mcp:
                async with MCPDoor(env) as door:
                    outcomes, messages = await play_steps(door, steps)
            else:
                outcomes, messages = await play_steps(DirectDoor(env), steps)
        return Trial(env.dump(), env.audit(), messages, outcomes)
    finally:
        env.close()
