"""Rules across the records of a payments seed: what one record says about another must agree.

A charge's ``amount_refunded`` is the sum of its refunds, a refund or dispute is in its charge's currency and
within its amount, and a vendor's money goes only to that vendor's own bank accounts. Each error names the
record, its field, and what to change.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from coworkenv.servers.kit import SeedError

Seed = dict[str, list[dict[str, Any]]]

COUNTED_REFUNDS = ("succeeded", "pending")
"""Refunds that count toward a charge's ``amount_refunded`` (failed and canceled ones gave nothing back)."""


def _where(table: str, index: int, row: dict[str, Any], field: str) -> str:
    return f"payments.{table}[{index}] ({row['id']}) field {field!r}"


def check_seed(seed: Seed) -> None:
    """Raise :class:`SeedError` naming the first record that contradicts another one."""
    charges = {row["id"]: row for row in seed.get("charges", [])}
    _check_refunds(seed, charges)
    _check_disputes(seed, charges)
    _check_bank_ownership(seed)


def _check_refunds(seed: Seed, charges: dict[str, dict[str, Any]]) -> None:
    refunded: dict[str, int] = defaultdict(int)
    refund_ids: dict[str, list[str]] = defaultdict(list)
    for index, refund in enumerate(seed.get("refunds", [])):
        charge = charges[refund["charge"]]  # references are checked before these rules
        if refund["currency"] != charge["currency"]:
            raise SeedError(
                f"{_where('refunds', index, refund, 'currency')}: {refund['currency']!r}, but its charge "
                f"{charge['id']} is in {charge['currency']!r}; a refund is in its charge's currency"
            )
        if refund["status"] in COUNTED_REFUNDS:
            if charge["status"] != "succeeded":
                raise SeedError(
                    f"{_where('refunds', index, refund, 'charge')}: charge {charge['id']} is {charge['status']}; only "
                    "a succeeded charge can be refunded (set the refund's status to failed or the charge's to succeeded)"
                )
            refunded[charge["id"]] += refund["amount"]
            refund_ids[charge["id"]].append(refund["id"])
    for index, charge in enumerate(seed.get("charges", [])):
        total = refunded.get(charge["id"], 0)
        if charge["amount_refunded"] != total:
            listed = ", ".join(refund_ids.get(charge["id"], [])) or "none"
            raise SeedError(
                f"{_where('charges', index, charge, 'amount_refunded')}: {charge['amount_refunded']}, but its "
                f"{'/'.join(COUNTED_REFUNDS)} refunds ({listed}) sum to {total}; set amount_refunded to {total} "
                "(and refunded to whether that is the whole amount), or add the refund records"
            )


def _check_disputes(seed: Seed, charges: dict[str, dict[str, Any]]) -> None:
    for index, dispute in enumerate(seed.get("disputes", [])):
        charge = charges[dispute["charge"]]
        if dispute["amount"] > charge["amount"]:
            raise SeedError(
                f"{_where('disputes', index, dispute, 'amount')}: {dispute['amount']} is more than charge "
                f"{charge['id']}'s amount {charge['amount']}"
            )
        if dispute["currency"] != charge["currency"]:
            raise SeedError(
                f"{_where('disputes', index, dispute, 'currency')}: {dispute['currency']!r}, but charge "
                f"{charge['id']} is in {charge['currency']!r}"
            )


def _check_bank_ownership(seed: Seed) -> None:
    owner = {row["id"]: row.get("vendor") for row in seed.get("bank_accounts", [])}
    for table, field in (
        ("vendors", "default_bank_account"),
        ("payouts", "bank_account"),
        ("bank_change_requests", "bank_account"),
    ):
        for index, row in enumerate(seed.get(table, [])):
            account = row.get(field)
            vendor = row["id"] if table == "vendors" else row["vendor"]
            if account is not None and owner.get(account) != vendor:
                held_by = owner.get(account) or "no vendor (a customer's account)"
                raise SeedError(
                    f"{_where(table, index, row, field)}: bank account {account} belongs to {held_by}, not to "
                    f"vendor {vendor}; use one of {vendor}'s own bank accounts"
                )
