"""The scheduling tool of the calendar service: find a time that suits everyone, with a room if needed."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import Field

from coworkenv.servers.calendar import slots
from coworkenv.servers.calendar.common import acting_user, live_events, person, window
from coworkenv.servers.calendar.models import Slot, SlotAnswer
from coworkenv.servers.kit import ServiceError, Timestamp, ToolContext, format_time, tool

MAX_SEARCH_DAYS = 62
Row = dict[str, object]


@tool(read_only=True)
def find_free_slot(
    ctx: ToolContext,
    duration_minutes: Annotated[int, Field(ge=5, le=720, description="How long the meeting lasts. Example: 30")],
    attendees: Annotated[
        list[str] | None,
        Field(
            max_length=50,
            description="Who must attend besides you: members' emails or user ids; outside addresses are accepted "
            "but cannot be checked. Example: ['priya.shah@brightwave.io', 'usr_lena']",
        ),
    ] = None,
    time_min: Annotated[
        Timestamp | None,
        Field(description="Earliest start (default and minimum: now). Example: '2026-03-03T00:00:00Z'"),
    ] = None,
    time_max: Annotated[
        Timestamp | None,
        Field(
            description="Latest end (default: 7 days after the start; at most 62 days). Example: '2026-03-07T00:00:00Z'"
        ),
    ] = None,
    room_id: Annotated[str | None, Field(description="Only times this room is free too. Example: 'room_atlas'")] = None,
    need_room: Annotated[
        bool, Field(description="Also find a free room big enough for everyone. Example: true")
    ] = False,
    min_capacity: Annotated[
        int | None, Field(ge=1, le=10_000, description="With need_room: the room seats at least this many. Example: 8")
    ] = None,
    working_hours_only: Annotated[
        bool, Field(description="Keep inside every member's working hours, in their own time zone. Example: true")
    ] = True,
    granularity_minutes: Annotated[
        int, Field(ge=5, le=60, description="Start times fall on this grid: 5, 10, 15, 20, 30 or 60. Example: 15")
    ] = 15,
    max_results: Annotated[int, Field(ge=1, le=20, description="How many slots to return. Example: 5")] = 5,
) -> SlotAnswer:
    """Find the earliest times when you and the attendees are all free (every occurrence of recurring events
    counts; declined invitations and events shown as free do not), inside each member's working hours, and,
    if asked, with a free room that seats everyone. Nothing is booked: pass a slot to create_event."""
    user = acting_user(ctx)
    if 60 % granularity_minutes:
        raise ServiceError(
            f"granularity_minutes {granularity_minutes} does not divide an hour.", "Use 5, 10, 15, 20, 30 or 60."
        )
    start, end = window(ctx, time_min, time_max, 7)
    if end - start > timedelta(days=MAX_SEARCH_DAYS):
        raise ServiceError(f"The range is longer than {MAX_SEARCH_DAYS} days.", "Search a shorter range first.")
    start = max(start, ctx.now)
    if end <= start:
        raise ServiceError("The whole range is in the past.", f"Search from now ({ctx.now_iso()}) on.")
    members: dict[str, Row] = {user["email"]: user}
    outside: list[str] = []
    for ref in attendees or []:
        email, row = person(ctx, ref, "attendees")
        if row is None:
            if email not in outside:
                outside.append(email)
        else:
            members.setdefault(email, row)
    headcount = len(members) + len(outside)
    rooms = _rooms(ctx, room_id, need_room or min_capacity is not None, max(min_capacity or 0, headcount))
    length = timedelta(minutes=duration_minutes)
    search = slots.Search(start, end, length, timedelta(minutes=granularity_minutes), working_hours_only, max_results)
    events = live_events(ctx, search.start, search.end)
    found = slots.find(search, list(members.values()), events, rooms)
    items = [
        Slot(
            start=format_time(s), end=format_time(e), room_id=r["id"] if r else None, room_name=r["name"] if r else None
        )
        for s, e, r in found
    ]
    return SlotAnswer(slots=items, checked=sorted(members), not_checked=outside, note=_note(search, rooms, bool(items)))


def _rooms(ctx: ToolContext, room_id: str | None, need_room: bool, seats: int) -> list[Row]:
    if room_id is not None:
        room = ctx.fetch("rooms", room_id.strip(), "room", "Use list_rooms to see the rooms and their ids.")
        if room["capacity"] < seats:
            raise ServiceError(
                f"{room['name']} seats {room['capacity']}, fewer than the {seats} people of this meeting.",
                f"Pick a bigger room (list_rooms with min_capacity={seats}) or set need_room instead of room_id.",
            )
        return [room]
    if not need_room:
        return []
    rooms = ctx.table("rooms").select("capacity >= ?", [seats], order_by="capacity, name, id")
    if not rooms:
        raise ServiceError(f"No room seats {seats} people.", "Meet without a room (need_room false), or split up.")
    return rooms


def _note(search: slots.Search, rooms: list[Row], found: bool) -> str:
    hours = "inside everyone's working hours" if search.working_hours_only else "at any hour"
    room = f", with one of {len(rooms)} room(s) free" if rooms else ""
    what = (
        f"Searched {format_time(search.start)} to {format_time(search.end)} for {int(search.length.total_seconds() // 60)}"
        f" minutes {hours}{room}."
    )
    if found:
        return what + " Pass a slot's start and end to create_event to book it."
    return what + (
        " No slot fits: try a longer range, a shorter meeting, fewer attendees, another room"
        + (", or working_hours_only false." if search.working_hours_only else ".")
    )
