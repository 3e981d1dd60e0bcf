"""A cross-service family on the calendar and tickets: the support engineer who is out of office today (their
out-of-office event is on the team's calendars) hands their unresolved tickets to a named colleague."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, WINDOW, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.calendar_common import background, calendar, when
from coworkenv.synth.generate.families.kit.names import USER, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_tickets, ticket
from coworkenv.synth.generate.families.kit.texts import ISSUES

UNRESOLVED = ["new", "open", "pending", "hold"]


@register_family
class OutOfOfficeHandover(Family):
    name = "out-of-office-ticket-handover"
    scenario = "handing an absent engineer's tickets to a colleague"
    capabilities = (CROSS, WINDOW, DISTRACTORS)
    service_options = (("tickets", "calendar"),)
    distractors = (
        "the engineer who is out next week (not today) and their tickets; the absent engineer's solved tickets; "
        "the colleague's own tickets"
    )

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        cast.agents.append(b.names.staff("Support Engineer"))
        away, later, cover = b.rng.sample(cast.agents, 3)
        for _ in range(2 + b.targets // 2):
            cast.company()
        cast.tickets()
        targets, decoys = self._tickets(b, cast, away, later, cover)
        cal = calendar(b, extra=0, staff=[USER, *cast.managers, *cast.agents])
        team = [(s.email, "accepted") for s in cal.staff if (s is not away and s in cast.agents) or s is USER]
        ooo = cal.event(away, "Out of office", when(b, 0, 0), 24 * 60, team)
        ooo["transparency"] = "opaque"
        cal.event(later, "Out of office", when(b, 5, 0), 24 * 60, [(USER.email, "accepted")])
        cal.filler(b.n_filler())
        background(cal, 6 + 2 * b.n_filler())
        b.distract(*decoys)
        self._reference(b, away, cover, targets)
        self._checks(b, cover, targets, decoys)
        _forbidden(b, targets)
        b.may_name.append(cover.first)
        ask = Ask(
            steps=["hand every unresolved ticket of the support engineer who is out of office today over to {cover}"],
            context="One of our support engineers is out today; it's on the team calendar.",
            avoid="Leave everyone else's tickets alone",
            topic="today's ticket handover",
        )
        backdrop(b)
        return compose(b, ask, cover=cover.name)

    @staticmethod
    def _tickets(b: TaskBuilder, cast: Cast, away: Staff, later: Staff, cover: Staff) -> tuple[list[Json], list[str]]:
        issues = b.rng.sample(ISSUES, b.targets + 5)
        targets = [
            ticket(b, cast, b.rng.choice(cast.companies), b.ago(days=b.rng.randint(1, 9)), b.rng.choice(UNRESOLVED),
                   b.pick("normal", "high"), issues.pop(), assignee=away.key)
            for _ in range(b.targets)
        ]  # fmt: skip
        decoys = [
            ticket(b, cast, b.rng.choice(cast.companies), b.ago(days=12), "solved", "normal", issues.pop(), away.key),
            ticket(b, cast, b.rng.choice(cast.companies), b.ago(days=3), "open", "high", issues.pop(), later.key),
            ticket(b, cast, b.rng.choice(cast.companies), b.ago(days=2), "open", "normal", issues.pop(), cover.key),
        ]
        if b.hard:
            decoys.append(ticket(b, cast, b.rng.choice(cast.companies), b.ago(days=1), "new", "urgent", issues.pop()))
        filler_tickets(b, cast, b.n_filler())
        return targets, [d["id"] for d in decoys]

    @staticmethod
    def _reference(b: TaskBuilder, away: Staff, cover: Staff, targets: list[Json]) -> None:
        b.call("calendar", "list_events", time_min=when(b, 0, 0), time_max=when(b, 0, 24))
        b.call("tickets", "search_users", query=away.first, role="agent")
        b.call("tickets", "search_tickets", assignee_id=away.key, status=UNRESOLVED)
        for t in targets:
            b.call("tickets", "assign_ticket", ticket_id=t["id"], assignee_id=cover.key)
        b.say(f"{away.name} is out of office today. I moved their {len(targets)} unresolved ticket(s) to {cover.name}.")
        with b.alternative():
            b.call("calendar", "search_events", query="out of office")
            b.call("tickets", "search_users", query=cover.first, role="agent")
            for t in reversed(targets):
                b.call("tickets", "assign_ticket", ticket_id=t["id"], assignee_id=cover.key)
            b.say(f"{away.first} is out; handed over to {cover.first}.")

    @staticmethod
    def _checks(b: TaskBuilder, cover: Staff, targets: list[Json], decoys: list[str]) -> None:
        """Each of the absent engineer's unresolved tickets with the colleague (0.7); the other tickets as they
        were (0.3)."""
        for i, t in enumerate(targets):
            b.check(
                f"handed_over_{i + 1}",
                0.7 / len(targets),
                f"'{t['subject']}' is assigned to {cover.name}.",
                {"kind": "record_fields", "service": "tickets", "table": "tickets", "id": t["id"],
                 "fields": {"assignee_id": cover.key}},
            )  # fmt: skip
        b.check(
            "others_untouched",
            0.3,
            "Other engineers' tickets, the absent engineer's solved ones and unassigned ones are as they were.",
            {"kind": "records_unchanged", "service": "tickets", "table": "tickets", "ids": decoys},
            tuple(f"handed_over_{i + 1}" for i in range(len(targets))),
        )


def _forbidden(b: TaskBuilder, targets: list[Json]) -> None:
    b.forbid_call(
        "closed_ticket",
        "Solving or closing a ticket that nobody has fixed.",
        "tickets",
        "update_ticket",
        {"status": {"in": ["solved", "closed"]}},
        {"ticket_id": targets[0]["id"], "status": "solved"},
    )
