"""Claw-Eval's calendar, served by our calendar service.

Its mock (``mock_services/calendar/server.py``) holds one list of events (``event_id``, ``title``, ``start_time``,
``end_time``, ``attendees``, ``location``; some fixtures add ``organizer``, ``status``, ``description``,
``recurring``): it lists a date range, one person's events of a day, reads, creates and deletes events. Here they
are events of the user's primary calendar in our calendar service (fixture ids kept); attendees and organizers our
fields cannot hold (names, not addresses) are kept as they were in ``custom_fields``, as is every field a fixture
gives beyond the six above.

Times: the mock moves every event so that the earliest starts about a day from now at its own time of day, and
writes each as its shifted local wall time with a ``Z`` (so an event at 09:00+08:00 is shown at 17:00Z). We store
the times it shows, whole days left out, and set the clock a day before the earliest event's time of day.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from coworkenv.servers.calendar.models import MAX_EVENT_DAYS, Email
from coworkenv.servers.claw_eval import AuditRow, ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._gmail_calendar_crm import (
    Row,
    calls,
    crash,
    fixture_file,
    fixture_time,
    kept,
    problem,
    required,
    results,
    stamp,
    unique_ids,
    view,
    wall,
)
from coworkenv.servers.claw_eval.common import ClawJson
from coworkenv.servers.kit import ToolContext, parse_time, tool

FILE = "events.json"
USER = "me@company.com"
"""The address of the user whose calendar the events are on (the mock knows no user)."""
CALENDAR = "cal_me"
ENDPOINTS = {
    "calendar_list_events": "/calendar/events",
    "calendar_get_event": "/calendar/events/get",
    "calendar_create_event": "/calendar/events/create",
    "calendar_get_user_events": "/calendar/user_events",
    "calendar_delete_event": "/calendar/events/delete",
}
FIELDS: dict[str, type] = {
    "event_id": str,
    "title": str,
    "start_time": str,
    "end_time": str,
    "attendees": list,
    "location": str,
}
STATUSES = ("confirmed", "tentative", "cancelled")
_EMAIL: TypeAdapter[str] = TypeAdapter(Email)


# ---------------------------------------------------------------------------------------------- records
def _email(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        return _EMAIL.validate_python(value)
    except ValidationError:
        return None


def _derived(row: Mapping[str, Any]) -> Row:
    """Claw-Eval's event as our record writes it (before ``custom_fields``)."""
    return {
        "event_id": row["id"],
        "title": row["summary"],
        "start_time": row["start"],
        "end_time": row["end"],
        "attendees": [a["email"] for a in row["attendees"]],
        "location": row["location"],
    }


def event_view(row: Mapping[str, Any]) -> Row:
    """An event as the mock holds it."""
    return view(_derived(row), row)


def _span(start: datetime, end: datetime | None) -> tuple[str, str]:
    """Our start and end: an end our events cannot have (none, not after the start, too long) is moved."""
    if end is None or end <= start:
        end = start + timedelta(minutes=1)
    end = min(end, start + timedelta(days=MAX_EVENT_DAYS))
    return stamp(start), stamp(end)


def _record(claw: Row, organizer: str, created_at: str, start: datetime, end: datetime | None) -> Row:
    """Our event for Claw-Eval's ``claw`` (already as the mock shows it)."""
    attendees = list(dict.fromkeys(e for e in map(_email, claw["attendees"]) if e))
    first, last = _span(start, end)
    status = claw.get("status")
    description = claw.get("description")
    row: Row = {
        "id": claw["event_id"],
        "calendar_id": CALENDAR,
        "summary": claw["title"][:300] if claw["title"].strip() else "(no title)",
        "description": description if isinstance(description, str) else "",
        "location": claw["location"] if isinstance(claw["location"], str) else "",
        "start": first,
        "end": last,
        "organizer": organizer,
        "attendees": [{"email": e} for e in attendees],
        "status": status if status in STATUSES else "confirmed",
        "created_at": created_at,
    }
    row["custom_fields"] = kept(claw, _derived(row))
    return row


def _earliest(name: str, records: list[Row]) -> datetime:
    """The wall time of the event that starts first (the one the mock moves to about a day from now)."""
    return wall(min(fixture_time(name, i, r, "event_id", "start_time") for i, r in enumerate(records)))


