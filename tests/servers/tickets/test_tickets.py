"""The tickets service, through the in-memory MCP client: every tool, with its error cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.tickets import SERVICE
from tests.conftest import error_text, ok, service_client

pytestmark = pytest.mark.anyio
SEED: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/tickets.json").read_text())


async def test_search_filters_by_status_priority_and_creation_window() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        page = ok(await c.call_tool("search_tickets", {"status": ["open"], "priority": ["high", "urgent"]}))
        assert [t["id"] for t in page["items"]] == ["tkt_1008", "tkt_1001", "tkt_1004"]
        old = ok(await c.call_tool("search_tickets", {"status": ["open"], "created_before": "2026-02-28T09:00:00Z"}))
        assert {t["id"] for t in old["items"]} == {"tkt_1001", "tkt_1002", "tkt_1008"}
        recent = ok(await c.call_tool("search_tickets", {"created_after": "2026-03-01T00:00:00+00:00"}))
        assert {t["id"] for t in recent["items"]} == {"tkt_1004", "tkt_1005", "tkt_1010"}


async def test_search_filters_by_organization_requester_assignee_and_tag() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        by_org = ok(await c.call_tool("search_tickets", {"organization_id": "org_northwind"}))
        assert {t["id"] for t in by_org["items"]} == {"tkt_1001", "tkt_1005", "tkt_1009"}
        by_req = ok(await c.call_tool("search_tickets", {"requester_id": "usr_rgomez"}))
        assert by_req["total"] == 2
        by_agent = ok(await c.call_tool("search_tickets", {"assignee_id": "usr_kim"}))
        assert {t["id"] for t in by_agent["items"]} == {"tkt_1003", "tkt_1008"}
        tagged = ok(await c.call_tool("search_tickets", {"tag": "billing"}))
        assert [t["id"] for t in tagged["items"]] == ["tkt_1003"]


async def test_search_pages_through_results_with_the_next_page_token() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        seen: list[str] = []
        token = None
        while True:
            args: dict[str, Any] = {"page_size": 3} | ({"page_token": token} if token else {})
            page = ok(await c.call_tool("search_tickets", args))
            assert page["total"] == 10
            seen += [t["id"] for t in page["items"]]
            token = page["next_page_token"]
            if token is None:
                break
        assert len(seen) == 10 == len(set(seen))
        assert "page_token" in error_text(await c.call_tool("search_tickets", {"page_token": "abc"}))
        assert "page_size" in error_text(await c.call_tool("search_tickets", {"page_size": 0}))


@pytest.mark.parametrize("needle", ["'", "%", "_", '"', ";", "Ünïcødé ✓"])
async def test_search_text_is_matched_literally(needle: str) -> None:
    seed = {
        "users": [{"id": "usr_a", "name": "A", "email": "a@x.com"}],
        "tickets": [
            {
                "id": "tkt_hit",
                "subject": f"has {needle} inside",
                "requester_id": "usr_a",
                "created_at": "2026-03-01T00:00:00Z",
                "updated_at": "2026-03-01T00:00:00Z",
            },
            {
                "id": "tkt_miss",
                "subject": "plain words only",
                "requester_id": "usr_a",
                "created_at": "2026-03-01T00:00:00Z",
                "updated_at": "2026-03-01T00:00:00Z",
            },
        ],
    }
    async with service_client(SERVICE, seed) as (c, _):
        page = ok(await c.call_tool("search_tickets", {"query": needle}))
        assert [t["id"] for t in page["items"]] == ["tkt_hit"]


async def test_search_folds_case_for_unicode_text() -> None:
    seed = {
        "users": [{"id": "usr_a", "name": "A", "email": "a@x.com"}],
        "tickets": [
            {
                "id": "tkt_1",
                "subject": "ÉCHEC de connexion",
                "requester_id": "usr_a",
                "created_at": "2026-03-01T00:00:00Z",
                "updated_at": "2026-03-01T00:00:00Z",
            }
        ],
    }
    async with service_client(SERVICE, seed) as (c, _):
        assert ok(await c.call_tool("search_tickets", {"query": "échec"}))["total"] == 1


async def test_get_ticket_returns_the_conversation_oldest_first() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        ticket = ok(await c.call_tool("get_ticket", {"ticket_id": "tkt_1001"}))
        assert [x["id"] for x in ticket["comments"]] == ["cmt_5001", "cmt_5002"]
        assert ticket["comments"][1]["public"] is False


async def test_get_ticket_with_an_unknown_id_says_how_to_find_one() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        text = error_text(await c.call_tool("get_ticket", {"ticket_id": "tkt_nope"}))
        assert "tkt_nope" in text and "search_tickets" in text


async def test_create_ticket_stamps_the_clock_and_takes_the_requesters_organization() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        t = ok(
            await c.call_tool(
                "create_ticket",
                {"subject": "Hi", "description": "Help", "requester_id": "usr_spatel", "tags": ["b", "a", "b"]},
            )
        )
        assert t["status"] == "new" and t["organization_id"] == "org_acme" and t["tags"] == ["a", "b"]
        assert t["created_at"] == "2026-03-02T09:00:00Z" and t["id"].startswith("tkt_")
        assert env.state("tickets").tables["tickets"].get(t["id"]) == t


async def test_created_ids_are_deterministic_across_environments() -> None:
    ids = []
    for _ in range(2):
        async with service_client(SERVICE, SEED) as (c, _):
            args = {"subject": "Hi", "description": "Help", "requester_id": "usr_spatel"}
            ids.append(ok(await c.call_tool("create_ticket", args))["id"])
    assert ids[0] == ids[1]


async def test_create_ticket_rejects_an_unknown_requester_and_an_empty_subject() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        assert "search_users" in error_text(
            await c.call_tool("create_ticket", {"subject": "x", "description": "y", "requester_id": "usr_ghost"})
        )
        assert "subject" in error_text(
            await c.call_tool("create_ticket", {"subject": "", "description": "y", "requester_id": "usr_jlee"})
        )
        assert len(env.dump()["tickets"]["tickets"]) == 10


async def test_update_ticket_follows_the_status_life_cycle() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        t = ok(
            await c.call_tool(
                "update_ticket",
                {
                    "ticket_id": "tkt_1002",
                    "status": "pending",
                    "priority": "high",
                    "add_tags": ["vip"],
                    "remove_tags": ["export"],
                },
            )
        )
        assert (t["status"], t["priority"], t["tags"], t["updated_at"]) == (
            "pending",
            "high",
            ["vip"],
            "2026-03-02T09:00:00Z",
        )
        text = error_text(await c.call_tool("update_ticket", {"ticket_id": "tkt_1002", "status": "new"}))
        assert "Allowed next statuses" in text
        assert "closed" in error_text(await c.call_tool("update_ticket", {"ticket_id": "tkt_1009", "priority": "high"}))
        solved = ok(await c.call_tool("update_ticket", {"ticket_id": "tkt_1007", "status": "closed"}))
        assert solved["status"] == "closed"
        assert "status" in error_text(await c.call_tool("update_ticket", {"ticket_id": "tkt_1002", "status": "done"}))


async def test_update_ticket_with_nothing_to_change_returns_the_ticket_unchanged() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        t = ok(await c.call_tool("update_ticket", {"ticket_id": "tkt_1002"}))
        assert t["updated_at"] == "2026-02-27T10:30:00Z" and env.state_hash() == before


async def test_add_comment_public_reply_opens_a_new_ticket_and_internal_note_does_not() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        ok(await c.call_tool("add_comment", {"ticket_id": "tkt_1010", "body": "note", "public": False}))
        assert env.state("tickets").tables["tickets"].get("tkt_1010")["status"] == "new"  # type: ignore[index]
        comment = ok(await c.call_tool("add_comment", {"ticket_id": "tkt_1010", "body": "On it"}))
        assert comment["public"] is True and comment["ticket_id"] == "tkt_1010" and comment["author_id"] is None
        assert env.state("tickets").tables["tickets"].get("tkt_1010")["status"] == "open"  # type: ignore[index]


async def test_add_comment_refuses_closed_tickets_another_author_and_empty_bodies() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert "closed" in error_text(await c.call_tool("add_comment", {"ticket_id": "tkt_1009", "body": "x"}))
        assert "Extra inputs are not permitted" in error_text(
            await c.call_tool("add_comment", {"ticket_id": "tkt_1002", "body": "x", "author_id": "usr_kim"})
        )
        assert "body" in error_text(await c.call_tool("add_comment", {"ticket_id": "tkt_1002", "body": ""}))


async def test_assign_ticket_to_an_agent_and_never_to_an_end_user() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        t = ok(await c.call_tool("assign_ticket", {"ticket_id": "tkt_1005", "assignee_id": "usr_kim"}))
        assert (t["assignee_id"], t["status"]) == ("usr_kim", "open")
        assert "end-user" in error_text(
            await c.call_tool("assign_ticket", {"ticket_id": "tkt_1005", "assignee_id": "usr_jlee"})
        )
        assert "closed" in error_text(
            await c.call_tool("assign_ticket", {"ticket_id": "tkt_1009", "assignee_id": "usr_kim"})
        )
        assert "usr_zz" in error_text(
            await c.call_tool("assign_ticket", {"ticket_id": "tkt_1005", "assignee_id": "usr_zz"})
        )


async def test_escalate_ticket_raises_priority_and_leaves_an_internal_note() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        t = ok(await c.call_tool("escalate_ticket", {"ticket_id": "tkt_1002", "reason": "Enterprise, 4 days open"}))
        assert t["escalated"] is True and t["priority"] == "urgent" and "escalated" in t["tags"]
        detail = ok(await c.call_tool("get_ticket", {"ticket_id": "tkt_1002"}))
        assert detail["comments"][-1]["body"] == "Escalated: Enterprise, 4 days open"
        assert detail["comments"][-1]["public"] is False
        assert "already escalated" in error_text(
            await c.call_tool("escalate_ticket", {"ticket_id": "tkt_1002", "reason": "again"})
        )
        assert "solved" in error_text(await c.call_tool("escalate_ticket", {"ticket_id": "tkt_1007", "reason": "x"}))


async def test_organizations_can_be_listed_searched_and_read() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert ok(await c.call_tool("list_organizations", {}))["total"] == 6
        found = ok(await c.call_tool("list_organizations", {"query": "GLOBEX"}))
        assert [o["id"] for o in found["items"]] == ["org_globex"]
        assert (
            ok(await c.call_tool("get_organization", {"organization_id": "org_acme"}))["domain"] == "acmerobotics.com"
        )
        assert "list_organizations" in error_text(await c.call_tool("get_organization", {"organization_id": "org_x"}))


async def test_users_can_be_found_by_text_role_and_organization() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        agents = ok(await c.call_tool("search_users", {"role": "agent"}))
        assert {u["id"] for u in agents["items"]} == {"usr_omar", "usr_kim"}
        nw = ok(await c.call_tool("search_users", {"organization_id": "org_northwind"}))
        assert nw["total"] == 2
        assert ok(await c.call_tool("search_users", {"query": "@acmerobotics"}))["items"][0]["id"] == "usr_spatel"


async def test_every_call_leaves_exactly_one_audit_row_with_its_outcome() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        await c.call_tool("get_ticket", {"ticket_id": "tkt_1001"})
        await c.call_tool("get_ticket", {"ticket_id": "tkt_missing"})
        await c.call_tool("get_ticket", {"wrong": 1})
        await c.call_tool("drop_database", {})
        await c.call_tool("escalate_ticket", {"ticket_id": "tkt_1002", "reason": "x"})
        rows = env.audit("tickets")
        assert [(r.tool, r.outcome, r.state_changed) for r in rows] == [
            ("get_ticket", "ok", False),
            ("get_ticket", "error", False),
            ("get_ticket", "invalid_arguments", False),
            ("drop_database", "unknown_tool", False),
            ("escalate_ticket", "ok", True),
        ]
        assert rows[0].actor == "agent" and rows[0].sim_time == "2026-03-02T09:00:00Z"
        assert rows[2].arguments == {"wrong": 1}
