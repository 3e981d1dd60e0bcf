"""The user on the other side of the conversation.

A :class:`UserSimulator` answers each finished agent turn (``reply``: text, or ``None`` to end the
conversation) and may act after any tool call of the agent (``after_tool_call``: a message to add to the
conversation, or ``None``). Its workspace edits go through :meth:`UserContext.edit`, which calls the
services as the actor ``user`` (audited as such) and records the edit in the trajectory.

:class:`ScriptedUser` plays the task's :class:`~coworkenv.synth.contract.task.UserSpec`:

- held-back facts are given only when the agent asks about them: the agent's text is a question and
  shares a keyword with the fact (words of the request do not count, so the request alone unlocks nothing);
- user turns are delivered in order, each with its edits applied first (as written), when their typed
  trigger (``when``: ``after_tool``, ``after_calls``, ``after_turn``, ``on_finish``; see
  :mod:`coworkenv.synth.contract.turns`) fires, as :class:`~coworkenv.synth.contract.turns.TurnSchedule` decides: the same
  schedule plays the task's user in validation, so the user behaves the same there. A turn whose trigger has
  not fired is still delivered when the agent finishes a turn without asking for any held-back fact (the
  user moves the work on);
- the conversation ends when the turns are exhausted and the agent's turn brings nothing to answer
  (one question without a matching fact gets a "go ahead" first).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from coworkenv.harness.messages import Message, qualified_name
from coworkenv.harness.trajectory import UserEvent
from coworkenv.servers.kit import Environment, ToolResult
from coworkenv.synth.contract.task import Task, ToolStep, UserTurn
from coworkenv.synth.contract.turns import TOOL_SEPARATOR, TurnSchedule, asked_facts, is_question, keywords

GO_AHEAD = "I don't have anything more to add on that. Please go ahead with what you have."


@dataclass
class UserContext:
    """What the user simulator sees and may do in an episode."""

    task: Task
    env: Environment
    messages: list[Message]
    events: list[UserEvent]
    clock: Callable[[], float]
    tool_calls: int = 0
    agent_turns: int = 0

    async def edit(self, step: ToolStep) -> ToolResult:
        """Make a workspace edit as the actor ``user`` (audited), and record it."""
        result = await self.env.call(step.service, step.tool, step.arguments, actor="user")
        self.events.append(
            UserEvent(
                kind="edit",
                at_s=self.clock(),
                turn=self.agent_turns,
                text=result.text,
                name=qualified_name(step.service, step.tool),
                arguments=dict(step.arguments),
                is_error=result.is_error,
            )
        )
        return result


class UserSimulator(Protocol):
    async def reply(self, agent_text: str, ctx: UserContext) -> str | None:
        """The user's answer to a finished agent turn, or None to end the conversation."""
        ...

    async def after_tool_call(
        self, name: str, arguments: dict[str, Any], is_error: bool, ctx: UserContext
    ) -> str | None:
        """A message the user adds after one of the agent's tool calls (with edits already made), or None."""
        ...


@dataclass
class ScriptedUser:
    """The task's scripted user: held-back facts on request, turns with edits, then the end."""

    task: Task
    max_go_ahead: int = 1
    turns: list[UserTurn] = field(init=False)
    schedule: TurnSchedule = field(init=False)
    facts: list[str] = field(init=False)
    go_aheads: int = 0
    request_words: set[str] = field(init=False)

    def __post_init__(self) -> None:
        spec = self.task.user
        self.turns = list(spec.turns) if spec else []
        self.facts = list(spec.held_back) if spec else []
        self.schedule = TurnSchedule.of([t.when for t in self.turns])
        self.request_words = keywords(self.task.request)

    @property
    def exhausted(self) -> bool:
        return self.schedule.exhausted

    def asked_facts(self, agent_text: str) -> list[str]:
        """The held-back facts the agent's text asks about (in the task's order)."""
        return asked_facts(agent_text, self.facts, self.request_words)

    async def _deliver(self, k: int, ctx: UserContext) -> str:
        turn = self.turns[k]
        for step in turn.edits:
            await ctx.edit(step)
        return turn.message

    async def reply(self, agent_text: str, ctx: UserContext) -> str | None:
        facts = self.asked_facts(agent_text)
        parts = [" ".join(facts)] if facts else []
        due = self.schedule.at_finished_turn(nothing_else=not facts)
        if due is not None:
            parts.append(await self._deliver(due, ctx))
        if parts:
            return "\n\n".join(parts)
        if is_question(agent_text) and self.go_aheads < self.max_go_ahead:
            self.go_aheads += 1
            return GO_AHEAD
        return None

    async def after_tool_call(
        self, name: str, arguments: dict[str, Any], is_error: bool, ctx: UserContext
    ) -> str | None:
        service, _, tool = name.partition(TOOL_SEPARATOR)
        due = self.schedule.after_tool_call(service, tool, ok=not is_error)
        return None if due is None else await self._deliver(due, ctx)


def scripted_user(task: Task) -> ScriptedUser:
    return ScriptedUser(task)


def monotonic_clock() -> Callable[[], float]:
    start = time.perf_counter()
    return lambda: round(time.perf_counter() - start, 6)