def _shift(name: str, records: list[Row]) -> timedelta:
    """What to add to an event's wall time to get the time the mock shows, whole days left out."""
    earliest = min(fixture_time(name, i, r, "event_id", "start_time") for i, r in enumerate(records))
    offset = earliest.utcoffset() or timedelta()
    return offset - timedelta(seconds=earliest.second, microseconds=earliest.microsecond)


def _end(name: str, index: int, record: Row) -> datetime:
    try:
        return datetime.fromisoformat(record["end_time"].replace("Z", "+00:00"))
    except ValueError:
        raise problem(
            name, index, record, "event_id", f"field 'end_time': not a time: {record['end_time']!r}"
        ) from None


def seed(fixtures: Fixtures) -> SeedTables:
    """The events fixture as the user's primary calendar in our calendar service, event ids kept."""
    name, records = fixture_file(fixtures, FILE)
    for index, record in enumerate(records):
        required(name, index, record, "event_id", FIELDS)
        fixture_time(name, index, record, "event_id", "start_time")
        _end(name, index, record)
    unique_ids(name, records, "event_id")
    members = {USER: {"id": "usr_me", "email": USER, "name": "Me", "is_primary": True}}
    events: list[Row] = []
    if records:
        shift = _shift(name, records)
        created_at = stamp(_earliest(name, records).replace(second=0, microsecond=0) - timedelta(days=1))  # the clock
        for index, record in enumerate(records):
            start = wall(fixture_time(name, index, record, "event_id", "start_time")) + shift
            end = wall(_end(name, index, record)) + shift
            shown = {**record, "start_time": stamp(start), "end_time": stamp(end)}
            organizer = _email(record.get("organizer")) or USER
            if organizer not in members:
                members[organizer] = {"id": f"usr_{len(members)}", "email": organizer, "name": organizer.split("@")[0]}
            events.append(_record(shown, organizer, created_at, start, end))
    calendar = {"id": CALENDAR, "owner": USER, "summary": "Me", "is_primary": True}
    return {"users": list(members.values()), "calendars": [calendar], "events": events}


def clock(fixtures: Fixtures) -> datetime | None:
    """A day before the earliest event's time of day (the mock puts it about a day from now); None without events."""
    name, records = fixture_file(fixtures, FILE)
    if not records:
        return None
    return _earliest(name, records).replace(second=0, microsecond=0) - timedelta(days=1)


# ---------------------------------------------------------------------------------------------- tools
def _events(ctx: ToolContext) -> list[Row]:
    """Every event, in the mock's order (the fixture's, then those created)."""
    return [event_view(r) for r in ctx.table("events").select(order_by="created_at, id")]


def _starts(event: Row) -> datetime:
    """The start as the mock compares it; a start it cannot compare crashes its route."""
    try:
        start = datetime.fromisoformat(str(event["start_time"]).replace("Z", "+00:00"))
    except ValueError:
        raise crash() from None
    if start.tzinfo is None:
        raise crash()
    return start


def _day_window(ctx: ToolContext, date: str, days: int) -> tuple[datetime, datetime] | None:
    try:
        first = datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None
    try:
        return first, first + timedelta(days=days)
    except OverflowError:
        raise crash() from None


Day = Annotated[str, Field(description="A day, YYYY-MM-DD. Example: '2026-03-04'")]


@tool(read_only=True, name="calendar_list_events")
def list_events(
    ctx: ToolContext,
    date: Day,
    days: Annotated[int, Field(description="How many days from that day. Example: 1")] = 1,
) -> ClawJson:
    """List the events starting on a day (or several days from it), earliest first."""
    window = _day_window(ctx, date, days)
    if window is None:
        return ClawJson.of({"error": f"Invalid date format: {date}"})
    found = [e for e in _events(ctx) if window[0] <= _starts(e) < window[1]]
    found.sort(key=lambda e: e["start_time"])
    return ClawJson.of({"events": found, "total": len(found)})


@tool(read_only=True, name="calendar_get_event")
def get_event(
    ctx: ToolContext,
    event_id: Annotated[str, Field(description="The event's id, from calendar_list_events. Example: 'evt_001'")],
) -> ClawJson:
    """Read one event whole."""
    row = ctx.table("events").get(event_id)
    return ClawJson.of(event_view(row) if row else {"error": f"Event {event_id} not found"})


