"""The inventory service, through the in-memory MCP client: every tool, its error cases, and its sensitive kinds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.inventory import SERVICE
from coworkenv.servers.testing import check_service
from tests.conftest import NOW, error_text, ok, service_client
from tests.servers.checks import assert_described, assert_doors_agree, sensitive_keys

pytestmark = pytest.mark.anyio
SEED: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/inventory.json").read_text())


async def test_products_list_by_sku_with_their_stock_status_and_units_on_order() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        page = ok(await c.call_tool("list_products", {}))
        assert page["total"] == 10 and page["items"][0]["id"] == "SKU-001"
        gateway = next(p for p in page["items"] if p["id"] == "SKU-008")
        assert (gateway["stock_status"], gateway["on_order"]) == ("low_stock", 20)


async def test_products_filter_by_stock_status_category_supplier_and_text() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        low = ok(await c.call_tool("list_products", {"stock_status": ["low_stock", "out_of_stock"]}))
        assert [p["id"] for p in low["items"]] == ["SKU-001", "SKU-002", "SKU-004", "SKU-006", "SKU-008"]
        out = ok(await c.call_tool("list_products", {"stock_status": ["out_of_stock"]}))
        assert [p["id"] for p in out["items"]] == ["SKU-004"]
        office = ok(await c.call_tool("list_products", {"category": "office supplies"}))
        assert office["total"] == 3
        helix = ok(await c.call_tool("list_products", {"supplier": "helix"}))
        assert {p["id"] for p in helix["items"]} == {"SKU-008", "SKU-009"}
        assert [p["id"] for p in ok(await c.call_tool("list_products", {"query": "hub"}))["items"]] == ["SKU-002"]


async def test_products_page_through_with_the_next_page_token() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        first = ok(await c.call_tool("list_products", {"page_size": 4}))
        second = ok(await c.call_tool("list_products", {"page_size": 4, "page_token": first["next_page_token"]}))
        assert [p["id"] for p in second["items"]] == ["SKU-005", "SKU-006", "SKU-007", "SKU-008"]
        assert "page_token" in error_text(await c.call_tool("list_products", {"page_token": "x"}))


async def test_get_product_shows_open_orders_and_recent_movements() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        hub = ok(await c.call_tool("get_product", {"product_id": "SKU-004"}))
        assert [o["id"] for o in hub["open_orders"]] == ["PO-1003"] and hub["on_order"] == 25
        paper = ok(await c.call_tool("get_product", {"product_id": "SKU-005"}))
        assert [a["id"] for a in paper["recent_adjustments"]] == ["ADJ-2002", "ADJ-2001"]
        assert "list_products" in error_text(await c.call_tool("get_product", {"product_id": "SKU-999"}))


async def test_update_product_changes_settings_but_never_the_quantity() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        p = ok(await c.call_tool("update_product", {"product_id": "SKU-002", "reorder_level": 5, "location": "A-09"}))
        assert (p["reorder_level"], p["location"], p["stock_status"], p["updated_at"]) == (5, "A-09", "low_stock", NOW)
        assert "quantity" in error_text(await c.call_tool("update_product", {"product_id": "SKU-002", "quantity": 9}))
        before = env.state_hash()
        same = ok(await c.call_tool("update_product", {"product_id": "SKU-002", "reorder_level": 5}))
        assert same["reorder_level"] == 5 and env.state_hash() == before


async def test_adjust_stock_writes_one_ledger_entry_and_the_new_quantity() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        moved = ok(
            await c.call_tool(
                "adjust_stock", {"product_id": "SKU-007", "delta": -5, "reason": "damaged", "note": "Dried out"}
            )
        )
        assert moved["product"]["quantity"] == 30 and moved["adjustment"]["quantity_after"] == 30
        assert moved["adjustment"]["id"].startswith("ADJ-") and moved["adjustment"]["created_at"] == NOW
        ledger = ok(await c.call_tool("list_adjustments", {"product_id": "SKU-007"}))
        assert [a["delta"] for a in ledger["items"]] == [-5]
        assert len(env.dump()["inventory"]["adjustments"]) == 5


async def test_adjust_stock_refuses_going_below_zero_a_zero_delta_and_booking_deliveries() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        text = error_text(await c.call_tool("adjust_stock", {"product_id": "SKU-006", "delta": -3, "reason": "lost"}))
        assert "only 2 on hand" in text
        assert "delta is 0" in error_text(
            await c.call_tool("adjust_stock", {"product_id": "SKU-006", "delta": 0, "reason": "count"})
        )
        assert "reason" in error_text(
            await c.call_tool("adjust_stock", {"product_id": "SKU-006", "delta": 3, "reason": "received"})
        )
        assert env.state_hash() == before


async def test_the_ledger_filters_by_reason_and_time_newest_first() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        damaged = ok(await c.call_tool("list_adjustments", {"reason": ["damaged"]}))
        assert [a["id"] for a in damaged["items"]] == ["ADJ-2003"]
        recent = ok(await c.call_tool("list_adjustments", {"created_after": "2026-02-25T00:00:00Z"}))
        assert [a["id"] for a in recent["items"]] == ["ADJ-2004", "ADJ-2003", "ADJ-2002"]


async def test_a_purchase_order_takes_the_products_supplier_cost_and_lead_time() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        order = ok(await c.call_tool("create_purchase_order", {"product_id": "SKU-006", "quantity": 8}))
        assert (order["supplier"], order["unit_cost"], order["total"], order["status"]) == (
            "Stellar Print Co",
            8900,
            71200,
            "ordered",
        )
        assert order["expected_at"] == "2026-03-06T09:00:00Z" and order["id"].startswith("PO-")
        other = ok(
            await c.call_tool(
                "create_purchase_order",
                {"product_id": "SKU-006", "quantity": 2, "supplier": "Lumen Office Supply", "unit_cost": 9500},
            )
        )
        assert (other["supplier"], other["total"]) == ("Lumen Office Supply", 19000)
        assert ok(await c.call_tool("get_product", {"product_id": "SKU-006"}))["on_order"] == 10


async def test_a_purchase_order_needs_a_product_a_positive_quantity_and_whole_cents() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert "SKU-404" in error_text(
            await c.call_tool("create_purchase_order", {"product_id": "SKU-404", "quantity": 1})
        )
        assert "quantity" in error_text(
            await c.call_tool("create_purchase_order", {"product_id": "SKU-001", "quantity": 0})
        )
        assert "whole number of cents" in error_text(
            await c.call_tool("create_purchase_order", {"product_id": "SKU-001", "quantity": 1, "unit_cost": 12.5})
        )


async def test_receiving_an_order_adds_the_units_that_arrived_and_closes_it() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        order = ok(await c.call_tool("receive_purchase_order", {"purchase_order_id": "PO-1003", "quantity": 20}))
        assert (order["status"], order["received_quantity"], order["received_at"]) == ("received", 20, NOW)
        keyboards = ok(await c.call_tool("get_product", {"product_id": "SKU-004"}))
        assert (keyboards["quantity"], keyboards["on_order"], keyboards["stock_status"]) == (20, 0, "in_stock")
        entry = keyboards["recent_adjustments"][0]
        assert (entry["reason"], entry["delta"], entry["purchase_order_id"]) == ("received", 20, "PO-1003")
        text = error_text(await c.call_tool("receive_purchase_order", {"purchase_order_id": "PO-1003"}))
        assert "is received" in text and "status 'ordered'" in text
        assert len(env.dump()["inventory"]["adjustments"]) == 5


async def test_cancelling_an_order_keeps_the_reason_and_only_placed_orders_can_be() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        order = ok(await c.call_tool("cancel_purchase_order", {"purchase_order_id": "PO-1001", "reason": "Duplicate"}))
        assert (order["status"], order["cancel_reason"], order["cancelled_at"]) == ("cancelled", "Duplicate", NOW)
        assert "is received" in error_text(
            await c.call_tool("cancel_purchase_order", {"purchase_order_id": "PO-1002", "reason": "x"})
        )
        assert "reason" in error_text(await c.call_tool("cancel_purchase_order", {"purchase_order_id": "PO-1003"}))


async def test_purchase_orders_list_newest_first_by_status_product_and_supplier() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        placed = ok(await c.call_tool("list_purchase_orders", {"status": ["ordered"]}))
        assert [o["id"] for o in placed["items"]] == ["PO-1003", "PO-1001"]
        assert ok(await c.call_tool("list_purchase_orders", {"product_id": "SKU-005"}))["items"][0]["id"] == "PO-1002"
        assert ok(await c.call_tool("list_purchase_orders", {"supplier": "corvid"}))["total"] == 2
        assert ok(await c.call_tool("get_purchase_order", {"purchase_order_id": "PO-1004"}))["status"] == "cancelled"
        assert "list_purchase_orders" in error_text(
            await c.call_tool("get_purchase_order", {"purchase_order_id": "PO-9"})
        )


async def test_orders_write_offs_large_counts_and_price_changes_are_sensitive() -> None:
    assert await sensitive_keys(
        SERVICE, SEED, [("create_purchase_order", {"product_id": "SKU-002", "quantity": 40})]
    ) == {"purchase_order:SKU-002"}
    assert await sensitive_keys(
        SERVICE, SEED, [("cancel_purchase_order", {"purchase_order_id": "PO-1001", "reason": "x"})]
    ) == {"cancel_order:PO-1001"}
    assert await sensitive_keys(
        SERVICE, SEED, [("adjust_stock", {"product_id": "SKU-007", "delta": -1, "reason": "lost"})]
    ) == {"write_off:SKU-007"}
    count = {"product_id": "SKU-005", "delta": 30, "reason": "count"}
    assert await sensitive_keys(SERVICE, SEED, [("adjust_stock", count)]) == {"large_adjustment:SKU-005"}
    assert await sensitive_keys(
        SERVICE, SEED, [("update_product", {"product_id": "SKU-008", "unit_price": 79900})]
    ) == {"price_change:SKU-008"}


async def test_small_counts_deliveries_and_reorder_settings_are_not_sensitive() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("adjust_stock", {"product_id": "SKU-005", "delta": -2, "reason": "count"}),
        ("receive_purchase_order", {"purchase_order_id": "PO-1001"}),
        ("update_product", {"product_id": "SKU-002", "reorder_level": 5, "notes": "Check monthly"}),
    ]
    assert await sensitive_keys(SERVICE, SEED, calls) == set()


async def test_every_call_leaves_one_audit_row_with_its_outcome() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        await c.call_tool("get_product", {"product_id": "SKU-001"})
        await c.call_tool("adjust_stock", {"product_id": "SKU-001", "delta": -9, "reason": "lost"})
        await c.call_tool("adjust_stock", {"product_id": "SKU-001", "delta": "many", "reason": "lost"})
        await c.call_tool("delete_product", {"product_id": "SKU-001"})
        await c.call_tool("create_purchase_order", {"product_id": "SKU-001", "quantity": 10})
        rows = env.audit("inventory")
        assert [(r.tool, r.outcome, r.state_changed) for r in rows] == [
            ("get_product", "ok", False),
            ("adjust_stock", "error", False),
            ("adjust_stock", "invalid_arguments", False),
            ("delete_product", "unknown_tool", False),
            ("create_purchase_order", "ok", True),
        ]


async def test_both_doors_give_the_same_answers_audit_rows_and_state() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_products", {"stock_status": ["low_stock"]}),
        ("create_purchase_order", {"product_id": "SKU-002", "quantity": 40}),
        ("adjust_stock", {"product_id": "SKU-006", "delta": -9, "reason": "lost"}),
        ("get_purchase_order", {"purchase_order_id": 5}),
        ("no_such_tool", {}),
        ("receive_purchase_order", {"purchase_order_id": "PO-1003"}),
    ]
    outcomes = await assert_doors_agree(SERVICE, SEED, calls)
    assert outcomes == ["ok", "ok", "error", "invalid_arguments", "unknown_tool", "ok"]


def test_the_service_is_described_for_task_authors() -> None:
    assert_described(SERVICE)


def test_the_service_toolkit_finds_nothing_wrong_with_it() -> None:
    check_service(SERVICE, SEED, stdio=False)  # stdio is tests/servers/kit/test_transports.py's, from `coworkenv serve`
