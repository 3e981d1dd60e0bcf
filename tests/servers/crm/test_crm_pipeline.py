"""The crm service's sales pipeline (opportunities) and activity history, through the in-memory MCP client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.crm import SERVICE
from tests.conftest import NOW, error_text, ok, service_client

pytestmark = pytest.mark.anyio
SEED: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/crm.json").read_text())


def ids(page: dict[str, Any]) -> list[str]:
    return [r["id"] for r in page["items"]]


async def update(c: Any, opportunity_id: str, **changes: Any) -> Any:
    return await c.call_tool("update_opportunity", {"opportunity_id": opportunity_id, **changes})


# ---------------------------------------------------------------------------------------------- opportunities


async def test_search_opportunities_filters_by_stage_owner_openness_dates_and_amount() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        closed = ok(await c.call_tool("search_opportunities", {"is_open": False}))
        assert ids(closed) == ["opp_globex_platform", "opp_initech_upgrade"]
        assert ok(await c.call_tool("search_opportunities", {"is_open": True}))["total"] == 6
        march = {"close_after": "2026-03-01", "close_before": "2026-04-01"}
        assert ids(ok(await c.call_tool("search_opportunities", march))) == [
            "opp_umbrella_renewal",
            "opp_northwind_renewal",
        ]
        big = ok(await c.call_tool("search_opportunities", {"min_amount": 10_000_000, "owner_id": "usr_marco"}))
        assert ids(big) == ["opp_globex_platform"]
        renewals = ok(await c.call_tool("search_opportunities", {"query": "RENEWAL", "stage": ["proposal"]}))
        assert ids(renewals) == ["opp_umbrella_renewal"]
        assert ids(ok(await c.call_tool("search_opportunities", {"account_id": "acc_stark"}))) == ["opp_stark_pilot"]


async def test_search_opportunities_pages_and_refuses_a_bad_date() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        first = ok(await c.call_tool("search_opportunities", {"page_size": 6}))
        rest = ok(await c.call_tool("search_opportunities", {"page_size": 6, "page_token": first["next_page_token"]}))
        assert first["total"] == 8 and len(set(ids(first) + ids(rest))) == 8 and rest["next_page_token"] is None
        assert "YYYY-MM-DD" in error_text(await c.call_tool("search_opportunities", {"close_before": "next week"}))


async def test_get_opportunity_includes_account_owner_and_activities_newest_first() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        opp = ok(await c.call_tool("get_opportunity", {"opportunity_id": "opp_northwind_renewal"}))
        assert opp["account"]["name"] == "Northwind Traders" and opp["owner"]["name"] == "Priya Shah"
        assert [a["id"] for a in opp["activities"]] == ["act_northwind_email", "act_northwind_call"]
        assert "search_opportunities" in error_text(await c.call_tool("get_opportunity", {"opportunity_id": "opp_x"}))


async def test_create_opportunity_defaults_the_owner_to_the_account_manager() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        args = {
            "account_id": "acc_initech",
            "name": "Initech - Q3 upgrade",
            "amount": 900_000,
            "close_date": "2026-09-30",
        }
        opp = ok(await c.call_tool("create_opportunity", args))
        assert opp["id"].startswith("opp_") and opp["owner_id"] == "usr_priya"
        assert (opp["stage"], opp["probability"], opp["created_at"]) == ("prospecting", 10, NOW)
        args |= {"stage": "proposal", "owner_id": "usr_marco", "account_id": "acc_mueller"}
        other = ok(await c.call_tool("create_opportunity", args))
        assert (other["owner_id"], other["probability"]) == ("usr_marco", 50)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"amount": -100}, "greater than or equal to 0"),
        ({"close_date": "30.09.2026"}, "YYYY-MM-DD"),
        ({"account_id": "acc_missing"}, "search_accounts"),
        ({"owner_id": "usr_ben"}, "inactive"),
        ({"owner_id": "usr_ghost"}, "list_users"),
        ({"stage": "closed_won"}, "Invalid arguments"),
        ({"amount": 12.5}, "whole numbers of cents"),
        ({"amount": True}, "not the boolean true"),
    ],
)
async def test_create_opportunity_errors_say_what_to_do(args: dict[str, Any], expected: str) -> None:
    base = {"account_id": "acc_acme", "name": "Deal", "amount": 100, "close_date": "2026-05-01"}
    async with service_client(SERVICE, SEED) as (c, _):
        assert expected in error_text(await c.call_tool("create_opportunity", base | args))


async def test_update_opportunity_moves_between_open_stages_and_follows_the_probability() -> None:
    async with service_client(SERVICE, SEED, now="2026-03-03T10:00:00Z") as (c, _):
        opp = ok(await update(c, "opp_acme_expansion", stage="proposal", amount=4_000_000, next_step="Send quote"))
        assert (opp["stage"], opp["probability"], opp["amount"], opp["next_step"]) == (
            "proposal",
            50,
            4_000_000,
            "Send quote",
        )
        assert opp["updated_at"] == "2026-03-03T10:00:00Z" and opp["closed_at"] is None
        back = ok(
            await update(c, "opp_acme_expansion", stage="prospecting", close_date="2026-06-01", owner_id="usr_priya")
        )
        assert (back["probability"], back["close_date"], back["owner_id"]) == (10, "2026-06-01", "usr_priya")
        assert ok(await update(c, "opp_acme_expansion", stage="prospecting")) == back


async def test_closing_a_deal_as_won_needs_an_amount_and_stamps_the_close() -> None:
    async with service_client(SERVICE, SEED, now="2026-03-03T10:00:00Z") as (c, _):
        ok(
            await c.call_tool(
                "create_opportunity",
                {"account_id": "acc_stark", "name": "Free pilot", "amount": 0, "close_date": "2026-04-01"},
            )
        )
        free = ok(await c.call_tool("search_opportunities", {"query": "Free pilot"}))["items"][0]
        assert "amount" in error_text(await update(c, free["id"], stage="closed_won"))
        won = ok(await update(c, free["id"], stage="closed_won", amount=750_000))
        assert (won["stage"], won["probability"], won["amount"]) == ("closed_won", 100, 750_000)
        assert (won["closed_at"], won["close_date"]) == ("2026-03-03T10:00:00Z", "2026-03-03")


async def test_closing_a_deal_as_lost_needs_a_loss_reason() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert "loss_reason" in error_text(await update(c, "opp_stark_pilot", stage="closed_lost"))
        assert "loss_reason" in error_text(await update(c, "opp_stark_pilot", stage="closed_lost", loss_reason="  "))
        assert "closed_lost" in error_text(await update(c, "opp_stark_pilot", loss_reason="Too pricey"))
        lost = ok(
            await update(
                c, "opp_stark_pilot", stage="closed_lost", loss_reason="Chose a competitor", close_date="2026-03-01"
            )
        )
        assert (lost["probability"], lost["loss_reason"], lost["close_date"]) == (0, "Chose a competitor", "2026-03-01")


async def test_closed_deals_cannot_be_edited_and_the_error_says_what_to_do() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert "create_opportunity" in error_text(await update(c, "opp_globex_platform", amount=1))
        assert "reopen_opportunity" in error_text(await update(c, "opp_initech_upgrade", stage="proposal"))


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"amount": -1}, "greater than or equal to 0"),
        ({"amount": "5200000"}, "send 5200000 (no quotes)"),
        ({"owner_id": "usr_ghost"}, "list_users"),
        ({"close_date": "soon"}, "YYYY-MM-DD"),
        ({"stage": "won"}, "Invalid arguments"),
        ({"opportunity_id": "opp_missing", "amount": 5}, "search_opportunities"),
    ],
)
async def test_update_opportunity_errors_say_what_to_do(changes: dict[str, Any], expected: str) -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        args = {"opportunity_id": "opp_northwind_renewal"} | changes
        assert expected in error_text(await c.call_tool("update_opportunity", args))


async def test_reopen_opportunity_resumes_a_lost_deal_and_logs_the_reason() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        args = {"opportunity_id": "opp_initech_upgrade", "reason": "Budget approved for Q3", "close_date": "2026-08-31"}
        opp = ok(await c.call_tool("reopen_opportunity", args))
        assert (opp["stage"], opp["probability"], opp["close_date"]) == ("qualification", 20, "2026-08-31")
        assert opp["loss_reason"] is None and opp["closed_at"] is None
        history = ok(await c.call_tool("list_activities", {"opportunity_id": "opp_initech_upgrade"}))
        assert history["items"][0]["body"] == "Budget approved for Q3" and history["items"][0]["created_at"] == NOW
        assert "update_opportunity" in error_text(await c.call_tool("reopen_opportunity", args))


async def test_reopen_opportunity_refuses_won_deals_bad_dates_and_unknown_ids() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        base = {"reason": "Changed mind", "close_date": "2026-08-31"}
        won = error_text(await c.call_tool("reopen_opportunity", base | {"opportunity_id": "opp_globex_platform"}))
        assert "Won deals are final" in won
        bad = base | {"opportunity_id": "opp_initech_upgrade", "close_date": "August"}
        assert "YYYY-MM-DD" in error_text(await c.call_tool("reopen_opportunity", bad))
        assert "search_opportunities" in error_text(
            await c.call_tool("reopen_opportunity", base | {"opportunity_id": "opp_x"})
        )


# ---------------------------------------------------------------------------------------------- activities


async def test_log_activity_takes_the_account_from_the_contact_and_stamps_the_clock() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        args = {"subject": "Called Sam", "type": "call", "contact_id": "con_sam_patel"}
        act = ok(await c.call_tool("log_activity", args | {"opportunity_id": "opp_acme_expansion"}))
        assert act["id"].startswith("act_") and act["account_id"] == "acc_acme" and act["created_at"] == NOW
        assert act["user_id"] is None  # logged by the acting user, not by a staff member the agent names
        note = ok(await c.call_tool("log_activity", {"subject": "FYI", "account_id": "acc_hooli", "body": "Win-back?"}))
        assert (note["type"], note["contact_id"], note["opportunity_id"]) == ("note", None, None)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "account_id, contact_id or opportunity_id"),
        ({"account_id": "acc_globex", "contact_id": "con_sam_patel"}, "belongs to account acc_acme"),
        ({"contact_id": "con_sam_patel", "opportunity_id": "opp_globex_hipaa"}, "belongs to account acc_globex"),
        ({"account_id": "acc_x"}, "search_accounts"),
        ({"contact_id": "con_x"}, "search_contacts"),
        ({"opportunity_id": "opp_x"}, "search_opportunities"),
        ({"account_id": "acc_acme", "user_id": "usr_marco"}, "Extra inputs are not permitted"),
        ({"account_id": "acc_acme", "type": "fax"}, "Invalid arguments"),
    ],
)
async def test_log_activity_errors_say_what_to_do(args: dict[str, Any], expected: str) -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert expected in error_text(await c.call_tool("log_activity", {"subject": "Hello"} | args))


async def test_list_activities_shows_history_newest_first_with_filters_and_pages() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        env.clock.advance(3600)
        ok(await c.call_tool("log_activity", {"subject": "Follow-up", "type": "email", "account_id": "acc_northwind"}))
        history = ok(await c.call_tool("list_activities", {"account_id": "acc_northwind"}))
        assert [a["subject"] for a in history["items"]] == [
            "Follow-up",
            "Sent MSA redlines",
            "Renewal pricing call with Jamie",
        ]
        assert history["items"][0]["created_at"] == "2026-03-02T10:00:00Z"
        calls = ok(await c.call_tool("list_activities", {"type": ["call", "meeting"]}))
        assert ids(calls) == ["act_northwind_call", "act_acme_meeting", "act_hooli_churn"]
        assert ids(ok(await c.call_tool("list_activities", {"contact_id": "con_li_chen"}))) == ["act_umbrella_note"]
        first = ok(await c.call_tool("list_activities", {"page_size": 5}))
        rest = ok(await c.call_tool("list_activities", {"page_size": 5, "page_token": first["next_page_token"]}))
        assert first["total"] == 8 and len(set(ids(first) + ids(rest))) == 8
        assert "search_accounts" in error_text(await c.call_tool("list_activities", {"account_id": "acc_x"}))
        assert "search_contacts" in error_text(await c.call_tool("list_activities", {"contact_id": "con_x"}))
        assert "search_opportunities" in error_text(await c.call_tool("list_activities", {"opportunity_id": "opp_x"}))
