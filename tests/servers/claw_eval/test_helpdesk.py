"""Claw-Eval's helpdesk on our tickets service: fixtures seed our tickets with their ids, each tool answers as
the mock does, writes change our records, and ``/audit`` is rebuilt from our audit rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval import profiled
from coworkenv.servers.claw_eval.helpdesk import ENDPOINTS, SERVICE, user_id
from coworkenv.servers.kit import Environment
from coworkenv.servers.registry import get_service
from coworkenv.servers.testing import check_service
from tests.servers.claw_eval.hfnk_twin import audit, call, claw_env, compare_with_mock, needs_claw, real_fixtures

pytestmark = pytest.mark.anyio

TICKETS: list[dict[str, Any]] = [
    {
        "ticket_id": "TK-1601",
        "title": "VPN drops every hour",
        "description": "Since Monday the VPN disconnects.",
        "reporter": "Li Hua",
        "department": "Engineering",
        "priority": "critical",
        "status": "open",
        "created_at": "2026-03-24T14:00:00",
        "tags": ["vpn"],
        "category": "network",
    },
    {
        "ticket_id": "TK-1602",
        "title": "New laptop",
        "description": "",
        "reporter": "Zhao Lei",
        "department": "Sales",
        "priority": "medium",
        "status": "resolved",
        "created_at": "2026-03-25T09:30:00+08:00",
        "sla_deadline": "2026-03-27T16:00:00+08:00",
        "requires_onsite": True,
    },
    {
        "ticket_id": "TK-1603",
        "title": "Printer jam",
        "description": "Third floor printer.",
        "reporter": "Li Hua",
        "department": "Engineering",
        "priority": "low",
        "status": "open",
        "created_at": "2026-03-26T08:00:00Z",
        "assigned_to": "Wang Fang",
    },
]
FIXTURES = {"helpdesk": {"tickets.json": TICKETS}}


def test_seeding_keeps_the_ticket_ids_and_puts_what_our_tickets_lack_in_custom_fields() -> None:
    seed = SERVICE.seed({"tickets.json": TICKETS})
    tickets = {t["id"]: t for t in seed["tickets"]}
    assert list(tickets) == ["TK-1601", "TK-1602", "TK-1603"]
    first = tickets["TK-1601"]
    assert (first["subject"], first["priority"], first["status"], first["tags"]) == (
        "VPN drops every hour",
        "urgent",
        "open",
        ["vpn"],
    )
    assert first["created_at"] == "2026-03-24T14:00:00Z" and first["requester_id"] == user_id("Li Hua")
    assert first["custom_fields"] == {
        "department": "Engineering",
        "category": "network",
        "priority": "critical",
        "created_at": "2026-03-24T14:00:00",
    }
    second = tickets["TK-1602"]
    assert (second["status"], second["priority"], second["created_at"]) == ("solved", "normal", "2026-03-25T01:30:00Z")
    assert second["custom_fields"]["description"] == "" and second["custom_fields"]["requires_onsite"] is True
    assert sorted(u["name"] for u in seed["users"]) == ["Li Hua", "Zhao Lei"]  # one user per reporter


async def test_get_ticket_returns_each_fixture_record_exactly_and_an_unknown_id_is_an_error_answer() -> None:
    with claw_env(["helpdesk"], FIXTURES) as (env, ours):
        for record in TICKETS:
            assert await call(env, ours, "helpdesk_get_ticket", {"ticket_id": record["ticket_id"]}) == record
        missing = await call(env, ours, "helpdesk_get_ticket", {"ticket_id": "TK-9"})
        assert missing == {"error": "Ticket TK-9 not found"}


async def test_list_tickets_filters_by_the_fixture_status_and_all_lists_every_one() -> None:
    with claw_env(["helpdesk"], FIXTURES) as (env, ours):
        listed = await call(env, ours, "helpdesk_list_tickets", {})
        assert [t["ticket_id"] for t in listed["tickets"]] == ["TK-1601", "TK-1603"] and listed["total"] == 2
        assert listed["tickets"][0] == {
            k: TICKETS[0][k]
            for k in ("ticket_id", "title", "reporter", "department", "priority", "status", "created_at")
        }
        assert (await call(env, ours, "helpdesk_list_tickets", {"status": "resolved"}))["total"] == 1
        assert (await call(env, ours, "helpdesk_list_tickets", {"status": "all"}))["total"] == 3


async def test_an_argument_the_mock_does_not_know_is_left_out_as_its_request_model_leaves_it() -> None:
    with claw_env(["helpdesk"], FIXTURES) as (env, ours):
        plain = await call(env, ours, "helpdesk_list_tickets", {"status": "open"})
        extra = await call(env, ours, "helpdesk_list_tickets", {"status": "open", "priority": "high", "date_to": 3})
        assert extra == plain


async def test_update_ticket_changes_our_ticket_and_audit_lists_the_updated_ticket() -> None:
    with claw_env(["helpdesk"], FIXTURES) as (env, ours):
        args = {"ticket_id": "TK-1603", "priority": "high", "tags": ["hardware"], "category": "hardware"}
        got = await call(env, ours, "helpdesk_update_ticket", args)
        want = {**TICKETS[2], "priority": "high", "tags": ["hardware"], "category": "hardware"}
        assert got == {"status": "updated", "ticket": want}
        stored = env.state(ours).tables["tickets"].get("TK-1603")
        assert stored is not None and (stored["priority"], stored["tags"]) == ("high", ["hardware"])
        assert stored["custom_fields"]["category"] == "hardware" and "priority" not in stored["custom_fields"]
        again = await call(env, ours, "helpdesk_update_ticket", {"ticket_id": "TK-1603", "priority": "P2"})
        assert again["ticket"]["priority"] == "P2"  # a word our enum lacks is kept as written
        data = audit(SERVICE, env, ours)
        assert [t["priority"] for t in data["updated_tickets"]] == ["high", "P2"] and data["closed"] == []
        assert data["calls"][0]["endpoint"] == "/helpdesk/tickets/update"
        assert data["calls"][1]["request_body"] == {
            "ticket_id": "TK-1603",
            "priority": "P2",
            "tags": None,
            "category": None,
        }


async def test_close_ticket_closes_our_ticket_with_its_resolution_and_audit_lists_it() -> None:
    with claw_env(["helpdesk"], FIXTURES) as (env, ours):
        got = await call(env, ours, "helpdesk_close_ticket", {"ticket_id": "TK-1602", "resolution": "Shipped"})
        assert got == {"status": "closed", "ticket": {**TICKETS[1], "status": "closed", "resolution": "Shipped"}}
        stored = env.state(ours).tables["tickets"].get("TK-1602")
        assert stored is not None and stored["status"] == "closed" and stored["updated_at"] == "2026-03-02T09:00:00Z"
        assert (await call(env, ours, "helpdesk_list_tickets", {"status": "closed"}))["total"] == 1
        nothing = await call(env, ours, "helpdesk_close_ticket", {"ticket_id": "TK-7", "resolution": "x"})
        assert nothing == {"error": "Ticket TK-7 not found"}
        data = audit(SERVICE, env, ours)
        assert [t["ticket_id"] for t in data["closed"]] == ["TK-1602"] and len(data["calls"]) == 3


def test_the_profiled_service_passes_the_toolkit_s_schema_seed_door_and_fuzz_checks() -> None:
    # "outcomes" is left out: an unknown id is a 200 answer {"error": ...} in Claw-Eval, not a failed call
    check_service(
        profiled(get_service("tickets"), ["helpdesk"]),
        SERVICE.seed({"tickets.json": TICKETS}),
        calls=100,
        skip=("outcomes", "stdio"),
    )


@pytest.mark.parametrize(
    ("records", "says"),
    [
        ([{**TICKETS[0], "reporter": None}], "tickets.json record TK-1601: reporter"),
        ([{k: v for k, v in TICKETS[0].items() if k != "department"}], "tickets.json record TK-1601: lacks department"),
        ([{**TICKETS[0], "created_at": "last week"}], "tickets.json record TK-1601: 'last week' is not an ISO"),
        ([TICKETS[0], TICKETS[0]], "tickets.json record TK-1601: the ticket_id is given twice"),
        ([{**TICKETS[0], "ticket_id": 7}], "tickets.json record 0: ticket_id"),
        ({"tickets": []}, "helpdesk fixture tickets.json: expected a list"),
    ],
)
def test_a_bad_fixture_is_a_value_error_naming_the_file_and_record(records: Any, says: str) -> None:
    with pytest.raises(ValueError, match="^" + says.replace("(", r"\(")):
        SERVICE.seed({"tickets.json": records})


@needs_claw
async def test_each_tool_answers_as_the_real_mock_does_and_audit_is_the_same(tmp_path: Path) -> None:
    calls = [
        ("helpdesk_list_tickets", {}),
        ("helpdesk_list_tickets", {"status": "all"}),
        ("helpdesk_get_ticket", {"ticket_id": "TK-1602"}),
        ("helpdesk_get_ticket", {"ticket_id": "TK-404"}),
        ("helpdesk_update_ticket", {"ticket_id": "TK-1601", "priority": "high", "tags": []}),
        ("helpdesk_update_ticket", {"ticket_id": "TK-1603"}),
        ("helpdesk_update_ticket", {"ticket_id": "TK-404", "category": "x"}),
        ("helpdesk_close_ticket", {"ticket_id": "TK-1603", "resolution": "Cleared the jam"}),
        ("helpdesk_close_ticket", {"ticket_id": "TK-404", "resolution": "x"}),
        ("helpdesk_list_tickets", {"status": "closed"}),
        ("helpdesk_get_ticket", {"ticket_id": "TK-1601"}),
    ]
    await compare_with_mock(tmp_path, SERVICE, "tickets.json", TICKETS, calls, ENDPOINTS)


@needs_claw
async def test_every_real_task_s_helpdesk_fixtures_seed_our_tickets_and_read_as_the_mock_does(tmp_path: Path) -> None:
    tasks = real_fixtures("helpdesk")
    assert len(tasks) >= 20
    for task, fixtures in tasks:
        seed = SERVICE.seed(fixtures["helpdesk"])
        with Environment.create({"tickets": seed}) as env:
            stored = env.state("tickets").tables["tickets"].dump()
        ((name, records),) = fixtures["helpdesk"].items()
        assert [t["id"] for t in stored] == [r["ticket_id"] for r in records], task
        reads = [("helpdesk_get_ticket", {"ticket_id": r["ticket_id"]}) for r in records]
        calls = [("helpdesk_list_tickets", {"status": "all"}), ("helpdesk_list_tickets", {}), *reads]
        await compare_with_mock(tmp_path / task, SERVICE, name, records, calls, ENDPOINTS)
