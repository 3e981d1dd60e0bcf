"""Reading tools of the calendar service: people, calendars, rooms, events and free/busy times."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coworkenv.servers.calendar import recurrence
from coworkenv.servers.calendar.common import (
    CalendarRef,
    EventId,
    acting_user,
    calendar_role,
    events_on,
    live_events,
    may_see,
    occurrence,
    page_of,
    person,
    readable_calendar,
    view,
    visible_event,
    window,
)
from coworkenv.servers.calendar.models import (
    CalendarPage,
    CalendarView,
    EventPage,
    EventView,
    FreeBusy,
    FreeBusyAnswer,
    Interval,
    OccurrencePage,
    Room,
    RoomPage,
    User,
    UserPage,
)
from coworkenv.servers.kit import PageSize, PageToken, ServiceError, Timestamp, ToolContext, Where, format_time, tool
from coworkenv.servers.kit.sqlfunctions import field_holds

TimeMin = Annotated[
    Timestamp | None, Field(description="Start of the range (default: now). Example: '2026-03-02T00:00:00Z'")
]
TimeMax = Annotated[
    Timestamp | None,
    Field(description="End of the range, excluded (default: 7 days after the start). Example: '2026-03-09T00:00:00Z'"),
]


@tool(read_only=True)
def list_users(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the name, email or title. Example: 'finance'")] = None,
    page_size: PageSize = 50,
    page_token: PageToken = None,
) -> UserPage:
    """List the members of the workspace by name, with their email, job title, time zone and working hours.
    Use their emails as attendees and in query_free_busy."""
    where = Where().text(["name", "email", "title"], query)
    rows, total, nxt = ctx.paginate("users", where.sql, where.params, "name, id", page_size, page_token)
    return UserPage(items=[User.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def list_calendars(ctx: ToolContext, page_size: PageSize = 50, page_token: PageToken = None) -> CalendarPage:
    """List the calendars you can open: your own and those shared with you, with your role on each (owner,
    writer or reader). Other members' calendars show only free/busy times: use query_free_busy for those."""
    user = acting_user(ctx)
    shared, params = field_holds("calendars.shares", "email", user["email"])
    rows, total, nxt = ctx.paginate(
        "calendars",
        f"(owner = ? OR {shared})",
        [user["email"], *params],
        "is_primary DESC, summary, id",
        page_size,
        page_token,
    )
    items = [CalendarView.model_validate({**r, "your_role": calendar_role(r, user["email"])}) for r in rows]
    return CalendarPage(items=items, total=total, next_page_token=nxt)


