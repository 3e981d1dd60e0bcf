"""Small things the backend tests share: a recording sleep, a few real tool views, an opening conversation."""

from __future__ import annotations

from coworkenv.harness.messages import Message, ToolView
from coworkenv.servers.registry import get_service


class Sleeps:
    """An injectable sleep that records the delays it was asked for and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def ticket_tools(count: int = 3) -> list[ToolView]:
    """The first tools of the real tickets service, as an agent sees them."""
    service = get_service("tickets")
    return [
        ToolView(
            name=f"tickets__{spec.name}",
            service="tickets",
            tool=spec.name,
            description=spec.description,
            input_schema=spec.input_schema(),
        )
        for spec in service.tools[:count]
    ]


def opening() -> list[Message]:
    return [
        Message(role="system", content="You are an AI coworker."),
        Message(role="user", content="Escalate the old Big Corp ticket."),
    ]
