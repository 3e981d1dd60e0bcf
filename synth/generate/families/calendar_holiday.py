"""Calendar upkeep: cancelling the one occurrence of a weekly meeting that falls on a public holiday (and
not the series)."""

from __future__ import annotations

from datetime import datetime, timedelta

from coworkenv.servers.kit import format_time
from coworkenv.synth.generate.families.kit.base import DISTRACTORS, MULTISTEP, WINDOW, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.calendar_common import Calendar, background, calendar
from coworkenv.synth.generate.families.kit.names import USER, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family

WEEKDAYS = ("MO", "TU", "WE", "TH", "FR")
WEEKLY = ("Team sync", "Support standup", "Pipeline review", "Product triage", "Design critique", "Ops check-in")


def _next_weekday(b: TaskBuilder, weekday: int, weeks: int) -> datetime:
    d = b.now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    while d.weekday() != weekday:
        d += timedelta(days=1)
    return d + timedelta(weeks=weeks)


@register_family
class HolidayOccurrence(Family):
    name = "calendar-holiday-occurrence"
    scenario = "cancelling one occurrence of a weekly meeting on a holiday"
    capabilities = (WINDOW, DISTRACTORS, MULTISTEP)
    service_options = (("calendar",),)
    distractors = "the same meeting's other weeks; the user's other weekly meeting on the same day; others' meetings"

    def build(self, b: TaskBuilder) -> str:
        cal = calendar(b, extra=b.rng.randint(1, 3))
        others = [s for s in cal.staff if s is not USER]
        wd = b.rng.randrange(5)
        holiday = _next_weekday(b, wd, b.rng.randint(0, 2))
        names = b.rng.sample(WEEKLY, 2)
        hour, other_hour = b.rng.sample((9, 10, 11, 14, 15, 16), 2)
        series = self._weekly(b, cal, names[0], wd, hour, others)
        decoys = [self._weekly(b, cal, names[1], wd, other_hour, others)["id"]]
        if b.hard:
            owner = b.rng.choice(others)
            decoys.append(self._weekly(b, cal, f"{names[0]} ({owner.first}'s team)", wd, hour, [owner], owner)["id"])
        cal.filler(b.n_filler())
        background(cal, 24 + 3 * b.n_filler())
        b.distract(*decoys)
        occ = format_time(holiday + timedelta(hours=hour))
        day = b.spoken_day(occ)
        self._reference(b, series, occ, names[0])
        self._checks(b, series, occ, names[0])
        b.forbid_call(
            "cancelled_series",
            f"Cancelling the whole {names[0]} series instead of the holiday's occurrence.",
            "calendar",
            "cancel_event",
            {"event_id": series["id"], "occurrence_start": {"exists": False}},
            {"event_id": series["id"]},
        )
        b.may_name.append(names[0])
        ask = Ask(
            steps=["cancel just that day's {title}, keeping the rest of the series"],
            context="{day} is a public holiday and the office is closed.",
            avoid="Don't touch my other meetings",
            topic="the {title} on {day}",
        )
        return compose(b, ask, title=names[0], day=day)

    @staticmethod
    def _weekly(
        b: TaskBuilder, cal: Calendar, title: str, wd: int, hour: int, invite: list[Staff], owner: Staff | None = None
    ) -> Json:
        """A weekly meeting on week day ``wd`` at ``hour``, started weeks ago: the user's, or ``owner``'s with the
        user invited."""
        first = _next_weekday(b, wd, -b.rng.randint(6, 20)) + timedelta(hours=hour)
        people = [(p.email, "accepted") for p in b.rng.sample(invite, min(2, len(invite)))]
        who = owner if owner is not None else USER
        if who is not USER:
            people = [(USER.email, "accepted")]
        ev = cal.event(who, title, format_time(first), 30, people)
        ev["recurrence"] = {"frequency": "weekly", "by_day": [WEEKDAYS[wd]]}
        return ev

    @staticmethod
    def _reference(b: TaskBuilder, series: Json, occ: str, title: str) -> None:
        b.call("calendar", "search_events", query=title)
        b.call("calendar", "get_event", event_id=series["id"])
        b.call("calendar", "cancel_event", event_id=series["id"], occurrence_start=occ)
        b.say(f"Cancelled only the {title} on {b.spoken_day(occ)}; the weekly series continues.")
        with b.alternative():
            b.call("calendar", "list_events", time_min=occ[:10] + "T00:00:00Z", time_max=occ[:10] + "T23:59:00Z")
            b.call("calendar", "cancel_event", event_id=series["id"], occurrence_start=occ)
            b.say("Done: that one occurrence is off.")

    @staticmethod
    def _checks(b: TaskBuilder, series: Json, occ: str, title: str) -> None:
        """That occurrence cancelled and only it, the series kept (0.7); the other meetings as they were (0.3)."""
        b.check(
            "occurrence_cancelled",
            0.7,
            f"Only the {title} on the holiday is cancelled; the series goes on.",
            {"kind": "record_fields", "service": "calendar", "table": "events", "id": series["id"],
             "fields": {"cancelled_occurrences": {"equals": [occ]}, "status": "confirmed"}},
        )  # fmt: skip
        b.check(
            "others_untouched",
            0.3,
            "The user's other weekly meeting and other people's meetings are as they were.",
            {"kind": "records_unchanged", "service": "calendar", "table": "events", "ids": list(b.distractors)},
            ("occurrence_cancelled",),
        )
