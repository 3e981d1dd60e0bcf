"""What an agent is, for the harness.

Two kinds:
- a :class:`ModelAgent` answers one step at a time (Anthropic, OpenAI-compatible, local transformers, a
  scripted policy): the harness runs the loop, executes its tool calls, feeds results back;
- an :class:`EpisodeAgent` drives a whole episode itself (Claude Code over stdio, ``replay``, ``noop``):
  it gets an :class:`EpisodeIO` to call tools and talk to the user.

Failures the agent is not to blame for (API down, rate limit after retries, timeout) raise
:class:`InfrastructureError`, so runs can retry them and keep them out of scores. An episode that hits one of its
limits (turns, tool calls, messages) raises :class:`LimitReached`, whether the harness's loop or the agent itself
(Claude Code's own turn count) finds it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from coworkenv.harness.messages import AgentTurn, Message, ToolView
from coworkenv.synth.model_io import InfrastructureError

__all__ = ["EpisodeAgent", "EpisodeIO", "InfrastructureError", "LimitReached", "ModelAgent"]


class LimitReached(Exception):
    """The episode hit a turn, tool-call or message limit; ``reason`` names it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@runtime_checkable
class ModelAgent(Protocol):
    name: str

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        """The next assistant turn for this conversation (the first message is the system prompt)."""
        ...


class EpisodeIO(Protocol):
    """What an episode-driving agent may do."""

    tools: list[ToolView]
    request: str

    async def call_tool(self, name: str, arguments: dict[str, Any], call_id: str | None = None) -> tuple[str, bool]:
        """Run a qualified tool call; returns (result text, is_error) and records it in the trajectory."""
        ...

    async def say(self, text: str) -> str | None:
        """Tell the user something; returns the user's reply, or None when the user ends the conversation."""
        ...


@runtime_checkable
class EpisodeAgent(Protocol):
    name: str

    async def run_episode(self, io: EpisodeIO) -> None: ...
