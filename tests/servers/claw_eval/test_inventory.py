"""Claw-Eval's inventory tools on our inventory service: the fixtures seed with their ids, the tools answer as its
mock does, orders land in our purchase orders, and ``/audit`` is rebuilt from our state and audit log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval import inventory
from coworkenv.servers.claw_eval.inventory import ENDPOINTS, SERVICE
from tests.servers.claw_eval.ops_parity import (
    NOW,
    Mock,
    audit,
    call,
    claw_env,
    fixture_of,
    kit_checks,
    needs_claw_eval,
    real_fixtures,
    replay,
)

PRODUCTS: list[dict[str, Any]] = [
    {
        "product_id": "SKU-9",
        "name": "Wireless Earbuds Pro",
        "category": "Electronics",
        "current_stock": 3,
        "min_stock_threshold": 20,
        "unit_price": 299.0,
        "daily_avg_sales": 8,
        "supplier": "Xinda Electronics",
        "lead_time_days": 7,
        "backorder_eta": "2026-02-20",
    },
    {
        "product_id": "ITEM-2",
        "name": "A4 paper",
        "category": "Stationery",
        "quantity": 150,
        "unit": "boxes",
        "unit_cost": 25,
        "selling_price": 0.125,
        "reorder_level": 50,
        "supplier": None,
    },
    {"product_id": "SKU-1", "name": "USB-C cable", "category": "Electronics", "current_stock": 450, "status": "ok"},
]
FIXTURES = {"products.json": PRODUCTS}


def test_seeding_keeps_the_fixture_ids_and_reads_stock_and_prices_into_our_columns() -> None:
    tables = inventory.seed(FIXTURES)
    rows = {row["id"]: row for row in tables["products"]}
    assert list(rows) == ["SKU-9", "ITEM-2", "SKU-1"]
    assert (rows["SKU-9"]["quantity"], rows["SKU-9"]["reorder_level"], rows["SKU-9"]["unit_price"]) == (3, 20, 29900)
    assert rows["SKU-9"]["custom_fields"]["daily_avg_sales"] == 8
    # 25 (not 25.0) and a fraction of a cent read back differently from cents: kept as the fixture has them
    assert rows["ITEM-2"]["unit_cost"] == 2500 and rows["ITEM-2"]["custom_fields"]["unit_cost"] == 25
    assert rows["ITEM-2"]["unit_price"] is None and rows["ITEM-2"]["custom_fields"]["selling_price"] == 0.125


def test_list_and_get_return_each_product_exactly_as_the_fixture_has_it() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        listed = call(env, SERVICE, "inventory_list_products")
        assert listed == {"products": PRODUCTS, "total": 3}
        assert call(env, SERVICE, "inventory_list_items", {"category": "Electronics"})["total"] == 2
        assert call(env, SERVICE, "inventory_get_item", {"product_id": "ITEM-2"}) == PRODUCTS[1]
        assert call(env, SERVICE, "inventory_get_product", {"product_id": "SKU-404"}) == {
            "error": "Product SKU-404 not found"
        }


def test_an_order_is_a_purchase_order_of_ours_and_shows_in_the_audit() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        answer = call(env, SERVICE, "inventory_create_order", {"product_id": "ITEM-2", "quantity": 40})
        order = {"product_id": "ITEM-2", "quantity": 40, "supplier": None, "timestamp": NOW}
        assert answer == {"status": "created", "order": order}
        (stored,) = env.state("inventory").dump()["purchase_orders"]
        assert (stored["product_id"], stored["quantity"], stored["status"], stored["total"]) == (
            "ITEM-2",
            40,
            "ordered",
            100000,
        )
        call(env, SERVICE, "inventory_create_order", {"product_id": "GHOST", "quantity": 0, "supplier": "Acme"})
        data = audit(env, SERVICE)
        assert data["orders"] == [order, {"product_id": "GHOST", "quantity": 0, "supplier": "Acme", "timestamp": NOW}]
        assert [c["endpoint"] for c in data["calls"]] == ["/inventory/orders/create"] * 2
        assert data["calls"][0]["request_body"] == {"product_id": "ITEM-2", "quantity": 40, "supplier": None}


def test_a_fixture_that_is_not_a_list_of_products_with_ids_is_refused_naming_file_and_record() -> None:
    with pytest.raises(ValueError, match=r"products\.json"):
        inventory.seed({"products.json": {"product_id": "SKU-1"}})
    with pytest.raises(ValueError, match=r"products\.json: record 1: its 'product_id'"):
        inventory.seed({"products.json": [{"product_id": "A"}, {"name": "no id"}]})
    with pytest.raises(ValueError, match="repeats the id 'A'"):
        inventory.seed({"products.json": [{"product_id": "A"}, {"product_id": "A"}]})


def test_the_profile_passes_the_kits_checks_for_descriptions_bounds_doors_and_fuzz() -> None:
    kit_checks(SERVICE, FIXTURES)


CALLS = [
    ("inventory_list_products", {}),
    ("inventory_list_products", {"category": "Electronics"}),
    ("inventory_list_products", {"category": "Electronics", "status": "low"}),
    ("inventory_get_product", {"product_id": "SKU-9"}),
    ("inventory_get_item", {"product_id": "nope"}),
    ("inventory_get_product", {}),
    ("inventory_create_order", {"product_id": "SKU-9", "quantity": 60, "supplier": "Xinda Electronics"}),
    ("inventory_create_order", {"product_id": "SKU-1", "quantity": "12"}),
    ("inventory_create_order", {"product_id": "SKU-1"}),
    ("inventory_list_items", {}),
]


@needs_claw_eval
def test_every_tool_answers_as_claw_evals_mock_on_the_same_fixtures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = tmp_path / "products.json"
    fixture.write_text(json.dumps(PRODUCTS))
    with claw_env(SERVICE, FIXTURES) as env:
        replay(Mock("inventory", fixture, monkeypatch), env, SERVICE, ENDPOINTS, CALLS)


@needs_claw_eval
def test_every_real_tasks_inventory_fixture_seeds_and_reads_as_the_mock_gives_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = real_fixtures("inventory")
    assert len(found) >= 20
    for _task, path in found:
        fixtures = fixture_of(path)
        ids = [p["product_id"] for p in fixtures[path.name]]
        calls = [("inventory_list_products", {})] + [("inventory_get_product", {"product_id": i}) for i in ids]
        with claw_env(SERVICE, fixtures) as env:
            replay(Mock("inventory", path, monkeypatch), env, SERVICE, ENDPOINTS, calls)
