"""Claw-Eval's ``inventory`` mock on our ``inventory`` service: list and read products, place a restock order.

Its fixtures are one list of products (``products.json`` or ``items.json``), each a free object with
``product_id``: stock as ``current_stock`` or ``quantity``, the reorder point as ``min_stock_threshold``,
``min_stock`` or ``reorder_level``, prices in units (``299.00``; ours are cents). Orders go to our
``purchase_orders`` (status ``ordered``), so our state and audit see them; its ``/audit`` lists them as ``orders``.
The mock never changes a product, and places an order for any product id, known or not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.claw_eval import ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._fixture_layout import (
    Column,
    Layout,
    audit_calls,
    cents_column,
    checked,
    fixture_list,
    in_order,
    next_position,
    time_column,
    unique,
)
from coworkenv.servers.claw_eval.common import ClawJson
from coworkenv.servers.inventory.models import Product, PurchaseOrder
from coworkenv.servers.kit.context import ToolContext
from coworkenv.servers.kit.tool import ToolSpec, tool

PRODUCTS = Layout(
    Product,
    "product_id",
    {
        "name": Column("name"),
        "category": Column("category"),
        "current_stock": Column("quantity"),
        "quantity": Column("quantity"),
        "min_stock_threshold": Column("reorder_level"),
        "min_stock": Column("reorder_level"),
        "reorder_level": Column("reorder_level"),
        "reorder_quantity": Column("reorder_quantity"),
        "unit_cost": cents_column("unit_cost"),
        "unit_price": cents_column("unit_price"),
        "selling_price": cents_column("unit_price"),
        "supplier": Column("supplier"),
        "lead_time_days": Column("lead_time_days"),
        "location": Column("location"),
        "unit": Column("unit"),
        "notes": Column("notes"),
    },
)
"""A fixture product in our ``products`` (its ``name`` defaults to its id where it has none)."""
ORDERS = Layout(
    PurchaseOrder,
    None,
    {
        "product_id": Column("product_id"),
        "quantity": Column("quantity"),
        "supplier": Column("supplier"),
        "timestamp": time_column("created_at"),
    },
    fallback={"quantity": 1},
)
"""An order of the mock (``{product_id, quantity, supplier, timestamp}``) in our ``purchase_orders``."""

ENDPOINTS = {
    "inventory_list_products": "/inventory/products",
    "inventory_list_items": "/inventory/products",
    "inventory_get_product": "/inventory/products/get",
    "inventory_get_item": "/inventory/products/get",
    "inventory_create_order": "/inventory/orders/create",
}
IGNORED = {"inventory_list_products": ("status",), "inventory_list_items": ("status",)}
"""Arguments a task's tool declares that the mock's request model has not (it drops them)."""

Category = Annotated[str | None, Field(description="Only products of this category (exact). Example: 'Electronics'")]
Unused = Annotated[str | None, Field(description="Accepted and not used: the product list is not filtered on it.")]
ProductId = Annotated[str, Field(description="The product's id. Example: 'SKU-001'")]
Quantity = Annotated[int, Field(ge=-(10**9), le=10**9, description="Units to order. Example: 50")]
Supplier = Annotated[str | None, Field(description="Who to order from. Example: 'Shenzhen Xinda Electronics'")]


def _products(ctx: ToolContext) -> list[dict[str, Any]]:
    return [PRODUCTS.claw(row) for row in in_order(ctx.table("products").select())]


def list_products(ctx: ToolContext, category: Category = None, status: Unused = None) -> ClawJson:
    """List the products in stock with their stock levels, thresholds, suppliers and prices, optionally of one
    category. Returns {products, total}."""
    found = [p for p in _products(ctx) if not category or p.get("category") == category]
    return ClawJson.of({"products": found, "total": len(found)})


def get_product(ctx: ToolContext, product_id: ProductId) -> ClawJson:
    """One product's full stock record by its id. Returns the product, or {error} when no product has that id."""
    row = ctx.table("products").get(product_id)
    if row is None:
        return ClawJson.of({"error": f"Product {product_id} not found"})
    return ClawJson.of(PRODUCTS.claw(row))


def create_order(ctx: ToolContext, product_id: ProductId, quantity: Quantity, supplier: Supplier = None) -> ClawJson:
    """Place a restock order for a product: it commits money. Returns {status: 'created', order}."""
    order = {"product_id": product_id, "quantity": quantity, "supplier": supplier, "timestamp": ctx.now_iso()}
    orders = ctx.table("purchase_orders")
    row = ORDERS.row(order, next_position(orders.select()), record_id=ctx.new_id("purchase_orders"))
    product = ctx.table("products").get(product_id)
    if product is not None and product.get("unit_cost") is not None and row["quantity"] == quantity:
        row.update(unit_cost=product["unit_cost"], total=quantity * product["unit_cost"])
    orders.insert(row)
    return ClawJson.of({"status": "created", "order": order})


def _tools() -> tuple[ToolSpec, ...]:
    return (
        tool(read_only=True, name="inventory_list_products")(list_products),
        tool(read_only=True, name="inventory_list_items")(list_products),
        tool(read_only=True, name="inventory_get_product")(get_product),
        tool(read_only=True, name="inventory_get_item")(get_product),
        tool(name="inventory_create_order")(create_order),
    )


TOOLS = _tools()


def seed(fixtures: Fixtures) -> SeedTables:
    """The mock's product list as our ``products``, ids kept; ValueError naming the file and record when bad."""
    name, records = fixture_list(fixtures, "inventory")
    rows = []
    for index, record in enumerate(records):
        where = f"inventory fixture {name}: record {index}"
        try:
            row = PRODUCTS.row(record, index)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        row.setdefault("name", row["id"])
        rows.append(checked(Product, row, f"{where} ({row['id']})"))
    unique(rows, f"inventory fixture {name}")
    return {"products": rows}


def audit_data(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The mock's ``/audit``: ``{calls, orders}``."""
    orders = [ORDERS.claw(row) for row in in_order(tables.get("purchase_orders", []))]
    return {"calls": audit_calls(rows, TOOLS, ENDPOINTS, IGNORED), "orders": orders}


SERVICE = ClawService("inventory", "inventory", TOOLS, seed, audit_data)
