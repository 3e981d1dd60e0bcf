"""Playing a list of steps in a fresh environment of a task, through either door of the services.

The direct door (``Environment.call``) is the fast path; ``via_mcp=True`` goes through the real MCP
in-memory client (``mcp.Client(env.server(name))``) instead. Both reach the same dispatcher, so the
same audit rows come out. ``$ref`` arguments are resolved from earlier results by lookup only.

A task with user turns (``task.user.turns``) is played the way the harness plays it with the scripted user
(:mod:`coworkenv.harness.user_sim`): a turn's edits are made through a door whose actor is ``user`` when its
trigger fires: at the end of an agent turn (a ``say`` step) for an empty or "when the agent finishes" ``when``,
right after a tool call for ``after N tool calls`` / ``after <tool>``, at the N-th ``say`` for ``turn N``. The
edits' ``$ref`` arguments resolve from the reference's results; an edit that fails is a failed step.
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
from coworkenv.synth.task import RefError, SayStep, Step, Task, ToolStep, UserSpec, resolve_refs
from coworkenv.synth.turns import TOOL_SEPARATOR, keywords, parse_trigger

Row = dict[str, Any]


@dataclass(frozen=True)
class StepOutcome:
    index: int
    step: Step
    ok: bool
    data: dict[str, Any] | None
    text: str
    actor: str = "agent"
    """'user' for an edit of a user turn (its index is the step after which it was made)."""


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


class UserScript:
    """When the scripted user's turns fire while steps are replayed, as the harness's ``ScriptedUser`` decides:
    turns in order; ``calls``/``tool`` triggers right after a tool call; at a finished agent turn (a ``say``),
    the next turn if its trigger is ready or the agent asked for no held-back fact."""

    def __init__(self, task: Task, spec: UserSpec) -> None:
        self.turns = list(spec.turns)
        self.triggers = [parse_trigger(t.when, task) for t in self.turns]
        self.facts = list(spec.held_back)
        self.request_words = keywords(task.request)
        self.next_turn = 0
        self.tool_calls = 0
        self.agent_turns = 0

    @property
    def exhausted(self) -> bool:
        return self.next_turn >= len(self.turns)

    def asked_facts(self, agent_text: str) -> list[str]:
        if "?" not in agent_text:
            return []
        asked = keywords(agent_text)
        out = []
        for fact in self.facts:
            words = keywords(fact)
            if ((words - self.request_words) or words) & asked:
                out.append(fact)
        return out

    def _take(self) -> tuple[int, list[ToolStep]]:
        k = self.next_turn
        self.next_turn += 1
        return k, list(self.turns[k].edits)

    def after_tool_call(self, step: ToolStep, ok: bool) -> tuple[int, list[ToolStep]] | None:
        """The turn due right after this tool call, if any."""
        self.tool_calls += 1
        if self.exhausted:
            return None
        trigger = self.triggers[self.next_turn]
        fired = (trigger.kind == "calls" and self.tool_calls >= trigger.value) or (
            trigger.kind == "tool" and trigger.tool == f"{step.service}{TOOL_SEPARATOR}{step.tool}" and ok
        )
        return self._take() if fired else None

    def after_say(self, text: str) -> tuple[int, list[ToolStep]] | None:
        """The turn the user answers this finished agent turn with, if any."""
        self.agent_turns += 1
        if self.exhausted:
            return None
        trigger = self.triggers[self.next_turn]
        ready = trigger.kind == "finish" or (trigger.kind == "turn" and self.agent_turns >= trigger.value)
        return self._take() if ready or not self.asked_facts(text) else None


def user_script(task: Task) -> UserScript | None:
    """The task's user turns to play along with its steps, or None for a task without any."""
    if task.user is None or not task.user.turns:
        return None
    return UserScript(task, task.user)


async def play_steps(
    door: Door,
    steps: Sequence[Step],
    start: int = 0,
    *,
    user: UserScript | None = None,
    user_door: Door | None = None,
) -> tuple[list[StepOutcome], list[str]]:
    """Run steps in order; a step whose $ref cannot resolve is skipped (its outcome says why). With ``user``
    (and ``user_door``, acting as ``user``), the user's turns' edits are made when their triggers fire."""
    results: dict[str, Any] = {}
    outcomes: list[StepOutcome] = []
    messages: list[str] = []

    async def user_edits(index: int, due: tuple[int, list[ToolStep]] | None) -> None:
        if due is None or user_door is None:
            return
        k, edits = due
        for j, edit in enumerate(edits):
            where = f"user turn {k}, edit {j} ({edit.service}.{edit.tool})"
            try:
                arguments = resolve_refs(edit.arguments, results)
            except RefError as exc:
                outcomes.append(StepOutcome(index, edit, False, None, f"{where} skipped: {exc}", "user"))
                continue
            ok, data, text = await user_door.call(edit.service, edit.tool, arguments)
            outcomes.append(StepOutcome(index, edit, ok, data, text if ok else f"{where} failed: {text}", "user"))

    for offset, step in enumerate(steps):
        index = start + offset
        if isinstance(step, SayStep):
            messages.append(step.say)
            outcomes.append(StepOutcome(index, step, True, None, step.say))
            if user is not None:
                await user_edits(index, user.after_say(step.say))
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
        if user is not None:
            await user_edits(index, user.after_tool_call(step, ok))
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
            user = user_script(task)
            if via_mcp:
                async with MCPDoor(env) as door, MCPDoor(env, actor="user") as as_user:
                    outcomes, messages = await play_steps(door, steps, user=user, user_door=as_user)
            else:
                outcomes, messages = await play_steps(
                    DirectDoor(env), steps, user=user, user_door=DirectDoor(env, actor="user")
                )
        return Trial(env.dump(), env.audit(), messages, outcomes)
    finally:
        env.close()
