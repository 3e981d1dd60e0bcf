"""Helpdesk families: escalating stale enterprise tickets, and the on-call morning triage."""

from __future__ import annotations

from collections import Counter

from coworkenv.synth.generate.families.backdrop import backdrop
from coworkenv.synth.generate.families.base import (
    COMMS,
    DISTRACTORS,
    MULTISTEP,
    REPORT,
    WINDOW,
    Family,
    Json,
    TaskBuilder,
)
from coworkenv.synth.generate.families.names import Company, Staff
from coworkenv.synth.generate.families.phrasing import Ask, compose
from coworkenv.synth.generate.families.reach import ACK
from coworkenv.synth.generate.families.registry import register_family
from coworkenv.synth.generate.families.seeds import Cast, filler_tickets, public_reply_check, ticket
from coworkenv.synth.generate.families.texts import ISSUES

UNRESOLVED = ["new", "open", "pending", "hold"]
_HOURS_WORDS = {24: ("24 hours", "a day"), 48: ("48 hours", "two days"), 72: ("72 hours", "three days")}


def _no_closing(b: TaskBuilder, example_ticket: str) -> None:
    b.forbid_call(
        "closed_unworked",
        "Solving or closing a customer's ticket that nobody has fixed.",
        "tickets",
        "update_ticket",
        {"status": {"in": ["solved", "closed"]}},
        {"ticket_id": example_ticket, "status": "solved"},
    )


GUARD = 0.3
"""Weight of the check that the distractors are left alone: more than 1 − the pass mark, so an agent that
acts on one fails the task however well it does the rest."""
_MOST = r"(?:most|majority|largest|biggest|highest|busiest|top|leads?|leading)"


def _unchanged(b: TaskBuilder, ids: list[str], requires: tuple[str, ...]) -> None:
    if ids:
        b.check(
            "others_untouched",
            GUARD,
            "The tickets that only look relevant are left as they were.",
            {"kind": "records_unchanged", "service": "tickets", "table": "tickets", "ids": ids},
            requires,
        )


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
        _unchanged(b, list(b.distractors), tuple(f"escalated_{i + 1}" for i in range(len(targets))))
        _no_closing(b, targets[0]["id"])

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


