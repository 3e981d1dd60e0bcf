"""A duplicate charge and the checks on its refund: what the payments families that refund one share."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from coworkenv.servers.kit import format_time
from coworkenv.synth.generate.families.kit.base import Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import Company
from coworkenv.synth.generate.families.kit.seeds import Cast, charge
from coworkenv.synth.generate.families.kit.texts import PLANS

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
