"""The audit log keeps the validated arguments a tool ran with (and the raw ones beside them); money is a strict,
bounded integer in every service."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from coworkenv.servers import SERVICES
from coworkenv.servers.cli import audit_cmd
from coworkenv.servers.kit import MAX_CENTS, Environment, SeedError, ServiceState
from coworkenv.servers.registry import shipped_services
from tests.conftest import NOW, drop_audit_column

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).parents[3] / "servers/examples"
PAYMENTS = json.loads((EXAMPLES / "payments.json").read_text())
MONEY_ARGUMENTS = ("amount", "min_amount", "max_amount", "annual_revenue")


async def test_a_string_amount_is_invalid_arguments_and_audited_raw() -> None:
    with Environment.create({"payments": PAYMENTS}, now=NOW) as env:
        before = env.state_hash()
        result = await env.call("payments", "create_refund", {"charge": "ch_1001", "amount": "100000"})
        assert result.outcome == "invalid_arguments"
        assert "send 100000 (no quotes)" in result.text and "cents" in result.text
        (row,) = env.audit()
        assert row.arguments == row.raw_arguments == {"charge": "ch_1001", "amount": "100000"}
        assert env.state_hash() == before and not row.state_changed


@pytest.mark.parametrize(
    ("amount", "words"),
    [(100000.0, "send 100000 (no decimal point)"), (True, "not the boolean true"), (12.5, "whole number of cents")],
)
async def test_a_decimal_or_boolean_amount_is_refused_with_what_to_send(amount: Any, words: str) -> None:
    with Environment.create({"payments": PAYMENTS}, now=NOW) as env:
        result = await env.call("payments", "create_payout", {"vendor_id": "ven_stellar", "amount": amount})
        assert result.outcome == "invalid_arguments" and words in result.text


async def test_an_amount_of_2_63_or_more_is_invalid_arguments_never_an_internal_error() -> None:
    with Environment.create({"payments": PAYMENTS, "crm": None}, now=NOW) as env:
        for value in (2**63, 2**64 + 1, MAX_CENTS + 1):
            refund = await env.call("payments", "create_refund", {"charge": "ch_1001", "amount": value})
            revenue = await env.call("crm", "create_account", {"name": "Big", "annual_revenue": value})
            search = await env.call("crm", "search_opportunities", {"min_amount": value})
            assert [refund.outcome, revenue.outcome, search.outcome] == ["invalid_arguments"] * 3
            assert "less than or equal to" in refund.text
        assert [r.raw_arguments["amount"] for r in env.audit("payments")] == [2**63, 2**64 + 1, MAX_CENTS + 1]


def test_every_money_argument_is_a_bounded_integer_in_the_input_schema() -> None:
    found = []
    for svc in shipped_services().values():
        for spec in svc.tools:
            for name, prop in spec.input_schema()["properties"].items():
                if name not in MONEY_ARGUMENTS:
                    continue
                numbers = [p for p in prop.get("anyOf", [prop]) if p.get("type") != "null"]
                assert numbers and all(p["type"] == "integer" and p["maximum"] == MAX_CENTS for p in numbers), (
                    svc.name,
                    spec.name,
                    name,
                )
                found.append(f"{svc.name}.{spec.name}.{name}")
    assert {"payments.create_refund.amount", "payments.create_payout.amount"} <= set(found)
    assert {"crm.create_opportunity.amount", "crm.update_account.annual_revenue"} <= set(found)
    assert "crm.search_opportunities.max_amount" in found


def test_a_seed_with_a_string_amount_is_refused_naming_the_record() -> None:
    seed = copy.deepcopy(PAYMENTS)
    seed["charges"][0]["amount"] = "480000"
    with pytest.raises(SeedError, match=r"charges\[0\].*amount"):
        Environment.create({"payments": seed}, now=NOW)


async def test_the_audit_keeps_the_validated_arguments_the_tool_ran_with() -> None:
    evidence = {"dispute_id": "dp_5001", "evidence": {"receipt": "INV-7"}}
    with Environment.create({"payments": PAYMENTS}, now=NOW) as env:
        payout = {"vendor_id": "ven_stellar", "amount": 1000, "currency": " USD "}
        assert not (await env.call("payments", "create_payout", payout)).is_error
        assert not (await env.call("payments", "submit_dispute_evidence", evidence)).is_error
        window = {"created_gte": "2026-02-01T00:00:00+00:00"}
        assert not (await env.call("payments", "list_charges", window)).is_error
        rows = env.audit()
    # typed as the tool received them: the currency folded, the time in canonical form
    assert rows[0].arguments == {"vendor_id": "ven_stellar", "amount": 1000, "currency": "usd"}
    assert rows[0].raw_arguments == payout
    # only what the caller gave: omitted arguments (description; submit; the evidence's other fields) stay absent
    assert rows[1].arguments == evidence and "submit" not in rows[1].arguments
    assert rows[2].arguments == {"created_gte": "2026-02-01T00:00:00Z"}


async def test_an_unknown_tool_is_audited_with_its_raw_arguments() -> None:
    with Environment.create({"payments": PAYMENTS}, now=NOW) as env:
        await env.call("payments", "wire_money", {"amount": "1"})
        (row,) = env.audit()
        assert (row.outcome, row.arguments, row.raw_arguments) == ("unknown_tool", {"amount": "1"}, {"amount": "1"})


async def test_both_doors_audit_the_same_typed_and_raw_arguments() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("create_payout", {"vendor_id": "ven_stellar", "amount": 1000, "currency": "USD"}),
        ("create_refund", {"charge": "ch_1001", "amount": "100"}),
        ("create_refund", {"charge": "ch_1001", "amount": 2**63}),
        ("list_charges", {"created_gte": "2026-02-01T00:00:00+00:00"}),
    ]
    with (
        Environment.create({"payments": PAYMENTS}, now=NOW) as direct,
        Environment.create({"payments": PAYMENTS}, now=NOW) as over_mcp,
    ):
        for name, args in calls:
            await direct.call("payments", name, args)
        async with Client(over_mcp.server("payments")) as client:
            for name, args in calls:
                await client.call_tool(name, args)
        keep = ("tool", "outcome", "arguments", "raw_arguments", "error", "result")
        rows_d = [{k: r.to_dict()[k] for k in keep} for r in direct.audit()]
        rows_m = [{k: r.to_dict()[k] for k in keep} for r in over_mcp.audit()]
    assert rows_d == rows_m and [r["outcome"] for r in rows_d] == ["ok", "invalid_arguments", "invalid_arguments", "ok"]


async def test_an_old_database_without_raw_arguments_opens_and_reads(tmp_path: Path) -> None:
    db = tmp_path / "payments.db"
    state = ServiceState.open(SERVICES["payments"], PAYMENTS, NOW, db)
    await state.call("get_charge", {"charge_id": "ch_1001"})
    state.close()
    drop_audit_column(db, "raw_arguments")  # as an older version wrote it
    again = ServiceState.open(SERVICES["payments"], path=db)
    await again.call("create_payout", {"vendor_id": "ven_stellar", "amount": 500, "currency": "USD"})
    old, new = again.audit()
    again.close()
    assert old.raw_arguments == old.arguments == {"charge_id": "ch_1001"}
    assert (new.arguments["currency"], new.raw_arguments["currency"]) == ("usd", "USD")


async def test_the_audit_command_prints_both_the_typed_and_the_raw_arguments(tmp_path: Path) -> None:
    db = tmp_path / "payments.db"
    state = ServiceState.open(SERVICES["payments"], PAYMENTS, NOW, db)
    await state.call("create_payout", {"vendor_id": "ven_stellar", "amount": 500, "currency": "USD"})
    state.close()
    result = CliRunner().invoke(audit_cmd, ["payments", "--db", str(db)])
    assert result.exit_code == 0, result.output
    (line,) = [json.loads(x) for x in result.output.splitlines()]
    assert line["arguments"]["currency"] == "usd" and line["raw_arguments"]["currency"] == "USD"


async def test_huge_arguments_no_tool_took_are_audited_as_a_prefix_their_size_and_hash_and_taken_ones_verbatim() -> (
    None
):
    docs = json.loads((EXAMPLES / "docs.json").read_text())
    big = "x" * (50 * 2**20)
    with Environment.create({"docs": docs}, now=NOW) as env:
        refused = await env.call("docs", "create_document", {"title": big})
        unknown = await env.call("docs", "no_such_tool", {"title": big})
        taken = await env.call("docs", "create_document", {"title": "Long", "content": "y" * 50_000})
        assert (refused.outcome, unknown.outcome, taken.outcome) == ("invalid_arguments", "unknown_tool", "ok")
        assert len(refused.text) < 3_000 and "title" in refused.text
        rows = env.audit()
    full = json.dumps({"title": big}, sort_keys=True, ensure_ascii=False).encode()
    for row in rows[:2]:
        assert row.arguments == row.raw_arguments
        capped = row.arguments["_capped"]
        assert capped["bytes"] == len(full) and capped["sha256"] == hashlib.sha256(full).hexdigest()
        assert capped["prefix"].startswith('{"title": "xxx') and capped["prefix"].endswith("more characters)")
    assert rows[2].arguments == {"title": "Long", "content": "y" * 50_000}
