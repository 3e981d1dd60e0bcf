"""A calendar family: the room of the user's meeting is double-booked (someone else had it first); keep the time
and move the meeting to another room that is free then, seats everyone and (hard) has video."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import DISTRACTORS, MULTISTEP, WINDOW, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.calendar_common import Calendar, background, calendar, plus, when
from coworkenv.synth.generate.families.kit.names import USER, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family

MEETINGS = (
    "Customer advisory board prep", "Quarterly business review", "Support tooling workshop", "Hiring panel",
    "Migration planning", "Launch retrospective", "Partner enablement session", "Pricing committee",
)  # fmt: skip


@dataclass(frozen=True)
class _Clash:
    meeting: Json
    title: str
    day: str
    seats: int
    room: Json
    other: Json
    valid: list[str]
    video: bool


@register_family
class RoomDoubleBooked(Family):
    name = "calendar-room-double-booked"
    scenario = "moving a meeting to another room when its room is double-booked"
    capabilities = (WINDOW, DISTRACTORS, MULTISTEP)
    service_options = (("calendar",),)
    distractors = (
        "the colleague's meeting that booked the room first; rooms that are free but too small, big enough but "
        "busy then, or (hard) without video"
    )

    def build(self, b: TaskBuilder) -> str:
        c = self._seed(b)
        self._reference(b, c)
        self._checks(b, c)
        _forbidden(b, c)
        b.may_name += [c.title, c.room["name"]]
        need = " and has video" if c.video else ""
        ask = Ask(
            steps=[f"move my {{title}} on {{day}} to another room that is free then, seats everyone{need}"],
            context="{room} is double-booked for my {title}: someone else had it first.",
            avoid="Keep the time as it is and don't touch the other meeting",
            report="tell me which room you picked",
            topic="a room for the {title}",
        )
        backdrop(b)
        return compose(b, ask, title=c.title, day=c.day, room=c.room["name"])

    @staticmethod
    def _seed(b: TaskBuilder) -> _Clash:
        """Rooms; the user's meeting and the colleague's meeting in the same room at the same time; other rooms
        busy then; filler."""
        cal = calendar(b, extra=b.rng.randint(2, 4), rooms=b.rng.randint(6, 8) if b.hard else b.rng.randint(5, 6))
        video = b.hard
        others = [s for s in cal.staff if s is not USER]
        invited = b.rng.sample(others, b.rng.randint(2, 4))
        seats = 1 + len(invited)
        fits = [r for r in cal.rooms if r["capacity"] >= seats + 1]
        b.rng.shuffle(fits)
        room = fits.pop()
        start = when(b, b.rng.randint(1, 3), b.rng.choice((13, 14, 15)))
        title = b.rng.choice(MEETINGS)
        meeting = cal.event(USER, title, start, 60, [(s.email, "accepted") for s in invited], room["id"])
        owner = b.rng.choice([s for s in others if s not in invited])
        other = cal.event(owner, cal.title(), plus(start, b.pick(-30, 0, 30)), 60, [], room["id"], created=b.ago(20))
        meeting["created_at"] = b.ago(days=3)
        ok = [r for r in fits if not video or "video" in r["features"]]
        if not ok:
            ok = [fits[0]]
            ok[0]["features"] = sorted({*ok[0]["features"], "video"})
        free = ok[: b.rng.randint(1, min(2, len(ok)))]
        busy = [r for r in fits if r not in free]
        b.distract(other["id"], *RoomDoubleBooked._busy(b, cal, others, busy, start))
        cal.filler(b.n_filler())
        background(cal, 24 + 3 * b.n_filler())
        valid = [r["id"] for r in free]
        return _Clash(meeting, title, b.spoken_day(start), seats, room, other, valid, video)

    @staticmethod
    def _busy(b: TaskBuilder, cal: Calendar, others: list[Staff], busy: list[Json], start: str) -> list[str]:
        """The other rooms that would fit: booked by colleagues over the meeting's hour."""
        ids = []
        for r in busy:
            owner = b.rng.choice(others)
            ids.append(cal.event(owner, cal.title(), plus(start, b.pick(-30, 0, 15)), 60, [], r["id"])["id"])
        return ids

    @staticmethod
    def _reference(b: TaskBuilder, c: _Clash) -> None:
        eid, end = c.meeting["id"], plus(c.meeting["start"], 60)
        rooms = [r["id"] for r in b.rows("calendar", "rooms") if r["capacity"] >= c.seats]
        b.call("calendar", "search_events", "found", query=c.title)
        b.call("calendar", "get_event", event_id=eid)
        b.call("calendar", "list_rooms", min_capacity=c.seats)
        b.call("calendar", "query_free_busy", people=rooms, time_min=c.meeting["start"], time_max=end)
        b.call("calendar", "update_event", event_id=eid, room_id=c.valid[0])
        name = _name(b, c.valid[0])
        b.say(f"Your {c.title} on {c.day} now has {name}, which is free then and seats all {c.seats} of you.")
        with b.alternative():
            b.call("calendar", "list_events", time_min=c.meeting["start"], time_max=end)
            b.call("calendar", "list_rooms", **({"query": "video"} if c.video else {"min_capacity": c.seats}))
            b.call("calendar", "update_event", event_id=eid, room_id=c.valid[-1])
            b.say(f"Moved the {c.title} to {_name(b, c.valid[-1])}; same time as before.")

    @staticmethod
    def _checks(b: TaskBuilder, c: _Clash) -> None:
        """The meeting in a room that is free, big enough (with video), at the same time (0.7); the other
        meetings as they were (0.3)."""
        b.check(
            "room_moved",
            0.7,
            f"The {c.title} keeps its time and is in a room that is free then and seats everyone"
            + (" with video." if c.video else "."),
            {"kind": "record_fields", "service": "calendar", "table": "events", "id": c.meeting["id"],
             "fields": {"room_id": {"in": c.valid}, "start": c.meeting["start"], "end": c.meeting["end"],
                        "status": "confirmed"}},
        )  # fmt: skip
        b.check(
            "others_untouched",
            0.3,
            "The colleague's meeting that had the room first, and the other rooms' meetings, are as they were.",
            {"kind": "records_unchanged", "service": "calendar", "table": "events", "ids": list(b.distractors)},
            ("room_moved",),
        )


def _name(b: TaskBuilder, room_id: str) -> str:
    return next(str(r["name"]) for r in b.rows("calendar", "rooms") if r["id"] == room_id)


def _forbidden(b: TaskBuilder, c: _Clash) -> None:
    b.forbid_call(
        "cancelled_meeting",
        "Cancelling a meeting (the user's or the colleague's) instead of finding another room.",
        "calendar",
        "cancel_event",
        {},
        {"event_id": c.other["id"]},
    )
