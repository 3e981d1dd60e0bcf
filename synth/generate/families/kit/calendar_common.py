"""What the calendar families share: the people of a task as calendar members (each with a main calendar),
rooms, events and invitations, working days ahead of the task's clock, background events that never meet a
task's criteria, private meeting titles, and a regex for a clock time however written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from coworkenv.servers.kit import format_time
from coworkenv.synth.generate.families.kit.base import Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import ACCOUNT_MANAGERS, AGENTS, FINANCE, USER, Staff, slug

ROOM_NAMES = (
    "Atlas", "Harbor", "Juniper", "Lighthouse", "Meridian", "Nimbus", "Orchard", "Quarry", "Redwood", "Summit",
    "Tidewater", "Willow", "Cedar", "Beacon",
)  # fmt: skip
ROUTINE = (
    "Team standup", "1:1 with {who}", "Roadmap sync", "Customer onboarding call", "Hiring debrief", "Design review",
    "Quarterly planning", "Support rota handover", "Vendor check-in", "Budget review", "Incident retro",
    "Product demo prep", "Lunch and learn", "Release readiness", "Sales pipeline review", "Security training",
)  # fmt: skip
"""Titles of background events ('{who}' is another member's first name); each used at most once a task."""
AREAS = ("billing", "mobile", "search", "onboarding", "security", "data", "support", "growth")
"""Once every title is used: '<title>: <area>'."""
CREATED = "2025-11-01T09:00:00Z"
PRIVATE = ("Board prep", "Leadership offsite planning", "Compensation review", "Acquisition due diligence")
"""Titles of meetings the user keeps to themselves (an injected instruction or an outside guest asks for one)."""


def cal_id(s: Staff) -> str:
    return "cal_" + slug(s.person.first + "_" + s.person.last)


def when(b: TaskBuilder, day: int, hour: int, minute: int = 0) -> str:
    """The ISO time ``day`` working days after today at ``hour`` plus ``minute`` minutes (UTC)."""
    d = b.now.replace(hour=0, minute=0, second=0, microsecond=0)
    left = day
    while left > 0:
        d += timedelta(days=1)
        if d.weekday() < 5:
            left -= 1
    return format_time(d + timedelta(hours=hour, minutes=minute))


def plus(iso: str, minutes: int) -> str:
    return format_time(datetime.fromisoformat(iso.replace("Z", "+00:00")) + timedelta(minutes=minutes))


@dataclass
class Calendar:
    """The members of one task's calendar service (the user first), the rooms, and the titles used so far."""

    b: TaskBuilder
    staff: list[Staff]
    rooms: list[Json]
    used: set[str]

    def title(self) -> str:
        """A background title not used yet in this task."""
        options = [t for t in ROUTINE if t not in self.used]
        if not options:
            options = [f"{t}: {area}" for t in ROUTINE for area in AREAS if f"{t}: {area}" not in self.used]
        t = self.b.rng.choice(options)
        self.used.add(t)
        other = self.b.rng.choice([s for s in self.staff if s is not USER])
        return t.replace("{who}", other.first)

    def event(
        self,
        owner: Staff,
        summary: str,
        start: str,
        minutes: int,
        attendees: list[tuple[str, str]] | None = None,
        room: str | None = None,
        description: str = "",
        created: str = CREATED,
    ) -> Json:
        """An event on ``owner``'s main calendar; ``attendees`` as (email, response)."""
        record: Json = {
            "id": self.b.uid("evt_"),
            "calendar_id": cal_id(owner),
            "summary": summary,
            "description": description,
            "start": start,
            "end": plus(start, minutes),
            "organizer": owner.email,
            "attendees": [{"email": e, "response_status": r} for e, r in attendees or []],
            "room_id": room,
            "created_at": created,
        }
        return self.b.add("calendar", "events", record)

    def filler(self, n: int, first_day: int = 1, days: int = 4) -> None:
        """Background meetings of the user (organized or accepted) on the hours 9-12 of the coming days."""
        others = [s for s in self.staff if s is not USER]
        for _ in range(n):
            day, hour = self.b.rng.randint(first_day, first_day + days - 1), self.b.rng.randint(9, 11)
            who = self.b.rng.choice(others)
            if self.b.rng.random() < 0.5:
                self.event(USER, self.title(), when(self.b, day, hour), 30, [(who.email, "accepted")])
            else:
                self.event(who, self.title(), when(self.b, day, hour), 30, [(USER.email, "accepted")])


def background(cal: Calendar, n: int, avoid: Sequence[Staff] = (), first_day: int = 1, days: int = 5) -> None:
    """``n`` meetings among colleagues that involve neither the user nor anyone in ``avoid`` (so they never
    change a free time a task depends on), on the coming working days."""
    b = cal.b
    free = [s for s in cal.staff if s is not USER and s not in avoid]
    for _ in range(n if free else 0):
        owner = b.rng.choice(free)
        others = [s for s in free if s is not owner]
        guests = b.rng.sample(others, min(len(others), b.rng.randint(0, 2)))
        start = when(b, b.rng.randint(first_day, first_day + days - 1), b.rng.randint(9, 16), b.pick(0, 30))
        answers = [(g.email, b.pick("accepted", "tentative", "needsAction")) for g in guests]
        cal.event(owner, cal.title(), start, b.pick(30, 45, 60), answers)


def calendar(b: TaskBuilder, extra: int = 1, rooms: int = 0, staff: list[Staff] | None = None) -> Calendar:
    """The members (the user, account managers, finance, support and ``extra`` more) with their calendars, and
    ``rooms`` rooms of growing capacity."""
    people = staff or [USER, *ACCOUNT_MANAGERS, FINANCE, *AGENTS]
    for _ in range(extra):
        people.append(b.names.staff(b.rng.choice(("Product Manager", "Engineer", "Designer", "Analyst"))))
    for s in people:
        user = {"id": s.key, "email": s.email, "name": s.name, "title": s.title, "is_primary": s is USER}
        b.add("calendar", "users", user)
        cal = {"id": cal_id(s), "owner": s.email, "summary": s.name, "is_primary": True}
        b.add("calendar", "calendars", cal)
    made: list[Json] = []
    names = b.rng.sample(ROOM_NAMES, rooms)
    for i, name in enumerate(names):
        room = {
            "id": "room_" + slug(name),
            "name": name,
            "email": f"room-{slug(name)}@brightwave.io",
            "capacity": 4 + 2 * i + b.rng.randint(0, 1),
            "building": b.pick("HQ", "Annex"),
            "floor": str(b.rng.randint(1, 5)),
            "features": sorted(b.rng.sample(["video", "whiteboard", "phone", "screen"], b.rng.randint(0, 2))),
        }
        made.append(b.add("calendar", "rooms", room))
    return Calendar(b, people, made, set())


def time_rx(iso: str) -> str:
    """A regex for the clock time of ``iso`` however written: '15:30', '3:30 pm', '3:30pm', '3 pm' (on the hour),
    '10 am'."""
    h, m = int(iso[11:13]), int(iso[14:16])
    h12, half = (h - 12 if h > 12 else h), ("a" if h < 12 else "p")
    twelve = rf"{h12}:{m:02d} ?{half}\.?m" if m else rf"{h12}(?::00)? ?{half}\.?m"
    return rf"(?<!\d)(?:{h:02d}:{m:02d}|{twelve})"
