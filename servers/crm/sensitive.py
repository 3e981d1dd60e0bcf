"""The sensitive kinds of the crm service: deals closed, accounts given to another manager, a customer's contact
channel changed (a contact's email or phone, an account's phone), records deleted."""

from __future__ import annotations

from coworkenv.servers.crm.models import CLOSED_STAGES
from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, became, contact_changes, deletes


def close_opportunity(change: Change, ctx: SensitiveContext) -> str | None:
    """``close_opportunity:<opportunity id>``: a deal moved to closed_won or closed_lost."""
    return f"close_opportunity:{change.id}" if became(change, "stage", CLOSED_STAGES) else None


def reassign(change: Change, ctx: SensitiveContext) -> str | None:
    """``reassign:<account id>``: an account given to another account manager (owner_id changed)."""
    return f"reassign:{change.id}" if "owner_id" in change.fields else None


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind(
        "close_opportunity",
        "opportunities",
        ("create", "update"),
        "a deal closed as won or lost",
        close_opportunity,
        reversible=True,
    ),
    SensitiveKind(
        "reassign", "accounts", ("update",), "an account given to another account manager", reassign, reversible=True
    ),
    *contact_changes("contacts", "accounts"),
    *deletes("users", "accounts", "contacts", "opportunities", "activities"),
)
