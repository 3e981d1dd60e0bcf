"""Lookups and business rules shared by the crm tools: each failure is a ServiceError saying what to do."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from coworkenv.servers.kit import ServiceError, ToolContext
from coworkenv.servers.kit.store import Row

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_DOMAIN_LABEL = re.compile(r"^[^\W_](?:(?:[^\W_]|-)*[^\W_])?$")


def get_user(ctx: ToolContext, user_id: str) -> Row:
    return ctx.fetch("users", user_id, "user", "Use list_users to find the staff member's id (ids start with 'usr_').")


def check_owner(ctx: ToolContext, owner_id: str) -> Row:
    """The user who will own a record: must exist and be active."""
    row = get_user(ctx, owner_id)
    if not row["active"]:
        raise ServiceError(
            f"User {owner_id} ({row['name']}) is inactive and cannot own records.",
            "Choose an active user; list_users shows who is active.",
        )
    return row


def get_account(ctx: ToolContext, account_id: str) -> Row:
    return ctx.fetch(
        "accounts", account_id, "account", "Use search_accounts to find the account's id (ids start with 'acc_')."
    )


def get_contact(ctx: ToolContext, contact_id: str) -> Row:
    return ctx.fetch(
        "contacts", contact_id, "contact", "Use search_contacts to find the contact's id (ids start with 'con_')."
    )


def get_opportunity(ctx: ToolContext, opportunity_id: str) -> Row:
    return ctx.fetch(
        "opportunities",
        opportunity_id,
        "opportunity",
        "Use search_opportunities to find the opportunity's id (ids start with 'opp_').",
    )


def check_email(email: str) -> str:
    value = email.strip()
    if not _EMAIL.match(value):
        raise ServiceError(
            f"{email!r} is not a valid email address.", "Give an address like 'jamie.lee@northwind.com', or omit it."
        )
    return value


def check_domain(domain: str) -> str:
    """A bare company domain, stored lowercase without a leading 'www.'."""
    value = domain.strip().lower().rstrip(".")
    value = value.removeprefix("www.")
    labels = value.split(".")
    if len(labels) < 2 or not all(_DOMAIN_LABEL.match(label) for label in labels):
        raise ServiceError(
            f"{domain!r} is not a bare domain name.",
            "Give just the domain, like 'northwind.com' (no 'https://', path, '@' or spaces).",
        )
    return value


def check_domain_free(ctx: ToolContext, domain: str, account_id: str | None = None) -> None:
    rows = ctx.table("accounts").select("domain = ? AND id != ?", [domain, account_id or ""])
    if rows:
        other = rows[0]
        raise ServiceError(
            f"Account {other['id']} ({other['name']}) already has the domain {domain}.",
            "Accounts must not be duplicated: work with that account (get_account / update_account) instead.",
        )


def check_contact_email_free(ctx: ToolContext, email: str, contact_id: str | None = None) -> None:
    rows = ctx.table("contacts").select("casefold(email) = ? AND id != ?", [email.casefold(), contact_id or ""])
    if rows:
        other = rows[0]
        raise ServiceError(
            f"Contact {other['id']} ({other['name']}) already has the email {other['email']}.",
            "Use that contact (get_contact / update_contact) instead of creating a duplicate.",
        )


def check_date(value: str, what: str = "close_date") -> str:
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise ServiceError(
            f"{what} {value!r} is not a calendar date.", "Write it as YYYY-MM-DD, for example '2026-04-30'."
        ) from None


def belongs(row: Row, account_id: str, kind: str) -> None:
    """A contact or opportunity must belong to the account it is mentioned with."""
    if row["account_id"] != account_id:
        raise ServiceError(
            f"{kind.capitalize()} {row['id']} belongs to account {row['account_id']}, not {account_id}.",
            f"Pass the {kind}'s own account, or omit account_id to use it.",
        )


def changes_of(row: Row, values: dict[str, Any]) -> dict[str, Any]:
    """The given (non-None) values that differ from the record."""
    return {k: v for k, v in values.items() if v is not None and row.get(k) != v}