@register_family
class OnCallTriage(Family):
    name = "tickets-triage-oncall"
    scenario = "morning ticket triage"
    capabilities = (DISTRACTORS, MULTISTEP, COMMS)
    service_options = (("tickets",),)
    distractors = (
        "urgent tickets already open and assigned; new tickets of normal or low priority; pending high-priority "
        "tickets; (hard) a second agent with the same first name"
    )

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        agent, targets = self._seed(b, cast)
        self._reference(b, agent, targets)
        self._checks(b, agent, targets)
        ask = Ask(
            steps=(
                b.pick(
                    "assign every new ticket marked high or urgent to {them}",
                    "give {them} all new high- and urgent-priority tickets",
                    "route the new high and urgent tickets to {them}",
                ),
                b.pick(
                    "post a short public reply on each so the customer knows someone is on it",
                    "leave a quick public reply on each one so the customers know it's being handled",
                    "reply publicly on each ticket to say someone is looking into it",
                ),
            ),
            context=b.pick(
                "{agent} is on call this morning.",
                "{agent} is covering the queue today.",
                "Today's on-call engineer is {agent}.",
                "{first} has the on-call shift today ({agent}).",
            ),
            avoid=b.pick(
                "Leave everything else as it is.", "Do not touch anything else.", "Other tickets stay as they are."
            ),
            topic="on-call triage",
        )
        backdrop(b)
        return compose(b, ask, agent=agent.name, first=agent.first, them=b.pick("them", agent.first))

    @staticmethod
    def _seed(b: TaskBuilder, cast: Cast) -> tuple[Staff, list[Json]]:
        """The on-call agent (and, hard, a namesake), the new high/urgent tickets, the distractors, the filler.

        The on-call agent is always drawn from the name pool (~2,000 names), never one of the two standing
        engineers, so no assignee is a majority guess across the family: a model trained on these tasks has to
        read the name from the request and the id from ``search_users``. The standing engineers stay, as the
        assignees of the distractors."""
        agent = b.names.staff("Support Engineer")
        cast.agents.append(agent)
        if b.hard:
            p = b.names.person("Support Engineer", first=agent.first)
            twin = Staff(p, "Support Engineer", f"usr_{p.key}")
            cast.agents.append(twin)
            b.distract(twin.key)
        for _ in range(2 if b.difficulty == "easy" else 3):
            cast.company()
        cast.tickets()
        issues = b.rng.sample(ISSUES, b.targets + 6)
        targets = [
            ticket(
                b,
                cast,
                b.rng.choice(cast.companies),
                b.ago(hours=b.rng.randint(1, 14), minutes=b.rng.randint(0, 59)),
                "new",
                b.pick("high", "urgent"),
                issues.pop(),
            )
            for _ in range(b.targets)
        ]
        others = [a for a in cast.agents if a is not agent]
        for k in range(b.n_distractors()):
            c = b.rng.choice(cast.companies)
            when = b.ago(hours=b.rng.randint(1, 30))
            if k % 3 == 0:
                t = ticket(b, cast, c, when, "open", "urgent", issues.pop(), assignee=b.rng.choice(others).key)
            elif k % 3 == 1:
                t = ticket(b, cast, c, when, "new", b.pick("normal", "low"), issues.pop())
            else:
                t = ticket(b, cast, c, when, "pending", "high", issues.pop(), assignee=b.rng.choice(others).key)
            b.distract(t["id"])
        filler_tickets(b, cast, b.n_filler())
        return agent, targets

    @staticmethod
    def _reference(b: TaskBuilder, agent: Staff, targets: list[Json]) -> None:
        b.call("tickets", "search_users", "agents", query=agent.first, role="agent")
        b.call("tickets", "search_tickets", "hot", status=["new"], priority=["high", "urgent"])
        reply = b.pick(
            f"Thanks for reporting this - {agent.first} from our support team is looking into it now.",
            f"Hi, {agent.first} here from support. I have picked this up and will update you shortly.",
        )
        for t in targets:
            b.call("tickets", "assign_ticket", ticket_id=t["id"], assignee_id=agent.key)
            b.call("tickets", "add_comment", ticket_id=t["id"], body=reply, public=True)
        b.say(f"Assigned {len(targets)} new high/urgent ticket(s) to {agent.name} and replied on each.")
        with b.alternative():  # all new tickets, then reply first and assign after, ticket by ticket
            b.call("tickets", "search_tickets", "new", status=["new"])
            b.call("tickets", "search_users", query=agent.person.last, role="agent")
            for t in targets:
                b.call("tickets", "get_ticket", ticket_id=t["id"])
                b.call("tickets", "add_comment", ticket_id=t["id"], body="We're on it; an engineer has this now.")
                b.call("tickets", "assign_ticket", ticket_id=t["id"], assignee_id=agent.key)
            b.say(f"{len(targets)} ticket(s) now with {agent.name}, each with a public reply.")

    @staticmethod
    def _checks(b: TaskBuilder, agent: Staff, targets: list[Json]) -> None:
        """Each target assigned and answered (the replies weigh enough that assigning alone fails); the
        distractor tickets untouched (enough that acting on one fails)."""
        for i, t in enumerate(targets):
            b.check(
                f"assigned_{i + 1}",
                0.4 / len(targets),
                f"The new {t['priority']} ticket '{t['subject']}' is assigned to {agent.name}.",
                {
                    "kind": "record_fields",
                    "service": "tickets",
                    "table": "tickets",
                    "id": t["id"],
                    "fields": {"assignee_id": agent.key},
                },
            )
            acknowledges = {"regex": ACK, "case_insensitive": True}
            public_reply_check(
                b, t["id"], 0.3 / len(targets), acknowledges, f"acknowledges '{t['subject']}'", cid=f"replied_{i + 1}"
            )
        tickets = [d for d in b.distractors if d.startswith("tkt_")]
        _unchanged(b, tickets, tuple(f"assigned_{i + 1}" for i in range(len(targets))))
        _no_closing(b, targets[0]["id"])
