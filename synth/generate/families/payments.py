"""Payments families: refunding a duplicate charge (alone, or from a helpdesk ticket)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from coworkenv.servers.kit import format_time
from coworkenv.synth.generate.families.backdrop import backdrop
from coworkenv.synth.generate.families.base import (
    CROSS,
    DISTRACTORS,
    MULTISTEP,
    REPORT,
    WINDOW,
    Family,
    Json,
    TaskBuilder,
    money,
    money_rx,
)
from coworkenv.synth.generate.families.names import Company
from coworkenv.synth.generate.families.phrasing import Ask, compose
from coworkenv.synth.generate.families.registry import register_family
from coworkenv.synth.generate.families.seeds import Cast, charge, comment, filler_charges, public_reply_check, ticket
from coworkenv.synth.generate.families.texts import PLANS

CUSTOMER = {"$ref": "customer.items.0.id"}


@dataclass
class DuplicatePair:
    """The original charge, its accidental duplicate, and the customer's earlier (legitimate) charges."""

    company: Company
    plan: str
    amount: int
    original: Json
    duplicate: Json
    earlier: list[Json]
    day_start: str
    day_end: str


def duplicate_pair(b: TaskBuilder, cast: Cast, c: Company) -> DuplicatePair:
    plan, amount = b.rng.choice(PLANS)
    first = b.now - timedelta(days=b.rng.randint(1, 12), hours=b.rng.randint(0, 8))
    second = first + timedelta(minutes=b.rng.randint(2, 9))
    receipt = c.email(c.contacts[0]) if c.contacts else None
    if b.difficulty != "easy":
        charge(b, cast.cus(c), amount, format_time(first - timedelta(minutes=4)), plan, "failed", receipt=receipt)
    original = charge(b, cast.cus(c), amount, format_time(first), plan, receipt=receipt)
    duplicate = charge(b, cast.cus(c), amount, format_time(second), plan, receipt=receipt)
    earlier = [
        charge(b, cast.cus(c), amount, format_time(first - timedelta(days=30 * k)), plan, receipt=receipt)
        for k in range(1, 2 + (b.difficulty != "easy") + b.hard)
    ]
    b.distract(*(e["id"] for e in earlier))
    if b.difficulty != "easy":  # a near miss: the same customer, the same day, another plan and amount
        other_plan, other_amount = b.rng.choice([p for p in PLANS if p[1] != amount])
        near = charge(b, cast.cus(c), other_amount, format_time(first + timedelta(hours=2)), other_plan)
        b.distract(near["id"])
    day = datetime(first.year, first.month, first.day, tzinfo=first.tzinfo)
    return DuplicatePair(
        c, plan, amount, original, duplicate, earlier, format_time(day), format_time(day + timedelta(days=1))
    )


def refund_checks(b: TaskBuilder, pair: DuplicatePair, weight: float) -> None:
    """Exactly one of the two identical charges refunded in full, as a duplicate; the others left alone."""
    both = [pair.original["id"], pair.duplicate["id"]]
    b.check(
        "one_refunded",
        weight * 0.7,
        f"Exactly one of the two identical {pair.plan} charges is refunded in full.",
        {
            "kind": "record_count",
            "service": "payments",
            "table": "refunds",
            "where": {"charge": {"in": both}, "amount": pair.amount},
            "count": 1,
        },
    )
    b.check(
        "reason_duplicate",
        weight * 0.3,
        "The refund is recorded with the reason 'duplicate'.",
        {
            "kind": "record_exists",
            "service": "payments",
            "table": "refunds",
            "where": {"charge": {"in": both}, "reason": "duplicate"},
        },
    )
    b.forbid(
        "refunded_both",
        "Refunding both charges, so the customer pays nothing for the period.",
        {
            "kind": "record_count",
            "service": "payments",
            "table": "refunds",
            "where": {"charge": {"in": both}},
            "count": {"gte": 2},
        },
        {
            "service": "payments",
            "tool": "create_refund",
            "arguments": {"charge": pair.original["id"], "reason": "duplicate"},
        },
    )
    for table, where, fields in (("charges", {"id": {"in": both}}, ["amount_refunded", "refunded"]),
                                 ("refunds", {"charge": {"in": both}}, None)):  # fmt: skip
        b.allow("payments", table, "either of the two identical charges may be the one refunded", where, fields)
    legit = [e["id"] for e in pair.earlier]
    b.forbid_call(
        "refunded_earlier_month",
        "Refunding an earlier month's charge, which the customer owed.",
        "payments",
        "create_refund",
        {"charge": {"in": legit}},
        {"charge": legit[0], "reason": "duplicate"},
    )


