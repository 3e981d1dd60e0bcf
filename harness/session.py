"""One episode in progress: it executes the agent's tool calls, talks to the user simulator, and records it all.

:class:`EpisodeSession` is the :class:`~coworkenv.harness.agents.base.EpisodeIO` given to episode-driving
agents, with extras they may use: ``task``, ``env``, ``system_prompt``, ``db_dir`` and ``mcp_config``
(stdio transport: the services' databases and the ``.mcp.json`` that serves them), and
``record_turn`` / ``record_tool_result`` for agents whose tool calls happen outside the harness
(Claude Code calls the MCP servers itself and reports what it did from its stream).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.agents.base import InfrastructureError, LimitReached
from coworkenv.harness.faults import FaultInjector
from coworkenv.harness.messages import AgentTurn, Message, ToolCall, ToolView, Usage, split_name
from coworkenv.harness.trajectory import ToolStepRecord, TurnRecord, UserEvent
from coworkenv.harness.user_sim import UserContext, UserSimulator
from coworkenv.servers.kit import Environment
from coworkenv.servers.kit.audit import recorded_arguments
from coworkenv.servers.kit.door import CallOutcome, Door
from coworkenv.synth.contract.task import Task


class EpisodeSession:
    def __init__(
        self,
        task: Task,
        env: Environment,
        door: Door,
        user: UserSimulator,
        *,
        tools: Sequence[ToolView],
        read_only: frozenset[str],
        system_prompt: str,
        max_turns: int,
        max_tool_calls: int,
        anchors: bool = True,
        faults: FaultInjector | None = None,
        db_dir: Path | None = None,
        mcp_config: dict[str, Any] | None = None,
        initial_hash: str | None = None,
    ) -> None:
        self.task = task
        self.env = env
        self.door = door
        self.user = user
        self.tools: list[ToolView] = list(tools)
        self.request = task.request
        self.system_prompt = system_prompt
        self.max_turns = max_turns
        self.max_tool_calls = max_tool_calls
        self.anchors = anchors
        self.faults = faults
        self.db_dir = db_dir
        self.mcp_config = mcp_config
        self._t0 = time.perf_counter()
        self.messages: list[Message] = [
            Message(role="system", content=system_prompt),
            Message(role="user", content=task.request),
        ]
        self.steps: list[ToolStepRecord] = []
        self.turns: list[TurnRecord] = []
        self.user_events: list[UserEvent] = []
        self.said: list[str] = []
        self.usage = Usage()
        self.faults_injected = 0
        self.ended = False
        self._pending: list[str] = []
        self._known = {t.name for t in self.tools}
        self._read_only = read_only  # qualified names of the tools that change nothing
        self._anchor: str | None = initial_hash
        self._edits_seen = 0
        self.ctx = UserContext(task, env, self.messages, self.user_events, self.elapsed)

    def elapsed(self) -> float:
        return round(time.perf_counter() - self._t0, 6)

    # ------------------------------------------------------------------ model turns
    async def before_model_call(self) -> None:
        """Limits first, then the fault injector (if any)."""
        if len(self.turns) >= self.max_turns:
            raise LimitReached(f"max_turns ({self.max_turns})")
        if self.faults is not None:
            try:
                await self.faults.before_model_call()
            except InfrastructureError:
                self.faults_injected += 1
                raise

    def record_turn(self, turn: AgentTurn, started_s: float | None = None, duration_s: float = 0.0) -> None:
        """Add an assistant turn to the conversation (and its token use); its calls are not executed here."""
        start = self.elapsed() if started_s is None else started_s
        for n, call in enumerate(turn.tool_calls):
            if not call.id:
                call.id = f"call_{len(self.steps) + n}"
        self.turns.append(
            TurnRecord(
                index=len(self.turns),
                started_s=start,
                duration_s=round(duration_s, 6),
                tool_calls=len(turn.tool_calls),
                usage=turn.usage,
                stop_reason=turn.stop_reason,
            )
        )
        self.usage = self.usage.add(turn.usage)
        self.messages.append(Message(role="assistant", content=turn.text, tool_calls=list(turn.tool_calls)))
        if turn.text.strip():
            self.said.append(turn.text)

    # ------------------------------------------------------------------ tools
    def anchor(self) -> str:
        """The environment's state hash now; recomputed only after something may have changed the state
        (a successful call of a tool that is not read-only, or an edit by the user)."""
        edits = sum(e.kind == "edit" for e in self.user_events)
        if self._anchor is None or edits != self._edits_seen:
            self._anchor = self.env.state_hash()
            self._edits_seen = edits
        return self._anchor

    async def _door_call(self, call: ToolCall) -> CallOutcome:
        if call.name not in self._known:
            return CallOutcome(
                f"Unknown tool {call.name!r}. Available tools: {', '.join(sorted(self._known))}.", True, "unknown_tool"
            )
        service, tool = split_name(call.name)
        try:
            return await self.door.call(service, tool, dict(call.arguments))
        except (anyio.get_cancelled_exc_class(), LimitReached):
            raise
        except Exception as exc:
            raise InfrastructureError(f"the {service} service failed on {tool}: {exc!r}") from exc

    async def execute(self, call: ToolCall) -> Message:
        """Run one tool call of the last assistant turn; record it and the user's reaction."""
        if len(self.steps) >= self.max_tool_calls:
            raise LimitReached(f"max_tool_calls ({self.max_tool_calls})")
        anchor = self.anchor() if self.anchors else None
        started = self.elapsed()
        t0 = time.perf_counter()
        result = await self._door_call(call)
        duration_ms = (time.perf_counter() - t0) * 1000
        if not result.is_error and call.name not in self._read_only:
            self._anchor = None
        message = self.record_tool_result(call, result, started, duration_ms, anchor)
        self.ctx.tool_calls = len(self.steps)
        note = await self.user.after_tool_call(call.name, dict(call.arguments), result.is_error, self.ctx)
        if note:
            self._pending.append(note)
        await anyio.lowlevel.checkpoint()
        return message

    def record_tool_result(
        self,
        call: ToolCall,
        result: CallOutcome,
        started_s: float | None = None,
        duration_ms: float = 0.0,
        anchor: str | None = None,
    ) -> Message:
        """Add a tool result to the conversation and the step log (for calls made outside the harness too).

        Arguments no tool took (invalid, or for an unknown tool) are recorded capped when large, in the step and in
        the assistant message that made the call (:func:`~coworkenv.servers.kit.audit.recorded_arguments`)."""
        arguments = recorded_arguments(call.arguments, result.outcome)
        if arguments is not call.arguments:
            self._recorded_call(call, arguments)
        self.steps.append(
            ToolStepRecord(
                index=len(self.steps),
                turn=max(len(self.turns) - 1, 0),
                call_id=call.id,
                name=call.name,
                arguments=dict(arguments),
                text=result.text,
                is_error=result.is_error,
                outcome=result.outcome,
                started_s=self.elapsed() if started_s is None else started_s,
                duration_ms=round(duration_ms, 3),
                anchor=anchor,
            )
        )
        message = Message(
            role="tool", content=result.text, tool_call_id=call.id, name=call.name, is_error=result.is_error
        )
        self.messages.append(message)
        return message

    def _recorded_call(self, call: ToolCall, arguments: dict[str, Any]) -> None:
        """Swap ``call`` in the assistant message that made it for a copy with these (capped) arguments."""
        for message in reversed(self.messages):
            for i, made in enumerate(message.tool_calls):
                if made is call or (made.id == call.id and made.name == call.name):
                    message.tool_calls[i] = call.model_copy(update={"arguments": arguments})
                    return

    def flush_user_notes(self) -> None:
        """Messages the user added after tool calls join the conversation once the turn's results are in."""
        for note in self._pending:
            self._user_says(note)
        self._pending.clear()

    # ------------------------------------------------------------------ the user
    def _user_says(self, text: str) -> None:
        self.messages.append(Message(role="user", content=text))
        self.user_events.append(UserEvent(kind="reply", at_s=self.elapsed(), turn=self.ctx.agent_turns, text=text))

    async def finish_turn(self, text: str) -> str | None:
        """The agent ended a turn saying ``text``: the user answers (recorded) or ends the conversation."""
        if self.ended:
            return None
        self.ctx.agent_turns += 1
        reply = await self.user.reply(text, self.ctx)
        if reply is None:
            self.ended = True
            self.user_events.append(UserEvent(kind="end", at_s=self.elapsed(), turn=self.ctx.agent_turns))
            return None
        self._user_says(reply)
        return reply

    # ------------------------------------------------------------------ EpisodeIO
    async def call_tool(self, name: str, arguments: dict[str, Any], call_id: str | None = None) -> tuple[str, bool]:
        await self.before_model_call()
        t0 = time.perf_counter()
        call = ToolCall(id=call_id or f"call_{len(self.steps)}", name=name, arguments=dict(arguments))
        self.record_turn(AgentTurn(tool_calls=[call]), duration_s=time.perf_counter() - t0)
        message = await self.execute(call)
        self.flush_user_notes()
        return message.content, message.is_error

    async def say(self, text: str) -> str | None:
        await self.before_model_call()
        self.record_turn(AgentTurn(text=text))
        return await self.finish_turn(text)