@tool(read_only=True)
def list_rooms(
    ctx: ToolContext,
    min_capacity: Annotated[
        int | None, Field(ge=1, le=10_000, description="Only rooms seating at least this many. Example: 6")
    ] = None,
    query: Annotated[
        str | None, Field(description="Text in the name, building, floor or features. Example: 'video'")
    ] = None,
    page_size: PageSize = 50,
    page_token: PageToken = None,
) -> RoomPage:
    """List the meeting rooms, smallest first, with capacity, building, floor and features. Book one by passing
    its id as room_id to create_event; find_free_slot can pick a free one for you."""
    where = Where().gte("capacity", min_capacity).text(["name", "building", "floor"], query, lists=["rooms.features"])
    rows, total, nxt = ctx.paginate("rooms", where.sql, where.params, "capacity, name, id", page_size, page_token)
    return RoomPage(items=[Room.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def list_events(
    ctx: ToolContext,
    calendar_id: CalendarRef = "primary",
    time_min: TimeMin = None,
    time_max: TimeMax = None,
    include_cancelled: Annotated[bool, Field(description="Also list cancelled events. Example: false")] = False,
    page_size: PageSize = 50,
    page_token: PageToken = None,
) -> OccurrencePage:
    """List what is on a calendar in a time range, earliest first, one entry per occurrence: a weekly meeting
    appears once for each week in the range. Your own calendar also shows the events you are invited to.
    Read an event's full details with get_event."""
    user = acting_user(ctx)
    cal, _ = readable_calendar(ctx, calendar_id, user)
    start, end = window(ctx, time_min, time_max, 7)
    items = []
    for event in events_on(ctx, cal):
        if event["status"] == "cancelled" and not include_cancelled:
            continue
        for s, e in recurrence.occurrences(event, start, end):
            items.append(occurrence(event, s, e, user["email"]))
    items.sort(key=lambda o: (o.start, o.event_id))
    chunk, total, nxt = page_of(items, page_size, page_token)
    return OccurrencePage(
        items=chunk,
        total=total,
        next_page_token=nxt,
        calendar_id=cal["id"],
        time_min=format_time(start),
        time_max=format_time(end),
    )


@tool(read_only=True)
def search_events(
    ctx: ToolContext,
    query: Annotated[
        str | None, Field(description="Text in the title, description or location. Example: 'quarterly review'")
    ] = None,
    attendee: Annotated[
        str | None,
        Field(description="Only events this person is invited to or organizes. Example: 'priya.shah@brightwave.io'"),
    ] = None,
    time_min: Annotated[
        Timestamp | None,
        Field(description="Only events with an occurrence ending after this time. Example: '2026-03-01T00:00:00Z'"),
    ] = None,
    time_max: Annotated[
        Timestamp | None,
        Field(description="Only events with an occurrence starting before this time. Example: '2026-04-01T00:00:00Z'"),
    ] = None,
    include_cancelled: Annotated[bool, Field(description="Also find cancelled events. Example: false")] = False,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> EventPage:
    """Find events you can see (yours, your invitations, calendars shared with you) by text, attendee or time,
    earliest first. A recurring event is found once, with its next occurrences."""
    user = acting_user(ctx)
    where = Where().text(["summary", "description", "location"], query)
    if not include_cancelled:
        where.raw("status != 'cancelled'")
    rows = [
        r for r in ctx.table("events").select(where.sql, where.params, "start, id") if may_see(ctx, r, user["email"])
    ]
    if attendee:
        email, _ = person(ctx, attendee, "attendee")
        rows = [r for r in rows if r["organizer"] == email or any(a["email"] == email for a in r["attendees"])]
    if time_min or time_max:
        start, end = window(ctx, time_min, time_max, 366)
        rows = [r for r in rows if recurrence.occurrences(r, start, end)]
    chunk, total, nxt = page_of(rows, page_size, page_token)
    return EventPage(items=[view(ctx, r, user) for r in chunk], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_event(ctx: ToolContext, event_id: EventId) -> EventView:
    """Read one event: title, description, time, time zone, recurrence, organizer, attendees with their
    responses, room, status, your own response, and the start times of its next occurrences."""
    user = acting_user(ctx)
    return view(ctx, visible_event(ctx, event_id, user), user)


@tool(read_only=True)
def query_free_busy(
    ctx: ToolContext,
    people: Annotated[
        list[str],
        Field(
            min_length=1,
            max_length=50,
            description="Members' emails (or user ids) and room ids. Example: ['priya.shah@brightwave.io', 'room_atlas']",
        ),
    ],
    time_min: TimeMin = None,
    time_max: TimeMax = None,
) -> FreeBusyAnswer:
    """When people and rooms are busy in a time range: merged busy periods only, no event details. Every
    occurrence of a recurring event counts. Outside addresses come back with an error: their calendars are
    not here. To get a time that suits everyone, use find_free_slot."""
    acting_user(ctx)
    start, end = window(ctx, time_min, time_max, 7)
    events = live_events(ctx, start, end)
    answers = []
    for ref in people:
        room = ctx.table("rooms").get(ref.strip())
        if room is not None:
            mine = [e for e in events if e["room_id"] == room["id"]]
            answers.append(FreeBusy(id=room["id"], busy=_intervals(recurrence.busy(mine, start, end))))
            continue
        if not ref.strip():
            raise ServiceError("people holds an empty entry.", "Give members' emails or room ids.")
        email, member = person(ctx, ref, "people")
        if member is None:
            answers.append(FreeBusy(id=email, busy=[], error="not in this workspace: availability unknown"))
            continue
        mine = [e for e in events if recurrence.blocks(e, email)]
        answers.append(FreeBusy(id=email, busy=_intervals(recurrence.busy(mine, start, end))))
    return FreeBusyAnswer(time_min=format_time(start), time_max=format_time(end), calendars=answers)


def _intervals(spans: list[recurrence.Span]) -> list[Interval]:
    return [Interval(start=format_time(s), end=format_time(e)) for s, e in spans]
