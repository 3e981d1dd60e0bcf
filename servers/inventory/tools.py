"""Tools of the inventory service. Names follow the stock APIs of commerce and ERP systems (Shopify inventory levels,
purchase orders): list and read products, adjust stock with a reason, order from suppliers and receive the orders."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from coworkenv.servers.inventory.models import (
    Adjustment,
    AdjustmentPage,
    Movement,
    ProductDetail,
    ProductPage,
    ProductView,
    PurchaseOrder,
    PurchaseOrderPage,
    Reason,
    StockStatus,
    stock_status,
)
from coworkenv.servers.kit import (
    MAX_CENTS,
    Cents,
    PageSize,
    PageToken,
    ServiceError,
    Timestamp,
    ToolContext,
    Where,
    format_time,
    tool,
)

ProductId = Annotated[str, Field(description="The product's SKU. Example: 'SKU-001'")]
OrderId = Annotated[str, Field(description="The purchase order's id. Example: 'PO-1001'")]
Units = Annotated[int, Field(ge=1, le=1_000_000, description="A number of units, 1 to 1,000,000. Example: 50")]
ManualReason = Literal["sold", "returned", "count", "damaged", "lost", "expired", "write_off", "other"]
MAX_UNITS = 1_000_000
_STATUS_SQL = {
    "out_of_stock": "quantity <= 0",
    "low_stock": "(quantity > 0 AND quantity <= reorder_level)",
    "in_stock": "(quantity > 0 AND quantity > reorder_level)",
}


def _product(ctx: ToolContext, product_id: str) -> dict[str, Any]:
    return ctx.fetch("products", product_id, "product", "Use list_products to find the product's SKU.")


def _order(ctx: ToolContext, order_id: str) -> dict[str, Any]:
    return ctx.fetch("purchase_orders", order_id, "purchase order", "Use list_purchase_orders to find its id.")


def _on_order(ctx: ToolContext, product_ids: list[str]) -> dict[str, int]:
    if not product_ids:
        return {}
    marks = ", ".join("?" * len(product_ids))
    rows = ctx.table("purchase_orders").select(f"status = 'ordered' AND product_id IN ({marks})", product_ids)
    totals: dict[str, int] = {}
    for row in rows:
        totals[row["product_id"]] = totals.get(row["product_id"], 0) + int(row["quantity"])
    return totals


def _views(ctx: ToolContext, rows: list[dict[str, Any]]) -> list[ProductView]:
    on_order = _on_order(ctx, [r["id"] for r in rows])
    return [
        ProductView.model_validate(
            {**r, "stock_status": stock_status(r["quantity"], r["reorder_level"]), "on_order": on_order.get(r["id"], 0)}
        )
        for r in rows
    ]


def _move(
    ctx: ToolContext, product: dict[str, Any], delta: int, reason: str, note: str, order_id: str | None = None
) -> Movement:
    """Write one ledger entry and the product's new quantity."""
    after = int(product["quantity"]) + delta
    if after < 0:
        raise ServiceError(
            f"{product['id']} has only {product['quantity']} on hand; removing {-delta} would go below zero.",
            "Check the quantity with get_product and adjust by at most what is on hand.",
        )
    if after > MAX_UNITS:
        raise ServiceError(f"{product['id']} would hold {after} units, more than {MAX_UNITS:,}.")
    now = ctx.now_iso()
    row = ctx.table("products").update(product["id"], {"quantity": after, "updated_at": now})
    entry = ctx.table("adjustments").insert(
        {
            "id": ctx.new_id("adjustments"),
            "product_id": product["id"],
            "delta": delta,
            "quantity_after": after,
            "reason": reason,
            "note": note,
            "purchase_order_id": order_id,
            "created_at": now,
        }
    )
    return Movement(adjustment=Adjustment.model_validate(entry), product=_views(ctx, [row])[0])


