"""tally: a baseline agent from another package. It calls every list tool that needs no argument once, then tells
the user how many records each holds (the ``total`` of each page it read), and changes nothing.

A tool result reaches the agent as a ``Message(role="tool")``: ``content`` is the tool's JSON answer as text (or
the error message, with ``is_error`` True), ``name`` the qualified tool name (``tickets__list_tickets``)."""

from __future__ import annotations

import json

from coworkenv.harness.agents.backend import AgentBackend, AgentSpecError
from coworkenv.harness.messages import AgentTurn, Message, ToolCall, ToolView


class TallyAgent:
    def __init__(self, limit: int = 10) -> None:
        self.name = f"tally:{limit}"
        self.limit = limit

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        results = [m for m in messages if m.role == "tool"]
        if results:
            counts = [f"{m.name}: {_total(m)}" for m in results]
            return AgentTurn(text="Records per list: " + "; ".join(counts) + ".", stop_reason="end_turn")
        lists = [t for t in tools if t.tool.startswith("list_") and not t.input_schema.get("required")]
        if not lists:
            return AgentTurn(text="I found no list to count.", stop_reason="end_turn")
        calls = [ToolCall(id=f"call_{i}", name=t.name) for i, t in enumerate(lists[: self.limit])]
        return AgentTurn(tool_calls=calls, stop_reason="tool_use")


def _total(result: Message) -> str:
    if result.is_error:
        return "unreadable"
    try:
        return str(json.loads(result.content).get("total", "?"))
    except (ValueError, AttributeError):
        return "?"


def from_spec(arg: str) -> TallyAgent:
    if arg and not arg.isdigit():
        raise AgentSpecError(f"tally takes the most lists to count, e.g. tally:3, not {arg!r}")
    return TallyAgent(int(arg) if arg else 10)


BACKEND = AgentBackend(
    "tally", "tally[:N]", from_spec, "counts what up to N lists hold, changes nothing", argument="optional"
)
