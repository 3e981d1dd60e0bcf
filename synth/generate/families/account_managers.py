"""Escalating the stale enterprise tickets to the customers' account managers (tickets + crm + email)."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import (
    COMMS,
    CROSS,
    DISTRACTORS,
    WINDOW,
    Family,
    Json,
    TaskBuilder,
    possessive,
    rx,
)
from coworkenv.synth.generate.families.kit.names import OUR_DOMAIN, USER, Company, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_tickets, ticket
from coworkenv.synth.generate.families.kit.texts import ISSUES

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
