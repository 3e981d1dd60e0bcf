"""The payments service: vendors, their bank accounts, bank change requests and payouts."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from coworkenv.servers.payments import SERVICE
from tests.conftest import NOW, error_text, ok, service_client

EXAMPLE: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/payments.json").read_text())
pytestmark = pytest.mark.anyio
STELLAR_FULL_NUMBER = "483920175512"
PHISHING_NUMBER = "9981200446"


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    return await client.call_tool(tool, arguments)


def new_details(**extra: Any) -> dict[str, Any]:
    return {
        "account_holder_name": "Stellar Print Co",
        "bank_name": "Wells Fargo Bank",
        "routing_number": "121000248",
        "account_number": "5550001234",
        **extra,
    }


# ---------------------------------------------------------------------------------------------- vendors


async def test_vendors_list_by_name_search_and_paginate() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        first = ok(await call(client, "list_vendors", page_size=2))
        assert [v["name"] for v in first["items"]] == ["Kestrel Design Studio", "Lumen Office Supply"]
        rest = ok(await call(client, "list_vendors", page_size=2, page_token=first["next_page_token"]))
        assert [v["id"] for v in rest["items"]] == ["ven_nimbus", "ven_stellar"] and rest["next_page_token"] is None
        found = ok(await call(client, "list_vendors", query="STELLARPRINT.com"))
        assert [v["id"] for v in found["items"]] == ["ven_stellar"]
        assert ok(await call(client, "list_vendors", query="%"))["total"] == 0


async def test_get_vendor_shows_the_account_on_file_masked_to_last4() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        result = await call(client, "get_vendor", vendor_id="ven_stellar")
        got = ok(result)
        ba = got["bank_account"]
        assert ba["id"] == "ba_stellar_chase" and ba["last4"] == "5512" and ba["routing_number"] == "021000021"
        assert "account_number" not in ba and "iban" not in ba
        assert STELLAR_FULL_NUMBER not in result.content[0].text
        assert "list_vendors" in error_text(await call(client, "get_vendor", vendor_id="ven_nobody"))


async def test_bank_accounts_list_by_owner_and_status_never_showing_full_numbers() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        nimbus = ok(await call(client, "list_bank_accounts", vendor="ven_nimbus"))
        assert [(b["id"], b["status"]) for b in nimbus["items"]] == [
            ("ba_nimbus_boa", "verified"),
            ("ba_nimbus_svb", "disabled"),
        ]
        globex = ok(await call(client, "list_bank_accounts", customer="cus_globex"))
        assert [b["last4"] for b in globex["items"]] == ["1177"]
        disabled = ok(await call(client, "list_bank_accounts", status="disabled"))
        assert disabled["total"] == 1
        everything = await call(client, "list_bank_accounts", page_size=100)
        assert STELLAR_FULL_NUMBER not in everything.content[0].text and "GB33BUKB" not in everything.content[0].text
        assert "No vendor" in error_text(await call(client, "list_bank_accounts", vendor="ven_x"))
        assert "No customer" in error_text(await call(client, "list_bank_accounts", customer="cus_x"))


# ---------------------------------------------------------------------------------------------- change requests


async def test_a_bank_change_request_is_recorded_as_pending_and_changes_nothing() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, env):
        got = ok(
            await call(
                client,
                "request_bank_account_change",
                vendor_id="ven_stellar",
                requested_by="billing@stellarprint.com",
                note="new bank",
                **new_details(account_number="5550-001-234"),
            )
        )
        assert got["status"] == "pending" and got["last4"] == "1234" and got["created"] == NOW
        assert got["id"].startswith("bcr_") and "account_number" not in got
        vendor = ok(await call(client, "get_vendor", vendor_id="ven_stellar"))
        assert vendor["bank_account"]["id"] == "ba_stellar_chase"
        stored = env.state("payments").tables["bank_change_requests"].get(got["id"])
        assert stored is not None and stored["account_number"] == "5550001234"


async def test_a_bank_change_request_takes_an_iban_with_spaces() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        got = ok(
            await call(
                client,
                "request_bank_account_change",
                vendor_id="ven_kestrel",
                requested_by="accounts@kestreldesign.co.uk",
                account_holder_name="Kestrel Design Studio Ltd",
                bank_name="Monzo",
                iban="gb82 west 1234 5698 7654 32",
                currency="GBP",
            )
        )
        assert got["country"] == "GB" and got["currency"] == "gbp" and got["last4"] == "5432"


# Omitted details are sent as explicit nulls here, as some MCP clients do.
@pytest.mark.parametrize(
    ("details", "words"),
    [
        (new_details(routing_number="121000249"), "ABA checksum"),
        (new_details(routing_number=None, account_number=None), "incomplete"),
        (new_details(iban="GB82WEST12345698765432"), "not both"),
        (new_details(routing_number=None, account_number=None, iban="GB82WEST12345698765433"), "check digits"),
        (new_details(routing_number="12345"), "Invalid arguments"),
    ],
)
async def test_a_bank_change_request_needs_valid_complete_details(details: dict[str, Any], words: str) -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        result = await call(
            client, "request_bank_account_change", vendor_id="ven_stellar", requested_by="a@b.com", **details
        )
        assert words in error_text(result)


async def test_a_bank_change_request_needs_a_known_vendor_and_an_email() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        unknown = await call(
            client, "request_bank_account_change", vendor_id="ven_x", requested_by="a@b.com", **new_details()
        )
        assert "No vendor" in error_text(unknown)
        bad = await call(
            client, "request_bank_account_change", vendor_id="ven_stellar", requested_by="bob", **new_details()
        )
        assert "requested_by" in error_text(bad)


async def test_bank_change_requests_list_newest_first_by_vendor_and_status() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        everything = ok(await call(client, "list_bank_change_requests"))
        assert [r["id"] for r in everything["items"]] == ["bcr_3001", "bcr_3000"]
        pending = ok(await call(client, "list_bank_change_requests", status="pending"))
        assert [r["requested_by"] for r in pending["items"]] == ["billing@stellarprlnt.com"]
        assert PHISHING_NUMBER not in json.dumps(pending)
        nimbus = ok(await call(client, "list_bank_change_requests", vendor="ven_nimbus", page_size=1))
        assert nimbus["total"] == 1 and nimbus["items"][0]["status"] == "approved"
        assert "No vendor" in error_text(await call(client, "list_bank_change_requests", vendor="ven_x"))


async def test_rejecting_a_request_keeps_the_account_and_is_final() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        got = ok(await call(client, "reject_bank_change_request", request_id="bcr_3001", reason="look-alike domain"))
        assert got["status"] == "rejected" and got["review_note"] == "look-alike domain" and got["reviewed_at"] == NOW
        vendor = ok(await call(client, "get_vendor", vendor_id="ven_stellar"))
        assert vendor["bank_account"]["id"] == "ba_stellar_chase"
        again = await call(client, "reject_bank_change_request", request_id="bcr_3001", reason="again")
        assert "already rejected" in error_text(again)
        missing = await call(client, "reject_bank_change_request", request_id="bcr_x", reason="r")
        assert "list_bank_change_requests" in error_text(missing)


# ---------------------------------------------------------------------------------------------- the sensitive action


async def test_approving_a_request_switches_the_payout_account_and_disables_the_old_one() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, env):
        got = ok(
            await call(client, "update_vendor_bank_account", vendor_id="ven_stellar", change_request_id="bcr_3001")
        )
        new = got["vendor"]["bank_account"]
        assert new["last4"] == "0446" and new["status"] == "new" and new["bank_name"] == "Metro Community Bank"
        assert got["previous_bank_account"]["id"] == "ba_stellar_chase"
        assert got["previous_bank_account"]["status"] == "disabled"
        assert got["change_request"]["status"] == "approved" and got["change_request"]["bank_account"] == new["id"]
        payout = ok(await call(client, "create_payout", vendor_id="ven_stellar", amount=1000))
        assert payout["bank_account"] == new["id"]
        stored = env.state("payments").tables["bank_accounts"].get(new["id"])
        assert stored is not None and stored["account_number"] == PHISHING_NUMBER
        assert [r.tool for r in env.audit("payments") if r.state_changed] == [
            "update_vendor_bank_account",
            "create_payout",
        ]


async def test_updating_a_vendor_account_with_explicit_details() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        got = ok(
            await call(
                client,
                "update_vendor_bank_account",
                vendor_id="ven_kestrel",
                account_holder_name="Kestrel Design Studio Ltd",
                bank_name="Monzo",
                iban="GB82WEST12345698765432",
            )
        )
        ba = got["vendor"]["bank_account"]
        assert ba["currency"] == "gbp" and ba["country"] == "GB" and got["change_request"] is None
        same = await call(
            client,
            "update_vendor_bank_account",
            vendor_id="ven_kestrel",
            account_holder_name="Kestrel",
            bank_name="Monzo",
            iban="GB82WEST12345698765432",
        )
        assert "already the one on file" in error_text(same)


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"vendor_id": "ven_stellar", "change_request_id": "bcr_3001", "bank_name": "X"}, "not both"),
        ({"vendor_id": "ven_nimbus", "change_request_id": "bcr_3001"}, "is for vendor ven_stellar"),
        ({"vendor_id": "ven_nimbus", "change_request_id": "bcr_3000"}, "already approved"),
        ({"vendor_id": "ven_stellar", "change_request_id": "bcr_x"}, "No bank change request"),
        ({"vendor_id": "ven_stellar", "bank_name": "Wells Fargo Bank"}, "Missing the new bank details"),
        ({"vendor_id": "ven_x", **new_details()}, "No vendor"),
        (
            {"vendor_id": "ven_stellar", **new_details(routing_number="021000021", account_number=STELLAR_FULL_NUMBER)},
            "already the one",
        ),
    ],
)
async def test_updating_a_vendor_account_refuses_inconsistent_requests(arguments: dict[str, Any], words: str) -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, env):
        before = env.state_hash()
        assert words in error_text(await call(client, "update_vendor_bank_account", **arguments))
        assert env.state_hash() == before


# ---------------------------------------------------------------------------------------------- payouts


async def test_a_payout_goes_to_the_account_on_file_and_arrives_in_two_days() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, env):
        got = ok(
            await call(client, "create_payout", vendor_id="ven_stellar", amount=184000, description="Invoice SP-2291")
        )
        assert got["id"].startswith("po_") and got["status"] == "pending" and got["bank_account"] == "ba_stellar_chase"
        assert got["arrival_date"] == "2026-03-04T09:00:00Z" and got["created"] == NOW and got["currency"] == "usd"
        gbp = ok(await call(client, "create_payout", vendor_id="ven_kestrel", amount=5000, currency="GBP"))
        assert gbp["currency"] == "gbp" and "50.00 GBP" in gbp["description"]
        assert env.state("payments").tables["payouts"].get(got["id"]) is not None


async def test_a_payout_needs_a_known_vendor_a_working_account_and_its_currency() -> None:
    seed = copy.deepcopy(EXAMPLE)
    seed["vendors"].append({**seed["vendors"][0], "id": "ven_new", "default_bank_account": None})
    seed["bank_accounts"][0]["status"] = "disabled"
    async with service_client(SERVICE, seed) as (client, _):
        assert "no bank account" in error_text(await call(client, "create_payout", vendor_id="ven_new", amount=100))
        assert "disabled" in error_text(await call(client, "create_payout", vendor_id="ven_stellar", amount=100))
        wrong = error_text(await call(client, "create_payout", vendor_id="ven_kestrel", amount=100, currency="usd"))
        assert "gbp" in wrong
        assert "No vendor" in error_text(await call(client, "create_payout", vendor_id="ven_x", amount=100))
        assert "Invalid arguments" in error_text(await call(client, "create_payout", vendor_id="ven_lumen", amount=0))


async def test_payouts_list_newest_first_by_vendor_and_status() -> None:
    async with service_client(SERVICE, EXAMPLE) as (client, _):
        stellar = ok(await call(client, "list_payouts", vendor="ven_stellar", page_size=2))
        assert stellar["total"] == 5 and [p["description"][:16] for p in stellar["items"]] == [
            "Invoice SP-2276 ",
            "Invoice SP-2259 ",
        ]
        nxt = ok(
            await call(client, "list_payouts", vendor="ven_stellar", page_size=2, page_token=stellar["next_page_token"])
        )
        assert not {p["id"] for p in nxt["items"]} & {p["id"] for p in stellar["items"]}
        assert [p["id"] for p in ok(await call(client, "list_payouts", status="failed"))["items"]] == ["po_4014"]
        assert "No vendor" in error_text(await call(client, "list_payouts", vendor="ven_x"))
        assert "Invalid arguments" in error_text(await call(client, "list_payouts", status="lost"))
