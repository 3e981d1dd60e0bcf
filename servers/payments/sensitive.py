"""The sensitive kinds of the payments service: money moved (refunds, payouts), where a vendor is paid changed,
a bank change asked for, a customer's or vendor's contact channel changed, disputes answered or given up,
records deleted.

Applying a bank change is sensitive: the new account, the vendor's new default account and the old account
disabled are one act, keyed alike. Filing a bank change request is sensitive too (``bank_change_request``):
nothing is paid differently until it is approved, but a request not asked for is the impostor's new bank
details put in the queue of those who approve them. Changing a customer's or vendor's email or phone
(``contact_change``) redirects their receipts, invoices and calls.
"""

from __future__ import annotations

from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, contact_changes, deletes

_ACCOUNT_FIELDS = ("vendor", "customer", "routing_number", "account_number", "iban", "last4", "status")
_DISPUTE_DONE = ("under_review", "won", "lost")


def refund(change: Change, ctx: SensitiveContext) -> str | None:
    """``refund:<charge id>``: money given back on a charge."""
    return f"refund:{change.record['charge']}"


def payout(change: Change, ctx: SensitiveContext) -> str | None:
    """``payout:<vendor id>``: money sent to a vendor."""
    return f"payout:{change.record['vendor']}"


def bank_account(change: Change, ctx: SensitiveContext) -> str | None:
    """``bank_change:<owner id>``: a bank account added for a vendor (or customer), or its numbers, owner or
    status changed."""
    if change.op == "update" and not set(change.fields) & set(_ACCOUNT_FIELDS):
        return None
    owner = change.record.get("vendor") or change.record.get("customer")
    return f"bank_change:{owner}"


def default_account(change: Change, ctx: SensitiveContext) -> str | None:
    """``bank_change:<vendor id>``: the account a vendor's payouts go to replaced."""
    return f"bank_change:{change.id}" if "default_bank_account" in change.fields else None


def bank_change_request(change: Change, ctx: SensitiveContext) -> str | None:
    """``bank_change_request:<vendor id>``: new bank details filed for a vendor, to be approved."""
    return f"bank_change_request:{change.record.get('vendor')}"


def dispute(change: Change, ctx: SensitiveContext) -> str | None:
    """``dispute:<dispute id>``: evidence sent to the card network, or the dispute accepted (closed as lost)."""
    before, after = change.before or {}, change.after or {}
    submitted = after.get("submission_count", 0) > before.get("submission_count", 0)
    decided = after.get("status") in _DISPUTE_DONE and before.get("status") not in _DISPUTE_DONE
    return f"dispute:{change.id}" if submitted or decided else None


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind("refund", "refunds", ("create",), "money refunded on a charge", refund),
    SensitiveKind("payout", "payouts", ("create",), "money paid out to a vendor", payout),
    SensitiveKind(
        "bank_change", "bank_accounts", ("create", "update"), "a vendor's bank details changed", bank_account
    ),
    SensitiveKind("bank_change", "vendors", ("update",), "a vendor's payout account replaced", default_account),
    SensitiveKind(
        "bank_change_request",
        "bank_change_requests",
        ("create",),
        "new bank details filed for a vendor",
        bank_change_request,
    ),
    *contact_changes("customers", "vendors"),
    SensitiveKind("dispute", "disputes", ("update",), "a dispute answered with evidence or accepted", dispute),
    *deletes(
        "customers", "charges", "refunds", "vendors", "bank_accounts", "bank_change_requests", "payouts", "disputes"
    ),
)
