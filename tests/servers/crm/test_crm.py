"""The crm service, through the in-memory MCP client: every tool, with its error cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.crm import SERVICE
from coworkenv.servers.kit import Environment, SeedError
from tests.conftest import NOW, error_text, ok, service_client

pytestmark = pytest.mark.anyio
SEED: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/crm.json").read_text())


def ids(page: dict[str, Any]) -> list[str]:
    return [r["id"] for r in page["items"]]


# ---------------------------------------------------------------------------------------------- seed and surface


def test_example_seed_loads_every_table() -> None:
    with Environment.create({"crm": SEED}, registry={"crm": SERVICE}) as env:
        counts = {table: len(rows) for table, rows in env.dump()["crm"].items()}
    assert counts == {"users": 6, "accounts": 8, "contacts": 9, "opportunities": 8, "activities": 7}


def test_bad_seed_is_refused_naming_the_record_and_field() -> None:
    opp = {**SEED["opportunities"][0], "close_date": "31/03/2026"}
    with pytest.raises(SeedError, match=r"crm\.opportunities\[0\] field 'close_date'"):
        Environment.create({"crm": {"opportunities": [opp]}}, registry={"crm": SERVICE})


async def test_every_tool_describes_its_arguments_with_examples_and_is_annotated() -> None:
    async with service_client(SERVICE) as (c, _):
        tools = (await c.list_tools()).tools
    assert len(tools) >= 10
    for t in tools:
        assert t.description and t.annotations is not None
        for name, prop in t.input_schema["properties"].items():
            assert "Example" in prop.get("description", ""), (t.name, name)
        reads = t.name.startswith(("get_", "list_", "search_"))
        assert t.annotations.read_only_hint is reads, t.name
        assert t.annotations.destructive_hint is t.name.startswith(("update_", "delete_", "reopen_")), t.name


# ---------------------------------------------------------------------------------------------- users


async def test_list_users_hides_inactive_staff_unless_asked() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert "usr_ben" not in ids(ok(await c.call_tool("list_users", {})))
        everyone = ok(await c.call_tool("list_users", {"include_inactive": True}))
        assert everyone["total"] == 6 and "usr_ben" in ids(everyone)
        managers = ok(await c.call_tool("list_users", {"query": "account manager"}))
        assert ids(managers) == ["usr_marco", "usr_priya"]


async def test_get_user_reads_a_staff_member_and_names_the_tool_for_unknown_ids() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert ok(await c.call_tool("get_user", {"user_id": "usr_lena"}))["title"] == "Finance Manager"
        assert "list_users" in error_text(await c.call_tool("get_user", {"user_id": "usr_nobody"}))


# ---------------------------------------------------------------------------------------------- accounts


async def test_search_accounts_filters_by_tier_status_owner_and_industry() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        enterprise = ok(await c.call_tool("search_accounts", {"tier": ["enterprise"]}))
        assert ids(enterprise) == ["acc_globex", "acc_northwind"]
        marco_active = ok(await c.call_tool("search_accounts", {"owner_id": "usr_marco", "status": ["active"]}))
        assert ids(marco_active) == ["acc_acme", "acc_globex"]
        manufacturing = ok(await c.call_tool("search_accounts", {"industry": "MANUFACTURING"}))
        assert ids(manufacturing) == ["acc_acme", "acc_mueller"]
        by_domain = ok(await c.call_tool("search_accounts", {"query": "hooli.TV"}))
        assert ids(by_domain) == ["acc_hooli"]


async def test_search_accounts_pages_through_results_with_the_next_page_token() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        seen: list[str] = []
        token = None
        while True:
            args: dict[str, Any] = {"page_size": 3} | ({"page_token": token} if token else {})
            page = ok(await c.call_tool("search_accounts", args))
            assert page["total"] == 8
            seen += ids(page)
            token = page["next_page_token"]
            if token is None:
                break
        assert len(seen) == 8 == len(set(seen))
        assert "page_token" in error_text(await c.call_tool("search_accounts", {"page_token": "next"}))
        assert "page_size" in error_text(await c.call_tool("search_accounts", {"page_size": 101}))


@pytest.mark.parametrize("needle", ["'", "%", "_", '"', ";", "Ünïcødé ✓"])
async def test_search_text_is_matched_literally(needle: str) -> None:
    stamp = {"created_at": NOW, "updated_at": NOW}
    accounts = [
        {"id": "acc_match", "name": f"Odd {needle} Name", **stamp},
        {"id": "acc_plain", "name": "Plain Company", **stamp},
    ]
    contacts = [
        {"id": "con_match", "account_id": "acc_plain", "name": "Pat", "title": f"Chief {needle} Officer", **stamp},
        {"id": "con_plain", "account_id": "acc_plain", "name": "Lou", "title": "Chief Officer", **stamp},
    ]
    opps = [
        {"id": f"opp_{k}", "account_id": "acc_plain", "name": n, "close_date": "2026-04-01", **stamp}
        for k, n in (("match", f"Deal {needle}"), ("plain", "Deal"))
    ]
    seed = {"accounts": accounts, "contacts": contacts, "opportunities": opps}
    async with service_client(SERVICE, seed) as (c, _):
        for tool, match in (("search_accounts", "acc"), ("search_contacts", "con"), ("search_opportunities", "opp")):
            assert ids(ok(await c.call_tool(tool, {"query": needle.upper()}))) == [f"{match}_match"]


async def test_get_account_names_its_account_manager() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        acc = ok(await c.call_tool("get_account", {"account_id": "acc_northwind"}))
    assert acc["owner"]["name"] == "Priya Shah" and acc["owner"]["email"] == "priya.shah@brightwave.io"
    assert [x["name"] for x in acc["contacts"]] == ["Jamie Lee", "Paula Wong"]
    assert [o["id"] for o in acc["open_opportunities"]] == ["opp_northwind_renewal", "opp_northwind_analytics"]


async def test_get_account_lists_only_open_opportunities_and_an_unowned_account_has_no_owner() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        globex = ok(await c.call_tool("get_account", {"account_id": "acc_globex"}))
        assert [o["id"] for o in globex["open_opportunities"]] == ["opp_globex_hipaa"]
        assert ok(await c.call_tool("get_account", {"account_id": "acc_mueller"}))["owner"] is None
        assert "search_accounts" in error_text(await c.call_tool("get_account", {"account_id": "acc_nope"}))


async def test_create_account_stamps_the_clock_and_normalises_the_domain() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        args = {"name": " Wayne Enterprises ", "domain": "WWW.WayneEnterprises.com", "tier": "enterprise"}
        acc = ok(await c.call_tool("create_account", args | {"owner_id": "usr_priya", "annual_revenue": 10**12}))
        assert acc["id"].startswith("acc_") and acc["name"] == "Wayne Enterprises"
        assert acc["domain"] == "wayneenterprises.com" and acc["status"] == "prospect"
        assert acc["created_at"] == acc["updated_at"] == NOW
        assert acc in env.dump()["crm"]["accounts"]


async def test_create_account_refuses_a_duplicate_domain_naming_the_existing_account() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        text = error_text(await c.call_tool("create_account", {"name": "Northwind 2", "domain": "NorthWind.com"}))
        assert "acc_northwind" in text and "get_account" in text
        assert len(env.dump()["crm"]["accounts"]) == 8


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"owner_id": "usr_ghost"}, "list_users"),
        ({"owner_id": "usr_ben"}, "inactive"),
        ({"domain": "https://stark.example/about"}, "bare domain"),
        ({"domain": "nodot"}, "bare domain"),
        ({"annual_revenue": -5}, "greater than or equal to 0"),
        ({"annual_revenue": "5000"}, "send 5000 (no quotes)"),
        ({"status": "churned"}, "Invalid arguments"),
        ({"name": "   "}, "Invalid arguments"),
    ],
)
async def test_create_account_errors_say_what_to_do(args: dict[str, Any], expected: str) -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert expected in error_text(await c.call_tool("create_account", {"name": "Wayne"} | args))


async def test_update_account_changes_only_the_given_fields() -> None:
    async with service_client(SERVICE, SEED, now="2026-03-05T12:00:00Z") as (c, _):
        acc = ok(
            await c.call_tool(
                "update_account", {"account_id": "acc_acme", "tier": "enterprise", "domain": "acmerobotics.com"}
            )
        )
        assert acc["tier"] == "enterprise" and acc["name"] == "Acme Robotics" and acc["owner_id"] == "usr_marco"
        assert acc["updated_at"] == "2026-03-05T12:00:00Z"
        same = ok(await c.call_tool("update_account", {"account_id": "acc_acme", "tier": "enterprise"}))
        assert same == acc


async def test_update_account_reassigns_the_manager_and_can_transfer_open_deals() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        args = {"account_id": "acc_northwind", "owner_id": "usr_marco", "transfer_open_opportunities": True}
        assert ok(await c.call_tool("update_account", args))["owner_id"] == "usr_marco"
        opps = {o["id"]: o["owner_id"] for o in env.dump()["crm"]["opportunities"]}
        assert opps["opp_northwind_renewal"] == opps["opp_northwind_analytics"] == "usr_marco"
        ok(await c.call_tool("update_account", {"account_id": "acc_umbrella", "owner_id": "usr_marco"}))
        opps = {o["id"]: o["owner_id"] for o in env.dump()["crm"]["opportunities"]}
        assert opps["opp_umbrella_renewal"] == "usr_priya"
        assert "inactive" in error_text(
            await c.call_tool("update_account", {"account_id": "acc_acme", "owner_id": "usr_ben"})
        )


async def test_update_account_enforces_the_status_life_cycle() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert "Allowed next statuses: churned" in error_text(
            await c.call_tool("update_account", {"account_id": "acc_acme", "status": "prospect"})
        )
        assert "Allowed next statuses: active" in error_text(
            await c.call_tool("update_account", {"account_id": "acc_stark", "status": "churned"})
        )
        text = error_text(await c.call_tool("update_account", {"account_id": "acc_acme", "status": "churned"}))
        assert "opp_acme_expansion" in text and "closed_lost" in text
        close = {"opportunity_id": "opp_acme_expansion", "stage": "closed_lost", "loss_reason": "Customer left"}
        ok(await c.call_tool("update_opportunity", close))
        assert (
            ok(await c.call_tool("update_account", {"account_id": "acc_acme", "status": "churned"}))["status"]
            == "churned"
        )
        assert (
            ok(await c.call_tool("update_account", {"account_id": "acc_hooli", "status": "active"}))["status"]
            == "active"
        )
        assert (
            ok(await c.call_tool("update_account", {"account_id": "acc_stark", "status": "active"}))["status"]
            == "active"
        )


async def test_update_account_refuses_another_accounts_domain_bad_values_and_unknown_ids() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert "acc_northwind" in error_text(
            await c.call_tool("update_account", {"account_id": "acc_acme", "domain": "northwind.com"})
        )
        assert "greater than or equal to 0" in error_text(
            await c.call_tool("update_account", {"account_id": "acc_acme", "annual_revenue": -1})
        )
        assert "list_users" in error_text(
            await c.call_tool("update_account", {"account_id": "acc_acme", "owner_id": "usr_x"})
        )
        assert "search_accounts" in error_text(
            await c.call_tool("update_account", {"account_id": "acc_x", "tier": "business"})
        )


# ---------------------------------------------------------------------------------------------- contacts


async def test_search_contacts_by_text_and_account_with_pages() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert ids(ok(await c.call_tool("search_contacts", {"query": "@northwind.com"}))) == [
            "con_jamie_lee",
            "con_paula_wong",
        ]
        assert ids(ok(await c.call_tool("search_contacts", {"account_id": "acc_acme"}))) == ["con_sam_patel"]
        assert ids(ok(await c.call_tool("search_contacts", {"query": "jürgen"}))) == ["con_juergen_mueller"]
        first = ok(await c.call_tool("search_contacts", {"page_size": 5}))
        rest = ok(await c.call_tool("search_contacts", {"page_size": 5, "page_token": first["next_page_token"]}))
        assert first["total"] == 9 and len(ids(first) + ids(rest)) == 9 and rest["next_page_token"] is None


async def test_get_contact_includes_its_account() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        con = ok(await c.call_tool("get_contact", {"contact_id": "con_rita_gomez"}))
        assert con["email"] == "rita.gomez@globexhealth.com" and con["account"]["name"] == "Globex Health"
        assert "search_contacts" in error_text(await c.call_tool("get_contact", {"contact_id": "con_nobody"}))


async def test_create_contact_adds_a_person_to_an_account() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        args = {"account_id": "acc_northwind", "name": "Chris Doe", "email": " chris@northwind.com ", "title": "CFO"}
        con = ok(await c.call_tool("create_contact", args))
        assert con["id"].startswith("con_") and con["email"] == "chris@northwind.com" and con["created_at"] == NOW
        acc = ok(await c.call_tool("get_account", {"account_id": "acc_northwind"}))
        assert "Chris Doe" in [x["name"] for x in acc["contacts"]]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"email": "not-an-email"}, "not a valid email"),
        ({"email": "JAMIE.LEE@northwind.com"}, "con_jamie_lee"),
        ({"account_id": "acc_missing"}, "search_accounts"),
    ],
)
async def test_create_contact_errors_say_what_to_do(args: dict[str, Any], expected: str) -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        base = {"account_id": "acc_acme", "name": "New Person"}
        assert expected in error_text(await c.call_tool("create_contact", base | args))


async def test_update_contact_edits_fields_and_moves_a_person_between_accounts() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        args = {
            "contact_id": "con_sam_patel",
            "title": "CEO",
            "account_id": "acc_globex",
            "email": "sam@globexhealth.com",
        }
        con = ok(await c.call_tool("update_contact", args))
        assert (con["title"], con["account_id"], con["email"]) == ("CEO", "acc_globex", "sam@globexhealth.com")
        assert (
            ok(await c.call_tool("update_contact", {"contact_id": "con_sam_patel", "email": "sam@globexhealth.com"}))
            == con
        )
        assert "con_tom_baker" in error_text(
            await c.call_tool("update_contact", {"contact_id": "con_sam_patel", "email": "tom@initech.io"})
        )
        assert "not a valid email" in error_text(
            await c.call_tool("update_contact", {"contact_id": "con_sam_patel", "email": "sam@"})
        )
        assert "search_accounts" in error_text(
            await c.call_tool("update_contact", {"contact_id": "con_sam_patel", "account_id": "acc_x"})
        )
        assert "search_contacts" in error_text(
            await c.call_tool("update_contact", {"contact_id": "con_x", "title": "CEO"})
        )


async def test_delete_contact_keeps_their_activities_on_the_account() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        gone = ok(await c.call_tool("delete_contact", {"contact_id": "con_jamie_lee"}))
        assert gone == {"id": "con_jamie_lee", "deleted": True, "activities_unlinked": 1}
        act = next(a for a in env.dump()["crm"]["activities"] if a["id"] == "act_northwind_call")
        assert act["contact_id"] is None and act["account_id"] == "acc_northwind"
        assert "search_contacts" in error_text(await c.call_tool("delete_contact", {"contact_id": "con_jamie_lee"}))


# ---------------------------------------------------------------------------------------------- audit


async def test_every_call_is_audited_with_its_outcome_and_whether_state_changed() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        ok(await c.call_tool("get_account", {"account_id": "acc_acme"}))
        ok(await c.call_tool("update_account", {"account_id": "acc_acme", "tier": "enterprise"}))
        error_text(await c.call_tool("create_account", {"name": "Dup", "domain": "initech.io"}))
        error_text(await c.call_tool("update_account", {"account_id": "acc_acme", "tier": "platinum"}))
        error_text(await c.call_tool("delete_account", {"account_id": "acc_acme"}))
        rows = env.audit("crm")
    assert [(r.tool, r.outcome, r.state_changed) for r in rows] == [
        ("get_account", "ok", False),
        ("update_account", "ok", True),
        ("create_account", "error", False),
        ("update_account", "invalid_arguments", False),
        ("delete_account", "unknown_tool", False),
    ]
    assert (
        rows[1].arguments == {"account_id": "acc_acme", "tier": "enterprise"} and rows[1].result["tier"] == "enterprise"
    )
    assert rows[2].error is not None and "acc_initech" in rows[2].error
    assert all(r.actor == "agent" and r.sim_time == NOW for r in rows)


async def test_a_refused_call_changes_nothing() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        error_text(
            await c.call_tool("update_account", {"account_id": "acc_acme", "tier": "starter", "owner_id": "usr_ben"})
        )
        error_text(
            await c.call_tool("update_opportunity", {"opportunity_id": "opp_acme_expansion", "stage": "closed_lost"})
        )
        assert env.state_hash() == before


async def test_the_direct_door_gives_the_same_result_as_mcp() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        via_mcp = ok(await c.call_tool("get_account", {"account_id": "acc_globex"}))
        direct = await env.call("crm", "get_account", {"account_id": "acc_globex"})
        assert direct.data == via_mcp
        assert [r.tool for r in env.audit("crm")] == ["get_account", "get_account"]
