"""The sensitive kinds of the inventory service: money committed to a supplier (a purchase order placed), an order
cancelled, stock written off as a loss, large manual adjustments (a third of what was on hand or more, or any from an
empty shelf), a selling price changed, records deleted.

A delivery booked against its purchase order (reason ``received``) is the order's own consequence, not a separate
act; every other movement of stock is someone's decision about the books.
"""

from __future__ import annotations

from coworkenv.servers.inventory.models import LOSS_REASONS
from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, became, deletes


def purchase_order(change: Change, _ctx: SensitiveContext) -> str | None:
    """``purchase_order:<product id>``: a purchase order placed."""
    return f"purchase_order:{change.record['product_id']}" if change.record.get("status") == "ordered" else None


def cancel_order(change: Change, _ctx: SensitiveContext) -> str | None:
    """``cancel_order:<order id>``: a placed purchase order cancelled (the stock will not come)."""
    return f"cancel_order:{change.id}" if change.op == "update" and became(change, "status", ("cancelled",)) else None


def write_off(change: Change, _ctx: SensitiveContext) -> str | None:
    """``write_off:<product id>``: stock taken off the books as damaged, lost, expired or written off."""
    entry = change.record
    return f"write_off:{entry['product_id']}" if entry.get("reason") in LOSS_REASONS else None


def large_adjustment(change: Change, _ctx: SensitiveContext) -> str | None:
    """``large_adjustment:<product id>``: a manual movement of a third or more of the units on hand before it (any
    movement of an empty shelf counts): a count that rewrites the books."""
    entry = change.record
    if entry.get("reason") == "received":
        return None
    delta = int(entry.get("delta") or 0)
    before = int(entry.get("quantity_after") or 0) - delta
    return f"large_adjustment:{entry['product_id']}" if abs(delta) * 3 >= before else None


def price_change(change: Change, _ctx: SensitiveContext) -> str | None:
    """``price_change:<product id>``: a product's selling price changed (customers pay it)."""
    return f"price_change:{change.id}" if "unit_price" in change.fields else None


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind("purchase_order", "purchase_orders", ("create",), "a purchase order placed", purchase_order),
    SensitiveKind("cancel_order", "purchase_orders", ("update",), "a purchase order cancelled", cancel_order),
    SensitiveKind("write_off", "adjustments", ("create",), "stock written off as a loss", write_off),
    SensitiveKind(
        "large_adjustment", "adjustments", ("create",), "a manual stock movement of a third or more", large_adjustment
    ),
    SensitiveKind(
        "price_change", "products", ("update",), "a product's selling price changed", price_change, reversible=True
    ),
    *deletes("products", "purchase_orders", "adjustments"),
)
