"""The kit's one door (``servers/kit/door.py``): the direct door and the MCP door, over each transport (in memory,
stdio, streamable HTTP), give the same outcomes, listings and audit rows; a call no client could send is an answer,
not a broken session."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import StdioServerParameters

from coworkenv.servers.kit import Environment, ServiceState, SimClock
from coworkenv.servers.kit.door import CallOutcome, DirectDoor, Door, MCPDoor, memory_targets, open_mcp_door
from coworkenv.servers.registry import get_service

pytestmark = pytest.mark.anyio
SEED = json.loads((Path(__file__).parents[3] / "servers/examples/tickets.json").read_text())
NOW = "2026-03-02T09:00:00Z"
CALLS: list[tuple[str, dict[str, Any]]] = [  # reads, writes, business errors, a bad argument, an unknown tool
    ("search_tickets", {"status": ["open"]}),
    ("escalate_ticket", {"ticket_id": "tkt_1002", "reason": "slow"}),
    ("update_ticket", {"ticket_id": "tkt_1009", "status": "open"}),  # a transition the ticket cannot make
    ("get_ticket", {"ticket_id": "tkt_nope"}),
    ("get_ticket", {"ticket_id": 7}),
    ("no_such_tool", {"a": 1}),
    ("create_ticket", {"subject": "s", "description": "d", "requester_id": "usr_jlee"}),
]
STRIP = ("wall_time", "duration_ms")


def _serve(db: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "coworkenv.servers", "serve", "tickets", "--db", str(db), *extra]


@asynccontextmanager
async def mcp_door(transport: str, tmp_path: Path) -> AsyncIterator[tuple[MCPDoor, Callable[[], Environment]]]:
    """An MCP door onto a fresh tickets environment over ``transport``, and how to open that environment (for its
    audit log and state; close it when done)."""
    if transport == "memory":
        env = Environment.create({"tickets": SEED}, now=NOW)
        async with open_mcp_door(memory_targets(env)) as door:
            yield door, lambda: env
        return
    Environment.create({"tickets": SEED}, now=NOW, db_dir=tmp_path).close()
    db = tmp_path / "tickets.db"

    def reopen() -> Environment:
        return Environment({"tickets": ServiceState.open(get_service("tickets"), path=db, create=False)}, SimClock(NOW))

    if transport == "stdio":
        command = _serve(db)
        async with open_mcp_door({"tickets": StdioServerParameters(command=command[0], args=command[1:])}) as door:
            yield door, reopen
        return
    proc = subprocess.Popen(
        _serve(db, "--transport", "http", "--port", "0"), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    try:
        assert proc.stderr is not None
        line = await anyio.to_thread.run_sync(proc.stderr.readline)
        assert "http://127.0.0.1:" in line, line
        async with open_mcp_door({"tickets": line.strip().rsplit(" ", 1)[-1]}) as door:
            yield door, reopen
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def rows(env: Environment) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.to_dict().items() if k not in STRIP} for r in env.audit()]


@pytest.mark.parametrize(
    "transport", ["memory", pytest.param("stdio", marks=pytest.mark.slow), pytest.param("http", marks=pytest.mark.slow)]
)
async def test_the_direct_door_and_the_mcp_door_give_the_same_outcomes_and_audit_rows(
    transport: str, tmp_path: Path
) -> None:
    with anyio.fail_after(60), Environment.create({"tickets": SEED}, now=NOW) as direct_env:
        direct: Door = DirectDoor(direct_env)
        expected = [await direct.call("tickets", name, args) for name, args in CALLS]
        async with mcp_door(transport, tmp_path) as (door, reopen):
            got = [await door.call("tickets", name, args) for name, args in CALLS]
        over_mcp = reopen()
        try:
            assert got == expected
            assert [o.outcome for o in got] == ["ok", "ok", "error", "error", "invalid_arguments", "unknown_tool", "ok"]
            assert all(o.data is not None for o in got if o.ok) and all(o.data is None for o in got if not o.ok)
            assert rows(over_mcp) == rows(direct_env) and len(rows(direct_env)) == len(CALLS)
            assert over_mcp.state_hash() == direct_env.state_hash()
        finally:
            over_mcp.close()


async def test_both_doors_list_a_service_s_tools_alike() -> None:
    with anyio.fail_after(30), Environment.create({"tickets": SEED}, now=NOW) as env:
        direct = await DirectDoor(env).list_tools("tickets")
        async with open_mcp_door(memory_targets(env)) as door:
            listed = await door.list_tools("tickets")
    assert [t.name for t in listed] == [t.name for t in direct] and len(direct) > 5
    assert [(t.service, t.description, t.input_schema) for t in listed] == [
        (t.service, t.description, t.input_schema) for t in direct
    ]


async def test_arguments_no_client_can_send_are_an_invalid_arguments_answer_and_the_session_goes_on() -> None:
    unsendable = {"ticket_id": "tkt_\ud800"}  # a lone surrogate cannot be encoded as JSON text
    with anyio.fail_after(30), Environment.create({"tickets": SEED}, now=NOW) as env:
        async with open_mcp_door(memory_targets(env)) as door:
            refused = await door.call("tickets", "get_ticket", unsendable)
            after = await door.call("tickets", "get_ticket", {"ticket_id": "tkt_1002"})
        answered = await DirectDoor(env).call("tickets", "get_ticket", unsendable)
        assert (refused.outcome, answered.outcome, after.outcome) == ("invalid_arguments", "invalid_arguments", "ok")
        assert refused.text.startswith("Invalid arguments for get_ticket: ")
        assert [r.outcome for r in env.audit()] == ["ok", "invalid_arguments"]  # the refused one never arrived


async def test_a_service_outside_the_environment_is_an_unknown_tool_answer_on_both_doors() -> None:
    with anyio.fail_after(30), Environment.create({"tickets": SEED}, now=NOW) as env:
        async with open_mcp_door(memory_targets(env)) as door:
            answers = [await d.call("crm", "get_account", {"account_id": "acc_1"}) for d in (door, DirectDoor(env))]
        assert answers[0] == answers[1] == CallOutcome("service 'crm' is not in this environment", True, "unknown_tool")
        assert env.audit() == []


async def test_each_door_acts_as_the_actor_it_was_opened_for() -> None:
    with anyio.fail_after(30), Environment.create({"tickets": SEED}, now=NOW) as env:
        async with open_mcp_door(memory_targets(env, "user")) as door:
            await door.call("tickets", "get_ticket", {"ticket_id": "tkt_1002"})
        await DirectDoor(env, actor="user").call("tickets", "get_ticket", {"ticket_id": "tkt_1002"})
        await DirectDoor(env).call("tickets", "get_ticket", {"ticket_id": "tkt_1002"})
        assert [r.actor for r in env.audit()] == ["user", "user", "agent"]
