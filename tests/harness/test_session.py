"""An episode's session calls the tools through the door it is given: any door that meets the kit's protocol."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from coworkenv.harness.messages import ToolCall
from coworkenv.harness.session import EpisodeSession
from coworkenv.harness.tools import resolve_services, system_prompt
from coworkenv.harness.user_sim import ScriptedUser
from coworkenv.servers.kit import Environment
from coworkenv.servers.kit.door import CallOutcome, DirectDoor, Door, DoorTool
from coworkenv.synth.contract.task import Task
from tests.synth.conftest import base_task

pytestmark = pytest.mark.anyio


class RecordingDoor:
    """A door of someone's own: the kit's direct door, noting each call that goes through it."""

    def __init__(self, inner: Door) -> None:
        self.inner = inner
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    async def call(self, service: str, tool: str, arguments: Mapping[str, Any]) -> CallOutcome:
        self.calls.append((service, tool, dict(arguments)))
        return await self.inner.call(service, tool, arguments)

    async def list_tools(self, service: str) -> list[DoorTool]:
        return await self.inner.list_tools(service)


async def test_the_session_calls_the_tools_through_the_door_it_is_given_and_records_its_outcomes() -> None:
    task = Task.model_validate(base_task())
    services = resolve_services(tuple(task.services))
    with anyio.fail_after(30), Environment.create(task.seeds(), now=task.now) as env:
        door = RecordingDoor(DirectDoor(env))
        session = EpisodeSession(
            task,
            env,
            door,
            ScriptedUser(task),
            tools=services.tools,
            read_only=services.read_only,
            system_prompt=system_prompt(task, services),
            max_turns=5,
            max_tool_calls=5,
        )
        await session.execute(
            ToolCall(id="c1", name="tickets__escalate_ticket", arguments={"ticket_id": "tkt_1", "reason": "SLA"})
        )
        await session.execute(ToolCall(id="c2", name="tickets__get_ticket", arguments={"ticket_id": "tkt_none"}))
        await session.execute(ToolCall(id="c3", name="crm__get_account", arguments={}))  # not a tool of the task
        assert door.calls == [
            ("tickets", "escalate_ticket", {"ticket_id": "tkt_1", "reason": "SLA"}),
            ("tickets", "get_ticket", {"ticket_id": "tkt_none"}),
        ]
        assert [(s.name, s.outcome, s.is_error) for s in session.steps] == [
            ("tickets__escalate_ticket", "ok", False),
            ("tickets__get_ticket", "error", True),
            ("crm__get_account", "unknown_tool", True),
        ]
        assert [r.tool for r in env.audit()] == ["escalate_ticket", "get_ticket"]
        assert session.tools == list(services.tools)
