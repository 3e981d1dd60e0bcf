"""Claw-Eval's finance (``mock_services/finance``) on our payments service.

Its transactions are the account's books: our ``balance_transactions`` (Stripe's name for them), keeping their ids
(``TXN-2026-001``), the amount in cents as our amounts are (``2599.0`` → 259900; an amount written otherwise, like
``45000``, is kept as written too), the day as our ``created``, ``type``, ``status`` and ``description`` as they
are; every other key (currency as written, merchant, customer, category, receipt) in ``custom_fields``. A
submitted expense report is one of our ``expense_reports``. Its dates are not shifted: no clock of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.claw_eval import ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._fieldmap import (
    MISSING,
    FieldMap,
    Mapped,
    audit_calls,
    check_keys,
    checked,
    claw_now,
    fixture_records,
    results,
    text_or_empty,
    text_or_missing,
    to_time,
)
from coworkenv.servers.claw_eval.common import ClawJson
from coworkenv.servers.kit import MAX_CENTS, ToolContext, tool
from coworkenv.servers.payments.models import BalanceTransaction


def _cents(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"amount must be a number, got {value!r}")
    return round(value * 100)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _none_missing(value: Any) -> Any:
    return MISSING if value is None else value


FIELDS = FieldMap(
    mapped=(
        Mapped("transaction_id", "id"),
        Mapped("date", "created", to_time, lambda created: created[:10]),
        Mapped("amount", "amount", _cents, lambda cents: cents / 100),
        Mapped("type", "type", _text_or_none, _none_missing),
        Mapped("description", "description", text_or_empty, text_or_missing),
        Mapped("status", "status", _text_or_none, _none_missing),
    ),
    order=(
        "transaction_id",
        "date",
        "amount",
        "currency",
        "customer_id",
        "customer_name",
        "merchant",
        "supplier",
        "type",
        "category",
        "description",
        "related_item",
        "status",
        "reference",
        "approved_by",
        "department",
        "receipt_url",
    ),
)
"""A Claw-Eval transaction on our BalanceTransaction."""

FIXTURE = "transactions.json"
SUBMIT = ("finance_submit_report", "finance_report_submit")
"""The names tasks give the one submit endpoint."""
ENDPOINTS = {
    "finance_list_transactions": "/finance/transactions",
    "finance_get_transaction": "/finance/transactions/get",
    **{name: "/finance/report/submit" for name in SUBMIT},
}
Day = Annotated[str | None, Field(description="A day, YYYY-MM-DD. Example: '2026-03-01'")]


def _currency(record: Mapping[str, Any]) -> str:
    given = record.get("currency")
    return given.lower() if isinstance(given, str) and len(given) == 3 and given.isalpha() else "cny"


@tool(read_only=True)
def finance_list_transactions(ctx: ToolContext, start_date: Day = None, end_date: Day = None) -> ClawJson:
    """List the account's transactions, each in full, optionally only those dated from start_date to end_date
    (both included); and how many there are."""
    found = []
    for row in ctx.table("balance_transactions").select():
        record = FIELDS.view(row)
        if start_date and record["date"] < start_date:
            continue
        if end_date and record["date"] > end_date:
            continue
        found.append(record)
    return ClawJson.of({"transactions": found, "total": len(found)})


@tool(read_only=True)
def finance_get_transaction(
    ctx: ToolContext,
    transaction_id: Annotated[str, Field(description="The transaction's id. Example: 'TXN-2026-001'")],
) -> ClawJson:
    """Read one transaction in full: date, amount, currency, type, category, description, status and whatever
    else the books keep on it."""
    row = ctx.table("balance_transactions").get(transaction_id)
    if row is None:
        return ClawJson.of({"error": f"Transaction {transaction_id} not found"})
    return ClawJson.of(FIELDS.view(row))


def submit_report(
    ctx: ToolContext,
    title: Annotated[str, Field(description="The report's title. Example: 'March travel expenses'")],
    transactions: Annotated[list[str], Field(description="The ids of the transactions it claims")],
    total_amount: Annotated[
        float, Field(ge=-MAX_CENTS, le=MAX_CENTS, description="The total it claims, in currency units. Example: 2599.0")
    ],
) -> ClawJson:
    """Submit an expense report to finance: a title, the transactions it claims and their total; returns the
    report as submitted."""
    now = claw_now(ctx)
    ctx.table("expense_reports").insert(
        {
            "id": ctx.new_id("expense_reports"),
            "title": title,
            "transactions": transactions,
            "total_amount": total_amount,
            "created": ctx.now_iso(),
        }
    )
    report = {"title": title, "transactions": transactions, "total_amount": total_amount, "timestamp": now}
    return ClawJson.of({"status": "submitted", "report": report})


TOOLS = (
    finance_list_transactions,
    finance_get_transaction,
    *(tool(name=name)(submit_report) for name in SUBMIT),
)


def seed(fixtures: Fixtures) -> SeedTables:
    """The transactions of ``transactions.json`` as our balance transactions (ids kept)."""
    name, records = fixture_records(fixtures, "finance", FIXTURE)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        rid = check_keys(name, index, record, "transaction_id", ("date",))
        where = f"{name} record {rid}"
        if rid in seen:
            raise ValueError(f"{where}: the transaction_id is given twice")
        seen.add(rid)
        if not isinstance(record["date"], str):
            raise ValueError(f"{where}: date must be a day like 2026-03-01, got {record['date']!r}")
        try:
            ours = FIELDS.ours(record)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        rows.append(checked(BalanceTransaction, {**ours, "currency": _currency(record)}, where))
    return {"balance_transactions": rows}


def audit_data(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The mock's ``/finance/audit``: its calls and the reports submitted."""
    return {"calls": audit_calls(rows, ENDPOINTS, TOOLS), "submitted_reports": results(rows, SUBMIT, "report")}


SERVICE = ClawService(name="finance", serves_on="payments", tools=TOOLS, seed=seed, audit_data=audit_data)
