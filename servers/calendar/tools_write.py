"""Writing tools of the calendar service: create, update and cancel events, and answer invitations.

Changing an event's time asks every attendee again (their responses go back to needsAction), as calendars do.
A cancelled event is kept with status 'cancelled'; one occurrence of a recurring event is cancelled by its start.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.calendar import recurrence as repeat
from coworkenv.servers.calendar.booking import attendee_list, check_room, check_times, conflicts
from coworkenv.servers.calendar.common import (
    CalendarRef,
    EventId,
    acting_user,
    calendar,
    calendar_role,
    may_change,
    person,
    view,
    visible_event,
)
from coworkenv.servers.calendar.models import Answer, EventView, Recurrence, ScheduledEvent, TimeZone
from coworkenv.servers.kit import ServiceError, Timestamp, ToolContext, format_time, parse_time, tool

Row = dict[str, Any]
Summary = Annotated[str, Field(min_length=1, max_length=300, description="The title. Example: 'Q1 review with Acme'")]
People = Annotated[
    list[str] | None,
    Field(
        max_length=100,
        description="Members' emails or user ids, or outside email addresses. Example: ['priya.shah@brightwave.io']",
    ),
]
Repeat = Annotated[
    Recurrence | None,
    Field(
        description="Repeat rule, read in the event's time zone. Example: {'frequency': 'weekly', 'by_day': ['MO'], "
        "'count': 10}"
    ),
]
TimeZoneArg = Annotated[
    TimeZone | None,
    Field(
        description="IANA time zone a recurring event keeps its local time in (default: the calendar's). "
        "Example: 'Europe/Berlin'",
    ),
]


def _scheduled(ctx: ToolContext, row: Row, user: Row) -> ScheduledEvent:
    return ScheduledEvent.model_validate({**view(ctx, row, user).model_dump(), "conflicts": conflicts(ctx, row)})


@tool()
def create_event(
    ctx: ToolContext,
    summary: Summary,
    start: Annotated[Timestamp, Field(description="When it starts. Example: '2026-03-04T14:00:00Z'")],
    end: Annotated[Timestamp, Field(description="When it ends. Example: '2026-03-04T14:30:00Z'")],
    attendees: People = None,
    optional_attendees: People = None,
    description: Annotated[str, Field(description="Agenda or notes. Example: 'Review the Q1 numbers.'")] = "",
    location: Annotated[str, Field(description="Where, besides a room. Example: 'Zoom'")] = "",
    room_id: Annotated[str | None, Field(description="A room to book, from list_rooms. Example: 'room_atlas'")] = None,
    calendar_id: CalendarRef = "primary",
    recurrence: Repeat = None,
    timezone: TimeZoneArg = None,
) -> ScheduledEvent:
    """Create an event you organize and invite people (their responses start as needsAction). The room, if
    given, must be free and seat everyone; the answer lists invited members who are already busy then (check
    with find_free_slot first to avoid that). Start must be in the future."""
    user = acting_user(ctx)
    cal = calendar(ctx, calendar_id, user)
    if calendar_role(cal, user["email"]) not in ("owner", "writer"):
        raise ServiceError(
            f"You cannot add events to {cal['summary']!r} ({cal['id']}).", "Create it on your own calendar ('primary')."
        )
    check_times(ctx, start, end)
    now = ctx.now_iso()
    row: Row = {
        "id": ctx.new_id("events"),
        "calendar_id": cal["id"],
        "summary": summary,
        "description": description,
        "location": location,
        "start": start,
        "end": end,
        "timezone": timezone or cal["timezone"],
        "organizer": user["email"],
        "attendees": attendee_list(ctx, user["email"], attendees or [], optional_attendees or []),
        "room_id": room_id.strip() if room_id else None,
        "recurrence": recurrence.model_dump(mode="json") if recurrence else None,
        "created_at": now,
        "updated_at": now,
    }
    row = ctx.table("events").validate(row)
    check_room(ctx, row)
    ctx.table("events").insert(row)
    return _scheduled(ctx, row, user)


def _changeable(ctx: ToolContext, event_id: str, user: Row) -> Row:
    event = visible_event(ctx, event_id, user)
    if not may_change(ctx, event, user["email"]):
        raise ServiceError(
            f"Only the organizer ({event['organizer']}) or the calendar's writers can change event {event_id}.",
            "Answer the invitation with respond_to_event, or ask the organizer.",
        )
    if event["status"] == "cancelled":
        raise ServiceError(f"Event {event_id} is cancelled.", "Create a new event with create_event instead.")
    return event


@tool(destructive=True, idempotent=True)
def update_event(
    ctx: ToolContext,
    event_id: EventId,
    summary: Annotated[
        str | None, Field(min_length=1, max_length=300, description="A new title. Example: 'Q1 review'")
    ] = None,
    start: Annotated[Timestamp | None, Field(description="A new start. Example: '2026-03-05T15:00:00Z'")] = None,
    end: Annotated[Timestamp | None, Field(description="A new end. Example: '2026-03-05T15:30:00Z'")] = None,
    description: Annotated[str | None, Field(description="A new description. Example: 'Agenda: Q1.'")] = None,
    location: Annotated[str | None, Field(description="A new location. Example: 'Zoom'")] = None,
    room_id: Annotated[str | None, Field(description="Book this room instead. Example: 'room_harbor'")] = None,
    remove_room: Annotated[bool, Field(description="Give the room back. Example: false")] = False,
    add_attendees: People = None,
    remove_attendees: People = None,
    recurrence: Repeat = None,
) -> ScheduledEvent:
    """Change an event you organize (or on a calendar you can write): title, time, description, location, room,
    attendees or repeat rule; omitted fields stay. For a recurring event this changes the whole series. A new
    time asks every attendee again (responses back to needsAction)."""
    user = acting_user(ctx)
    event = _changeable(ctx, event_id, user)
    fields = {"summary": summary, "description": description, "location": location}
    changes: Row = {k: v for k, v in fields.items() if v is not None and v != event[k]}
    if start is not None or end is not None:
        new_start, new_end = start or event["start"], end or event["end"]
        check_times(ctx, new_start, new_end)
        if (new_start, new_end) != (event["start"], event["end"]):
            changes |= {"start": new_start, "end": new_end}
    attendees = _attendees(ctx, event, add_attendees or [], remove_attendees or [], reset="start" in changes)
    if attendees != event["attendees"]:
        changes["attendees"] = attendees
    if remove_room and room_id is not None:
        raise ServiceError("Give room_id or remove_room, not both.", "Use room_id alone to move to another room.")
    if remove_room and event["room_id"] is not None:
        changes["room_id"] = None
    elif room_id is not None and room_id.strip() != event["room_id"]:
        changes["room_id"] = room_id.strip()
    if recurrence is not None and recurrence.model_dump(mode="json") != event["recurrence"]:
        changes["recurrence"] = recurrence.model_dump(mode="json")
    if not changes:
        return _scheduled(ctx, event, user)
    merged = ctx.table("events").validate({**event, **changes})
    if {"start", "end", "room_id", "attendees", "recurrence"} & changes.keys():
        check_room(ctx, merged)
    row = ctx.table("events").update(
        event_id, {**changes, "updated_at": ctx.now_iso(), "sequence": event["sequence"] + 1}
    )
    return _scheduled(ctx, row, user)


def _attendees(ctx: ToolContext, event: Row, add: list[str], remove: list[str], reset: bool) -> list[Row]:
    current = [dict(a) for a in event["attendees"]]
    gone = set()
    for ref in remove:
        email, _ = person(ctx, ref, "remove_attendees")
        if not any(a["email"] == email for a in current):
            names = ", ".join(a["email"] for a in current) or "nobody"
            raise ServiceError(f"{email} is not invited to {event['id']}.", f"Its attendees are: {names}.")
        gone.add(email)
    kept = [a for a in current if a["email"] not in gone]
    if reset:
        kept = [{**a, "response_status": "needsAction", "comment": ""} for a in kept]
    known = {a["email"] for a in kept}
    return kept + [a for a in attendee_list(ctx, event["organizer"], add, []) if a["email"] not in known]


@tool(destructive=True, idempotent=True)
def cancel_event(
    ctx: ToolContext,
    event_id: EventId,
    occurrence_start: Annotated[
        Timestamp | None,
        Field(
            description="For a recurring event: cancel only the occurrence starting at this time (see get_event's "
            "next_occurrences); omit to cancel the event or the whole series. Example: '2026-03-09T09:30:00Z'"
        ),
    ] = None,
) -> EventView:
    """Cancel an event you organize (or on a calendar you can write), for every attendee; or one occurrence of
    a recurring event. The event is kept with status 'cancelled'. Cancelling a cancelled event changes nothing."""
    user = acting_user(ctx)
    event = visible_event(ctx, event_id, user)
    if event["status"] == "cancelled":
        return view(ctx, event, user)
    event = _changeable(ctx, event_id, user)
    stamp = {"updated_at": ctx.now_iso(), "sequence": event["sequence"] + 1}
    if occurrence_start is None:
        return view(ctx, ctx.table("events").update(event_id, {"status": "cancelled", **stamp}), user)
    if event["recurrence"] is None:
        raise ServiceError(f"Event {event_id} does not repeat.", "Omit occurrence_start to cancel it.")
    if occurrence_start in event["cancelled_occurrences"]:
        return view(ctx, event, user)
    if not repeat.is_occurrence(event, parse_time(occurrence_start)):
        nxt = ", ".join(format_time(t) for t in repeat.upcoming(event, ctx.now)) or "none"
        raise ServiceError(
            f"No occurrence of {event_id} starts at {occurrence_start}.", f"Its next occurrences start at: {nxt}."
        )
    cancelled = sorted([*event["cancelled_occurrences"], occurrence_start])
    return view(ctx, ctx.table("events").update(event_id, {"cancelled_occurrences": cancelled, **stamp}), user)


@tool(idempotent=True)
def respond_to_event(
    ctx: ToolContext,
    event_id: EventId,
    response: Annotated[Answer, Field(description="accepted, declined or tentative. Example: 'accepted'")],
    comment: Annotated[
        str | None, Field(max_length=2_000, description="A note to the organizer. Example: 'Running 5 min late'")
    ] = None,
) -> EventView:
    """Answer an invitation you received: accept, decline or say maybe. For a recurring event the answer covers
    the whole series. Only invited people can answer; the organizer attends their own event already."""
    user = acting_user(ctx)
    event = visible_event(ctx, event_id, user)
    email = user["email"]
    if event["status"] == "cancelled":
        raise ServiceError(f"Event {event_id} is cancelled; there is nothing to answer.", "Search for a newer event.")
    if not any(a["email"] == email for a in event["attendees"]):
        if event["organizer"] == email:
            raise ServiceError(
                f"You organize event {event_id}, so there is no invitation to answer.",
                "Change it with update_event or cancel it with cancel_event.",
            )
        raise ServiceError(
            f"You ({email}) are not invited to event {event_id}, so you cannot respond to it.",
            f"Only attendees can answer; ask the organizer ({event['organizer']}) to invite you.",
        )
    note = event_comment(event, email) if comment is None else comment
    attendees = [
        {**a, "response_status": response, "comment": note} if a["email"] == email else a for a in event["attendees"]
    ]
    if attendees == event["attendees"]:
        return view(ctx, event, user)
    return view(ctx, ctx.table("events").update(event_id, {"attendees": attendees, "updated_at": ctx.now_iso()}), user)


def event_comment(event: Row, email: str) -> str:
    return str(next((a.get("comment", "") for a in event["attendees"] if a["email"] == email), ""))
