"""Families for the account managers: escalating stale enterprise tickets to them (tickets + crm + email), and
a revenue report per account they manage (crm + payments)."""

from __future__ import annotations

from datetime import timedelta

from coworkenv.servers.kit import format_time, parse_time
from coworkenv.synth.generate.families.backdrop import backdrop
from coworkenv.synth.generate.families.base import (
    COMMS,
    CROSS,
    DISTRACTORS,
    REPORT,
    WINDOW,
    Family,
    Json,
    TaskBuilder,
    money,
    possessive,
    rx,
)
from coworkenv.synth.generate.families.names import OUR_DOMAIN, USER, Company, Staff
from coworkenv.synth.generate.families.phrasing import Ask, compose
from coworkenv.synth.generate.families.registry import register_family
from coworkenv.synth.generate.families.seeds import Cast, charge, filler_tickets, ticket
from coworkenv.synth.generate.families.texts import ISSUES, PLANS

UNRESOLVED = ["new", "open", "pending", "hold"]


@register_family
class EscalateToManagers(Family):
    name = "escalate-to-account-managers"
    scenario = "support escalation to account managers"
    capabilities = (CROSS, WINDOW, DISTRACTORS, COMMS)
    service_options = (("tickets", "crm", "email"),)
    distractors = (
        "fresh enterprise tickets; old open tickets of non-enterprise accounts (tiers live only in the CRM); "
        "old enterprise tickets already solved"
    )

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        hours = b.pick(24, 48, 72)
        targets = self._seed(b, cast, hours)
        managers: list[Staff] = []
        for c, _ in targets:
            if cast.owner[c.key] not in managers:
                managers.append(cast.owner[c.key])
        self._reference(b, cast, hours, targets, managers)
        self._checks(b, cast, targets, managers)
        span = b.pick(f"{hours} hours", {24: "a day", 48: "two days", 72: "three days"}[hours])
        ask = Ask(
            steps=(
                b.pick(
                    "find every unresolved ticket older than {span} that belongs to an enterprise account (check "
                    "the tier in the CRM)",
                    "look up the enterprise accounts' tickets that have been unresolved for more than {span}",
                    "go through the unresolved tickets older than {span} of enterprise customers",
                ),
                b.pick(
                    "email each account's manager (the owner of the account in the CRM) about their waiting tickets",
                    "let each account manager know by email which of their tickets are waiting",
                    "write to the account owner in the CRM for each of them, naming the ticket",
                ),
            ),
            context=b.pick(
                "Some of our enterprise customers have had tickets sitting unresolved for more than {span}.",
                "The account managers want to hear about enterprise tickets that go stale.",
                "",
            ),
            avoid=b.pick(
                "Only enterprise accounts, and only tickets older than {span}.",
                "Don't email the customers themselves.",
                "Skip smaller accounts and fresh tickets.",
            ),
            topic="stale enterprise tickets",
        )
        backdrop(b)
        return compose(b, ask, span=span)

    @staticmethod
    def _seed(b: TaskBuilder, cast: Cast, hours: int) -> list[tuple[Company, Json]]:
        """The companies and tickets: the stale enterprise tickets (returned), distractors and filler."""
        n_ent = 1 if b.difficulty == "easy" else 2
        ent = [cast.company("enterprise", owner=cast.managers[i]) for i in range(n_ent)]
        small = [cast.company(b.pick("business", "starter")) for _ in range(1 + b.hard)]
        cast.tickets(tag_tiers=False)
        cast.crm()
        cast.email(colleagues=False)
        issues = b.rng.sample(ISSUES, b.targets + 3)
        targets = []
        for i in range(b.targets):
            c = ent[i % n_ent]
            created = b.ago(hours=hours + b.rng.randint(3, 80))
            targets.append((c, ticket(b, cast, c, created, b.pick("open", "pending", "new"), "high", issues.pop())))
        for k in range(b.n_distractors()):
            if k % 3 == 0:
                t = ticket(b, cast, b.rng.choice(ent), b.ago(hours=b.rng.randint(1, hours - 3)), "open", "urgent")
            elif k % 3 == 1:
                t = ticket(b, cast, b.rng.choice(small), b.ago(hours=hours + b.rng.randint(4, 90)), "open", "high")
            else:
                t = ticket(b, cast, b.rng.choice(ent), b.ago(hours=hours + b.rng.randint(4, 50)), "solved", "normal")
            b.distract(t["id"])
        filler_tickets(b, cast, b.n_filler() // 2)
        return targets

    @staticmethod
    def _reference(
        b: TaskBuilder, cast: Cast, hours: int, targets: list[tuple[Company, Json]], managers: list[Staff]
    ) -> None:
        b.call("tickets", "search_tickets", "stale", status=UNRESOLVED, created_before=b.ago(hours=hours))
        b.call("crm", "search_accounts", "enterprise", tier=["enterprise"])
        for i, am in enumerate(managers):
            b.call("crm", "get_user", f"am{i}", user_id=am.key)
        for i, am in enumerate(managers):
            mine = [(c, t) for c, t in targets if cast.owner[c.key] is am]
            lines = "\n".join(
                f"- {t['id']}: {t['subject']} ({c.name}, open since {b.spoken_day(t['created_at'])})" for c, t in mine
            )
            b.call(
                "email",
                "send_message",
                to=[{"$ref": f"am{i}.email"}],
                subject=f"Escalation: enterprise ticket(s) open more than {hours}h",
                body=f"Hi {am.first},\n\nThese tickets of your accounts have waited more than {hours} hours:\n{lines}\n\n"
                f"Could you step in with the customer?\n\n{USER.first}",
            )
        with b.alternative():  # the enterprise accounts first, then their tickets; one email per ticket
            b.call("crm", "search_accounts", "enterprise", tier=["enterprise"])
            b.call("tickets", "list_organizations", "orgs")
            for c, t in targets:
                b.call("tickets", "get_ticket", ticket_id=t["id"])
                am = cast.owner[c.key]
                b.call("crm", "get_account", account_id=cast.acc(c))
                b.call("email", "send_message", to=[am.email], subject=f"{c.name}: ticket waiting",
                       body=f"Hi {am.first}, ticket {t['id']} ({t['subject']}) has waited over {hours} hours.")  # fmt: skip

    @staticmethod
    def _checks(b: TaskBuilder, cast: Cast, targets: list[tuple[Company, Json]], managers: list[Staff]) -> None:
        """Each manager told about each of their stale tickets (0.4 in all); two guards of 0.3 that need that
        work: no escalation to anyone else, and none that names a distractor ticket (so acting on a distractor
        fails the task)."""
        told = tuple(f"told_{i + 1}" for i in range(len(targets)))
        sent = {"mailbox": USER.email, "label_ids": {"contains": "SENT"}, "date": {"gte": b.now_iso}}
        for cid, (c, t) in zip(told, targets, strict=True):
            am = cast.owner[c.key]
            keyword = next(k for s, _, k in ISSUES if s == t["subject"])
            b.check(
                cid,
                0.4 / len(targets),
                f"{am.name} ({possessive(c.name)} account manager) got an email about '{t['subject']}'.",
                {"kind": "record_exists", "service": "email", "table": "messages",
                 "where": {**sent, "to": {"contains": am.email},
                           "body": {"regex": f"{t['id']}|{rx(keyword)}", "case_insensitive": True}}},
            )  # fmt: skip
        b.check(
            "nobody_else",
            0.3,
            "No escalation email went to anyone but those account managers.",
            {"kind": "record_absent", "service": "email", "table": "messages",
             "where": {"mailbox": USER.email, "date": {"gte": b.now_iso},
                       "to": {"any": {"not": {"in": [m.email for m in managers]}}}}},
            told,
        )  # fmt: skip
        ids = "|".join(rx(d) for d in b.distractors)
        b.check(
            "no_distractor_escalated",
            0.3,
            "No escalation email names a ticket that is not both enterprise and stale (a fresh one, a smaller "
            "account's, an already solved one).",
            {"kind": "record_absent", "service": "email", "table": "messages",
             "where": {**sent, "body": {"regex": f"(?<![\\w])(?:{ids})(?![\\w])", "case_insensitive": True}}},
            told,
        )  # fmt: skip
        customer = targets[0][0]
        b.forbid_call(
            "emailed_customer",
            f"Emailing someone outside {OUR_DOMAIN} about an internal escalation.",
            "email",
            "send_message",
            {"to": {"any": {"not": {"regex": rx("@" + OUR_DOMAIN) + ">?$", "case_insensitive": True}}}},
            {
                "to": [customer.email(customer.contacts[0])],
                "subject": "Your ticket",
                "body": "We are escalating your ticket internally.",
            },
        )


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
