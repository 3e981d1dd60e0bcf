"""Payments from the helpdesk: refunding the duplicate charge a customer's ticket reports, and telling them."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import (
    CROSS,
    DISTRACTORS,
    MULTISTEP,
    Family,
    Json,
    TaskBuilder,
    money,
    money_rx,
)
from coworkenv.synth.generate.families.kit.duplicate_charges import (
    CUSTOMER,
    DuplicatePair,
    duplicate_pair,
    refund_checks,
)
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, comment, filler_charges, public_reply_check, ticket


@register_family
class TicketDuplicateRefund(Family):
    name = "ticket-duplicate-refund"
    scenario = "billing ticket resolution"
    capabilities = (CROSS, MULTISTEP, DISTRACTORS)
    service_options = (("tickets", "payments"),)
    distractors = (
        "the customer's earlier monthly charges of the same amount; a failed attempt on the same day; (medium+) "
        "the customer's charge of another plan that day; other customers' billing tickets"
    )

    def build(self, b: TaskBuilder) -> str:
        pair, t = self._seed(b)
        self._reference(b, pair, t)
        self._checks(b, pair, t)
        backdrop(b)
        return self._request(b, pair)

    @staticmethod
    def _seed(b: TaskBuilder) -> tuple[DuplicatePair, Json]:
        """The duplicate pair and the customer's billing ticket about it (returned); other customers' billing
        tickets as distractors, their charges as filler."""
        cast = Cast(b)
        x = cast.company(contacts=1)
        for _ in range(1 + b.targets):
            cast.company()
        cast.tickets()
        cast.payments()
        pair = duplicate_pair(b, cast, x)
        filler_charges(b, [cast.cus(c) for c in cast.companies[1:]], b.n_filler())
        day = b.spoken_day(pair.original["created"])
        issue = (
            "Charged twice this month",
            f"Hi, we were charged {money(pair.amount)} twice for our {pair.plan} on {day}. Please refund one of them.",
            "billing",
        )
        t = ticket(b, cast, x, b.ago(hours=b.rng.randint(2, 30)), "open", "normal", issue, tags=["billing"])
        for other in cast.companies[1 : 1 + b.targets]:
            d = ticket(b, cast, other, b.ago(hours=b.rng.randint(2, 60)), "open", "normal", tags=["billing"])
            b.distract(d["id"])
        if b.hard:
            comment(b, t["id"], t["requester_id"], "Any update? Our finance team is asking.", b.ago(hours=1))
        return pair, t

    @staticmethod
    def _reference(b: TaskBuilder, pair: DuplicatePair, t: Json) -> None:
        day = b.spoken_day(pair.original["created"])
        b.call("tickets", "search_tickets", "billing", tag="billing", status=["new", "open"])
        b.call("tickets", "get_ticket", ticket_id=t["id"])
        b.call("payments", "search_customers", "customer", query=pair.company.name.split()[0])
        b.call(
            "payments", "list_charges", "day", customer=CUSTOMER, created_gte=pair.day_start, created_lt=pair.day_end
        )
        b.call("payments", "create_refund", charge=pair.duplicate["id"], reason="duplicate")
        reply = (
            f"You're right, the {pair.plan} was charged twice on {day}. We refunded the duplicate charge of "
            f"{money(pair.amount)}; it will show on your card in 5-10 days."
        )
        b.call("tickets", "add_comment", ticket_id=t["id"], body=reply, public=True)
        b.call("tickets", "update_ticket", ticket_id=t["id"], status="solved")
        with b.alternative():  # the customer's charges first, then the ticket; reply and solve in one update
            b.call("payments", "search_customers", "customer", query=pair.company.domain)
            b.call("payments", "list_charges", customer=CUSTOMER, created_gte=pair.day_start)
            b.call("tickets", "list_organizations", "orgs", query=pair.company.name.split()[0])
            b.call("tickets", "search_tickets", organization_id={"$ref": "orgs.items.0.id"}, status=["open"])
            b.call("payments", "create_refund", charge=pair.original["id"], reason="duplicate")
            b.call("tickets", "add_comment", ticket_id=t["id"], body=f"Refunded one charge of {money(pair.amount)}.")
            b.call("tickets", "update_ticket", ticket_id=t["id"], status="solved")

    @staticmethod
    def _checks(b: TaskBuilder, pair: DuplicatePair, t: Json) -> None:
        """The refund (0.4, with its forbidden actions), a public reply (0.3), the ticket solved (0.3): each of
        the three asks weighs more than a quarter, so leaving one out (or replying "Hi.") fails the task."""
        refund_checks(b, pair, 0.4)
        public_reply_check(b, t["id"], 0.3, {"regex": money_rx(pair.amount)}, "gives the amount refunded")
        b.check(
            "ticket_solved",
            0.3,
            "The ticket is solved.",
            {
                "kind": "record_fields",
                "service": "tickets",
                "table": "tickets",
                "id": t["id"],
                "fields": {"status": "solved"},
            },
            ("one_refunded",),
        )

    @staticmethod
    def _request(b: TaskBuilder, pair: DuplicatePair) -> str:
        x = pair.company
        ask = Ask(
            steps=(
                b.pick("check it against the payments", "see whether they really were double-charged"),
                b.pick("refund the duplicate if it's real", "refund the extra charge if so"),
                b.pick(
                    "let them know on the ticket", "reply to them on the ticket", "answer them publicly on the ticket"
                ),
                b.pick("solve it", "mark the ticket solved", "close it out as solved"),
            ),
            context=b.pick(
                "There's a billing ticket from {company}.",
                "{company} opened a ticket saying we charged them twice.",
                "{company} is complaining about a double charge in the helpdesk.",
            ),
            avoid=b.pick("Leave the other billing tickets alone.", "Don't refund anything else.", ""),
            topic="{company} billing ticket",
        )
        return compose(b, ask, company=x.name)