@tool(read_only=True)
def list_products(
    ctx: ToolContext,
    query: Annotated[
        str | None, Field(description="Text in the SKU, name, category or supplier. Example: 'hub'")
    ] = None,
    category: Annotated[str | None, Field(description="Only this category (exact). Example: 'IT Equipment'")] = None,
    stock_status: Annotated[
        list[StockStatus] | None,
        Field(description="Only these stock states: in_stock, low_stock (at or below reorder level), out_of_stock."),
    ] = None,
    supplier: Annotated[str | None, Field(description="Only products from this supplier. Example: 'Lumen'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> ProductPage:
    """List products by SKU with what is on hand, each with its stock_status and the units already on order.
    Use stock_status ['low_stock', 'out_of_stock'] to find what needs reordering."""
    where = Where().text(["id", "name", "category", "supplier"], query).eq_folded("category", category)
    where.text(["supplier"], supplier)
    if stock_status:
        where.raw("(" + " OR ".join(_STATUS_SQL[s] for s in sorted(set(stock_status))) + ")")
    rows, total, nxt = ctx.paginate("products", where.sql, where.params, "id", page_size, page_token)
    return ProductPage(items=_views(ctx, rows), total=total, next_page_token=nxt)


@tool(read_only=True)
def get_product(ctx: ToolContext, product_id: ProductId) -> ProductDetail:
    """Read one product in full: stock, reorder settings, costs, its open purchase orders and recent movements."""
    row = _product(ctx, product_id)
    orders = ctx.table("purchase_orders").select(
        "product_id = ? AND status = 'ordered'", [product_id], order_by="created_at, id"
    )
    moves = ctx.table("adjustments").select(
        "product_id = ?", [product_id], order_by="created_at DESC, id DESC", limit=10
    )
    view = _views(ctx, [row])[0]
    return ProductDetail.model_validate({**view.model_dump(), "open_orders": orders, "recent_adjustments": moves})


@tool(idempotent=True)
def update_product(
    ctx: ToolContext,
    product_id: ProductId,
    name: Annotated[str | None, Field(min_length=1, max_length=300, description="New name")] = None,
    category: Annotated[str | None, Field(max_length=200, description="New category. Example: 'Office'")] = None,
    reorder_level: Annotated[
        int | None, Field(ge=0, le=1_000_000, description="Reorder at or below this many. Example: 20")
    ] = None,
    reorder_quantity: Annotated[
        int | None, Field(ge=1, le=1_000_000, description="The usual order size. Example: 50")
    ] = None,
    unit_cost: Annotated[Cents | None, Field(description="What one unit costs us, in cents. Example: 4500")] = None,
    unit_price: Annotated[Cents | None, Field(description="Selling price per unit, in cents. Example: 7900")] = None,
    supplier: Annotated[str | None, Field(max_length=200, description="Who we buy from. Example: 'Lumen'")] = None,
    lead_time_days: Annotated[int | None, Field(ge=0, le=365, description="Days to deliver. Example: 7")] = None,
    location: Annotated[str | None, Field(max_length=200, description="Where it is kept. Example: 'A-02'")] = None,
    notes: Annotated[str | None, Field(max_length=10_000, description="Replaces the product's notes.")] = None,
) -> ProductView:
    """Change a product's details and reorder settings. Omitted fields stay as they are. The quantity on hand is
    not set here: use adjust_stock (a count, a write-off) or receive_purchase_order."""
    row = _product(ctx, product_id)
    given = {
        "name": name,
        "category": category,
        "reorder_level": reorder_level,
        "reorder_quantity": reorder_quantity,
        "unit_cost": unit_cost,
        "unit_price": unit_price,
        "supplier": supplier,
        "lead_time_days": lead_time_days,
        "location": location,
        "notes": notes,
    }
    changes = {k: v for k, v in given.items() if v is not None and v != row.get(k)}
    if changes:
        row = ctx.table("products").update(product_id, {**changes, "updated_at": ctx.now_iso()})
    return _views(ctx, [row])[0]


@tool()
def adjust_stock(
    ctx: ToolContext,
    product_id: ProductId,
    delta: Annotated[
        int,
        Field(ge=-MAX_UNITS, le=MAX_UNITS, description="Units to add (positive) or remove (negative). Example: -3"),
    ],
    reason: Annotated[
        ManualReason,
        Field(
            description="Why: count (a stock count found a difference), damaged, lost, expired, write_off, sold, "
            "returned or other. Deliveries are booked with receive_purchase_order."
        ),
    ],
    note: Annotated[str, Field(max_length=2_000, description="What happened. Example: 'Box crushed in transit'")] = "",
) -> Movement:
    """Add or remove units of a product, with the reason, as one entry of the stock ledger. Returns the entry and
    the product as it is now. Stock cannot go below zero."""
    if delta == 0:
        raise ServiceError("delta is 0: nothing would move.", "Pass the units to add (positive) or remove (negative).")
    return _move(ctx, _product(ctx, product_id), delta, reason, note)


@tool(read_only=True)
def list_adjustments(
    ctx: ToolContext,
    product_id: Annotated[str | None, Field(description="Only this product's movements. Example: 'SKU-001'")] = None,
    reason: Annotated[list[Reason] | None, Field(description="Only these reasons. Example: ['damaged']")] = None,
    created_after: Annotated[
        Timestamp | None, Field(description="At or after this time. Example: '2026-03-01T00:00:00Z'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> AdjustmentPage:
    """The stock ledger, newest first: every movement of stock with its reason."""
    where = Where().eq("product_id", product_id).any_of("reason", reason).gte("created_at", created_after)
    order = "created_at DESC, id DESC"
    rows, total, nxt = ctx.paginate("adjustments", where.sql, where.params, order, page_size, page_token)
    return AdjustmentPage(items=[Adjustment.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def list_purchase_orders(
    ctx: ToolContext,
    status: Annotated[
        list[Literal["ordered", "received", "cancelled"]] | None,
        Field(description="Only these statuses. Example: ['ordered']"),
    ] = None,
    product_id: Annotated[str | None, Field(description="Only orders of this product. Example: 'SKU-001'")] = None,
    supplier: Annotated[str | None, Field(description="Text in the supplier's name. Example: 'Lumen'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> PurchaseOrderPage:
    """List purchase orders, newest first."""
    where = Where().any_of("status", status).eq("product_id", product_id).text(["supplier"], supplier)
    order = "created_at DESC, id DESC"
    rows, total, nxt = ctx.paginate("purchase_orders", where.sql, where.params, order, page_size, page_token)
    return PurchaseOrderPage(items=[PurchaseOrder.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_purchase_order(ctx: ToolContext, purchase_order_id: OrderId) -> PurchaseOrder:
    """Read one purchase order."""
    return PurchaseOrder.model_validate(_order(ctx, purchase_order_id))


@tool()
def create_purchase_order(
    ctx: ToolContext,
    product_id: ProductId,
    quantity: Units,
    supplier: Annotated[
        str | None, Field(max_length=200, description="Who to order from; omit for the product's supplier.")
    ] = None,
    unit_cost: Annotated[
        Cents | None, Field(description="Agreed cents per unit; omit for the product's unit_cost. Example: 4500")
    ] = None,
    note: Annotated[str, Field(max_length=2_000, description="For the supplier or the team.")] = "",
) -> PurchaseOrder:
    """Place a purchase order to restock a product (this commits money to the supplier). The order is 'ordered'
    until received with receive_purchase_order; it is due after the product's lead time."""
    product = _product(ctx, product_id)
    vendor = supplier or product.get("supplier")
    if not vendor:
        raise ServiceError(f"{product_id} has no supplier on file.", "Pass supplier with the name to order from.")
    cost = unit_cost if unit_cost is not None else product.get("unit_cost")
    total = None if cost is None else cost * quantity
    if total is not None and total > MAX_CENTS:
        raise ServiceError(f"The order would cost {total} cents, more than any order may.", "Order fewer units.")
    lead = product.get("lead_time_days")
    row = ctx.table("purchase_orders").insert(
        {
            "id": ctx.new_id("purchase_orders"),
            "product_id": product_id,
            "quantity": quantity,
            "supplier": vendor,
            "unit_cost": cost,
            "total": total,
            "status": "ordered",
            "note": note,
            "expected_at": None if lead is None else format_time(ctx.now + timedelta(days=int(lead))),
            "created_at": ctx.now_iso(),
        }
    )
    return PurchaseOrder.model_validate(row)


def _placed(order: dict[str, Any], verb: str) -> None:
    if order["status"] != "ordered":
        raise ServiceError(
            f"Purchase order {order['id']} is {order['status']} and cannot be {verb}.",
            "Only orders with status 'ordered' can be; list_purchase_orders(status=['ordered']) shows them.",
        )


@tool()
def receive_purchase_order(
    ctx: ToolContext,
    purchase_order_id: OrderId,
    quantity: Annotated[
        int | None, Field(ge=0, le=MAX_UNITS, description="Units that arrived; omit when all of them did.")
    ] = None,
) -> PurchaseOrder:
    """Book the delivery of a purchase order: the units that arrived are added to the product's stock (one ledger
    entry, reason 'received') and the order becomes 'received'."""
    order = _order(ctx, purchase_order_id)
    _placed(order, "received")
    arrived = order["quantity"] if quantity is None else quantity
    if arrived:
        _move(ctx, _product(ctx, order["product_id"]), arrived, "received", "", purchase_order_id)
    changes = {"status": "received", "received_quantity": arrived, "received_at": ctx.now_iso()}
    return PurchaseOrder.model_validate(ctx.table("purchase_orders").update(purchase_order_id, changes))


@tool(destructive=True)
def cancel_purchase_order(
    ctx: ToolContext,
    purchase_order_id: OrderId,
    reason: Annotated[str, Field(min_length=1, max_length=2_000, description="Why. Example: 'Ordered twice'")],
) -> PurchaseOrder:
    """Cancel a purchase order that has not been received. This cannot be undone: place a new order instead."""
    order = _order(ctx, purchase_order_id)
    _placed(order, "cancelled")
    changes = {"status": "cancelled", "cancel_reason": reason, "cancelled_at": ctx.now_iso()}
    return PurchaseOrder.model_validate(ctx.table("purchase_orders").update(purchase_order_id, changes))


TOOLS = (
    list_products,
    get_product,
    update_product,
    adjust_stock,
    list_adjustments,
    list_purchase_orders,
    get_purchase_order,
    create_purchase_order,
    receive_purchase_order,
    cancel_purchase_order,
)
