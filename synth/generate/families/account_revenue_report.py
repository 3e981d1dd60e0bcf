"""A revenue report per account each account manager looks after (crm + payments)."""

from __future__ import annotations

from datetime import timedelta

from coworkenv.servers.kit import format_time, parse_time
from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import (
    CROSS,
    DISTRACTORS,
    REPORT,
    WINDOW,
    Family,
    Json,
    TaskBuilder,
    money,
    possessive,
)
from coworkenv.synth.generate.families.kit.names import Company, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, charge
from coworkenv.synth.generate.families.kit.texts import PLANS


@register_family
class RevenueReport(Family):
    name = "account-revenue-report"
    scenario = "revenue report for an account manager"
    capabilities = (CROSS, WINDOW, REPORT, DISTRACTORS)
    service_options = (("crm", "payments"),)
    distractors = (
        "charges just before and just after the month; failed charges in the month; accounts of other "
        "managers with charges in the month; (hard) a partly refunded charge"
    )

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        am = b.rng.choice(cast.managers)
        mine = [cast.company(owner=am) for _ in range(b.targets)]
        rest = [m for m in cast.managers if m is not am]
        theirs = [cast.company(owner=b.rng.choice(rest)) for _ in range(1 + (b.difficulty != "easy"))]
        cast.crm()
        cast.payments()
        start, end, label = b.month(1)
        totals, excluded = self._seed(b, cast, mine, theirs, start, end)
        self._reference(b, am, mine, totals, (start, end, label))
        self._checks(b, mine, totals, excluded, label)
        some: Json = next(r for r in b.rows("payments", "charges") if r["status"] == "succeeded")
        b.forbid_call(
            "moved_money",
            "Refunding anything while asked only for a report.",
            "payments",
            "create_refund",
            {},
            {"charge": some["id"]},
        )
        net = " net of refunds" if b.hard else ""
        ask = Ask(
            steps=(
                b.pick(
                    "work out how much each of {first's} accounts paid us in {month}" + net,
                    "total up what each account {first} manages paid us in {month}" + net,
                    "add up the {month} payments of every account {manager} manages" + net,
                ),
            ),
            context=b.pick("{manager} has a review coming up.", "I'm preparing {first's} account review.", ""),
            avoid=b.pick(
                "Count only successful charges.", "Successful charges only, please.", "Leave failed charges out."
            ),
            report=b.pick("give me the total per account", "tell me each account's total", "send me the figures"),
            topic="{month} revenue for {first's} accounts",
        )
        backdrop(b)
        return compose(b, ask, first=am.first, manager=am.name, month=label)

    @staticmethod
    def _seed(
        b: TaskBuilder, cast: Cast, mine: list[Company], theirs: list[Company], start: str, end: str
    ) -> tuple[dict[str, int], dict[str, list[int]]]:
        """The charges: per account of the manager, the month's successful charges (their net total is the
        answer) and the amounts of the charges that must be left out (before, after, failed); other managers'
        accounts get a charge in the month. Returns (totals, excluded amounts) by company name."""
        t0, t1 = parse_time(start), parse_time(end)
        span = int((t1 - t0).total_seconds() // 3600)
        totals: dict[str, int] = {}
        excluded: dict[str, list[int]] = {}
        for i, c in enumerate(mine):
            total = 0
            for _ in range(b.rng.randint(1, 3)):
                plan, amount = b.rng.choice(PLANS)
                when = format_time(t0 + timedelta(hours=b.rng.randint(1, span - 2)))
                refunded = 0
                if b.hard and i == 0 and total == 0:
                    refunded = amount // 4
                    ch = charge(b, cast.cus(c), amount, when, plan, refunded=refunded)
                    refund = {"id": b.uid("re_"), "charge": ch["id"], "amount": refunded}
                    refund |= {"reason": "requested_by_customer", "status": "succeeded", "created": when}
                    b.add("payments", "refunds", refund)
                else:
                    charge(b, cast.cus(c), amount, when, plan)
                total += amount - refunded
            totals[c.name] = total
            plan, amount = b.rng.choice(PLANS)
            before = charge(b, cast.cus(c), amount, format_time(t0 - timedelta(hours=b.rng.randint(2, 40))), plan)
            after = charge(b, cast.cus(c), amount, format_time(t1 + timedelta(hours=b.rng.randint(1, 30))), plan)
            b.distract(before["id"], after["id"])
            excluded[c.name] = [amount, amount]
            if b.difficulty != "easy":
                failed = charge(b, cast.cus(c), amount, format_time(t0 + timedelta(hours=30)), plan, "failed")
                b.distract(failed["id"])
                excluded[c.name].append(amount)
        for c in theirs:
            plan, amount = b.rng.choice(PLANS)
            decoy = charge(b, cast.cus(c), amount, format_time(t0 + timedelta(hours=b.rng.randint(1, span - 2))), plan)
            b.distract(cast.acc(c), decoy["id"])
        return totals, excluded

    @staticmethod
    def _reference(
        b: TaskBuilder, am: Staff, mine: list[Company], totals: dict[str, int], month: tuple[str, str, str]
    ) -> None:
        start, end, label = month
        b.call("crm", "list_users", "am", query=am.person.last)
        b.call("crm", "search_accounts", "accounts", owner_id={"$ref": "am.items.0.id"})
        for i, c in enumerate(mine):
            b.call("payments", "search_customers", f"cus{i}", query=c.name.split()[0])
            customer = {"$ref": f"cus{i}.items.0.id"}
            b.call("payments", "list_charges", customer=customer, status="succeeded", created_gte=start, created_lt=end)
        listing = "; ".join(f"{c.name}: {money(totals[c.name])}" for c in mine)
        b.say(f"In {label}, {am.first}'s accounts paid: {listing}.")
        with b.alternative():  # every charge of the month, account by account from the CRM's account records
            b.call("crm", "search_accounts", "accounts", owner_id=am.key)
            b.call("payments", "list_customers", "customers")
            for c in mine:
                b.call("payments", "list_charges", customer=f"cus_{c.key}", created_gte=start, created_lt=end)
            b.call("payments", "list_refunds")
            b.say(f"{label} totals for {am.name}'s accounts: {listing}.")

    @staticmethod
    def _checks(
        b: TaskBuilder, mine: list[Company], totals: dict[str, int], excluded: dict[str, list[int]], label: str
    ) -> None:
        """One said_value per account: the amount right after the account's name must be its total, and a
        total that counts a charge of the wrong month (or a failed one) fails the check."""
        firsts = [c.name.split()[0] for c in mine]
        amounts = {r["amount"] for r in b.rows("payments", "charges")} | set(totals.values())
        amounts.add(sum(totals.values()))
        for i, c in enumerate(mine):
            name = c.name.split()[0] if firsts.count(c.name.split()[0]) == 1 else c.name
            total = totals[c.name]
            left_out = excluded[c.name]
            wrong = sorted({total + sum(left_out[:k]) for k in range(1, len(left_out) + 1)} - amounts)
            b.check(
                f"total_{i + 1}",
                1 / len(mine),
                f"The agent states {possessive(c.name)} total for {label} ({money(total)}), not one that counts "
                "a charge outside the month or a failed one.",
                {"kind": "said_value", "value": total, "cents": True, "label": name,
                 "wrong_values": wrong},
            )  # fmt: skip
