"""Seeds that contradict themselves are refused, naming the record, the field and what to change."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.servers.kit import Environment, SeedError, parse_seed
from coworkenv.servers.registry import get_service

EXAMPLES = Path(__file__).parents[3] / "servers/examples"
PAYMENTS: dict[str, Any] = json.loads((EXAMPLES / "payments.json").read_text())
Seed = dict[str, Any]


def record(seed: Seed, table: str, record_id: str) -> dict[str, Any]:
    return next(r for r in seed[table] if r["id"] == record_id)


def refund_not_recorded(seed: Seed) -> None:
    record(seed, "charges", "ch_1001").update(amount_refunded=1000)


def refund_without_its_total(seed: Seed) -> None:
    seed["refunds"].append({"id": "re_x", "charge": "ch_1002", "amount": 500, "created": "2026-02-01T00:00:00Z"})


def full_refund_without_the_flag(seed: Seed) -> None:
    record(seed, "charges", "ch_1004").update(amount_refunded=4900)
    seed["refunds"].append({"id": "re_x", "charge": "ch_1004", "amount": 4900, "created": "2026-02-01T00:00:00Z"})


def refund_in_another_currency(seed: Seed) -> None:
    seed["refunds"][0]["currency"] = "eur"


def refund_of_a_failed_charge(seed: Seed) -> None:
    charge = record(seed, "charges", seed["refunds"][0]["charge"])
    charge.update(status="failed", amount_refunded=0, refunded=False)


def payout_to_another_vendors_account(seed: Seed) -> None:
    record(seed, "payouts", "po_4001")["bank_account"] = "ba_nimbus_boa"


def default_account_of_another_vendor(seed: Seed) -> None:
    record(seed, "vendors", "ven_lumen")["default_bank_account"] = "ba_globex_citi"


def dispute_above_its_charge(seed: Seed) -> None:
    record(seed, "disputes", "dp_5001")["amount"] = 10**9


CONTRADICTIONS: dict[str, tuple[Callable[[Seed], None], str, str]] = {
    "a charge's amount_refunded without refunds": (refund_not_recorded, "charges[0] (ch_1001)", "set amount_refunded"),
    "a refund its charge does not count": (refund_without_its_total, "(ch_1002) field 'amount_refunded'", "sum to 500"),
    "a full refund without refunded": (
        full_refund_without_the_flag,
        "charges[3] field '(record)'",
        "equals amount (record id 'ch_1004')",
    ),
    "a refund in another currency": (refund_in_another_currency, "refunds[0] (re_2001) field 'currency'", "'usd'"),
    "a refund of a failed charge": (refund_of_a_failed_charge, "refunds[0] (re_2001) field 'charge'", "succeeded"),
    "a payout to another vendor's account": (payout_to_another_vendors_account, "(po_4001)", "ven_nimbus"),
    "a vendor's default account of a customer": (default_account_of_another_vendor, "(ven_lumen)", "a customer"),
    "a dispute above its charge": (dispute_above_its_charge, "disputes[0] (dp_5001) field 'amount'", "more than"),
}


def test_the_payments_example_agrees_with_itself() -> None:
    parse_seed(get_service("payments"), PAYMENTS)


@pytest.mark.parametrize("case", CONTRADICTIONS.values(), ids=list(CONTRADICTIONS))
def test_a_seed_that_contradicts_itself_is_refused_naming_the_record(
    case: tuple[Callable[[Seed], None], str, str],
) -> None:
    change, where, advice = case
    seed = copy.deepcopy(PAYMENTS)
    change(seed)
    with pytest.raises(SeedError) as caught:
        parse_seed(get_service("payments"), seed)
    message = str(caught.value)
    assert where in message and advice in message and "\n" not in message


@pytest.mark.parametrize("service", ["payments", "tickets", "chat"])
def test_a_seed_time_without_a_zone_is_refused_with_what_to_add(service: str) -> None:
    seed = json.loads((EXAMPLES / f"{service}.json").read_text())
    table = next(name for name, rows in seed.items() if rows and {"created", "created_at"} & rows[0].keys())
    field = next(k for k in seed[table][0] if k in ("created", "created_at"))
    seed[table][0][field] = "2026-03-02T09:00:00"
    with pytest.raises(SeedError, match=rf"{table}\[0\] field '{field}'.*has no zone; add Z for UTC or an offset"):
        parse_seed(get_service(service), seed)


@pytest.mark.parametrize("written", ["2026-03-02T09:00:00Z", "2026-03-02T10:00:00+01:00", "2026-03-02T09:00:00.000Z"])
def test_a_seed_time_with_a_zone_is_stored_in_utc(written: str) -> None:
    seed = copy.deepcopy(PAYMENTS)
    seed["customers"][0]["created"] = written
    assert parse_seed(get_service("payments"), seed)["customers"][0]["created"] == "2026-03-02T09:00:00Z"


def test_a_tool_argument_time_without_a_zone_is_still_read_as_utc() -> None:
    async def search() -> Any:
        with anyio.fail_after(10), Environment.create({"payments": PAYMENTS}) as env:
            return await env.call("payments", "list_charges", {"created_gte": "2026-03-01T00:00:00"})

    assert anyio.run(search).outcome == "ok"


def test_seed_text_that_is_not_valid_unicode_is_refused_naming_the_record() -> None:
    seed = copy.deepcopy(PAYMENTS)
    seed["customers"][1]["name"] = "bad \ud800"
    with pytest.raises(SeedError, match=r"payments\.customers\[1\].*not valid Unicode"):
        parse_seed(get_service("payments"), seed)


def test_a_seed_integer_beyond_64_bits_is_refused_and_its_echo_is_short() -> None:
    seed = copy.deepcopy(PAYMENTS)
    record(seed, "disputes", "dp_5001")["submission_count"] = 10**100
    with pytest.raises(SeedError, match=r"disputes\[0\] field 'submission_count'.*out of range") as caught:
        parse_seed(get_service("payments"), seed)
    assert len(str(caught.value)) < 300
