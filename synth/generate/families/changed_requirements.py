"""The multi-turn family on tickets: the user changes the instructions after the agent's first turn
(see :mod:`coworkenv.synth.generate.families.kit.multiturn` for what the multi-turn families share)."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CLARIFY, DISTRACTORS, MULTISTEP, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.multiturn import (
    PERSONA,
)
from coworkenv.synth.generate.families.kit.names import AGENTS, USER, Company, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family

ISSUES = (
    "Exports time out for large accounts", "SSO login loops back to the sign-in page", "Invoices show the wrong VAT",
    "Webhook deliveries are delayed by hours", "Dashboard charts do not load", "Password reset emails never arrive",
)  # fmt: skip


@register_family
class ChangedRequirements(Family):
    name = "changed-requirements"
    scenario = "re-triaging a ticket after the user changes the instructions"
    capabilities = (MULTISTEP, CLARIFY, DISTRACTORS)
    service_options = (("tickets",),)
    distractors = "the same customer's other tickets and other customers' tickets with the same problem"

    def build(self, b: TaskBuilder) -> str:
        eng_a, eng_b = b.rng.sample(list(AGENTS), 2)
        co, org, target, issue = self._seed(b)
        self._user_turn(b, co, target, eng_a, eng_b)
        self._reference(b, co, org, target, issue, (eng_a, eng_b))
        self._checks(b, target, eng_a, eng_b)
        b.may_name += [issue, co.name, eng_a.name]
        ask = Ask(
            steps=(
                b.pick("set it to high priority", "bump it to high", "raise its priority to high"),
                b.pick("assign it to {engineer}", "give it to {engineer}", "hand it to {engineer}"),
            ),
            context=b.pick(
                "About the {company} ticket on '{issue}'.",
                "{company} has a ticket open about '{issue}'.",
                "The '{issue}' ticket from {company} needs attention.",
            ),
            avoid=b.pick("Leave their other tickets as they are.", "Only that ticket, please.", ""),
            topic="{company} ticket",
        )
        backdrop(b)
        return compose(b, ask, company=co.name, issue=issue, engineer=eng_a.name)

    @staticmethod
    def _user_turn(b: TaskBuilder, co: Company, target: str, eng_a: Staff, eng_b: Staff) -> None:
        """After the agent's first turn the user notes the call on the ticket and changes both instructions."""
        note = f"Call with {co.contacts[0].first}: it now affects every team at {co.name}, not just one."
        b.user = {
            "persona": PERSONA,
            "turns": [
                {
                    "message": f"Change of plan, sorry: I've put a note from my call on the ticket. Make it urgent "
                    f"instead, and give it to {eng_b.name} rather than {eng_a.first}, who is out this week."
                    + (" Add an internal note saying why it was re-assigned, too." if b.hard else ""),
                    "when": {"after_turn": 1},
                    "edits": [
                        {
                            "service": "tickets",
                            "tool": "add_comment",
                            "arguments": {"ticket_id": target, "body": note, "public": False},
                        }
                    ],
                }
            ],
        }

    @staticmethod
    def _seed(b: TaskBuilder) -> tuple[Company, str, str, str]:
        """The helpdesk: staff, customers, the target ticket and its distractors (the same customer's other
        ticket, other customers' tickets on the same issue), filler. Returns (customer, org, ticket, issue)."""
        b.add("tickets", "users", {"id": USER.key, "name": USER.name, "email": USER.email, "role": "admin"})
        for s in AGENTS:
            b.add("tickets", "users", {"id": s.key, "name": s.name, "email": s.email, "role": "agent"})
        companies = [b.names.company(contacts=1) for _ in range(1 + b.n_distractors())]
        issues = b.rng.sample(ISSUES, 2)
        requesters = []
        for co in companies:
            org = b.uid("org_", co.name)
            b.add("tickets", "organizations", {"id": org, "name": co.name, "domain": co.domain})
            person = co.contacts[0]
            uid = b.uid("usr_", person.name)
            b.add(
                "tickets",
                "users",
                {"id": uid, "name": person.name, "email": co.email(person), "organization_id": org},
            )
            requesters.append((org, uid))
        org, uid = requesters[0]
        target = _ticket(b, issues[0], org, uid, 1)
        b.distract(_ticket(b, issues[1], org, uid, 2, "high"))
        for o, u in requesters[1:]:
            b.distract(_ticket(b, issues[0], o, u, b.rng.randrange(1, 6)))
        for n in range(b.n_filler()):
            o, u = b.rng.choice(requesters[1:])
            _ticket(b, b.book.question()[0], o, u, 7 + n, b.pick("low", "normal"))
        return companies[0], org, target, issues[0]

    @staticmethod
    def _reference(
        b: TaskBuilder, co: Company, org: str, target: str, issue: str, engineers: tuple[Staff, Staff]
    ) -> None:
        """The first instruction (high, the first engineer), a finished turn, then the changed one."""
        eng_a, eng_b = engineers
        b.call("tickets", "search_tickets", query=issue, organization_id=org)
        b.call("tickets", "update_ticket", ticket_id=target, priority="high")
        b.call("tickets", "assign_ticket", ticket_id=target, assignee_id=eng_a.key)
        b.say(f"Done: the {co.name} ticket is now high priority and assigned to {eng_a.name}.")
        b.call("tickets", "update_ticket", ticket_id=target, priority="urgent")
        b.call("tickets", "assign_ticket", ticket_id=target, assignee_id=eng_b.key)
        if b.hard:
            b.call(
                "tickets",
                "add_comment",
                ticket_id=target,
                public=False,
                body=f"Re-assigned to {eng_b.name}: {eng_a.name} is out this week; now urgent after the customer call.",
            )
        b.say(f"Changed: the ticket is urgent and assigned to {eng_b.name}.")
        with b.alternative():  # the organisation's open tickets listed; assignee first, then priority, each time
            b.call("tickets", "search_tickets", organization_id=org, status=["new", "open"])
            b.call("tickets", "get_ticket", ticket_id=target)
            b.call("tickets", "assign_ticket", ticket_id=target, assignee_id=eng_a.key)
            b.call("tickets", "update_ticket", ticket_id=target, priority="high")
            b.say(f"{eng_a.name} has it now, priority high.")
            b.call("tickets", "get_ticket", ticket_id=target)
            if b.hard:
                b.call("tickets", "add_comment", ticket_id=target, public=False, body=f"Now {eng_b.name}: urgent.")
            b.call("tickets", "assign_ticket", ticket_id=target, assignee_id=eng_b.key)
            b.call("tickets", "update_ticket", ticket_id=target, priority="urgent")
            b.say(f"Urgent now, with {eng_b.name}.")

    @staticmethod
    def _checks(b: TaskBuilder, target: str, eng_a: Staff, eng_b: Staff) -> None:
        """The final state follows the change; each half of the first instruction was carried out before it;
        (hard) the note; the distractor tickets unchanged, weighing more than 1 − the pass mark so that
        changing one fails the task."""
        final = 0.2 if b.hard else 0.25
        b.check(
            "priority_follows_change",
            final,
            "The ticket ends urgent (the changed instruction), not high.",
            {"kind": "record_fields", "service": "tickets", "table": "tickets", "id": target,
             "fields": {"priority": "urgent"}},
            after_turn=1,
        )  # fmt: skip
        b.check(
            "assignee_follows_change",
            final,
            f"The ticket ends assigned to {eng_b.name}, not {eng_a.name}.",
            {"kind": "record_fields", "service": "tickets", "table": "tickets", "id": target,
             "fields": {"assignee_id": eng_b.key}},
            after_turn=1,
        )  # fmt: skip
        b.check(
            "first_instruction_done",
            0.1,
            "The first instruction's priority was carried out before the change (the ticket was set to high first).",
            _before(target, "update_ticket", {"priority": "high"}, {"priority": "urgent"}),
        )
        b.check(
            "first_assignee_done",
            0.1,
            f"The first instruction's assignment was carried out before the change ({eng_a.name}, then {eng_b.name}).",
            _before(target, "assign_ticket", {"assignee_id": eng_a.key}, {"assignee_id": eng_b.key}),
        )
        if b.hard:
            b.check(
                "reassignment_noted",
                0.1,
                "An internal note on the ticket says why it was re-assigned.",
                {"kind": "tool_called", "service": "tickets", "tool": "add_comment",
                 "arguments": {"ticket_id": target, "public": False}},
            )  # fmt: skip
        b.check(
            "other_tickets_untouched",
            0.3,
            "The customer's other tickets and other customers' tickets on the same problem are unchanged.",
            {"kind": "records_unchanged", "service": "tickets", "table": "tickets", "ids": list(b.distractors)},
            ("priority_follows_change",),
        )
        b.forbid(
            "changed_wrong_ticket",
            "Re-prioritising or re-assigning a ticket other than the one the user means.",
            {"kind": "tool_called", "service": "tickets", "tool": "assign_ticket", "outcome": "any",
             "arguments": {"ticket_id": {"in": list(b.distractors)}}},
            {"service": "tickets", "tool": "assign_ticket",
             "arguments": {"ticket_id": b.distractors[0], "assignee_id": eng_b.key}},
        )  # fmt: skip


def _ticket(b: TaskBuilder, subject: str, org: str, uid: str, days: float, priority: str = "normal") -> str:
    tid = b.uid("tkt_")
    b.add(
        "tickets",
        "tickets",
        {
            "id": tid,
            "subject": subject,
            "description": f"{subject}. Please help, this blocks our team.",
            "requester_id": uid,
            "organization_id": org,
            "status": "open",
            "priority": priority,
            "type": "incident",
            "created_at": b.ago(days=days),
            "updated_at": b.ago(days=days),
        },
    )
    return tid


def _before(target: str, tool: str, first: Json, then: Json) -> Json:
    """A call_order check: the agent's ``tool`` call on the ticket with ``first`` came before the one with ``then``."""
    return {
        "kind": "call_order",
        "first": {"service": "tickets", "tool": tool, "arguments": {"ticket_id": target, **first}},
        "then": {"service": "tickets", "tool": tool, "arguments": {"ticket_id": target, **then}},
    }
