"""Calendar upkeep: declining the invitations that fall in the user's time off (and only those)."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import DISTRACTORS, MULTISTEP, WINDOW, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.calendar_common import background, calendar, when
from coworkenv.synth.generate.families.kit.names import USER
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family


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
