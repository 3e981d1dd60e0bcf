"""CRM family: offboarding a churned account (its open deals lost, the account churned)."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import (
    DISTRACTORS,
    MULTISTEP,
    Family,
    Json,
    TaskBuilder,
)
from coworkenv.synth.generate.families.kit.crm_common import GUARD, deal_amount, opportunity, others_unchanged
from coworkenv.synth.generate.families.kit.names import Company
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast
from coworkenv.synth.generate.families.kit.texts import LOSS_GIST, LOSS_REASONS


@register_family
class ChurnAccount(Family):
    name = "crm-churn-account"
    scenario = "account offboarding"
    capabilities = (MULTISTEP, DISTRACTORS)
    service_options = (("crm",),)
    distractors = "other accounts' open deals with the same owner; another account in the same industry; (hard) a won deal of the churning account"

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        owner = b.rng.choice(cast.managers)
        x = cast.company(b.pick("business", "starter"), owner=owner)
        others = [cast.company(owner=owner) for _ in range(1 + (b.difficulty != "easy"))]
        cast.crm()
        reason = b.rng.choice(LOSS_REASONS)
        open_deals = self._deals(b, cast, x, others)
        self._reference(b, cast, x, open_deals, reason)
        self._checks(b, cast, x, others, open_deals, reason)
        steps = [
            b.pick(
                "mark {company} as churned in the CRM",
                "offboard {company} in the CRM (mark the account churned)",
                "set {company's} account to churned",
            )
        ]
        if b.hard:
            steps.append(b.pick("log a note on the account saying why", "add a note to the account with the reason"))
        ask = Ask(
            steps=steps,
            context=b.pick(
                "{company} has told us they won't renew ({reason}).",
                "We lost {company}: {reason}.",
                "Bad news: {company} is leaving us ({reason}).",
            ),
            avoid=b.pick("Other accounts stay as they are.", "Don't touch the other accounts.", ""),
            topic="{company} churn",
        )
        backdrop(b)
        return compose(b, ask, company=x.name, reason=reason.lower())

    @staticmethod
    def _reference(b: TaskBuilder, cast: Cast, x: Company, open_deals: list[Json], reason: str) -> None:
        b.call("crm", "search_accounts", "acct", query=x.name.split()[0])
        b.call("crm", "get_account", account_id={"$ref": "acct.items.0.id"})
        for d in open_deals:
            b.call("crm", "update_opportunity", opportunity_id=d["id"], stage="closed_lost", loss_reason=reason)
        b.call("crm", "update_account", account_id=cast.acc(x), status="churned")
        if b.hard:
            b.call(
                "crm",
                "log_activity",
                type="note",
                subject="Account churned",
                body=f"{x.name} is not renewing: {reason}.",
                account_id=cast.acc(x),
            )
        with b.alternative():  # the deals found by account, the note first, the deals closed last to first
            b.call("crm", "search_accounts", "acct", query=x.domain)
            b.call("crm", "search_opportunities", account_id={"$ref": "acct.items.0.id"}, is_open=True)
            if b.hard:
                b.call("crm", "log_activity", type="note", subject="Churn", body=reason, account_id=cast.acc(x))
            for d in reversed(open_deals):
                b.call("crm", "update_opportunity", opportunity_id=d["id"], stage="closed_lost", loss_reason=reason)
            b.call("crm", "update_account", account_id=cast.acc(x), status="churned")

    @staticmethod
    def _deals(b: TaskBuilder, cast: Cast, x: Company, others: list[Company]) -> list[Json]:
        """The churning account's open deals (returned); (hard) its won deal of last year; the other accounts'
        open deals."""
        labels = b.rng.sample(["Seat expansion", "Analytics add-on", f"{b.now.year} renewal", "Training package"], 3)
        open_deals = [
            opportunity(b, cast, x, labels[i], b.pick("prospecting", "qualification", "proposal"), deal_amount(b))
            for i in range(1 if b.difficulty == "easy" else 2)
        ]
        won = [opportunity(b, cast, x, f"{b.now.year - 1} renewal", "closed_won", deal_amount(b))] if b.hard else []
        decoys = [opportunity(b, cast, o, labels[-1], "proposal", deal_amount(b)) for o in others]
        b.distract(*(cast.acc(o) for o in others), *(d["id"] for d in decoys + won))
        return open_deals

    @staticmethod
    def _checks(
        b: TaskBuilder, cast: Cast, x: Company, others: list[Company], open_deals: list[Json], reason: str
    ) -> None:
        """The account churned and its open deals lost (equal weight: either alone fails), (hard) the note;
        every other deal unchanged (enough weight that touching one fails the task)."""
        work = 0.3 if b.hard else 0.35
        gist = LOSS_GIST[reason]  # the reason as given, in any words: "Hi." is no reason
        b.check(
            "account_churned",
            work,
            f"{x.name} is marked churned.",
            {
                "kind": "record_fields",
                "service": "crm",
                "table": "accounts",
                "id": cast.acc(x),
                "fields": {"status": "churned"},
            },
        )
        for i, d in enumerate(open_deals):
            b.check(
                f"deal_lost_{i + 1}",
                work / len(open_deals),
                f"The open deal '{d['name']}' is closed lost with the reason the customer gave.",
                {
                    "kind": "record_fields",
                    "service": "crm",
                    "table": "opportunities",
                    "id": d["id"],
                    "fields": {"stage": "closed_lost", "loss_reason": {"regex": gist, "case_insensitive": True}},
                },
            )
        if b.hard:
            b.check(
                "note_logged",
                1 - GUARD - 2 * work,
                "A note saying why the customer churned is logged on the account.",
                {
                    "kind": "record_exists",
                    "service": "crm",
                    "table": "activities",
                    "where": {
                        "account_id": cast.acc(x),
                        "type": "note",
                        "created_at": {"gte": b.now_iso},
                        "subject|body": {"regex": gist, "case_insensitive": True},
                    },
                },
            )
        closing = [d["id"] for d in open_deals]
        others_unchanged(b, {"id": {"not": {"in": closing}}}, ("account_churned",))
        b.forbid_call(
            "churned_wrong_account",
            "Marking another customer as churned.",
            "crm",
            "update_account",
            {"account_id": {"in": [cast.acc(o) for o in others]}, "status": "churned"},
            {"account_id": cast.acc(others[0]), "status": "churned"},
        )
