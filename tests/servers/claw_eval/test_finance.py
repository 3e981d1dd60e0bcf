"""Claw-Eval's finance on our payments service: its transactions seed our balance transactions with their ids,
each tool answers as the mock does, a submitted report is one of our expense reports, and ``/audit`` is rebuilt
from our audit rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval import profiled
from coworkenv.servers.claw_eval.finance import ENDPOINTS, SERVICE
from coworkenv.servers.kit import Environment
from coworkenv.servers.registry import get_service
from coworkenv.servers.testing import check_service
from tests.servers.claw_eval.hfnk_twin import audit, call, claw_env, compare_with_mock, needs_claw, real_fixtures

pytestmark = pytest.mark.anyio

TRANSACTIONS: list[dict[str, Any]] = [
    {
        "transaction_id": "TXN-001",
        "date": "2026-03-01",
        "amount": 2599.0,
        "currency": "CNY",
        "merchant": "Metro Office",
        "category": "Office Supplies",
        "description": "Printer paper",
        "receipt_url": "https://receipts.example/1",
    },
    {
        "transaction_id": "TXN-002",
        "customer_id": "CUST-7",
        "amount": 45000,
        "type": "subscription",
        "date": "2026-03-10",
        "status": "completed",
        "description": "Annual plan",
    },
    {
        "transaction_id": "TXN-003",
        "date": "2026-03-20",
        "amount": -1200.5,
        "currency": "CNY",
        "type": "Refund",
        "category": "",
        "description": "Refund of order 88",
        "status": "cancelled",
        "customer_name": None,
    },
]
FIXTURES = {"finance": {"transactions.json": TRANSACTIONS}}


def test_seeding_keeps_the_transaction_ids_with_amounts_in_cents_and_the_rest_in_custom_fields() -> None:
    rows = {r["id"]: r for r in SERVICE.seed({"transactions.json": TRANSACTIONS})["balance_transactions"]}
    assert list(rows) == ["TXN-001", "TXN-002", "TXN-003"]
    assert [r["amount"] for r in rows.values()] == [259900, 4500000, -120050]
    assert rows["TXN-001"]["created"] == "2026-03-01T00:00:00Z" and rows["TXN-001"]["currency"] == "cny"
    assert rows["TXN-001"]["custom_fields"] == {
        "currency": "CNY",
        "merchant": "Metro Office",
        "category": "Office Supplies",
        "receipt_url": "https://receipts.example/1",
    }
    assert rows["TXN-002"]["custom_fields"] == {"customer_id": "CUST-7", "amount": 45000}  # 45000 is not 45000.0
    assert (rows["TXN-003"]["type"], rows["TXN-003"]["status"]) == ("Refund", "cancelled")


async def test_get_transaction_returns_each_fixture_record_exactly_and_an_unknown_id_is_an_error_answer() -> None:
    with claw_env(["finance"], FIXTURES) as (env, ours):
        for record in TRANSACTIONS:
            got = await call(env, ours, "finance_get_transaction", {"transaction_id": record["transaction_id"]})
            assert got == record and type(got["amount"]) is type(record["amount"])
        missing = await call(env, ours, "finance_get_transaction", {"transaction_id": "TXN-9"})
        assert missing == {"error": "Transaction TXN-9 not found"}


async def test_list_transactions_keeps_those_dated_within_the_days_given() -> None:
    with claw_env(["finance"], FIXTURES) as (env, ours):
        assert await call(env, ours, "finance_list_transactions", {}) == {"transactions": TRANSACTIONS, "total": 3}
        window = await call(
            env, ours, "finance_list_transactions", {"start_date": "2026-03-05", "end_date": "2026-03-20"}
        )
        assert [t["transaction_id"] for t in window["transactions"]] == ["TXN-002", "TXN-003"]
        before = await call(env, ours, "finance_list_transactions", {"end_date": "2026-03-09"})
        assert before["total"] == 1


async def test_submitting_a_report_under_either_name_adds_our_expense_report_and_audit_lists_it() -> None:
    with claw_env(["finance"], FIXTURES) as (env, ours):
        args = {"title": "March", "transactions": ["TXN-001"], "total_amount": 2599}
        got = await call(env, ours, "finance_submit_report", args)
        report = {"title": "March", "transactions": ["TXN-001"], "total_amount": 2599.0}
        assert got == {"status": "submitted", "report": {**report, "timestamp": "2026-03-02T09:00:00+00:00"}}
        await call(env, ours, "finance_report_submit", {**args, "title": "Again"})
        stored = env.state(ours).tables["expense_reports"].dump()
        assert [(r["title"], r["total_amount"], r["status"]) for r in stored] == [
            ("March", 2599.0, "submitted"),
            ("Again", 2599.0, "submitted"),
        ]
        data = audit(SERVICE, env, ours)
        assert [r["title"] for r in data["submitted_reports"]] == ["March", "Again"]
        assert {c["endpoint"] for c in data["calls"]} == {"/finance/report/submit"}


def test_the_profiled_service_passes_the_toolkit_s_schema_seed_door_and_fuzz_checks() -> None:
    # "outcomes" is left out: an unknown id is a 200 answer {"error": ...} in Claw-Eval, not a failed call
    check_service(
        profiled(get_service("payments"), ["finance"]),
        SERVICE.seed({"transactions.json": TRANSACTIONS}),
        calls=100,
        skip=("outcomes", "stdio"),
    )


@pytest.mark.parametrize(
    ("records", "says"),
    [
        ([{**TRANSACTIONS[0], "amount": "12"}], "transactions.json record TXN-001: amount must be a number"),
        ([{**TRANSACTIONS[0], "date": "soon"}], "transactions.json record TXN-001: 'soon' is not an ISO"),
        ([{k: v for k, v in TRANSACTIONS[0].items() if k != "date"}], "transactions.json record TXN-001: lacks date"),
        ([TRANSACTIONS[1], TRANSACTIONS[1]], "transactions.json record TXN-002: the transaction_id is given twice"),
        ([{**TRANSACTIONS[0], "amount": 1e20}], "transactions.json record TXN-001: amount"),
    ],
)
def test_a_bad_fixture_is_a_value_error_naming_the_file_and_record(records: Any, says: str) -> None:
    with pytest.raises(ValueError, match="^" + says):
        SERVICE.seed({"transactions.json": records})


@needs_claw
async def test_each_tool_answers_as_the_real_mock_does_and_audit_is_the_same(tmp_path: Path) -> None:
    calls = [
        ("finance_list_transactions", {}),
        ("finance_list_transactions", {"start_date": "2026-03-02", "end_date": ""}),
        ("finance_get_transaction", {"transaction_id": "TXN-002"}),
        ("finance_get_transaction", {"transaction_id": "TXN-404"}),
        ("finance_submit_report", {"title": "Q1", "transactions": ["TXN-001", "TXN-404"], "total_amount": 3799}),
        ("finance_report_submit", {"title": "Q1 again", "transactions": [], "total_amount": "12.5"}),
    ]
    await compare_with_mock(tmp_path, SERVICE, "transactions.json", TRANSACTIONS, calls, ENDPOINTS)


@needs_claw
async def test_every_real_task_s_finance_fixtures_seed_our_payments_and_read_as_the_mock_does(tmp_path: Path) -> None:
    tasks = real_fixtures("finance")
    assert len(tasks) >= 20
    for task, fixtures in tasks:
        seed = SERVICE.seed(fixtures["finance"])
        with Environment.create({"payments": seed}) as env:
            stored = env.state("payments").tables["balance_transactions"].dump()
        ((name, records),) = fixtures["finance"].items()
        assert [t["id"] for t in stored] == [r["transaction_id"] for r in records], task
        reads = [("finance_get_transaction", {"transaction_id": r["transaction_id"]}) for r in records]
        calls = [("finance_list_transactions", {}), *reads]
        await compare_with_mock(tmp_path / task, SERVICE, name, records, calls, ENDPOINTS)
