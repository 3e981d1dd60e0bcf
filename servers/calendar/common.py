"""Helpers every calendar tool shares: the acting member, people and calendars by reference, access to events,
time windows, and the views tools return."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Annotated, Any, TypeVar

from pydantic import Field

from coworkenv.servers.calendar import recurrence
from coworkenv.servers.calendar.models import EventView, Occurrence
from coworkenv.servers.kit import NotFound, ServiceError, ToolContext, domain_of, format_time, parse_time
from coworkenv.servers.kit.sqlfunctions import field_holds

Row = dict[str, Any]
T = TypeVar("T")

EventId = Annotated[str, Field(description="The event's id, from list_events or search_events. Example: 'evt_standup'")]
CalendarRef = Annotated[
    str,
    Field(
        min_length=1,
        description="'primary' (your own calendar), a calendar id from list_calendars, or a member's email for "
        "their main calendar. Example: 'primary'",
    ),
]
MAX_WINDOW_DAYS = 366


def acting_user(ctx: ToolContext) -> Row:
    """The member a call acts as: the workspace's primary user, the person the agent works for. (Only the Python
    API may run a call as another member, through ``ToolContext.member``; no tool argument can.)"""
    if ctx.member is None:
        rows = ctx.table("users").select("is_primary = 1", limit=1)
        if not rows:
            raise ServiceError("This workspace has no primary user, so no one to act as.", _members(ctx))
        return rows[0]
    return user_by_ref(ctx, ctx.member, "member")


def user_by_ref(ctx: ToolContext, ref: str, argument: str) -> Row:
    """A member by user id or email (any case)."""
    users = ctx.table("users")
    key = ref.strip()
    row = users.get(key) or next(iter(users.select("email = ?", [key.lower()], limit=1)), None)
    if row is None:
        raise ServiceError(f"{argument}: {ref[:200]!r} is not a member of this workspace.", _members(ctx))
    return row


def _members(ctx: ToolContext) -> str:
    emails = ", ".join(r["email"] for r in ctx.table("users").select(order_by="email"))
    return f"Members are: {emails or '(none)'}. Use list_users to look people up."


def company_domains(ctx: ToolContext) -> set[str]:
    return {domain_of(r["email"]) for r in ctx.table("users").select()}


def person(ctx: ToolContext, ref: str, argument: str) -> tuple[str, Row | None]:
    """An attendee: (email, member row) for a member named by id or email, (email, None) for an outside
    address. An unknown address at the company's own domain is an error (most likely a typo)."""
    key = ref.strip()
    if "@" not in key:
        member = user_by_ref(ctx, key, argument)
        return member["email"], member
    email = key.lower()
    row: Row | None = next(iter(ctx.table("users").select("email = ?", [email], limit=1)), None)
    if row is None and domain_of(email) in company_domains(ctx):
        raise ServiceError(f"{argument}: {ref[:200]!r} is not a member of this workspace.", _members(ctx))
    if row is None and (" " in email or "." not in domain_of(email)):
        raise ServiceError(f"{argument}: {ref[:200]!r} is not an email address.", "Write it like 'jamie@example.com'.")
    return email, row


# ---------------------------------------------------------------------------------------------- calendars
def calendar_role(cal: Row, email: str) -> str | None:
    if cal["owner"] == email:
        return "owner"
    roles = [s["role"] for s in cal["shares"] if s["email"] == email]
    return "writer" if "writer" in roles else ("reader" if roles else None)


def calendar(ctx: ToolContext, ref: str, user: Row) -> Row:
    """A calendar by 'primary', id, or a member's email (their primary calendar)."""
    key = ref.strip()
    cals = ctx.table("calendars")
    if key.lower() == "primary" or "@" in key:
        owner = user["email"] if key.lower() == "primary" else key.lower()
        row = next(iter(cals.select("owner = ? AND is_primary = 1", [owner], limit=1)), None)
        if row is None:
            raise ServiceError(f"{owner} has no primary calendar here.", "Use list_calendars to see calendar ids.")
        return row
    row = cals.get(key)
    if row is None:
        raise NotFound("calendar", ref, "Use list_calendars to see the calendars you can open.")
    return row


def readable_calendar(ctx: ToolContext, ref: str, user: Row) -> tuple[Row, str]:
    cal = calendar(ctx, ref, user)
    role = calendar_role(cal, user["email"])
    if role is None:
        raise ServiceError(
            f"{cal['summary']!r} ({cal['id']}) is not shared with you, so you can see only its free/busy times.",
            "Use query_free_busy with the owner's email, or ask the owner to share the calendar.",
        )
    return cal, role


