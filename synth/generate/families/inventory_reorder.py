"""Inventory: restocking what has run low (at or below its reorder level) at its usual order size, and nothing that is
already on order or still above its level."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import DISTRACTORS, MULTISTEP, Family, Json, TaskBuilder, shares
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family

GOODS = (
    ("USB-C Hub 7-port", "IT Equipment", "units", 3200, "Corvid Hardware"),
    ("27-inch 4K Monitor", "IT Equipment", "units", 32000, "Corvid Hardware"),
    ("Wireless Keyboard and Mouse Set", "IT Equipment", "sets", 5400, "Corvid Hardware"),
    ("Laptop Docking Station", "IT Equipment", "units", 18900, "Corvid Hardware"),
    ("A4 Printing Paper", "Office Supplies", "boxes", 2900, "Lumen Office Supply"),
    ("Toner Cartridge 26A", "Office Supplies", "units", 8900, "Stellar Print Co"),
    ("Whiteboard Markers (4-pack)", "Office Supplies", "packs", 650, "Lumen Office Supply"),
    ("Sticky Notes (12-pack)", "Office Supplies", "packs", 900, "Lumen Office Supply"),
    ("BW Edge Gateway", "Customer Hardware", "units", 41000, "Helix Components"),
    ("Gateway Power Supply", "Customer Hardware", "units", 1800, "Helix Components"),
    ("Mounting Bracket Kit", "Customer Hardware", "kits", 1200, "Helix Components"),
    ("New Hire Welcome Kit", "Onboarding", "kits", 3500, "Stellar Print Co"),
    ("Noise-cancelling Headset", "IT Equipment", "units", 11900, "Corvid Hardware"),
    ("Ethernet Cable 3 m", "IT Equipment", "units", 450, "Corvid Hardware"),
)


@register_family
class LowStockReorder(Family):
    name = "inventory-low-stock-reorder"
    scenario = "restocking low inventory"
    capabilities = (DISTRACTORS, MULTISTEP)
    service_options = (("inventory",),)
    distractors = (
        "a low product already on order for its usual size; a product just above its reorder level; (hard) a low "
        "product whose last order was cancelled (it does need ordering: a target)"
    )

    def build(self, b: TaskBuilder) -> str:
        targets, covered = self._seed(b)
        self._reference(b, targets, covered)
        self._checks(b, targets, covered)
        ask = Ask(
            steps=(
                b.pick(
                    "check which products have run low",
                    "find what's at or below its reorder level",
                    "go through the stock and see what needs restocking",
                ),
                b.pick(
                    "place purchase orders for them at their usual order size",
                    "reorder each of them in its usual quantity",
                    "order the usual quantity of each from its supplier",
                ),
            ),
            avoid=b.pick(
                "Skip anything that's already on order.",
                "Don't order anything twice: some of it may be on order already.",
                "If something is already on order, leave it.",
            ),
            topic="restocking",
        )
        return compose(b, ask)

    @staticmethod
    def _seed(b: TaskBuilder) -> tuple[list[Json], Json]:
        """The low products to order (hard: the first one's last order was cancelled), the low product already on
        order, products just above their level, and well-stocked filler."""
        stock = _Stock(b)
        targets = []
        for i in range(b.targets):
            level = b.rng.choice((5, 10, 15, 20))
            targets.append(stock.product(b.rng.randint(0, level), level))
            if b.hard and i == 0:
                stock.order(targets[0], "cancelled", days=b.rng.randint(4, 9))
        covered = stock.product(b.rng.randint(0, 4), 10)
        b.distract(covered["id"], stock.order(covered, "ordered", days=b.rng.randint(1, 3))["id"])
        for _ in range(b.n_distractors() - 1):
            level = b.rng.choice((5, 10, 20))
            b.distract(stock.product(level + b.rng.randint(1, 3), level)["id"])
        for _ in range(min(b.n_filler(), len(stock.goods) - 1)):
            level = b.rng.choice((5, 10, 20))
            stock.product(level * b.rng.randint(3, 8), level)
        return targets, covered

    @staticmethod
    def _reference(b: TaskBuilder, targets: list[Json], covered: Json) -> None:
        b.call("inventory", "list_products", "low", stock_status=["low_stock", "out_of_stock"])
        b.call("inventory", "list_purchase_orders", "open", status=["ordered"])
        for item in targets:
            b.call("inventory", "create_purchase_order", product_id=item["id"], quantity=item["reorder_quantity"])
        with b.alternative():  # every product read one by one, then the orders
            b.call("inventory", "list_products", "all", page_size=100)
            for item in [*targets, covered]:
                b.call("inventory", "get_product", product_id=item["id"])
            for item in targets:
                b.call(
                    "inventory",
                    "create_purchase_order",
                    product_id=item["id"],
                    quantity=item["reorder_quantity"],
                    supplier=item["supplier"],
                )

    @staticmethod
    def _checks(b: TaskBuilder, targets: list[Json], covered: Json) -> None:
        for n, (item, weight) in enumerate(zip(targets, shares(0.8, len(targets)), strict=True)):
            b.check(
                f"ordered_{n + 1}",
                weight,
                f"{item['name']} is on order at its usual size ({item['reorder_quantity']}).",
                {
                    "kind": "record_exists",
                    "service": "inventory",
                    "table": "purchase_orders",
                    "where": {
                        "product_id": item["id"],
                        "status": "ordered",
                        "quantity": item["reorder_quantity"],
                        "created_at": {"gte": b.now_iso},
                    },
                },
            )
        b.check(
            "nothing_else_ordered",
            0.2,
            "No other product was ordered: only the low ones not on order already.",
            {
                "kind": "record_count",
                "service": "inventory",
                "table": "purchase_orders",
                "where": {"created_at": {"gte": b.now_iso}},
                "count": len(targets),
            },
            ("ordered_1",),
        )
        b.forbid_call(
            "ordered_twice",
            f"Ordering {covered['name']} again though it is already on order.",
            "inventory",
            "create_purchase_order",
            {"product_id": covered["id"]},
            {"product_id": covered["id"], "quantity": covered["reorder_quantity"]},
        )


class _Stock:
    """Products and purchase orders of one task, with ids counted up from a drawn start."""

    def __init__(self, b: TaskBuilder) -> None:
        self.b = b
        self.goods = b.rng.sample(GOODS, len(GOODS))
        self.serial = iter(range(b.rng.randrange(100, 800, 10), 10_000))

    def product(self, quantity: int, level: int) -> Json:
        b = self.b
        name, category, unit, cost, supplier = self.goods.pop()
        record = {
            "id": f"SKU-{next(self.serial)}",
            "name": name,
            "category": category,
            "quantity": quantity,
            "unit": unit,
            "reorder_level": level,
            "reorder_quantity": b.rng.choice((10, 20, 25, 40, 50)),
            "unit_cost": cost,
            "supplier": supplier,
            "lead_time_days": b.rng.choice((3, 5, 7, 14)),
            "updated_at": b.ago(days=b.rng.randint(2, 20)),
        }
        return b.add("inventory", "products", record)

    def order(self, item: Json, status: str, days: float) -> Json:
        record: Json = {
            "id": f"PO-{next(self.serial)}",
            "product_id": item["id"],
            "quantity": item["reorder_quantity"],
            "supplier": item["supplier"],
            "unit_cost": item["unit_cost"],
            "total": item["unit_cost"] * item["reorder_quantity"],
            "status": status,
            "created_at": self.b.ago(days=days),
        }
        if status == "cancelled":
            record.update(
                cancel_reason="Supplier could not deliver this month.", cancelled_at=self.b.ago(days=days - 1)
            )
        return self.b.add("inventory", "purchase_orders", record)
