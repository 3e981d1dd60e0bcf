"""Claw-Eval's notes (``mock_services/notes``: meeting notes) on our docs service.

Each note is a document of our docs workspace in a folder of its own, keeping its id (``NOTE-001``): its title,
content and creation time are the document's; participants, duration, tags and the rest stay in
``custom_fields``. Sharing a note with people whose addresses are emails shares our document with them as
viewers; the share itself (names included) is the call's audit row, from which ``/audit``'s ``shared`` list is
rebuilt. Its dates are not shifted: no clock of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from coworkenv.servers.claw_eval import ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._fieldmap import (
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
from coworkenv.servers.claw_eval._notes_kb_docs import document, documents, folder_id, home, owner_email, title_of
from coworkenv.servers.claw_eval.common import ClawJson
from coworkenv.servers.docs.models import Document, Email
from coworkenv.servers.kit import ToolContext, tool

KIND = "notes"
FIELDS = FieldMap(
    mapped=(
        Mapped("note_id", "id"),
        Mapped("title", "title", title_of),
        Mapped("content", "content", text_or_empty, text_or_missing),
        Mapped("created_at", "created_at", to_time),
    ),
    order=("note_id", "title", "type", "attendees", "content", "participants", "tags", "created_at"),
)
"""A Claw-Eval note on our Document."""

FIXTURE = "meetings.json"
REQUIRED = ("title", "created_at", "participants", "duration_minutes")
"""What the mock's note list reads of every note."""
LISTED = ("note_id", "title", "created_at", "participants", "duration_minutes")
ENDPOINTS = {"notes_list": "/notes/list", "notes_get": "/notes/get", "notes_share": "/notes/share"}
NoteId = Annotated[str, Field(description="The note's id. Example: 'NOTE-001'")]
_EMAIL: TypeAdapter[str] = TypeAdapter(Email)


@tool(read_only=True)
def notes_list(
    ctx: ToolContext,
    max_results: Annotated[
        int, Field(ge=-10_000, le=10_000, description="How many notes to list, from the first. Example: 10")
    ] = 10,
) -> ClawJson:
    """List the meeting notes, oldest id first: each one's id, title, time, participants and duration."""
    found = [FIELDS.view(row) for row in documents(ctx, KIND)][:max_results]
    listed = [{k: note.get(k) for k in LISTED} for note in found]
    return ClawJson.of({"notes": listed, "total": len(listed)})


@tool(read_only=True)
def notes_get(ctx: ToolContext, note_id: NoteId) -> ClawJson:
    """Read one meeting note in full: title, participants, content (decisions, action items) and the rest."""
    row = document(ctx, KIND, note_id)
    return ClawJson.of({"error": f"Note {note_id} not found"} if row is None else FIELDS.view(row))


def _email(text: str) -> str | None:
    try:
        return _EMAIL.validate_python(text.strip())
    except ValidationError:
        return None


@tool()
def notes_share(
    ctx: ToolContext,
    note_id: NoteId,
    recipients: Annotated[list[str], Field(description="Who to share it with. Example: ['Li Ming', 'wang@x.com']")],
) -> ClawJson:
    """Share a meeting note with people; returns the share as recorded."""
    row = document(ctx, KIND, note_id)
    if row is not None:
        shares = list(row["shares"])
        known = {s["email"] for s in shares} | {row["owner"]}
        for email in filter(None, map(_email, recipients)):
            if email not in known:
                shares.append({"email": email, "role": "viewer"})
                known.add(email)
        if len(shares) != len(row["shares"]):
            ctx.table("documents").update(note_id, {"shares": shares})
    record = {"note_id": note_id, "recipients": recipients, "timestamp": claw_now(ctx)}
    return ClawJson.of({"status": "shared", "record": record})


TOOLS = (notes_list, notes_get, notes_share)


def seed(fixtures: Fixtures) -> SeedTables:
    """The notes of the fixture file (``meetings.json``, or the one file given) as documents of our docs service
    (ids kept), in a folder of their own."""
    name, records = fixture_records(fixtures, "notes", FIXTURE)
    tables = home(KIND, "Meeting notes")
    docs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        rid = check_keys(name, index, record, "note_id", REQUIRED)
        where = f"{name} record {rid}"
        if rid in seen:
            raise ValueError(f"{where}: the note_id is given twice")
        seen.add(rid)
        try:
            ours = FIELDS.ours(record)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        docs.append(checked(Document, {**ours, "owner": owner_email(KIND), "folder_id": folder_id(KIND)}, where))
    return {**tables, "documents": docs}


def audit_data(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The mock's ``/notes/audit``: its calls and the shares."""
    return {"calls": audit_calls(rows, ENDPOINTS, TOOLS), "shared": results(rows, ["notes_share"], "record")}


SERVICE = ClawService(name="notes", serves_on="docs", tools=TOOLS, seed=seed, audit_data=audit_data)
