"""Agents that need no model: ``replay`` and ``noop`` (for checking tasks and graders), ``scripted:PATH``.

- :class:`ReplayAgent` plays the task's reference solution through the episode's tools, resolving each
  ``{"$ref": "step.path"}`` from earlier results (synth's resolution, by lookup only); its ``say`` steps go
  to the user. For validation and plumbing, never for scores.
- :class:`NoopAgent` says it cannot help and stops.
- :class:`ScriptedAgent` is a model agent whose turns come from a JSON file: ``{"turns": [{"text": ...,
  "tool_calls": [{"name": "tickets__get_ticket", "arguments": {...}}]}, ...], "then": "Done."}`` (or a bare
  list of turns). Turn *n* answers the conversation's *n*-th model call; arguments may use
  ``{"$ref": "CALL_ID.path"}`` to read an earlier tool result; a turn ``{"raise": "infra" | "agent"}``
  raises an infrastructure or an agent error. After the last turn it says ``then`` with no tool calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from coworkenv.harness.agents.base import EpisodeIO, InfrastructureError
from coworkenv.harness.messages import AgentTurn, Message, ToolCall, ToolView, qualified_name
from coworkenv.synth.contract.task import SayStep, Task, resolve_refs
from coworkenv.synth.contract.turns import NOOP_TEXT  # validation's no-op says the same


class ReplayError(RuntimeError):
    """The reference solution could not be played (a $ref that does not resolve)."""


class ReplayAgent:
    """Plays the task's reference solution (needs the harness's episode session, which carries the task)."""

    name = "replay"

    async def run_episode(self, io: EpisodeIO) -> None:
        task = getattr(io, "task", None)
        if not isinstance(task, Task):
            raise ReplayError("replay needs the task: run it through coworkenv.harness.episode.run_episode")
        results: dict[str, Any] = {}
        for n, step in enumerate(task.reference_solution):
            if isinstance(step, SayStep):
                await io.say(step.say)
                continue
            try:
                arguments = resolve_refs(step.arguments, results)
            except ValueError as exc:
                raise ReplayError(f"reference step {n} of {task.id}: {exc}") from exc
            text, is_error = await io.call_tool(qualified_name(step.service, step.tool), arguments, f"ref_{n}")
            if step.id and not is_error:
                results[step.id] = _json_or_text(text)


class NoopAgent:
    name = "noop"

    async def run_episode(self, io: EpisodeIO) -> None:
        await io.say(NOOP_TEXT)


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


# ---------------------------------------------------------------------------------------------- scripted
class ScriptedCall(BaseModel):
    id: str | None = None
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ScriptedTurn(BaseModel):
    text: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    raise_: str | None = Field(default=None, alias="raise")


class Script(BaseModel):
    name: str = "scripted"
    turns: list[ScriptedTurn]
    then: str = "I have nothing more to add."


class ScriptedAgent:
    """A fixed policy: the n-th model call of a conversation gets the n-th scripted turn (stateless)."""

    def __init__(self, script: Script, name: str | None = None) -> None:
        self.script = script
        self.name = name or f"scripted:{script.name}"

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedAgent:
        p = Path(path)
        try:
            raw = json.loads(p.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"cannot read the script {p}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise ValueError(f"{p}: not UTF-8 text (byte {exc.start}); save the script as UTF-8") from exc
        except RecursionError as exc:
            raise ValueError(f"{p}: JSON nested too deeply to read; flatten the script") from exc
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p}: not valid JSON: {exc.msg} at line {exc.lineno}") from exc
        if isinstance(raw, list):
            raw = {"turns": raw, "name": p.stem}
        try:
            script = Script.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ValueError(f"{p}: {'.'.join(map(str, err['loc']))}: {err['msg']}") from exc
        return cls(script, name=f"scripted:{p}")

    @classmethod
    def from_turns(cls, turns: list[dict[str, Any]], then: str = "I have nothing more to add.") -> ScriptedAgent:
        return cls(Script.model_validate({"turns": turns, "then": then}))

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        index = sum(1 for m in messages if m.role == "assistant")
        if index >= len(self.script.turns):
            return AgentTurn(text=self.script.then, stop_reason="end_turn")
        turn = self.script.turns[index]
        if turn.raise_ == "infra":
            raise InfrastructureError(f"scripted infrastructure failure at turn {index}")
        if turn.raise_ is not None:
            raise RuntimeError(f"scripted agent failure at turn {index}")
        results = {m.tool_call_id: _json_or_text(m.content) for m in messages if m.role == "tool" and m.tool_call_id}
        calls = [
            ToolCall(id=c.id or f"call_{index}_{n}", name=c.name, arguments=_resolved(c.arguments, results))
            for n, c in enumerate(turn.tool_calls)
        ]
        return AgentTurn(text=turn.text, tool_calls=calls, stop_reason="tool_use" if calls else "end_turn")


def _resolved(arguments: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
    """The arguments with their references resolved; arguments too deep to walk are sent as they are."""
    try:
        return resolve_refs(arguments, results)
    except RecursionError:
        return arguments
