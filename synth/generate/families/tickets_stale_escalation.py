"""Helpdesk: escalating stale enterprise tickets."""

from __future__ import annotations

from collections import Counter

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import DISTRACTORS, MULTISTEP, REPORT, WINDOW, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import Company
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_tickets, ticket
from coworkenv.synth.generate.families.kit.texts import ISSUES
from coworkenv.synth.generate.families.kit.tickets_common import GUARD, forbid_closing_unworked, others_unchanged

UNRESOLVED = ["new", "open", "pending", "hold"]
_HOURS_WORDS = {24: ("24 hours", "a day"), 48: ("48 hours", "two days"), 72: ("72 hours", "three days")}
_MOST = r"(?:most|majority|largest|biggest|highest|busiest|top|leads?|leading)"


def _customers(b: TaskBuilder) -> list[str]:
    """Every customer organisation's name in the helpdesk (what a ranking question chooses among)."""
    return sorted({str(o["name"]) for o in b.rows("tickets", "organizations")})


@register_family
class StaleEscalation(Family):
    name = "tickets-stale-escalation"
    scenario = "support escalation"
    capabilities = (WINDOW, DISTRACTORS, MULTISTEP, REPORT)
    service_options = (("tickets",),)
    distractors = (
        "fresh enterprise tickets inside the time window; old open tickets of business/starter customers; "
        "old enterprise tickets already solved"
    )

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        hours = b.pick(24, 48, 72)
        ent, targets = self._seed(b, cast, hours)
        names = {cast.org(c): c.name for c in ent}
        busiest = self._reference(b, targets, names, hours)
        self._checks(b, targets, names, busiest)
        backdrop(b)
        return self._request(b, hours)

    @staticmethod
    def _seed(b: TaskBuilder, cast: Cast, hours: int) -> tuple[list[Company], list[Json]]:
        """The enterprise customers and their stale tickets (the targets), the distractors and the filler."""
        ent = [cast.company("enterprise", contacts=1) for _ in range(1 if b.targets == 1 else 2)]
        small = [cast.company(b.pick("business", "starter")) for _ in range(1 if b.difficulty == "easy" else 2)]
        cast.tickets(tag_tiers=True)
        issues = b.rng.sample(ISSUES, b.targets + 6)
        targets: list[Json] = []
        for i in range(b.targets):
            c = ent[i % len(ent)]
            created = b.ago(hours=hours + b.rng.randint(3, 90))
            status = b.pick("new", "open", "open", "pending", "hold")
            targets.append(ticket(b, cast, c, created, status, b.pick("normal", "high"), issues.pop()))
        for k in range(b.n_distractors()):
            kind = k % 3
            if kind == 0:
                t = ticket(b, cast, b.rng.choice(ent), b.ago(hours=b.rng.randint(1, hours - 3)), "open", "urgent")
            elif kind == 1:
                t = ticket(b, cast, b.rng.choice(small), b.ago(hours=hours + b.rng.randint(5, 100)), "open", "high")
            else:
                t = ticket(b, cast, b.rng.choice(ent), b.ago(hours=hours + b.rng.randint(5, 60)), "solved", "high")
            b.distract(t["id"])
        filler_tickets(b, cast, b.n_filler())
        return ent, targets

    @staticmethod
    def _reference(b: TaskBuilder, targets: list[Json], names: dict[str, str], hours: int) -> str:
        """Find and escalate the stale tickets, report them; returns the customer with the most."""
        b.call("tickets", "list_organizations", "orgs")
        b.call("tickets", "search_tickets", "stale", status=UNRESOLVED, created_before=b.ago(hours=hours))
        for t in targets:
            reason = f"{names[t['organization_id']]} (enterprise) has waited more than {hours} hours."
            b.call("tickets", "escalate_ticket", ticket_id=t["id"], reason=reason)
        listed = ", ".join(f"{t['id']} ({t['subject']}, {names[t['organization_id']]})" for t in targets)
        most = names[Counter(t["organization_id"] for t in targets).most_common(1)[0][0]]
        tail = f" {most} has the most of them." if b.hard else ""
        b.say(f"I escalated {len(targets)} enterprise ticket(s) waiting more than {hours} hours: {listed}.{tail}")
        with b.alternative():  # organisation by organisation, each ticket read before it is escalated
            b.call("tickets", "list_organizations", "orgs")
            for org in dict.fromkeys(t["organization_id"] for t in targets):
                b.call("tickets", "search_tickets", organization_id=org, status=UNRESOLVED)
            for t in reversed(targets):
                b.call("tickets", "get_ticket", ticket_id=t["id"])
                b.call("tickets", "escalate_ticket", ticket_id=t["id"], reason=f"Unresolved for over {hours} hours.")
            b.say(f"Done: {len(targets)} stale enterprise ticket(s) escalated ({listed}).{tail}")
        return most

    @staticmethod
    def _checks(b: TaskBuilder, targets: list[Json], names: dict[str, str], busiest: str) -> None:
        """Each target escalated; (hard) the answer, weighing enough that the work alone does not pass; the
        distractors untouched, weighing enough that escalating one fails the task."""
        work = 0.4 if b.hard else 1 - GUARD
        for i, t in enumerate(targets):
            b.check(
                f"escalated_{i + 1}",
                work / len(targets),
                f"{names[t['organization_id']]}'s ticket '{t['subject']}' is escalated.",
                {
                    "kind": "record_fields",
                    "service": "tickets",
                    "table": "tickets",
                    "id": t["id"],
                    "fields": {"escalated": True},
                },
            )
        if b.hard:
            b.check(
                "names_busiest",
                1 - GUARD - work,
                f"The agent says that {busiest} has the most stale tickets (and says it of no other customer).",
                {"kind": "said_choice", "answer": busiest, "candidates": _customers(b), "cue": _MOST},
            )
        others_unchanged(b, list(b.distractors), tuple(f"escalated_{i + 1}" for i in range(len(targets))))
        forbid_closing_unworked(b, targets[0]["id"])

    @staticmethod
    def _request(b: TaskBuilder, hours: int) -> str:
        numeric, words = _HOURS_WORDS[hours]
        step = b.pick(
            "escalate every unresolved ticket from our enterprise customers that has been waiting for more than {span}",
            "escalate each enterprise ticket that has sat unresolved for over {span}",
            "escalate all unresolved enterprise tickets older than {span}",
            "find the enterprise customers' tickets still unresolved after {span} and escalate each one",
        )
        context = b.pick(
            "Some of our enterprise customers have been waiting too long for an answer.",
            "Our enterprise SLA is slipping.",
            "I'm worried about our response times for the big accounts.",
            "",
        )
        ask = Ask(
            steps=(step,),
            context=context,
            avoid=b.pick("Leave all other tickets alone.", "Don't touch anything else.", "Nothing else should change."),
            report="tell me which customer has the most of them" if b.hard else "",
            topic="stale enterprise tickets",
        )
        return compose(b, ask, span=b.pick(numeric, words))
