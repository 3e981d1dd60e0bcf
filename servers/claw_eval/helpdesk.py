"""Claw-Eval's helpdesk (``mock_services/helpdesk``) on our tickets service.

Its tickets are our ``tickets``, keeping their ids (``TK-1601``): ``title`` is our subject, ``reporter`` our
requester (a user named so), ``priority`` and ``status`` our enums where they say the same thing (``medium`` is
our ``normal``, ``critical`` our ``urgent``, ``resolved`` and ``done`` our ``solved``; the fixture's own word
stays in ``custom_fields``), and every other key (department, category, assignee, SLA times, a resolution) in
``custom_fields``. Closing a ticket sets our status to ``closed`` (our grader's ``close`` kind); updating one
sets our priority and tags. Its dates are not shifted: no clock of its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.claw_eval import ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._fieldmap import (
    FieldMap,
    Mapped,
    audit_calls,
    check_keys,
    checked,
    fixture_records,
    list_or_missing,
    results,
    strings_or_empty,
    text_or_empty,
    text_or_missing,
    to_time,
)
from coworkenv.servers.claw_eval.common import ClawJson
from coworkenv.servers.kit import ToolContext, tool
from coworkenv.servers.kit.tool import MAX_LONG_TEXT
from coworkenv.servers.tickets.models import Ticket, User

_PRIORITY = {"urgent": "urgent", "critical": "urgent", "high": "high", "medium": "normal", "normal": "normal"}
_PRIORITY |= {"low": "low"}
_STATUS = {"new": "new", "open": "open", "investigating": "open", "in_progress": "open", "pending": "pending"}
_STATUS |= {"hold": "hold", "resolved": "solved", "done": "solved", "solved": "solved", "closed": "closed"}


def _enum(table: dict[str, str], default: str) -> Any:
    return lambda v: table.get(v.strip().lower(), default) if isinstance(v, str) else default


FIELDS = FieldMap(
    mapped=(
        Mapped("ticket_id", "id"),
        Mapped("title", "subject", text_or_empty),
        Mapped("description", "description", text_or_empty, text_or_missing),
        Mapped("priority", "priority", _enum(_PRIORITY, "normal")),
        Mapped("status", "status", _enum(_STATUS, "open")),
        Mapped("created_at", "created_at", to_time),
        Mapped("tags", "tags", strings_or_empty, list_or_missing),
    ),
    order=(
        "ticket_id",
        "subject",
        "title",
        "description",
        "customer_id",
        "reporter",
        "department",
        "priority",
        "status",
        "created_at",
        "updated_at",
        "tags",
        "category",
    ),
    elsewhere=("reporter",),
)
"""A Claw-Eval ticket on our Ticket (``reporter`` is worked out from the requester)."""

FIXTURE = "tickets.json"
REQUIRED = ("title", "reporter", "department", "priority", "status", "created_at")
"""What the mock's ticket list reads of every ticket."""
LISTED = ("ticket_id", "title", "reporter", "department", "priority", "status", "created_at")
ENDPOINTS = {
    "helpdesk_list_tickets": "/helpdesk/tickets",
    "helpdesk_get_ticket": "/helpdesk/tickets/get",
    "helpdesk_update_ticket": "/helpdesk/tickets/update",
    "helpdesk_close_ticket": "/helpdesk/tickets/close",
}

TicketId = Annotated[str, Field(description="The ticket's id. Example: 'TK-1601'")]


def user_id(name: str) -> str:
    """The id of the user a reporter's name stands for (the same name, the same user)."""
    return "usr_" + hashlib.sha256(name.encode()).hexdigest()[:12]


def _names(ctx: ToolContext) -> dict[str, str]:
    return {u["id"]: u["name"] for u in ctx.table("users").select()}


