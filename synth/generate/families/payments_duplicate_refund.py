"""Payments: refunding a duplicate charge the user points at."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import DISTRACTORS, REPORT, WINDOW, Family, TaskBuilder, money
from coworkenv.synth.generate.families.kit.duplicate_charges import (
    CUSTOMER,
    DuplicatePair,
    duplicate_pair,
    refund_checks,
)
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_charges


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
