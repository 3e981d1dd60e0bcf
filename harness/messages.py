"""The conversation of an episode, in one provider-neutral shape (OpenAI-like chat messages).

Every agent backend converts to and from this; trajectories store it; export turns it into the chat
records trl trains on. Tool names the model sees are ``<service>__<tool>`` (Claude Code's ``mcp__`` prefix
is stripped when its stream is parsed).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from coworkenv.synth.contract.turns import TOOL_SEPARATOR
from coworkenv.synth.model_io import Usage


def qualified_name(service: str, tool: str) -> str:
    return f"{service}{TOOL_SEPARATOR}{tool}"


def split_name(name: str) -> tuple[str, str]:
    """``tickets__get_ticket`` → ``("tickets", "get_ticket")``; a clear error for anything else."""
    service, sep, tool = name.partition(TOOL_SEPARATOR)
    if not sep or not service or not tool:
        raise ValueError(f"tool name {name!r} is not of the form <service>{TOOL_SEPARATOR}<tool>")
    return service, tool


__all__ = ["AgentTurn", "Message", "ToolCall", "ToolView", "Usage", "qualified_name", "split_name"]


class ToolCall(BaseModel):
    id: str = Field(description="Provider call id (e.g. 'toolu_…' or 'call_…'); tool results answer it.")
    name: str = Field(description="Qualified tool name, e.g. 'tickets__get_ticket'.")
    arguments: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Assistant messages only.")
    tool_call_id: str | None = Field(default=None, description="Tool messages only: the call answered.")
    name: str | None = Field(default=None, description="Tool messages only: the qualified tool name.")
    is_error: bool = Field(default=False, description="Tool messages only: the call failed.")


class ToolView(BaseModel):
    """A tool as the agent sees it."""

    name: str
    service: str
    tool: str
    description: str
    input_schema: dict[str, Any]


class AgentTurn(BaseModel):
    """One model response: text for the user and/or tool calls. No tool calls means the agent is done
    with this turn (its text is what it says to the user)."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    stop_reason: str | None = None
