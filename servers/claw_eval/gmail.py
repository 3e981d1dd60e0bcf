"""Claw-Eval's gmail, served by our email service.

Its mock (``mock_services/gmail/server.py``) holds one inbox (a fixture list of messages: ``message_id``, ``from``,
``to``, ``subject``, ``body``, ``date``, ``labels``, ``is_read``), lists it by recency, reads one message, and
records what is sent and saved as a draft (never delivered, never in the inbox it lists). Here the inbox is the
user's mailbox of our email service (fixture ids kept), a sent message a SENT message and a draft a DRAFT message
there; ``custom_fields`` keeps what our fields write otherwise (a ``from`` with a display name, lower-case labels)
and marks the messages of Claw-Eval's outbox (``claw_outbox``: ``sent`` or ``draft``).

Dates: the mock moves every date so that the newest message is a day old and writes each as its local wall time
with a ``Z``. We store those wall times and set the clock to the newest message's moment plus a day, so each
message is as old as the mock makes it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.claw_eval import AuditRow, ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._gmail_calendar_crm import (
    Row,
    calls,
    crash,
    fixture_file,
    fixture_time,
    iso_now,
    kept,
    required,
    results,
    stamp,
    unique_ids,
    view,
    wall,
)
from coworkenv.servers.claw_eval.common import ClawJson
from coworkenv.servers.email.models import SYSTEM_LABELS, normalise_address
from coworkenv.servers.kit import ToolContext, parse_time, tool

FILE = "inbox.json"
USER = "me@company.com"
"""The mailbox's address when no fixture message is addressed to a valid one."""
UNKNOWN_SENDER = "unknown@sender.invalid"
"""Our ``from_address`` of a fixture message whose ``from`` holds no address (its text is kept as it was)."""
OUTBOX = "claw_outbox"
ENDPOINTS = {
    "gmail_list_messages": "/gmail/messages",
    "gmail_get_message": "/gmail/messages/get",
    "gmail_send_message": "/gmail/send",
    "gmail_save_draft": "/gmail/drafts/save",
}
FIELDS: dict[str, type] = {
    "message_id": str,
    "from": str,
    "to": str,
    "subject": str,
    "body": str,
    "date": str,
    "labels": list,
    "is_read": bool,
}
_SPLIT = re.compile(r"[,;]")


# ---------------------------------------------------------------------------------------------- records
def _addresses(text: str) -> list[str]:
    """The valid addresses in a To line (comma or semicolon separated); the rest is left out."""
    out: list[str] = []
    for part in _SPLIT.split(text):
        try:
            address = normalise_address(part)
        except ValueError:
            continue
        if address not in out:
            out.append(address)
    return out


def _sender(text: str) -> tuple[str, str]:
    """(address, display name) of a From line."""
    named = re.match(r"^\s*(?P<name>[^<>]*?)\s*<[^<>]+>\s*$", text)
    found = _addresses(text)
    return (found[0] if found else UNKNOWN_SENDER), (named.group("name") if named and found else "")


def _labels(labels: list[Any], is_read: bool) -> list[str]:
    out = [label.upper() if label.upper() in SYSTEM_LABELS else label for label in labels if isinstance(label, str)]
    if not is_read:
        out.append("UNREAD")
    return list(dict.fromkeys(out))


def _derived(row: Mapping[str, Any]) -> Row:
    """Claw-Eval's message as our record writes it (before ``custom_fields``)."""
    sender = f"{row['from_name']} <{row['from_address']}>" if row["from_name"] else row["from_address"]
    return {
        "message_id": row["id"],
        "from": sender,
        "to": ", ".join(row["to"]),
        "subject": row["subject"],
        "body": row["body"],
        "date": row["date"],
        "labels": [label for label in row["label_ids"] if label != "UNREAD"],
        "is_read": "UNREAD" not in row["label_ids"],
    }


def message_view(row: Mapping[str, Any]) -> Row:
    """A message of the inbox as the mock holds it."""
    return view(_derived(row), row)


def _mailbox(records: list[Row]) -> str:
    counts = Counter(a for r in records for a in _addresses(r["to"]))
    return counts.most_common(1)[0][0] if counts else USER


def seed(fixtures: Fixtures) -> SeedTables:
    """The inbox fixture as the user's mailbox of our email service, message ids kept."""
    name, records = fixture_file(fixtures, FILE)
    for index, record in enumerate(records):
        required(name, index, record, "message_id", FIELDS)
        fixture_time(name, index, record, "message_id", "date")
    unique_ids(name, records, "message_id")
    address = _mailbox(records)
    messages: list[Row] = []
    for index, record in enumerate(records):
        sender, sender_name = _sender(record["from"])
        row: Row = {
            "id": record["message_id"],
            "mailbox": address,
            "thread_id": record["message_id"],
            "from_address": sender,
            "from_name": sender_name,
            "to": _addresses(record["to"]),
            "subject": record["subject"],
            "body": record["body"],
            "label_ids": _labels(record["labels"], record["is_read"]),
            "date": stamp(wall(fixture_time(name, index, record, "message_id", "date"))),
        }
        row["custom_fields"] = kept(record, _derived(row), skip=("date",))
        messages.append(row)
    return {"mailboxes": [{"id": "mbx_me", "address": address, "name": "Me", "is_primary": True}], "messages": messages}


def clock(fixtures: Fixtures) -> datetime | None:
    """A day and a second after the newest message: the mock makes it a day old when it loads, so it is a little
    older by the time anyone asks (``days_back=1`` leaves it out); None without messages."""
    name, records = fixture_file(fixtures, FILE)
    if not records:
        return None
    newest = max(fixture_time(name, i, r, "message_id", "date") for i, r in enumerate(records))
    return newest + timedelta(days=1, seconds=1)


