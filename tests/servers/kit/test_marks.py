"""Marks: a run played after a mark and rolled back to it leaves no trace, and inside a mark every call is still
atomic with its audit row, through either door."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers.kit import Environment, EnvironmentConfigError, ServiceState
from coworkenv.servers.tickets import SERVICE as TICKETS
from tests.servers.kit.test_door import CALLS as DOOR_CALLS
from tests.servers.kit.test_kit import NOTES

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).parents[3] / "servers/examples"
SEED = json.loads((EXAMPLES / "tickets.json").read_text())
CALLS: list[tuple[str, dict[str, Any]]] = [
    *DOOR_CALLS,
    ("add_comment", {"ticket_id": "tkt_1002", "body": "looking", "public": False}),
]


def _rows(env: Environment) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.to_dict().items() if k not in ("wall_time", "duration_ms")} for r in env.audit()]


async def test_a_rollback_to_a_mark_undoes_records_audit_rows_ids_and_the_clock() -> None:
    with Environment.create({"tickets": SEED}) as env:
        await env.call("tickets", "escalate_ticket", {"ticket_id": "tkt_1002", "reason": "before the mark"})
        before, rows = env.dump(), _rows(env)
        mark = env.mark()
        for name, args in CALLS:
            await env.call("tickets", name, args)
        env.clock.advance(3600)
        assert env.dump() != before
        env.rollback(mark)
        assert env.dump() == before and _rows(env) == rows and env.audit_since(mark) == []
        first = (await env.call("tickets", "create_ticket", CALLS[-2][1])).data
        env.rollback(mark)
        again = (await env.call("tickets", "create_ticket", CALLS[-2][1])).data
        assert first == again and first is not None  # the same id: the counters were rolled back too


async def test_a_run_after_a_mark_matches_the_same_run_on_a_fresh_environment() -> None:
    with Environment.create({"tickets": SEED}) as fresh, Environment.create({"tickets": SEED}) as marked:
        mark = marked.mark()
        await marked.call("tickets", "update_ticket", {"ticket_id": "tkt_1001", "status": "solved"})
        marked.rollback(mark)
        results_fresh = [await fresh.call("tickets", n, a) for n, a in CALLS]
        results_marked = [await marked.call("tickets", n, a) for n, a in CALLS]
        assert [(r.outcome, r.data, r.text, r.seq) for r in results_fresh] == [
            (r.outcome, r.data, r.text, r.seq) for r in results_marked
        ]
        assert fresh.dump() == marked.dump() and _rows(fresh) == _rows(marked)
        assert marked.dump_since(mark, fresh.dump()) == fresh.dump()


async def test_inside_a_mark_a_failed_call_keeps_its_audit_row_and_drops_its_writes() -> None:
    with Environment.create({"notes": {}}, registry={"notes": NOTES}) as env:
        mark = env.mark()
        await env.call("notes", "add_note", {"text": "kept"})
        failed = await env.call("notes", "add_then_fail", {"text": "a"})
        crashed = await env.call("notes", "add_then_crash", {"text": "b"})
        assert failed.outcome == "error" and crashed.outcome == "internal_error"
        assert [r["text"] for r in env.dump()["notes"]["notes"]] == ["kept"]
        assert [(r.tool, r.outcome, r.state_changed) for r in env.audit_since(mark)] == [
            ("add_note", "ok", True),
            ("add_then_fail", "error", False),
            ("add_then_crash", "internal_error", False),
        ]
        env.rollback(mark)
        assert env.dump() == {"notes": {"notes": []}} and env.audit() == []


async def test_inside_a_mark_the_mcp_door_and_the_direct_door_give_the_same_results_and_audit_rows() -> None:
    with Environment.create({"tickets": SEED}) as direct, Environment.create({"tickets": SEED}) as over_mcp:
        marks = direct.mark(), over_mcp.mark()
        with anyio.fail_after(30):
            direct_results = [await direct.call("tickets", name, args) for name, args in CALLS]
            async with Client(over_mcp.server("tickets")) as client:
                mcp_results = [await client.call_tool(name, args) for name, args in CALLS]
        for d, m in zip(direct_results, mcp_results, strict=True):
            assert (d.is_error, d.text, d.data) == (m.is_error, m.content[0].text, m.structured_content)  # type: ignore[union-attr]
        assert _rows(direct) == _rows(over_mcp) and len(_rows(direct)) == len(CALLS)
        assert direct.state_hash() == over_mcp.state_hash()
        direct.rollback(marks[0])
        over_mcp.rollback(marks[1])
        assert direct.state_hash() == over_mcp.state_hash() and direct.audit() == over_mcp.audit() == []


async def test_marks_nest_a_released_mark_keeps_its_calls_and_a_dropped_one_cannot_be_used() -> None:
    with Environment.create({"tickets": SEED}) as env:
        outer = env.mark()
        await env.call("tickets", "escalate_ticket", {"ticket_id": "tkt_1002", "reason": "outer"})
        inner = env.mark()
        await env.call("tickets", "update_ticket", {"ticket_id": "tkt_1009", "status": "open"})
        env.rollback(inner)
        assert [r.tool for r in env.audit()] == ["escalate_ticket"]
        env.release(inner)
        env.rollback(outer)
        assert env.audit() == []
        with pytest.raises(EnvironmentConfigError, match="not open"):
            env.rollback(inner)
        env.release(outer)
        await env.call("tickets", "escalate_ticket", {"ticket_id": "tkt_1002", "reason": "committed"})
        assert [r.tool for r in env.audit()] == ["escalate_ticket"]


def test_a_file_database_cannot_be_marked(tmp_path: Path) -> None:
    state = ServiceState.open(TICKETS, SEED, path=tmp_path / "t.db")
    try:
        with pytest.raises(EnvironmentConfigError, match="in-memory"):
            state.mark()
    finally:
        state.close()
