"""Calendar upkeep families: declining the invitations that fall in the user's time off (and only those), and
cancelling the one occurrence of a weekly meeting that falls on a public holiday (and not the series)."""

from __future__ import annotations

from datetime import datetime, timedelta

from coworkenv.servers.kit import format_time
from coworkenv.synth.generate.families.base import DISTRACTORS, MULTISTEP, WINDOW, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.calendar_common import Calendar, background, calendar, when
from coworkenv.synth.generate.families.names import USER, Staff
from coworkenv.synth.generate.families.phrasing import Ask, compose
from coworkenv.synth.generate.families.registry import register_family

WEEKDAYS = ("MO", "TU", "WE", "TH", "FR")
WEEKLY = ("Team sync", "Support standup", "Pipeline review", "Product triage", "Design critique", "Ops check-in")


@register_family
class TimeOffDeclines(Family):
    name = "calendar-time-off-declines"
    scenario = "declining the invitations that fall in the user's time off"
    capabilities = (WINDOW, DISTRACTORS, MULTISTEP)
    service_options = (("calendar",),)
    distractors = (
        "invitations the day before and the day after the time off; the user's own meetings in it; an invitation "
        "already declined"
    )

    def build(self, b: TaskBuilder) -> str:
        cal = calendar(b, extra=b.rng.randint(1, 3))
        d1 = b.rng.randint(2, 3)
        d2 = d1 + b.rng.randint(1, 2)
        start, end = when(b, d1, 0), when(b, d2, 24)
        others = [s for s in cal.staff if s is not USER]
        targets: list[Json] = []
        for _ in range(b.targets + 1):
            who = b.rng.choice(others)
            at = when(b, b.rng.randint(d1, d2), b.rng.randint(9, 16))
            peers = [(p.email, "accepted") for p in b.rng.sample([o for o in others if o is not who], 1)]
            targets.append(
                cal.event(who, cal.title(), at, 30, [(USER.email, b.pick("needsAction", "accepted")), *peers])
            )
        decoys = [
            cal.event(b.rng.choice(others), cal.title(), when(b, d1 - 1, 16), 30, [(USER.email, "needsAction")]),
            cal.event(b.rng.choice(others), cal.title(), when(b, d2 + 1, 9), 30, [(USER.email, "needsAction")]),
            cal.event(USER, cal.title(), when(b, d1, 11), 30, [(b.rng.choice(others).email, "accepted")]),
        ]
        if b.difficulty != "easy":
            decoys.append(cal.event(b.rng.choice(others), cal.title(), when(b, d2, 15), 30, [(USER.email, "declined")]))
        b.distract(*(d["id"] for d in decoys))
        cal.filler(b.n_filler(), first_day=d2 + 2)
        background(cal, 24 + 3 * b.n_filler())
        first, last = b.spoken_day(start), b.spoken_day(when(b, d2, 12))
        self._reference(b, targets, start, end)
        self._checks(b, targets, decoys)
        ask = Ask(
            steps=["decline every invitation I have from {first} to {last} (both days included) with a short note"],
            context="I'm off from {first} to {last}.",
            avoid="Leave everything outside those days, and my own meetings, as they are",
            topic="my time off",
        )
        return compose(b, ask, first=first, last=last)

    @staticmethod
    def _reference(b: TaskBuilder, targets: list[Json], start: str, end: str) -> None:
        note = "I'm out of office that day, sorry."
        b.call("calendar", "list_events", time_min=start, time_max=end)
        for t in targets:
            b.call("calendar", "respond_to_event", event_id=t["id"], response="declined", comment=note)
        b.say(f"Declined {len(targets)} invitation(s) during your time off.")
        with b.alternative():
            b.call("calendar", "search_events", attendee=USER.email, time_min=start, time_max=end)
            for t in reversed(targets):
                b.call("calendar", "respond_to_event", event_id=t["id"], response="declined", comment="On leave.")
            b.say("Done.")

    @staticmethod
    def _checks(b: TaskBuilder, targets: list[Json], decoys: list[Json]) -> None:
        """Each invitation in the window declined (0.7); the others and the user's own meetings as they were
        (0.3); cancelling anything is forbidden."""
        for i, t in enumerate(targets):
            b.check(
                f"declined_{i + 1}",
                0.7 / len(targets),
                f"The user declined '{t['summary']}'.",
                {"kind": "record_fields", "service": "calendar", "table": "events", "id": t["id"],
                 "fields": {"attendees.response_status": {"contains": "declined"}, "status": "confirmed"}},
            )  # fmt: skip
        b.check(
            "others_untouched",
            0.3,
            "Invitations outside the time off and the user's own meetings are as they were.",
            {"kind": "records_unchanged", "service": "calendar", "table": "events", "ids": [d["id"] for d in decoys]},
            tuple(f"declined_{i + 1}" for i in range(len(targets))),
        )
        b.forbid_call(
            "cancelled",
            "Cancelling a meeting instead of declining (or the user's own meeting).",
            "calendar",
            "cancel_event",
            {},
            {"event_id": decoys[2]["id"]},
        )


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
