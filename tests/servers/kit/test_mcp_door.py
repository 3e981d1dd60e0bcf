"""The MCP door's short route (``ServiceServer._handle_call_tool``, no per-call SDK ``Context``) answers exactly as
the SDK's own ``tools/call`` handler does through our ``call_tool``: same results on the wire, same audit rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from coworkenv.servers.kit import Environment, ServiceServer

pytestmark = pytest.mark.anyio
SEED = json.loads((Path(__file__).parents[3] / "servers/examples/tickets.json").read_text())

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search_tickets", {"status": ["open"]}),
    ("escalate_ticket", {"ticket_id": "tkt_1002", "reason": "slow"}),
    ("update_ticket", {"ticket_id": "tkt_1009", "status": "open"}),
    ("get_ticket", {"ticket_id": 7}),
    ("get_ticket", {"ticket_id": "tkt_nope"}),
    ("no_such_tool", {"a": 1}),
    ("create_ticket", {"subject": "s", "description": "d", "requester_id": "usr_jlee"}),
]


class SdkRoute(ServiceServer):
    """Calls through the SDK's own handler, as before the short route."""

    _handle_call_tool = MCPServer._handle_call_tool  # type: ignore[assignment]


def test_the_sdk_sends_tools_call_to_the_short_route() -> None:
    with Environment.create({"tickets": SEED}) as env:
        server = env.server("tickets")
        assert type(server)._handle_call_tool is ServiceServer._handle_call_tool
        assert ServiceServer._handle_call_tool is not MCPServer._handle_call_tool


async def test_the_short_route_and_the_sdk_route_answer_and_audit_alike() -> None:
    with Environment.create({"tickets": SEED}) as short, Environment.create({"tickets": SEED}) as sdk:
        results = []
        for server in (short.server("tickets"), SdkRoute(sdk.state("tickets"))):
            async with Client(server) as client:
                results.append([(await client.call_tool(n, a)).model_dump() for n, a in CALLS])
        assert results[0] == results[1]
        strip = ("wall_time", "duration_ms")
        rows = [[{k: v for k, v in r.to_dict().items() if k not in strip} for r in e.audit()] for e in (short, sdk)]
        assert rows[0] == rows[1] and len(rows[0]) == len(CALLS)
        assert short.state_hash() == sdk.state_hash()


async def test_a_kit_failure_is_an_error_result_on_both_routes(monkeypatch: pytest.MonkeyPatch) -> None:
    with Environment.create({"tickets": SEED}) as env:
        state = env.state("tickets")

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("kit bug")

        monkeypatch.setattr(state, "call_now", broken)
        answers = []
        for server in (ServiceServer(state), SdkRoute(state)):
            async with Client(server) as client:
                answers.append((await client.call_tool("get_ticket", {"ticket_id": "tkt_1001"})).model_dump())
        assert answers[0] == answers[1] and answers[0]["is_error"] is True
        assert answers[0]["content"][0]["text"] == "kit bug"
