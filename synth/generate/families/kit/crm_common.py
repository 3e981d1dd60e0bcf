"""What the CRM families share: an opportunity record, its amount, and the guard on the other deals."""

from __future__ import annotations

from datetime import timedelta

from coworkenv.servers.crm.models import PROBABILITY
from coworkenv.synth.generate.families.kit.base import Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import Company
from coworkenv.synth.generate.families.kit.seeds import Cast


def opportunity(
    b: TaskBuilder, cast: Cast, c: Company, label: str, stage: str, amount: int, loss_reason: str | None = None
) -> Json:
    closed = stage.startswith("closed")
    close = (b.now + timedelta(days=-b.rng.randint(20, 200) if closed else b.rng.randint(5, 60))).date().isoformat()
    created = b.ago(days=b.rng.randint(60, 300) if closed else b.rng.randint(20, 90))
    updated = b.ago(days=b.rng.randint(2, 15)) if not closed else f"{close}T16:00:00Z"
    record = {
        "id": b.uid("opp_", f"{c.key}_{label.split()[-1]}"),
        "account_id": cast.acc(c),
        "name": f"{c.name} - {label}",
        "stage": stage,
        "amount": amount,
        "probability": PROBABILITY[stage],
        "close_date": close,
        "owner_id": cast.owner[c.key].key,
        "next_step": "" if closed else b.pick("Send the quote", "Legal review of the MSA", "Pricing call"),
        "loss_reason": loss_reason,
        "closed_at": f"{close}T16:00:00Z" if closed else None,
        "created_at": min(created, updated),
        "updated_at": updated,
    }
    return b.add("crm", "opportunities", record)


def deal_amount(b: TaskBuilder) -> int:
    return b.rng.randrange(12, 250) * 100_000


GUARD = 0.3
"""Weight of the check that the distractors are left alone: more than 1 − the pass mark, so an agent that
acts on one fails the task however well it does the rest."""


def others_unchanged(b: TaskBuilder, where: Json, requires: tuple[str, ...]) -> None:
    b.check(
        "other_deals_untouched",
        GUARD,
        "No other opportunity changed.",
        {"kind": "records_unchanged", "service": "crm", "table": "opportunities", "where": where},
        requires,
    )
