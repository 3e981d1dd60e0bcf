"""Checks shared by the tools that book time: attendee lists, times in the future, the room free and big enough,
and who is already busy (pure helpers over the tool context)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from coworkenv.servers.calendar import recurrence
from coworkenv.servers.calendar.common import live_events, person
from coworkenv.servers.kit import ServiceError, ToolContext, format_time, parse_time

Row = dict[str, Any]
ROOM_HORIZON = timedelta(days=366)
CONFLICT_HORIZON = timedelta(days=56)


def attendee_list(ctx: ToolContext, organizer: str, required: list[str], optional: list[str]) -> list[Row]:
    """Attendee entries (needsAction) for the people named, each once, the organizer left out (they attend
    implicitly)."""
    out: dict[str, Row] = {}
    for refs, is_optional in ((required, False), (optional, True)):
        for ref in refs:
            email, _ = person(ctx, ref, "optional_attendees" if is_optional else "attendees")
            if email != organizer and email not in out:
                out[email] = {"email": email, "response_status": "needsAction", "optional": is_optional}
    return list(out.values())


def check_times(ctx: ToolContext, start: str, end: str) -> None:
    if end <= start:
        raise ServiceError(f"end ({end}) must be after start ({start}).", "Give an end later than the start.")
    if start < ctx.now_iso():
        raise ServiceError(
            f"start ({start}) is in the past (now is {ctx.now_iso()}).",
            "Pick a future time; find_free_slot suggests some.",
        )


def check_room(ctx: ToolContext, event: Row) -> None:
    """The event's room exists, seats everyone, and is free at every occurrence in the coming year."""
    if event.get("room_id") is None:
        return
    room = ctx.fetch("rooms", event["room_id"], "room", "Use list_rooms to see the rooms and their ids.")
    seats = 1 + len(event["attendees"])
    if room["capacity"] < seats:
        raise ServiceError(
            f"{room['name']} seats {room['capacity']}, fewer than the {seats} people invited.",
            f"Pick a bigger room (list_rooms with min_capacity={seats}).",
        )
    start = parse_time(event["start"])
    try:
        horizon = start + ROOM_HORIZON
    except OverflowError:
        horizon = datetime.max.replace(tzinfo=start.tzinfo)
    others = ctx.table("events").select(
        "room_id = ? AND status != 'cancelled' AND id != ?", [room["id"], event.get("id", "")], "start, id"
    )
    for other in others:
        taken = recurrence.busy([other], start, horizon)
        clash = next(
            (s for s, e in recurrence.occurrences(event, start, horizon) if recurrence.overlaps(taken, s, e)), None
        )
        if clash is not None:
            raise ServiceError(
                f"{room['name']} is booked at {format_time(clash)} by {other['summary']!r} ({other['id']}).",
                "Pick another time or room: find_free_slot with room_id or need_room finds one that is free.",
            )


def conflicts(ctx: ToolContext, event: Row) -> list[str]:
    """The members invited (the organizer included) already busy at one of the event's occurrences in the next
    eight weeks, by email."""
    start = parse_time(event["start"])
    try:
        horizon = start + CONFLICT_HORIZON
    except OverflowError:
        return []
    spans = recurrence.occurrences(event, start, horizon)
    others = live_events(ctx, start, horizon, "id != ?", [event.get("id", "")])
    busy: list[str] = []
    for email in [event["organizer"], *(a["email"] for a in event["attendees"])]:
        if not ctx.table("users").count("email = ?", [email]):
            continue
        taken = recurrence.busy([o for o in others if recurrence.blocks(o, email)], start, horizon)
        if any(recurrence.overlaps(taken, s, e) for s, e in spans):
            busy.append(email)
    return busy