# ---------------------------------------------------------------------------------------------- tools
def _inbox(ctx: ToolContext) -> list[Row]:
    """The messages the mock's inbox holds (not its sent messages or drafts), in fixture (id) order."""
    rows = ctx.table("messages").select(order_by="id")
    return [r for r in rows if OUTBOX not in r["custom_fields"]]


def _mailbox_row(ctx: ToolContext) -> Row:
    rows = ctx.table("mailboxes").select("is_primary = 1", order_by="id", limit=1)
    if rows:
        return rows[0]
    box = {"id": "mbx_me", "address": USER, "name": "Me", "is_primary": True}
    return ctx.table("mailboxes").insert(box)


def _store(ctx: ToolContext, kind: str, to: str, subject: str, body: str, extra: Row) -> None:
    box = _mailbox_row(ctx)
    message_id = ctx.new_id("messages")
    thread: Row = {"thread_id": message_id}
    answered = ctx.table("messages").get(extra.get("reply_to_message_id") or "")
    if answered is not None and answered["mailbox"] == box["address"]:  # a reply draft joins its thread
        thread = {"thread_id": answered["thread_id"], "in_reply_to": answered["internet_message_id"]}
    ctx.table("messages").insert(
        {
            "id": message_id,
            **thread,
            "mailbox": box["address"],
            "from_address": box["address"],
            "from_name": box["name"],
            "to": _addresses(to),
            "subject": subject,
            "body": body,
            "label_ids": ["SENT" if kind == "sent" else "DRAFT"],
            "date": ctx.now_iso(),
            "custom_fields": {OUTBOX: kind, "to": to, **extra},
        }
    )


@tool(read_only=True, name="gmail_list_messages")
def list_messages(
    ctx: ToolContext,
    days_back: Annotated[int, Field(description="Only messages of the last this many days. Example: 7")] = 7,
    max_results: Annotated[int, Field(description="At most this many messages. Example: 20")] = 20,
) -> ClawJson:
    """List the inbox's messages of the last days_back days (sender, subject, date, read or not, labels), in
    inbox order; read one whole with gmail_get_message."""
    try:
        cutoff = ctx.now - timedelta(days=days_back)
    except OverflowError:
        raise crash() from None
    found = [message_view(r) for r in _inbox(ctx) if parse_time(r["date"]) >= cutoff]
    keys = ("message_id", "from", "subject", "date", "is_read", "labels")
    listed = [{k: m.get(k) for k in keys} for m in found][:max_results]
    return ClawJson.of({"messages": listed, "total": len(listed)})


@tool(read_only=True, name="gmail_get_message")
def get_message(
    ctx: ToolContext,
    message_id: Annotated[str, Field(description="The message's id, from gmail_list_messages. Example: 'msg_001'")],
) -> ClawJson:
    """Read one message of the inbox whole: sender, recipient, subject, body, date, labels, read or not."""
    row = ctx.table("messages").get(message_id)
    if row is None or OUTBOX in row["custom_fields"]:
        return ClawJson.of({"error": f"Message {message_id} not found"})
    return ClawJson.of(message_view(row))


@tool(name="gmail_send_message")
def send_message(
    ctx: ToolContext,
    to: Annotated[str, Field(description="The recipient's address. Example: 'boss@company.com'")],
    subject: Annotated[str, Field(description="Example: 'Re: Q1 report'")],
    body: Annotated[str, Field(description="The message text.")],
) -> ClawJson:
    """Send an email now. It cannot be taken back: to prepare a reply for the user to review, save a draft."""
    sent = {"to": to, "subject": subject, "body": body, "timestamp": iso_now(ctx.now)}
    _store(ctx, "sent", to, subject, body, {"timestamp": sent["timestamp"]})
    return ClawJson.of({"status": "sent", "message": sent})


@tool(name="gmail_save_draft")
def save_draft(
    ctx: ToolContext,
    to: Annotated[str, Field(description="The recipient's address. Example: 'boss@company.com'")],
    subject: Annotated[str, Field(description="Example: 'Re: Q1 report'")],
    body: Annotated[str, Field(description="The message text.")],
    reply_to_message_id: Annotated[
        str | None, Field(description="The message this answers, if any. Example: 'msg_001'")
    ] = None,
) -> ClawJson:
    """Save an email as a draft, not sent, for the user to review and send."""
    draft = {
        "to": to,
        "subject": subject,
        "body": body,
        "reply_to_message_id": reply_to_message_id,
        "timestamp": iso_now(ctx.now),
    }
    extra: Row = {"reply_to_message_id": reply_to_message_id, "timestamp": draft["timestamp"]}
    _store(ctx, "draft", to, subject, body, extra)
    return ClawJson.of({"status": "draft_saved", "draft": draft})


TOOLS = (list_messages, get_message, send_message, save_draft)


def audit_data(tables: Mapping[str, list[dict[str, Any]]], audit: list[AuditRow]) -> dict[str, Any]:
    """The mock's ``/audit``: its call log, the messages sent and the drafts saved."""
    return {
        "calls": calls(audit, ENDPOINTS, TOOLS),
        "sent_messages": [r["message"] for r in results(audit, "gmail_send_message") if "message" in r],
        "drafts": [r["draft"] for r in results(audit, "gmail_save_draft") if "draft" in r],
    }


SERVICE = ClawService("gmail", "email", TOOLS, seed, audit_data, clock, moves=("date",))
