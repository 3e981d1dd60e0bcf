"""Claw-Eval's crm, served by our crm service.

Its mock (``mock_services/crm/server.py``) holds customers (a fixture list: ``customer_id``, ``name``,
``contact_person``, ``tier``, ``status``, ``industry``, ``annual_revenue`` and often ``email``, ``phone``,
``notes``, contract fields...): it lists them by status, tier and industry, reads one, and records the reports
exported. Here a customer is an account of our crm service (fixture ids kept; ``annual_revenue`` in cents, its
tier and status in our vocabulary, Claw-Eval's own values and other fields in ``custom_fields``); an exported
report is a note logged on each customer it covers. The mock shifts no dates (no clock).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.claw_eval import AuditRow, ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._gmail_calendar_crm import (
    SEEDED_AT,
    Row,
    calls,
    fixture_file,
    iso_now,
    kept,
    problem,
    required,
    results,
    unique_ids,
    view,
)
from coworkenv.servers.claw_eval.common import ClawJson
from coworkenv.servers.claw_eval.contacts import DIRECTORY
from coworkenv.servers.kit import MAX_CENTS, ToolContext, tool

FILE = "customers.json"
ENDPOINTS = {
    "crm_list_customers": "/crm/customers",
    "crm_get_customer": "/crm/customers/get",
    "crm_export_report": "/crm/export",
}
FIELDS: dict[str, type] = {"customer_id": str, "name": str}
LISTED = ("customer_id", "name", "contact_person", "tier", "status", "industry", "annual_revenue")
"""What the mock's list shows of each customer (each must be in every fixture record)."""
TIERS = {"vip": "enterprise", "core": "enterprise", "key": "enterprise", "standard": "business"}
STATUSES = {"active": "active", "prospect": "prospect", "churned": "churned", "inactive": "churned"}


def _derived(row: Mapping[str, Any]) -> Row:
    """Claw-Eval's customer as our account writes it (before ``custom_fields``)."""
    revenue = row["annual_revenue"]
    derived = {
        "customer_id": row["id"],
        "name": row["name"],
        "tier": row["tier"],
        "status": row["status"],
        "industry": row["industry"],
        "annual_revenue": None if revenue is None else revenue // 100,
    }
    if row["phone"] is not None:  # an account with no phone: a customer with no phone (or one not a text)
        derived["phone"] = row["phone"]
    return derived


def customer_view(row: Mapping[str, Any]) -> Row:
    """A customer as the mock holds it."""
    return view(_derived(row), row)


def _cents(value: Any) -> int | None:
    if type(value) is int and 0 <= value * 100 <= MAX_CENTS:
        return value * 100
    return None


def seed(fixtures: Fixtures) -> SeedTables:
    """The customers fixture as accounts of our crm service, customer ids kept."""
    name, records = fixture_file(fixtures, FILE)
    for index, record in enumerate(records):
        required(name, index, record, "customer_id", FIELDS)
        for key in LISTED:
            if key not in record:
                raise problem(name, index, record, "customer_id", f"missing field {key!r}")
    unique_ids(name, records, "customer_id")
    for index, record in enumerate(records):
        if record["customer_id"] == DIRECTORY:
            raise problem(name, index, record, "customer_id", f"{DIRECTORY!r} is the contacts directory's id")
    accounts: list[Row] = []
    for record in records:
        tier, status, phone = record["tier"], record["status"], record.get("phone")
        row: Row = {
            "id": record["customer_id"],
            "name": record["name"],
            "industry": record["industry"] if isinstance(record["industry"], str) else "",
            "tier": TIERS.get(str(tier).lower(), "starter"),
            "status": STATUSES.get(str(status).lower(), "active"),
            "annual_revenue": _cents(record["annual_revenue"]),
            "phone": phone if isinstance(phone, str) else None,
            "created_at": SEEDED_AT,
            "updated_at": SEEDED_AT,
        }
        row["custom_fields"] = kept(record, _derived(row))
        accounts.append(row)
    return {"accounts": accounts}


# ---------------------------------------------------------------------------------------------- tools
def _customers(ctx: ToolContext) -> list[Row]:
    rows = ctx.table("accounts").select("id != ?", [DIRECTORY], order_by="id")
    return [customer_view(r) for r in rows]


Filter = Annotated[str | None, Field(description="Only customers with exactly this value. Example: 'active'")]


@tool(read_only=True, name="crm_list_customers")
def list_customers(
    ctx: ToolContext,
    status: Filter = None,
    tier: Annotated[str | None, Field(description="Only customers of exactly this tier. Example: 'vip'")] = None,
    industry: Annotated[str | None, Field(description="Only customers of exactly this industry.")] = None,
) -> ClawJson:
    """List the customers (name, contact person, tier, status, industry, annual revenue), optionally only those
    of a status, tier or industry; read one whole with crm_get_customer."""
    found = []
    for customer in _customers(ctx):
        if status and customer.get("status") != status:
            continue
        if tier and customer.get("tier") != tier:
            continue
        if industry and customer.get("industry") != industry:
            continue
        found.append({k: customer.get(k) for k in LISTED})
    return ClawJson.of({"customers": found, "total": len(found)})


@tool(read_only=True, name="crm_get_customer")
def get_customer(
    ctx: ToolContext,
    customer_id: Annotated[str, Field(description="The customer's id, from crm_list_customers. Example: 'CUS-001'")],
) -> ClawJson:
    """Read one customer whole: contact, revenue, contract, notes and more."""
    row = ctx.table("accounts").get(customer_id)
    if row is None or customer_id == DIRECTORY:
        return ClawJson.of({"error": f"Customer {customer_id} not found"})
    return ClawJson.of(customer_view(row))


@tool(name="crm_export_report")
def export_report(
    ctx: ToolContext,
    title: Annotated[str, Field(description="Example: 'VIP customer report'")],
    customer_ids: Annotated[list[str], Field(description="The customers it covers. Example: ['CUS-001']")],
    summary: Annotated[str, Field(description="The report's text.")],
) -> ClawJson:
    """Export a report on some customers."""
    report = {"title": title, "customer_ids": customer_ids, "summary": summary, "timestamp": iso_now(ctx.now)}
    accounts = ctx.table("accounts")
    for customer_id in dict.fromkeys(customer_ids):  # the mock takes any id: a note on each customer we hold
        if customer_id != DIRECTORY and accounts.get(customer_id) is not None:
            note = {
                "id": ctx.new_id("activities"),
                "type": "note",
                "subject": title or "Report",
                "body": summary,
                "account_id": customer_id,
                "created_at": ctx.now_iso(),
            }
            ctx.table("activities").insert(note)
    return ClawJson.of({"status": "exported", "report": report})


TOOLS = (list_customers, get_customer, export_report)


def audit_data(tables: Mapping[str, list[dict[str, Any]]], audit: list[AuditRow]) -> dict[str, Any]:
    """The mock's ``/audit``: its call log and the reports exported."""
    return {
        "calls": calls(audit, ENDPOINTS, TOOLS),
        "exported_reports": [r["report"] for r in results(audit, "crm_export_report") if "report" in r],
    }


SERVICE = ClawService("crm", "crm", TOOLS, seed, audit_data)
