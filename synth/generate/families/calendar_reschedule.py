"""A multi-turn family on the calendar: the agent books a meeting with two colleagues at the first time on a day
when all three are free; the user then puts a customer call in that slot on their own calendar and asks for
the meeting to move to the next time that also suits a third colleague, who joins."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CLARIFY, MULTISTEP, WINDOW, Family, TaskBuilder
from coworkenv.synth.generate.families.kit.calendar_common import Calendar, background, calendar, plus, when
from coworkenv.synth.generate.families.kit.multiturn import FINISHED, PERSONA, PROJECTS
from coworkenv.synth.generate.families.kit.names import USER, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.reach import only
from coworkenv.synth.generate.families.kit.registry import register_family


@dataclass(frozen=True)
class _Plan:
    title: str
    pair: list[Staff]
    third: Staff
    day: str
    first: str
    second: str
    day_start: str
    day_end: str


@register_family
class MeetingRescheduleAfterChange(Family):
    name = "calendar-reschedule-after-change"
    scenario = "moving a meeting after the user blocks its slot and adds a colleague"
    capabilities = (WINDOW, MULTISTEP, CLARIFY)
    service_options = (("calendar",),)
    distractors = "the colleagues' own meetings that morning; times when only some of them are free"

    def build(self, b: TaskBuilder) -> str:
        p = self._seed(b)
        self._user_turn(b, p)
        self._reference(b, p)
        self._checks(b, p)
        _forbidden(b)
        b.may_name += [p.title, *(s.first for s in p.pair)]
        ask = Ask(
            steps=[
                "book a 45-minute {title} with {one} and {two} on {day}, at the first time all three of us are free"
            ],
            context="We need to get together on the {title}.",
            report="tell me when it is",
            topic="the {title}",
        )
        backdrop(b)
        return compose(b, ask, title=p.title, one=p.pair[0].first, two=p.pair[1].first, day=p.day)

    @staticmethod
    def _seed(b: TaskBuilder) -> _Plan:
        """The morning before the first free slot taken by one of the three; the third colleague busy from the
        end of the user's coming call until the second slot; background meetings on other days."""
        cal = calendar(b, extra=b.rng.randint(1, 3))
        others = [s for s in cal.staff if s is not USER]
        a, c, third = b.rng.sample(others, 3)
        day_n = b.rng.randint(1, 2)
        first = when(b, day_n, 9, 30 * b.rng.randint(1, 4))
        second = plus(first, 60 + 30 * b.rng.randint(1, 3))
        MeetingRescheduleAfterChange._block(b, cal, [USER, a, c], when(b, day_n, 9), first)
        MeetingRescheduleAfterChange._block(b, cal, [third], plus(first, 60), second)
        MeetingRescheduleAfterChange._block(b, cal, [third], when(b, day_n, 9), first)
        if b.hard:
            MeetingRescheduleAfterChange._block(b, cal, [a, c, third], plus(second, 60), plus(second, 180))
        cal.filler(b.n_filler(), first_day=day_n + 1)
        background(cal, 24 + 3 * b.n_filler(), (a, c, third))
        title = f"{b.rng.choice(PROJECTS)} {b.pick('sync', 'working session', 'check-in', 'planning')}"
        start, end = when(b, day_n, 9), when(b, day_n, 17)
        return _Plan(title, [a, c], third, b.spoken_day(first), first, second, start, end)

    @staticmethod
    def _block(b: TaskBuilder, cal: Calendar, who: list[Staff], start: str, end: str) -> None:
        """Busy meetings from ``start`` to ``end``, each of one of ``who``."""
        t = start
        while t < end:
            length = 30 if plus(t, 60) > end else b.pick(30, 60)
            owner = b.rng.choice(who)
            b.distract(cal.event(owner, cal.title(), t, length)["id"])
            t = plus(t, length)

    @staticmethod
    def _user_turn(b: TaskBuilder, p: _Plan) -> None:
        call = {"summary": "Customer call", "start": p.first, "end": plus(p.first, 60)}
        edit = {"service": "calendar", "tool": "create_event", "arguments": call}
        message = (
            f"Thanks. Something came up: I just put a customer call in my calendar at that time. Please move the "
            f"{p.title} to the next time that day when we're all free, and add {p.third.first} to it as well."
        )
        b.user = {"persona": PERSONA, "turns": [{"message": message, "when": FINISHED, "edits": [edit]}]}

    @staticmethod
    def _reference(b: TaskBuilder, p: _Plan) -> None:
        pair = [s.email for s in p.pair]
        window = {"time_min": p.day_start, "time_max": p.day_end}
        b.call("calendar", "list_users")
        b.call("calendar", "find_free_slot", duration_minutes=45, attendees=pair, **window)
        b.call(
            "calendar", "create_event", "meeting", summary=p.title, start=p.first, end=plus(p.first, 45), attendees=pair
        )
        b.say(f"Booked the {p.title} on {p.day} at {p.first[11:16]} UTC with {p.pair[0].first} and {p.pair[1].first}.")
        b.call("calendar", "find_free_slot", duration_minutes=45, attendees=[*pair, p.third.email], **window)
        b.call("calendar", "update_event", event_id={"$ref": "meeting.id"}, start=p.second, end=plus(p.second, 45),
               add_attendees=[p.third.email])  # fmt: skip
        b.say(f"Moved it to {p.second[11:16]} UTC the same day and added {p.third.first}.")
        with b.alternative():
            b.call("calendar", "query_free_busy", people=[USER.email, *pair], **window)
            b.call("calendar", "create_event", "meeting", summary=p.title, start=p.first, end=plus(p.first, 45),
                   attendees=list(reversed(pair)))  # fmt: skip
            b.say(f"It's at {p.first[11:16]} UTC.")
            b.call("calendar", "query_free_busy", people=[USER.email, *pair, p.third.email], **window)
            b.call("calendar", "update_event", event_id={"$ref": "meeting.id"}, add_attendees=[p.third.email])
            b.call("calendar", "update_event", event_id={"$ref": "meeting.id"}, start=p.second, end=plus(p.second, 45))
            b.say(f"Now at {p.second[11:16]} UTC, with {p.third.first}.")

    @staticmethod
    def _checks(b: TaskBuilder, p: _Plan) -> None:
        """The meeting at the second slot with all three (0.4), none left at the first (0.3), the colleagues'
        own meetings as they were (0.3)."""
        pair = [s.email for s in p.pair]
        b.check(
            "moved",
            0.4,
            f"The {p.title} is at the next time all four are free, with {p.third.first} invited (and no one else).",
            {"kind": "record_exists", "service": "calendar", "table": "events",
             "where": {"start": p.second, "end": plus(p.second, 45), "status": "confirmed", "organizer": USER.email,
                       "attendees.email": only([*pair, p.third.email])}},
            after_turn=1,
        )  # fmt: skip
        b.check(
            "first_slot_freed",
            0.3,
            "No meeting with the two colleagues is left at the first time (the user's customer call is there).",
            {"kind": "record_absent", "service": "calendar", "table": "events",
             "where": {"start": p.first, "status": "confirmed", "attendees.email": {"contains": pair}}},
            ("moved",),
        )  # fmt: skip
        b.check(
            "others_untouched",
            0.3,
            "The colleagues' own meetings are as they were.",
            {"kind": "records_unchanged", "service": "calendar", "table": "events", "ids": list(b.distractors)},
            ("moved",),
        )


def _forbidden(b: TaskBuilder) -> None:
    busy = list(b.distractors)
    b.forbid_call(
        "moved_colleagues_meeting",
        "Moving or changing a colleague's own meeting to make room.",
        "calendar",
        "update_event",
        {"event_id": {"in": busy}},
        {"event_id": busy[0], "start": b.ahead(days=9), "end": b.ahead(days=9, hours=1)},
    )
