"""Records of the calendar service (a Google-Calendar-like workspace: people, calendars, events, rooms).

An event lives on one calendar (usually its organizer's primary calendar) and lists its attendees, each with
a response (needsAction, accepted, declined, tentative). A recurring event is one record with a rule (daily or
weekly, an interval, week days, until or count) expanded into occurrences in the event's time zone, so a 09:30
stand-up stays at 09:30 local across a daylight-saving change; single occurrences can be cancelled. Rooms are
booked by naming them on an event. Members of the workspace see each other's free/busy times; an event's
details only where they are invited or the calendar is theirs or shared with them.
"""

from __future__ import annotations

import re
import zoneinfo
from datetime import UTC, timedelta, tzinfo
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from coworkenv.servers.kit import Page, Record, SeedError, Table, Timestamp, parse_time

Weekday = Literal["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
WEEKDAYS: tuple[str, ...] = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
Response = Literal["needsAction", "accepted", "declined", "tentative"]
Answer = Literal["accepted", "declined", "tentative"]
CalendarRole = Literal["reader", "writer"]
MAX_EVENT_DAYS = 14
_CLOCK = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


Email = Annotated[str, BeforeValidator(_lower), Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", max_length=254)]


def zone(name: str) -> tzinfo:
    """The time zone of an IANA name ('Europe/Berlin', 'UTC'); ValueError naming what to write otherwise."""
    if name.upper() in ("UTC", "Z", "ETC/UTC"):
        return UTC
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(
            f"unknown time zone {name[:60]!r}; use an IANA name like 'Europe/Berlin' or 'America/New_York' "
            "(install the tzdata package where the system has no zone database)"
        ) from None


def _check_zone(value: Any) -> Any:
    if isinstance(value, str):
        zone(value)
    return value


TimeZone = Annotated[str, BeforeValidator(_check_zone), Field(min_length=1, max_length=64)]


class WorkingHours(BaseModel):
    """When a person works, in their own time zone: free-slot search keeps meetings inside these hours."""

    model_config = ConfigDict(extra="forbid")

    start: str = Field(default="09:00", pattern=_CLOCK.pattern, description="Local start, HH:MM. Example: '09:00'")
    end: str = Field(default="17:00", pattern=_CLOCK.pattern, description="Local end, HH:MM. Example: '17:30'")
    days: list[Weekday] = Field(default=["MO", "TU", "WE", "TH", "FR"], max_length=7)

    @model_validator(mode="after")
    def _ordered(self) -> WorkingHours:
        if self.end <= self.start:
            raise ValueError(f"working hours end {self.end} must be after start {self.start}")
        return self


class User(Record):
    """A member of the workspace (someone of the company); ``is_primary`` is the person the agent works for."""

    email: Email
    name: str = Field(min_length=1)
    title: str = ""
    is_primary: bool = Field(default=False, description="The user the tools act as: the person the agent works for")
    timezone: TimeZone = Field(default="UTC", description="IANA time zone, e.g. 'Europe/Berlin'")
    working_hours: WorkingHours = Field(default_factory=WorkingHours)


class CalendarShare(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Email
    role: CalendarRole


class Calendar(Record):
    owner: Email
    summary: str = Field(min_length=1, max_length=200, description="The calendar's name, e.g. 'Dana Whitfield'")
    description: str = ""
    timezone: TimeZone = "UTC"
    is_primary: bool = Field(default=False, description="The owner's main calendar, where their invitations land")
    shares: list[CalendarShare] = Field(default=[], description="People who may read or write its events")


class Room(Record):
    name: str = Field(min_length=1, max_length=200)
    email: Email | None = Field(default=None, description="The room's resource address, for invitations")
    capacity: int = Field(ge=1, le=10_000)
    building: str = ""
    floor: str = ""
    features: list[str] = Field(default=[], description="e.g. ['video', 'whiteboard']")


class Attendee(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Email
    response_status: Response = "needsAction"
    optional: bool = False
    comment: str = Field(default="", max_length=2_000)


class Recurrence(BaseModel):
    """A repeat rule, read in the event's time zone: every ``interval`` days or weeks, on ``by_day`` week days
    (weekly; the start's week day if empty), ending at ``until`` or after ``count`` occurrences (or never)."""

    model_config = ConfigDict(extra="forbid")

    frequency: Literal["daily", "weekly"] = Field(default="weekly", description="Example: 'weekly'")
    interval: int = Field(default=1, ge=1, le=52, description="Every how many days or weeks. Example: 1")
    by_day: list[Weekday] = Field(
        default=[], max_length=7, description="Weekly only: the week days. Example: ['MO', 'WE']"
    )
    until: Annotated[Timestamp, Field(max_length=40)] | None = Field(
        default=None, description="No occurrence starts after this time. Example: '2026-06-30T23:59:59Z'"
    )
    count: int | None = Field(default=None, ge=1, le=1_000, description="Stop after this many occurrences. Example: 10")

    @model_validator(mode="after")
    def _one_end(self) -> Recurrence:
        if self.until is not None and self.count is not None:
            raise ValueError("give until or count, not both")
        if self.by_day and self.frequency != "weekly":
            raise ValueError("by_day is for weekly rules only")
        self.by_day = sorted(set(self.by_day), key=WEEKDAYS.index)
        return self


class Event(Record):
    calendar_id: str
    summary: str = Field(min_length=1, max_length=300)
    description: str = ""
    location: str = ""
    start: Timestamp
    end: Timestamp
    timezone: TimeZone = Field(default="UTC", description="The zone a recurrence keeps its local time in")
    organizer: Email
    attendees: list[Attendee] = Field(default=[], description="Invited people, one entry per email, with responses")
    room_id: str | None = None
    recurrence: Recurrence | None = None
    cancelled_occurrences: list[Timestamp] = Field(
        default=[], description="Start times of single occurrences of a recurring event that were cancelled"
    )
    status: Literal["confirmed", "tentative", "cancelled"] = "confirmed"
    transparency: Literal["opaque", "transparent"] = Field(
        default="opaque", description="opaque: the time shows as busy; transparent: it shows as free"
    )
    created_at: Timestamp
    updated_at: Timestamp | None = None
    sequence: int = Field(default=0, ge=0, description="Bumped each time the event is changed")
    custom_fields: dict[str, Any] = Field(
        default={}, description="Other attributes as the source system keeps them. Example: {'recurring': True}"
    )

    @model_validator(mode="after")
    def _check(self) -> Event:
        if self.end <= self.start:
            raise ValueError(f"the event ends ({self.end}) at or before it starts ({self.start})")
        if parse_time(self.end) - parse_time(self.start) > timedelta(days=MAX_EVENT_DAYS):
            raise ValueError(f"an event lasts at most {MAX_EVENT_DAYS} days")
        emails = [a.email for a in self.attendees]
        if len(set(emails)) != len(emails):
            raise ValueError("an attendee is listed twice; give each email once")
        if self.updated_at is None:
            self.updated_at = self.created_at
        return self


TABLES = (
    Table("users", User, "usr_", indexes=(("email",),)),
    Table("calendars", Calendar, "cal_", indexes=(("owner",),)),
    Table("rooms", Room, "room_"),
    Table(
        "events",
        Event,
        "evt_",
        indexes=(("calendar_id",), ("start",)),
        refs=(("calendar_id", "calendars"), ("room_id", "rooms")),
        volatile=("updated_at", "sequence"),
    ),
)


# ---------------------------------------------------------------------------------------------- views
class UserPage(Page[User]):
    pass


class CalendarView(Calendar):
    your_role: Literal["owner", "writer", "reader"]


class CalendarPage(Page[CalendarView]):
    pass


class RoomPage(Page[Room]):
    pass


class EventView(Event):
    your_response: Response | None = Field(description="Your answer to the invitation; null if you are not invited")
    next_occurrences: list[str] = Field(description="Start times of the next occurrences (up to 5) from now")


class ScheduledEvent(EventView):
    conflicts: list[str] = Field(
        description="Attendees (and the room) already busy at some of the first occurrences: check with them"
    )


class EventPage(Page[EventView]):
    pass


class Occurrence(BaseModel):
    """One occurrence of an event on a calendar: a single event, or one date of a recurring one."""

    event_id: str = Field(description="The event's id (the series' id for a recurring event)")
    summary: str
    start: str
    end: str
    location: str
    room_id: str | None
    organizer: str
    attendees: list[Attendee]
    status: str
    transparency: str
    is_recurring: bool
    your_response: Response | None


class OccurrencePage(Page[Occurrence]):
    calendar_id: str
    time_min: str
    time_max: str


class Interval(BaseModel):
    start: str
    end: str


class FreeBusy(BaseModel):
    id: str = Field(description="The person's email or the room's id, as asked")
    busy: list[Interval] = Field(description="Busy periods, merged and sorted; anything else in the range is free")
    error: str | None = Field(default=None, description="Why nothing is known for it (an outside address)")


class FreeBusyAnswer(BaseModel):
    time_min: str
    time_max: str
    calendars: list[FreeBusy]


class Slot(BaseModel):
    start: str
    end: str
    room_id: str | None = None
    room_name: str | None = None


class SlotAnswer(BaseModel):
    slots: list[Slot] = Field(description="Free slots, earliest first; empty when none fits")
    checked: list[str] = Field(description="Members whose calendars and working hours were checked")
    not_checked: list[str] = Field(description="Outside addresses: their availability is unknown here")
    note: str = Field(description="What was searched, and what to try when no slot fits")


# ---------------------------------------------------------------------------------------------- seed rules
def check_seed(seed: dict[str, list[dict[str, Any]]]) -> None:
    """Rules across records: unique member emails, at most one primary member and one primary calendar each;
    calendars owned by members; events organized by a member."""
    emails: set[str] = set()
    primary = 0
    for index, user in enumerate(seed.get("users", [])):
        if user["email"] in emails:
            raise SeedError(f"calendar.users[{index}] field 'email': {user['email']!r} is already a member")
        emails.add(user["email"])
        primary += bool(user["is_primary"])
        if primary > 1:
            raise SeedError(f"calendar.users[{index}] field 'is_primary': only one member can be the primary user")
    primaries: set[str] = set()
    for index, cal in enumerate(seed.get("calendars", [])):
        if cal["owner"] not in emails:
            raise SeedError(f"calendar.calendars[{index}] field 'owner': {cal['owner']!r} is not in calendar.users")
        if cal["is_primary"]:
            if cal["owner"] in primaries:
                raise SeedError(f"calendar.calendars[{index}] field 'is_primary': {cal['owner']} has one already")
            primaries.add(cal["owner"])
    for index, event in enumerate(seed.get("events", [])):
        if event["organizer"] not in emails:
            raise SeedError(
                f"calendar.events[{index}] field 'organizer': {event['organizer']!r} is not in calendar.users"
            )
