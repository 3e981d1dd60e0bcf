"""The payments service: customers, charges, refunds and disputes (vendors and payouts: test_payments_vendors)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import coworkenv.servers
from coworkenv.servers.kit import Environment, SeedError, load_seed
from coworkenv.servers.payments import SERVICE
from tests.conftest import NOW, error_text, ok, service_client

EXAMPLE = load_seed(Path(coworkenv.servers.__file__).parent / "examples" / "payments.json")
pytestmark = pytest.mark.anyio


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    return await client.call_tool(tool, arguments)


def customer(cid: str, name: str, email: str, created: str, **extra: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "email": email, "created": created, **extra}


TRICKY = {
    "customers": [
        customer("cus_obrien", "O'Brien & Co", "ap@obrien.ie", "2026-01-01T00:00:00Z"),
        customer("cus_pct", "100% Organic Farms", "pay@organic.example", "2026-01-02T00:00:00Z"),
        customer("cus_snake", "snake_case Labs", "hi@snakecase.dev", "2026-01-03T00:00:00Z"),
        customer("cus_quote", 'The "Quoted" Company', "q@quoted.example", "2026-01-04T00:00:00Z"),
        customer("cus_semi", "Semi;colon Ltd", "billing@semicolon.example", "2026-01-05T00:00:00Z"),
        customer("cus_mueller", "Müller & Söhne GmbH", "buchhaltung@mueller-soehne.de", "2026-01-06T00:00:00Z"),
        customer("cus_strasse", "Großhandel Straße AG", "info@strasse.example", "2026-01-07T00:00:00Z"),
        customer("cus_plain", "Plain Widgets", "plain@widgets.example", "2026-01-08T00:00:00Z"),
    ]
}


# ---------------------------------------------------------------------------------------------- the service


async def test_the_example_seed_loads_with_all_its_records() -> None:
    with Environment.create({"payments": EXAMPLE}, now=NOW, registry={"payments": SERVICE}) as env:
        dump = env.dump()["payments"]
        assert len(dump["charges"]) >= 35
        assert {c["email"] for c in dump["customers"]} >= {"jamie.lee@northwind.com", "sam@acmerobotics.com"}
        assert any(
            r["status"] == "pending" and "stellarprlnt.com" in r["requested_by"] for r in dump["bank_change_requests"]
        )
        times = [r["created"] for rows in dump.values() for r in rows]
        assert max(times) < NOW


@pytest.mark.parametrize(
    ("table", "index", "changes", "words"),
    [
        ("charges", 3, {"amount_refunded": 99999}, "charges[3] field '(record)': amount_refunded"),
        ("charges", 1, {"currency": "dollars"}, "charges[1] field 'currency'"),
        ("bank_accounts", 0, {"last4": "0000"}, "bank_accounts[0] field '(record)': last4"),
        ("bank_accounts", 0, {"customer": "cus_acme"}, "exactly one of customer or vendor"),
    ],
)
def test_a_bad_seed_record_is_named_and_nothing_loads(
    table: str, index: int, changes: dict[str, Any], words: str
) -> None:
    seed = copy.deepcopy(EXAMPLE)
    seed[table][index].update(changes)
    with pytest.raises(SeedError, match=re.escape(words)):
        Environment.create({"payments": seed}, registry={"payments": SERVICE})


async def test_the_tools_are_listed_with_examples_and_annotations() -> None:
    async with service_client(SERVICE) as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert len(tools) >= 12
    for t in tools.values():
        assert t.description and t.annotations is not None
        for name, prop in t.input_schema.get("properties", {}).items():
            assert "Example" in prop.get("description", ""), (t.name, name)
    destructive = {n for n, t in tools.items() if t.annotations and t.annotations.destructive_hint}
    assert {"create_refund", "update_vendor_bank_account", "create_payout", "close_dispute"} <= destructive
    read_only = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert {"list_customers", "get_charge", "get_vendor", "list_payouts"} <= read_only
    assert not read_only & destructive


async def test_every_call_leaves_an_audit_row_whatever_its_outcome() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, env):
        ok(await call(client, "create_refund", charge="ch_1001", amount=100))
        error_text(await call(client, "create_refund", charge="ch_1001", amount=10**9))
        error_text(await call(client, "create_refund", charge="ch_1001", amount=-5))
        error_text(await call(client, "no_such_tool"))
        rows = env.audit("payments")
    assert [(r.tool, r.outcome, r.state_changed) for r in rows] == [
        ("create_refund", "ok", True),
        ("create_refund", "error", False),
        ("create_refund", "invalid_arguments", False),
        ("no_such_tool", "unknown_tool", False),
    ]
    assert rows[0].result["refund"]["amount"] == 100 and rows[0].sim_time == NOW
    assert "left to refund" in (rows[1].error or "")


async def test_the_direct_door_gives_the_same_result_as_mcp() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, env):
        via_mcp = ok(await call(client, "get_charge", charge_id="ch_1035"))
        direct = await env.call("payments", "get_charge", {"charge_id": "ch_1035"})
    assert direct.data == via_mcp


# ---------------------------------------------------------------------------------------------- customers


async def test_customers_list_newest_first_and_page_through_all() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        seen: list[str] = []
        token = None
        while True:
            page = ok(await call(client, "list_customers", page_size=3, page_token=token))
            seen += [c["id"] for c in page["items"]]
            token = page["next_page_token"]
            if token is None:
                break
        assert page["total"] == len(seen) == len(EXAMPLE["customers"])
        assert seen[0] == "cus_mueller" and seen[-1] == "cus_northwind"
        bad = error_text(await call(client, "list_customers", page_token="abc"))
        assert "next_page_token" in bad


async def test_customers_filter_by_exact_email_in_any_case_and_by_creation_time() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        page = ok(await call(client, "list_customers", email="SAM@AcmeRobotics.com"))
        assert [c["id"] for c in page["items"]] == ["cus_acme"]
        window = ok(
            await call(client, "list_customers", created_gte="2025-07-01T00:00:00Z", created_lt="2025-09-01T00:00:00Z")
        )
        assert {c["id"] for c in window["items"]} == {"cus_initech", "cus_umbrella", "cus_hooli"}
        assert "Invalid arguments" in error_text(await call(client, "list_customers", created_gte="last tuesday"))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("'", ["cus_obrien"]),
        ("%", ["cus_pct"]),
        ("_", ["cus_snake"]),
        ('"', ["cus_quote"]),
        (";", ["cus_semi"]),
        ("SÖHNE", ["cus_mueller"]),
        ("strasse", ["cus_strasse"]),
        ("'; DROP TABLE customers; --", []),
    ],
)
async def test_customer_search_matches_special_characters_and_unicode_literally(
    query: str, expected: list[str]
) -> None:
    async with service_client(SERVICE, TRICKY) as (client, env):
        page = ok(await call(client, "search_customers", query=query))
        assert [c["id"] for c in page["items"]] == expected
        assert len(env.dump()["payments"]["customers"]) == len(TRICKY["customers"])


async def test_customer_search_covers_email_and_description_and_paginates() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        first = ok(await call(client, "search_customers", query="plan", page_size=2))
        assert first["total"] >= 5 and len(first["items"]) == 2 and first["next_page_token"] == "2"
        second = ok(await call(client, "search_customers", query="plan", page_size=2, page_token="2"))
        assert not {c["id"] for c in first["items"]} & {c["id"] for c in second["items"]}
        by_email = ok(await call(client, "search_customers", query="@hooli.tv"))
        assert [c["id"] for c in by_email["items"]] == ["cus_hooli"]
        assert "Invalid arguments" in error_text(await call(client, "search_customers", query=""))


async def test_get_customer_reads_one_or_says_how_to_find_it() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        got = ok(await call(client, "get_customer", customer_id="cus_globex"))
        assert got["email"] == "rita.gomez@globexhealth.com" and got["metadata"]["plan"] == "enterprise"
        assert "search_customers" in error_text(await call(client, "get_customer", customer_id="cus_nope"))


async def test_create_customer_stamps_the_clock_and_refuses_a_taken_email() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, env):
        made = ok(
            await call(
                client, "create_customer", name="Vandelay Industries", email="kel@vandelay.example", metadata={"a": "b"}
            )
        )
        assert made["id"].startswith("cus_") and made["created"] == NOW
        assert env.state("payments").tables["customers"].get(made["id"]) is not None
        taken = error_text(await call(client, "create_customer", name="Dup", email="JAMIE.LEE@northwind.com"))
        assert "cus_northwind" in taken
        assert "Invalid arguments" in error_text(await call(client, "create_customer", name="X", email="not-an-email"))


async def test_update_customer_changes_fields_and_merges_metadata() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        got = ok(
            await call(
                client,
                "update_customer",
                customer_id="cus_acme",
                email="billing@acmerobotics.com",
                phone="+1 415 555 0000",
                metadata={"vip": "yes", "crm_account": ""},
            )
        )
        assert got["email"] == "billing@acmerobotics.com" and got["phone"] == "+1 415 555 0000"
        assert got["metadata"] == {"plan": "business", "vip": "yes"}
        same = ok(await call(client, "update_customer", customer_id="cus_acme"))
        assert same == got
        clash = error_text(await call(client, "update_customer", customer_id="cus_acme", email="tom@initech.io"))
        assert "cus_initech" in clash
        assert "No customer" in error_text(await call(client, "update_customer", customer_id="cus_x", name="Y"))


# ---------------------------------------------------------------------------------------------- charges


async def test_charges_filter_by_customer_status_and_time_newest_first() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        acme = ok(await call(client, "list_charges", customer="cus_acme", page_size=100))
        assert {c["customer"] for c in acme["items"]} == {"cus_acme"}
        created = [c["created"] for c in acme["items"]]
        assert created == sorted(created, reverse=True)
        failed = ok(await call(client, "list_charges", status="failed"))
        assert [c["id"] for c in failed["items"]] == ["ch_1020"]
        feb = ok(
            await call(
                client,
                "list_charges",
                customer="cus_northwind",
                created_gte="2026-02-01T00:00:00Z",
                created_lt="2026-03-01T00:00:00Z",
            )
        )
        assert [c["id"] for c in feb["items"]] == ["ch_1035", "ch_1017"]
        assert "No customer" in error_text(await call(client, "list_charges", customer="cus_ghost"))
        assert "Invalid arguments" in error_text(await call(client, "list_charges", status="paid"))


async def test_charges_paginate_without_overlap() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        ids: list[str] = []
        token = None
        for _ in range(10):
            page = ok(await call(client, "list_charges", page_size=15, page_token=token))
            ids += [c["id"] for c in page["items"]]
            token = page["next_page_token"]
            if token is None:
                break
        assert len(ids) == len(set(ids)) == len(EXAMPLE["charges"]) == page["total"]


async def test_get_charge_shows_refunds_dispute_and_what_is_left_to_refund() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        partly = ok(await call(client, "get_charge", charge_id="ch_1035"))
        assert [r["amount"] for r in partly["refunds"]] == [50000] and partly["amount_refundable"] == 200000
        disputed = ok(await call(client, "get_charge", charge_id="ch_1022"))
        assert disputed["dispute"] == "dp_5001" and disputed["amount_refundable"] == 0
        assert "list_charges" in error_text(await call(client, "get_charge", charge_id="ch_0"))


# ---------------------------------------------------------------------------------------------- refunds


async def test_a_refund_without_amount_refunds_everything_left() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        got = ok(await call(client, "create_refund", charge="ch_1035", reason="requested_by_customer"))
        assert got["refund"]["amount"] == 200000 and got["refund"]["id"].startswith("re_")
        assert got["refund"]["created"] == NOW and got["refund"]["currency"] == "usd"
        assert got["charge"]["amount_refunded"] == 250000 and got["charge"]["refunded"] is True
        again = error_text(await call(client, "create_refund", charge="ch_1035", amount=1))
        assert "already fully refunded" in again


async def test_a_partial_refund_updates_the_charge() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, env):
        got = ok(await call(client, "create_refund", charge="ch_1040", amount=2000))
        assert got["charge"]["amount_refunded"] == 2000 and got["charge"]["refunded"] is False
        assert got["refund"]["currency"] == "eur"
        stored = env.state("payments").tables["charges"].get("ch_1040")
        assert stored is not None and stored["amount_refunded"] == 2000


async def test_a_refund_never_exceeds_what_is_left_to_refund() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, env):
        before = env.state_hash()
        message = error_text(await call(client, "create_refund", charge="ch_1035", amount=200001))
        assert "200000" in message and "2,000.00 USD" in message and "omit amount" in message
        assert env.state_hash() == before
        ok(await call(client, "create_refund", charge="ch_1035", amount=200000))


@pytest.mark.parametrize(
    ("charge", "words"),
    [
        ("ch_1030", "pending"),
        ("ch_1020", "failed"),
        ("ch_1034", "already fully refunded"),
        ("ch_1022", "submit_dispute_evidence"),
        ("ch_9999", "list_charges"),
    ],
)
async def test_only_succeeded_undisputed_charges_with_money_left_can_be_refunded(charge: str, words: str) -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        assert words in error_text(await call(client, "create_refund", charge=charge))


async def test_refund_arguments_are_validated() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        assert "Invalid arguments" in error_text(await call(client, "create_refund", charge="ch_1001", amount=0))
        assert "Invalid arguments" in error_text(await call(client, "create_refund", charge="ch_1001", reason="whim"))


async def test_refunds_list_newest_first_and_by_charge() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        everything = ok(await call(client, "list_refunds"))
        assert [r["id"] for r in everything["items"]] == ["re_2003", "re_2001", "re_2002"]
        one = ok(await call(client, "list_refunds", charge="ch_1013"))
        assert [r["id"] for r in one["items"]] == ["re_2002"]
        feb = ok(await call(client, "list_refunds", created_gte="2026-02-01T00:00:00Z", page_size=1))
        assert feb["total"] == 2 and feb["next_page_token"] == "1"
        assert "No charge" in error_text(await call(client, "list_refunds", charge="ch_nope"))


# ---------------------------------------------------------------------------------------------- disputes


async def test_disputes_list_by_status_and_charge_and_read_one() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        open_ = ok(await call(client, "list_disputes", status=["needs_response", "warning_needs_response"]))
        assert [d["id"] for d in open_["items"]] == ["dp_5001"]
        assert ok(await call(client, "list_disputes", status=["won"]))["total"] == 0
        assert ok(await call(client, "list_disputes", charge="ch_1022"))["total"] == 1
        assert "No charge" in error_text(await call(client, "list_disputes", charge="ch_zzz"))
        got = ok(await call(client, "get_dispute", dispute_id="dp_5001"))
        assert got["reason"] == "subscription_canceled" and got["evidence_due_by"] == "2026-03-09T23:59:59Z"
        assert "list_disputes" in error_text(await call(client, "get_dispute", dispute_id="dp_0"))


async def test_dispute_evidence_can_be_drafted_then_submitted_once() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        draft = ok(
            await call(
                client,
                "submit_dispute_evidence",
                dispute_id="dp_5001",
                evidence={"receipt": "INV-202602"},
                submit=False,
            )
        )
        assert draft["status"] == "needs_response" and draft["submission_count"] == 0
        sent = ok(
            await call(client, "submit_dispute_evidence", dispute_id="dp_5001", evidence={"customer_name": "Ava Vance"})
        )
        assert sent["status"] == "under_review" and sent["submission_count"] == 1
        assert sent["evidence"]["receipt"] == "INV-202602" and sent["evidence"]["customer_name"] == "Ava Vance"
        late = error_text(
            await call(client, "submit_dispute_evidence", dispute_id="dp_5001", evidence={"receipt": "x"})
        )
        assert "under review" in late
        assert "under review" in error_text(await call(client, "close_dispute", dispute_id="dp_5001"))


async def test_dispute_evidence_must_not_be_empty_nor_late() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        empty = error_text(await call(client, "submit_dispute_evidence", dispute_id="dp_5001", evidence={}))
        assert "No evidence" in empty
        assert "Invalid arguments" in error_text(
            await call(client, "submit_dispute_evidence", dispute_id="dp_5001", evidence={"mood": "angry"})
        )
        assert "No dispute" in error_text(
            await call(client, "submit_dispute_evidence", dispute_id="dp_x", evidence={"receipt": "r"})
        )
    async with service_client(SERVICE, EXAMPLE, now="2026-03-10T00:00:00Z") as (client, _):
        late = error_text(
            await call(client, "submit_dispute_evidence", dispute_id="dp_5001", evidence={"receipt": "r"})
        )
        assert "deadline" in late and "close_dispute" in late


async def test_closing_a_dispute_accepts_the_loss_and_is_final() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        closed = ok(await call(client, "close_dispute", dispute_id="dp_5001"))
        assert closed["status"] == "lost"
        assert "closed as lost" in error_text(await call(client, "close_dispute", dispute_id="dp_5001"))
        assert "closed as lost" in error_text(
            await call(client, "submit_dispute_evidence", dispute_id="dp_5001", evidence={"receipt": "r"})
        )
        assert "disputed" in error_text(await call(client, "create_refund", charge="ch_1022"))
        assert "No dispute" in error_text(await call(client, "close_dispute", dispute_id="dp_x"))
