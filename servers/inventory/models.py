"""Records of the inventory service (a Shopify/ERP-like stock ledger: products, purchase orders, stock adjustments).

Money is an integer number of cents (USD): a product's ``unit_cost`` (what we pay the supplier) and ``unit_price``
(what we sell it for). Stock moves only through the ledger: every change of a product's ``quantity`` is an
adjustment record (a count, a write-off, a purchase order received), so the history explains the number on hand.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from coworkenv.servers.kit import Cents, Page, Record, Table, Timestamp

StockStatus = Literal["in_stock", "low_stock", "out_of_stock"]
OrderStatus = Literal["ordered", "received", "cancelled"]
Reason = Literal["received", "sold", "returned", "count", "damaged", "lost", "expired", "write_off", "other"]
LOSS_REASONS: tuple[str, ...] = ("damaged", "lost", "expired", "write_off")
"""Adjustment reasons that take stock off the books as a loss."""

CustomFields = Annotated[
    dict[str, Any],
    Field(description="Other attributes as the source system keeps them. Example: {'daily_avg_sales': 8}"),
]


class Product(Record):
    """A stock-keeping unit: what it is, how many are on hand, and when to reorder it."""

    id: str = Field(description="The product's SKU. Example: 'SKU-001'")
    name: str = Field(min_length=1, description="Example: 'USB-C Hub 7-port'")
    category: str = Field(default="", description="Example: 'IT Equipment'")
    quantity: int = Field(default=0, ge=0, description="Units on hand. Example: 12")
    unit: str = Field(default="units", description="What one unit is. Example: 'boxes'")
    reorder_level: int = Field(default=0, ge=0, description="At or below this many on hand, reorder. Example: 20")
    reorder_quantity: int | None = Field(default=None, ge=1, description="The usual order size. Example: 50")
    unit_cost: Cents | None = Field(default=None, description="What one unit costs us, in cents. Example: 4500")
    unit_price: Cents | None = Field(default=None, description="What we sell one unit for, in cents. Example: 7900")
    supplier: str | None = Field(default=None, description="Who we buy it from. Example: 'Lumen Office Supply'")
    lead_time_days: int | None = Field(default=None, ge=0, description="Days from order to delivery. Example: 7")
    location: str = Field(default="", description="Where it is kept. Example: 'Warehouse A-01'")
    notes: str = ""
    custom_fields: CustomFields = {}
    updated_at: Timestamp | None = None


class PurchaseOrder(Record):
    """An order of one product from a supplier: placed ('ordered'), then received or cancelled."""

    id: str = Field(description="The order's id. Example: 'PO-1001'")
    product_id: str = Field(description="The product ordered (its SKU). Example: 'SKU-001'")
    quantity: int = Field(ge=1, description="Units ordered. Example: 50")
    supplier: str | None = Field(default=None, description="Who the order went to. Example: 'Lumen Office Supply'")
    unit_cost: Cents | None = Field(default=None, description="Cents per unit agreed. Example: 4500")
    total: Cents | None = Field(default=None, description="quantity × unit_cost, in cents. Example: 225000")
    status: OrderStatus = "ordered"
    note: str = ""
    expected_at: Timestamp | None = Field(default=None, description="When delivery is due (order + lead time).")
    received_quantity: int | None = Field(default=None, ge=0, description="Units that arrived, once received.")
    cancel_reason: str | None = None
    custom_fields: CustomFields = {}
    created_at: Timestamp
    received_at: Timestamp | None = None
    cancelled_at: Timestamp | None = None


class Adjustment(Record):
    """One movement of a product's stock, with why: the ledger behind ``quantity``."""

    id: str = Field(description="The adjustment's id. Example: 'ADJ-2001'")
    product_id: str = Field(description="The product whose stock moved. Example: 'SKU-001'")
    delta: int = Field(description="Units added (positive) or removed (negative). Example: -3")
    quantity_after: int = Field(ge=0, description="Units on hand after this movement. Example: 9")
    reason: Reason = Field(description="received, sold, returned, count, damaged, lost, expired, write_off, other")
    note: str = ""
    purchase_order_id: str | None = Field(default=None, description="The order received, for reason 'received'.")
    created_at: Timestamp


TABLES = (
    Table("products", Product, "SKU-", indexes=(("category",),), volatile=("updated_at",)),
    Table(
        "purchase_orders",
        PurchaseOrder,
        "PO-",
        indexes=(("product_id",), ("status",)),
        refs=(("product_id", "products"),),
    ),
    Table(
        "adjustments",
        Adjustment,
        "ADJ-",
        indexes=(("product_id",),),
        refs=(("product_id", "products"), ("purchase_order_id", "purchase_orders")),
    ),
)


def stock_status(quantity: int, reorder_level: int) -> str:
    """'out_of_stock' at 0, 'low_stock' at or below the reorder level, else 'in_stock'."""
    if quantity <= 0:
        return "out_of_stock"
    return "low_stock" if quantity <= reorder_level else "in_stock"


class ProductView(Product):
    stock_status: StockStatus = Field(description="out_of_stock (0 on hand), low_stock (at or below reorder_level)")
    on_order: int = Field(description="Units in purchase orders placed and not yet received.")


class ProductDetail(ProductView):
    open_orders: list[PurchaseOrder] = Field(description="Purchase orders placed and not yet received, oldest first.")
    recent_adjustments: list[Adjustment] = Field(description="The last 10 stock movements, newest first.")


class ProductPage(Page[ProductView]):
    pass


class PurchaseOrderPage(Page[PurchaseOrder]):
    pass


class AdjustmentPage(Page[Adjustment]):
    pass


class Movement(BaseModel):
    adjustment: Adjustment = Field(description="The ledger entry just written.")
    product: ProductView = Field(description="The product as it is after the movement.")