def _user(ctx: ToolContext) -> str:
    rows = ctx.table("users").select("is_primary = 1", order_by="id", limit=1)
    if rows:
        return str(rows[0]["email"])
    ctx.table("users").insert({"id": "usr_me", "email": USER, "name": "Me", "is_primary": True})
    return USER


def _calendar(ctx: ToolContext, owner: str) -> str:
    if ctx.table("calendars").get(CALENDAR) is None:
        ctx.table("calendars").insert({"id": CALENDAR, "owner": owner, "summary": "Me", "is_primary": True})
    return CALENDAR


def _time(text: str) -> datetime | None:
    try:
        return parse_time(text)
    except ValueError:
        return None


@tool(name="calendar_create_event")
def create_event(
    ctx: ToolContext,
    title: Annotated[str, Field(description="Example: 'Project sync'")],
    start_time: Annotated[str, Field(description="ISO 8601 start. Example: '2026-03-04T15:00:00Z'")],
    end_time: Annotated[str, Field(description="ISO 8601 end. Example: '2026-03-04T16:00:00Z'")],
    attendees: Annotated[list[str], Field(description="Who is invited. Example: ['liming@company.com']")] = [],  # noqa: B006
    location: Annotated[str, Field(description="Example: 'Room A'")] = "",
) -> ClawJson:
    """Create an event on the calendar; returns it with its new event_id."""
    events = ctx.table("events")
    number = events.count() + 1
    while events.get(f"evt_{number:03d}") is not None:  # the mock would reuse an id here; ours must be unique
        number += 1
    claw: Row = {
        "event_id": f"evt_{number:03d}",
        "title": title,
        "start_time": start_time,
        "end_time": end_time,
        "attendees": attendees,
        "location": location,
        "recurring": False,
    }
    user = _user(ctx)
    _calendar(ctx, user)
    start = _time(start_time) or ctx.now
    events.insert(_record(claw, user, ctx.now_iso(), start, _time(end_time)))
    return ClawJson.of({"status": "created", "event": claw})


@tool(read_only=True, name="calendar_get_user_events")
def get_user_events(
    ctx: ToolContext,
    user: Annotated[str, Field(description="A person's name or address, as the attendee lists write it.")],
    date: Day,
) -> ClawJson:
    """List one person's events of a day (those listing them as an attendee), earliest first."""
    window = _day_window(ctx, date, 1)
    if window is None:
        return ClawJson.of({"error": f"Invalid date format: {date}"})
    found = []
    for event in _events(ctx):
        if window[0] <= _starts(event) < window[1]:
            names = event.get("attendees", [])
            if user in names or any(user in name for name in names):
                found.append(event)
    found.sort(key=lambda e: e["start_time"])
    return ClawJson.of({"events": found, "total": len(found), "user": user})


@tool(destructive=True, name="calendar_delete_event")
def delete_event(
    ctx: ToolContext,
    event_id: Annotated[str, Field(description="The event's id. Example: 'evt_001'")],
) -> ClawJson:
    """Delete an event from the calendar; returns the event as it was."""
    row = ctx.table("events").get(event_id)
    if row is None:
        return ClawJson.of({"error": f"Event {event_id} not found"})
    ctx.table("events").delete(event_id)
    return ClawJson.of({"status": "deleted", "event": event_view(row)})


TOOLS = (list_events, get_event, create_event, get_user_events, delete_event)


def audit_data(tables: Mapping[str, list[dict[str, Any]]], audit: list[AuditRow]) -> dict[str, Any]:
    """The mock's ``/audit``: its call log, the events deleted and the events created."""
    return {
        "calls": calls(audit, ENDPOINTS, TOOLS),
        "deleted": [r["event"] for r in results(audit, "calendar_delete_event") if "event" in r],
        "created_events": [r["event"] for r in results(audit, "calendar_create_event") if "event" in r],
    }


SERVICE = ClawService(
    "calendar", "calendar", TOOLS, seed, audit_data, clock, moves=("start_time", "end_time"), moves_whole_days=True
)
