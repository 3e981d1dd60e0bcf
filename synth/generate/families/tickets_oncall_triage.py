"""Helpdesk: the on-call morning triage."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import COMMS, DISTRACTORS, MULTISTEP, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.reach import ACK
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_tickets, public_reply_check, ticket
from coworkenv.synth.generate.families.kit.texts import ISSUES
from coworkenv.synth.generate.families.kit.tickets_common import forbid_closing_unworked, others_unchanged


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
        others_unchanged(b, tickets, tuple(f"assigned_{i + 1}" for i in range(len(targets))))
        forbid_closing_unworked(b, targets[0]["id"])