def events_on(ctx: ToolContext, cal: Row) -> list[Row]:
    """The events a calendar shows: those stored on it and, on a primary calendar, the invitations of its owner."""
    if not cal["is_primary"]:
        return ctx.table("events").select("calendar_id = ?", [cal["id"]], order_by="start, id")
    invited, params = field_holds("events.attendees", "email", cal["owner"])
    return ctx.table("events").select(f"(calendar_id = ? OR {invited})", [cal["id"], *params], "start, id")


def live_events(
    ctx: ToolContext, time_min: datetime, time_max: datetime, where: str = "", params: Sequence[Any] = ()
) -> list[Row]:
    """The events not cancelled that may have an occurrence in [time_min, time_max) (and match ``where``), by
    start: those starting before the window ends and, unless they recur, ending after it starts. A superset,
    read by text comparison of the stored canonical times (the bounds widened to whole seconds), so that the
    rows outside the window are not decoded; callers keep computing occurrences exactly."""
    clauses, values = ["status != 'cancelled'"], list(params)
    if where:
        clauses.append(f"({where})")
    try:
        low, high = format_time(time_min), format_time(time_max + timedelta(seconds=1))
    except (OverflowError, ValueError):
        low = high = ""
    if _SORTABLE.fullmatch(low) and _SORTABLE.fullmatch(high):  # four-digit years: text order is time order
        clauses.append('start < ? AND (recurrence IS NOT NULL OR "end" > ?)')
        values += [high, low]
    return ctx.table("events").select(" AND ".join(clauses), values, "start, id")


_SORTABLE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def may_see(ctx: ToolContext, event: Row, email: str) -> bool:
    if event["organizer"] == email or any(a["email"] == email for a in event["attendees"]):
        return True
    cal = ctx.table("calendars").get(event["calendar_id"])
    return cal is not None and calendar_role(cal, email) is not None


def may_change(ctx: ToolContext, event: Row, email: str) -> bool:
    if event["organizer"] == email:
        return True
    cal = ctx.table("calendars").get(event["calendar_id"])
    return cal is not None and calendar_role(cal, email) in ("owner", "writer")


def visible_event(ctx: ToolContext, event_id: str, user: Row) -> Row:
    event = ctx.table("events").get(event_id)
    if event is None or not may_see(ctx, event, user["email"]):
        raise NotFound("event", event_id, "Use list_events or search_events to find an event you can see.")
    return event


def response_of(event: Row, email: str) -> str | None:
    answer = next((a["response_status"] for a in event["attendees"] if a["email"] == email), None)
    return "accepted" if answer is None and event["organizer"] == email else answer


def view(ctx: ToolContext, event: Row, user: Row) -> EventView:
    nxt = [] if event["status"] == "cancelled" else recurrence.upcoming(event, ctx.now)
    return EventView.model_validate(
        {**event, "your_response": response_of(event, user["email"]), "next_occurrences": [format_time(t) for t in nxt]}
    )


def occurrence(event: Row, start: datetime, end: datetime, email: str) -> Occurrence:
    keys = ("summary", "location", "room_id", "organizer", "attendees", "status", "transparency")
    return Occurrence(
        event_id=event["id"],
        start=format_time(start),
        end=format_time(end),
        is_recurring=event["recurrence"] is not None,
        your_response=response_of(event, email),  # type: ignore[arg-type]
        **{k: event[k] for k in keys},
    )


# ---------------------------------------------------------------------------------------------- time
def window(
    ctx: ToolContext, time_min: str | None, time_max: str | None, default_days: int
) -> tuple[datetime, datetime]:
    """A time range [time_min, time_max): from now and ``default_days`` long where not given, at most a year."""
    try:
        start = parse_time(time_min) if time_min else ctx.now
        end = parse_time(time_max) if time_max else start + timedelta(days=default_days)
    except OverflowError:
        raise ServiceError("The time range runs past the year 9999.", "Give a range within the calendar.") from None
    if end <= start:
        raise ServiceError(
            f"time_max ({format_time(end)}) must be after time_min ({format_time(start)}).", "Swap or widen the range."
        )
    if end - start > timedelta(days=MAX_WINDOW_DAYS):
        raise ServiceError(
            f"The range is longer than {MAX_WINDOW_DAYS} days.", "Ask for a shorter range, a few months at a time."
        )
    return start, end


def page_of(items: list[T], page_size: int, page_token: str | None) -> tuple[list[T], int, str | None]:
    """One page of a list built in Python, with the same tokens as ToolContext.paginate."""
    if page_token and not page_token.isdigit():
        raise ServiceError(f"page_token {page_token!r} is not valid.", "Pass the next_page_token of the previous page.")
    offset = int(page_token) if page_token else 0
    chunk = items[offset : offset + page_size]
    end = offset + len(chunk)
    return chunk, len(items), (str(end) if end < len(items) else None)