def _view(row: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    return FIELDS.view(row, {"reporter": names.get(row["requester_id"], "")})


def _missing(ticket_id: str) -> ClawJson:
    return ClawJson.of({"error": f"Ticket {ticket_id} not found"})


@tool(read_only=True)
def helpdesk_list_tickets(
    ctx: ToolContext,
    status: Annotated[
        str, Field(description="Only tickets of this status ('open', 'closed', …); 'all' for every one")
    ] = "open",
) -> ClawJson:
    """List the helpdesk's tickets of one status (default 'open'; 'all' for every ticket): each one's id, title,
    reporter, department, priority, status and creation time, and how many there are."""
    names = _names(ctx)
    found = []
    for row in ctx.table("tickets").select():
        ticket = _view(row, names)
        if status == "all" or ticket.get("status") == status:
            found.append({k: ticket.get(k) for k in LISTED})
    return ClawJson.of({"tickets": found, "total": len(found)})


@tool(read_only=True)
def helpdesk_get_ticket(ctx: ToolContext, ticket_id: TicketId) -> ClawJson:
    """Read one ticket in full: title, description, reporter, department, priority, status, tags, category and
    whatever else the helpdesk keeps on it."""
    row = ctx.table("tickets").get(ticket_id)
    return _missing(ticket_id) if row is None else ClawJson.of(_view(row, _names(ctx)))


@tool(idempotent=True)
def helpdesk_update_ticket(
    ctx: ToolContext,
    ticket_id: TicketId,
    priority: Annotated[str | None, Field(description="New priority. Example: 'high'")] = None,
    tags: Annotated[list[str] | None, Field(description="The ticket's tags (replace the old ones)")] = None,
    category: Annotated[str | None, Field(description="New category. Example: 'network'")] = None,
) -> ClawJson:
    """Set a ticket's priority, tags or category (what is left out stays as it is); returns the ticket as it is
    now."""
    row = ctx.table("tickets").get(ticket_id)
    if row is None:
        return _missing(ticket_id)
    given = {"priority": priority, "tags": tags, "category": category}
    changes = FIELDS.assign(row, {k: v for k, v in given.items() if v is not None})
    row = ctx.table("tickets").update(ticket_id, {**changes, "updated_at": ctx.now_iso()})
    return ClawJson.of({"status": "updated", "ticket": _view(row, _names(ctx))})


@tool(destructive=True, idempotent=True)
def helpdesk_close_ticket(
    ctx: ToolContext,
    ticket_id: TicketId,
    resolution: Annotated[
        str, Field(max_length=MAX_LONG_TEXT, description="How it was resolved. Example: 'Replaced the faulty cable'")
    ],
) -> ClawJson:
    """Close a ticket, recording how it was resolved; returns the ticket as it is now."""
    row = ctx.table("tickets").get(ticket_id)
    if row is None:
        return _missing(ticket_id)
    changes = FIELDS.assign(row, {"status": "closed", "resolution": resolution})
    row = ctx.table("tickets").update(ticket_id, {**changes, "updated_at": ctx.now_iso()})
    return ClawJson.of({"status": "closed", "ticket": _view(row, _names(ctx))})


TOOLS = (helpdesk_list_tickets, helpdesk_get_ticket, helpdesk_update_ticket, helpdesk_close_ticket)


def seed(fixtures: Fixtures) -> SeedTables:
    """The tickets of ``tickets.json`` as our tickets (ids kept) and their reporters as our users."""
    name, records = fixture_records(fixtures, "helpdesk", FIXTURE)
    users: dict[str, dict[str, Any]] = {}
    tickets: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        rid = check_keys(name, index, record, "ticket_id", REQUIRED)
        where = f"{name} record {rid}"
        if rid in seen:
            raise ValueError(f"{where}: the ticket_id is given twice")
        seen.add(rid)
        reporter = record["reporter"]
        if not isinstance(reporter, str):
            raise ValueError(f"{where}: reporter must be a name, got {reporter!r}")
        try:
            ours = FIELDS.ours(record)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        uid = user_id(reporter)
        users.setdefault(uid, checked(User, {"id": uid, "name": reporter, "email": ""}, where))
        row = {**ours, "requester_id": uid, "type": "incident", "updated_at": ours["created_at"]}
        tickets.append(checked(Ticket, row, where))
    return {"users": list(users.values()), "tickets": tickets}


def audit_data(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The mock's ``/helpdesk/audit``: its calls, the tickets as each close left them, and as each update did."""
    return {
        "calls": audit_calls(rows, ENDPOINTS, TOOLS),
        "closed": results(rows, ["helpdesk_close_ticket"], "ticket"),
        "updated_tickets": results(rows, ["helpdesk_update_ticket"], "ticket"),
    }


SERVICE = ClawService(name="helpdesk", serves_on="tickets", tools=TOOLS, seed=seed, audit_data=audit_data)