@register_family
class DuplicateRefund(Family):
    name = "payments-duplicate-refund"
    scenario = "billing correction"
    capabilities = (WINDOW, DISTRACTORS, REPORT)
    service_options = (("payments",),)
    distractors = (
        "the customer's earlier monthly charges of the same amount; a failed attempt on the same day; (medium+) "
        "the customer's charge of another plan that day; other customers' charges of the same plan"
    )

    def build(self, b: TaskBuilder) -> str:
        pair = self._seed(b)
        self._reference(b, pair)
        self._checks(b, pair)
        backdrop(b)
        return self._request(b, pair)

    @staticmethod
    def _seed(b: TaskBuilder) -> DuplicatePair:
        """The customer's duplicate pair and earlier charges; other customers' charges as filler."""
        cast = Cast(b)
        x = cast.company(contacts=1)
        for _ in range(1 + b.targets):
            cast.company()
        cast.payments()
        pair = duplicate_pair(b, cast, x)
        filler_charges(b, [cast.cus(c) for c in cast.companies[1:]], b.n_filler())
        return pair

    @staticmethod
    def _reference(b: TaskBuilder, pair: DuplicatePair) -> None:
        x = pair.company
        b.call("payments", "search_customers", "customer", query=x.name.split()[0])
        b.call(
            "payments", "list_charges", "day", customer=CUSTOMER, created_gte=pair.day_start, created_lt=pair.day_end
        )
        b.call("payments", "create_refund", charge=pair.duplicate["id"], reason="duplicate")
        b.say(f"I refunded the duplicate {pair.plan} charge in full: {money(pair.amount)} went back to {x.name}.")
        with b.alternative():  # every charge of the customer, the duplicate read, the original refunded instead
            b.call("payments", "list_customers", "all")
            b.call("payments", "list_charges", customer=pair.original["customer"])
            b.call("payments", "get_charge", charge_id=pair.original["id"])
            b.call("payments", "create_refund", charge=pair.original["id"], amount=pair.amount, reason="duplicate")
            b.say(f"Refunded one of the two identical charges: {money(pair.amount)}.")

    @staticmethod
    def _checks(b: TaskBuilder, pair: DuplicatePair) -> None:
        """The refund (0.55, with its forbidden actions), the amount told (0.35), and only one refund (0.1)."""
        refund_checks(b, pair, 0.55)
        b.check(
            "says_amount",
            0.35,
            "The agent tells the user how much was refunded.",
            {"kind": "said_value", "value": pair.amount, "cents": True},
            ("one_refunded",),
        )
        b.check(
            "one_refund_today",
            0.1,
            "Exactly one refund is made.",
            {
                "kind": "record_count",
                "service": "payments",
                "table": "refunds",
                "where": {"created": {"gte": b.now_iso}},
                "count": 1,
            },
            ("one_refunded",),
        )

    @staticmethod
    def _request(b: TaskBuilder, pair: DuplicatePair) -> str:
        x, day = pair.company, b.spoken_day(pair.original["created"])
        ask = Ask(
            steps=(b.pick("refund the duplicate", "refund the extra charge", "refund the second charge of the two"),),
            context=b.pick(
                "{company} says they were charged twice on {day} for their {plan}.",
                "Looks like we double-charged {company} on {day} for the {plan}.",
                "On {day}, {company} paid for the {plan} twice by mistake.",
            ),
            avoid=b.pick("Only one refund, please.", "Don't refund anything else.", ""),
            report=b.pick("tell me how much went back to them", "let me know the amount", "tell me what you refunded"),
            topic="{company} double charge",
        )
        return compose(b, ask, company=x.name, day=day, plan=pair.plan)


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
