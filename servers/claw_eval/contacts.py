"""Claw-Eval's contacts, served by our crm service.

Its mock (``mock_services/contacts/server.py``) is the company directory (a fixture list of people:
``contact_id``, ``name``, ``department``, ``title``, ``email``, ``phone``, often ``location``, ``notes`` and more):
it searches it by name (and department), reads one person and records the messages sent to them. Here they are
contacts of one account of our crm service, the directory (:data:`DIRECTORY`), fixture ids kept, their other
fields in ``custom_fields``; a message sent to a person of the directory is an activity logged on them. The
mock shifts no dates (no clock).
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
    required,
    results,
    unique_ids,
    view,
)
from coworkenv.servers.claw_eval.common import ClawJson
from coworkenv.servers.kit import ToolContext, tool

FILE = "contacts.json"
DIRECTORY = "acc_directory"
"""The account whose contacts are Claw-Eval's directory (crm's customers are the other accounts)."""
ENDPOINTS = {
    "contacts_search": "/contacts/search",
    "contacts_get": "/contacts/get",
    "contacts_send_message": "/contacts/send_message",
}
FIELDS: dict[str, type] = {
    "contact_id": str,
    "name": str,
    "department": str,
    "title": str,
    "email": str,
    "phone": str,
}


def _derived(row: Mapping[str, Any]) -> Row:
    """Claw-Eval's person as our contact writes it (before ``custom_fields``)."""
    return {
        "contact_id": row["id"],
        "name": row["name"],
        "title": row["title"],
        "email": row["email"],
        "phone": row["phone"],
    }


def contact_view(row: Mapping[str, Any]) -> Row:
    """A person of the directory as the mock holds them."""
    return view(_derived(row), row)


def directory_account() -> Row:
    return {
        "id": DIRECTORY,
        "name": "Company directory",
        "industry": "",
        "status": "active",
        "created_at": SEEDED_AT,
        "updated_at": SEEDED_AT,
    }


def seed(fixtures: Fixtures) -> SeedTables:
    """The directory fixture as the contacts of the directory account of our crm service, contact ids kept."""
    name, records = fixture_file(fixtures, FILE)
    for index, record in enumerate(records):
        required(name, index, record, "contact_id", FIELDS)
    unique_ids(name, records, "contact_id")
    contacts: list[Row] = []
    for record in records:
        row: Row = {
            "id": record["contact_id"],
            "account_id": DIRECTORY,
            "name": record["name"],
            "email": record["email"],
            "title": record["title"],
            "phone": record["phone"],
            "created_at": SEEDED_AT,
            "updated_at": SEEDED_AT,
        }
        row["custom_fields"] = kept(record, _derived(row))
        contacts.append(row)
    return {"accounts": [directory_account()], "contacts": contacts}


# ---------------------------------------------------------------------------------------------- tools
def _directory(ctx: ToolContext) -> list[Row]:
    rows = ctx.table("contacts").select("account_id = ?", [DIRECTORY], order_by="id")
    return [contact_view(r) for r in rows]


@tool(read_only=True, name="contacts_search")
def search_contacts(
    ctx: ToolContext,
    query: Annotated[str, Field(description="Part of the person's name, as written. Example: '张伟'")],
    department: Annotated[
        str | None, Field(description="Only people of a department (part of its name). Example: '技术部'")
    ] = None,
) -> ClawJson:
    """Find people of the company directory by name (and department): their title, email, phone and more."""
    found = [
        c
        for c in _directory(ctx)
        if query in c["name"] and (department is None or department in c.get("department", ""))
    ]
    return ClawJson.of({"contacts": found, "total": len(found)})


@tool(read_only=True, name="contacts_get")
def get_contact(
    ctx: ToolContext,
    contact_id: Annotated[str, Field(description="The person's id, from contacts_search. Example: 'CON-001'")],
) -> ClawJson:
    """Read one person of the directory whole."""
    row = ctx.table("contacts").get(contact_id)
    if row is None or row["account_id"] != DIRECTORY:
        return ClawJson.of({"error": f"Contact {contact_id} not found"})
    return ClawJson.of(contact_view(row))


@tool(name="contacts_send_message")
def send_message(
    ctx: ToolContext,
    contact_id: Annotated[str, Field(description="The person's id. Example: 'CON-001'")],
    message: Annotated[str, Field(description="What to tell them.")],
) -> ClawJson:
    """Send a message to a person of the directory."""
    sent = {"contact_id": contact_id, "message": message, "timestamp": iso_now(ctx.now)}
    row = ctx.table("contacts").get(contact_id)
    if row is not None:  # the mock takes any id; only a message to someone we hold is logged on them
        activity = {
            "id": ctx.new_id("activities"),
            "type": "email",
            "subject": f"Message to {row['name']}",
            "body": message,
            "account_id": row["account_id"],
            "contact_id": contact_id,
            "created_at": ctx.now_iso(),
        }
        ctx.table("activities").insert(activity)
    return ClawJson.of({"status": "sent", "record": sent})


TOOLS = (search_contacts, get_contact, send_message)


def audit_data(tables: Mapping[str, list[dict[str, Any]]], audit: list[AuditRow]) -> dict[str, Any]:
    """The mock's ``/audit``: its call log and the messages sent."""
    return {
        "calls": calls(audit, ENDPOINTS, TOOLS),
        "sent_messages": [r["record"] for r in results(audit, "contacts_send_message") if "record" in r],
    }


SERVICE = ClawService("contacts", "crm", TOOLS, seed, audit_data)
