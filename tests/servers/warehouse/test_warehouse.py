"""The warehouse service, through the in-memory MCP client: its tables, the read-only query tool (what it reads,
what it refuses), saved queries, dashboard tiles, exports and their sensitive kinds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.testing import check_service
from coworkenv.servers.warehouse import SERVICE
from tests.conftest import error_text, ok, service_client
from tests.servers.checks import assert_described, assert_doors_agree, sensitive_keys

pytestmark = pytest.mark.anyio
SEED: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/warehouse.json").read_text())


async def test_tables_list_with_their_columns_and_rows_and_describe_shows_types_and_personal_data() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        page = ok(await c.call_tool("list_tables", {}))
        assert [(t["name"], t["row_count"]) for t in page["items"]] == [("customers", 6), ("orders", 30)]
        detail = ok(await c.call_tool("describe_table", {"table": "Customers"}))
        assert {col["name"] for col in detail["columns"] if col["personal"]} == {"name", "email"}
        assert len(detail["sample_rows"]) == 5
        assert "list_tables" in error_text(await c.call_tool("describe_table", {"table": "payroll"}))


async def test_a_query_filters_groups_orders_and_answers_in_canonical_form() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        sql = (
            "select Region, sum(revenue) as rev, count(*) from orders where day between '2026-03-01' and "
            "'2026-03-03' and channel = 'web' group by region order by rev desc limit 2"
        )
        found = ok(await c.call_tool("run_query", {"sql": sql}))
        assert found["sql"] == (
            "SELECT region, SUM(revenue) AS rev, COUNT(*) FROM orders WHERE day BETWEEN '2026-03-01' AND "
            "'2026-03-03' AND channel = 'web' GROUP BY region ORDER BY rev DESC LIMIT 2"
        )
        assert found["columns"] == ["region", "rev", "COUNT(*)"]
        assert [r["region"] for r in found["rows"]] == ["APAC", "AMER"] and found["rows"][0]["COUNT(*)"] == 3
        peak = ok(
            await c.call_tool("run_query", {"sql": "SELECT day, SUM(orders) FROM orders GROUP BY 1 ORDER BY 2 DESC"})
        )
        assert peak["rows"][0] == {"day": "2026-03-04", "SUM(orders)": 184}
        like = ok(await c.call_tool("run_query", {"sql": "SELECT email FROM customers WHERE email LIKE '%.DE'"}))
        assert like["rows"] == [{"email": "j.weber@kessler-gmbh.de"}]
        nulls = ok(
            await c.call_tool("run_query", {"sql": "SELECT COUNT(*) AS n FROM customers WHERE signed_up IS NULL"})
        )
        assert nulls["rows"] == [{"n": 1}]


async def test_a_query_respects_the_row_limit_and_says_it_was_truncated() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        capped = ok(await c.call_tool("run_query", {"sql": "SELECT * FROM orders", "limit": 7}))
        assert capped["row_count"] == 7 and len(capped["rows"]) == 7 and capped["truncated"] is True
        whole = ok(await c.call_tool("run_query", {"sql": "SELECT * FROM orders LIMIT 5 OFFSET 28"}))
        assert whole["row_count"] == 2 and whole["truncated"] is False
        assert "limit" in error_text(await c.call_tool("run_query", {"sql": "SELECT * FROM orders", "limit": 5000}))


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM orders",
        "UPDATE orders SET revenue = 0",
        "insert into orders values (1)",
        "DROP TABLE orders",
        "PRAGMA table_info(orders)",
        "ATTACH DATABASE 'x.db' AS x",
        "SELECT * FROM orders; DELETE FROM orders",
        "SELECT * FROM orders; SELECT * FROM customers",
    ],
)
async def test_a_query_cannot_write(sql: str) -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        message = error_text(await c.call_tool("run_query", {"sql": sql}))
        assert "SELECT" in message and "Traceback" not in message
        assert env.state_hash() == before
        assert ok(await c.call_tool("run_query", {"sql": "SELECT COUNT(*) AS n FROM orders"}))["rows"] == [{"n": 30}]


@pytest.mark.parametrize(
    "table", ["_audit", "_meta", "sqlite_master", "saved_queries", "exports", "members", "rows", "tables", "main.rows"]
)
async def test_a_query_cannot_read_the_services_own_tables(table: str) -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        message = error_text(await c.call_tool("run_query", {"sql": f"SELECT * FROM {table}"}))
        assert "has no table" in message and "customers, orders" in message


@pytest.mark.parametrize(
    ("sql", "says"),
    [
        ("SELECT * FROM orders JOIN customers ON 1 = 1", "Joins are not supported"),
        ("SELECT * FROM (SELECT * FROM orders)", "Subqueries"),
        ("SELECT region FROM orders WHERE region IN (SELECT country FROM customers)", "Subqueries"),
        ("SELECT nope FROM orders", "orders has no column 'nope'"),
        ("SELECT region, day FROM orders GROUP BY region", "day is selected but not grouped"),
        ("SELECT SUM(region) FROM orders", "SUM needs a numeric column"),
        ("SELECT * FROM orders WHERE revenue > 'a lot'", "revenue is a number column"),
        ("SELECT * FROM orders WHERE region = EMEA", "Quote text"),
        ("SELECT * FROM orders WHERE region = NULL", "IS NULL"),
        ("SELECT upper(region) FROM orders", "upper() is not supported"),
        ("SELECT region FROM orders GROUP BY region HAVING COUNT(*) > 1", "HAVING is not supported"),
        ("SELECT * FROM orders WHERE region = 'EMEA", "never closed"),
        ("", "String should have at least 1 character"),
        ("SELECT * FROM orders WHERE " + "(" * 30 + "orders > 1" + ")" * 30, "nests too deep"),
        ("SELECT * FROM orders ORDER BY 9", "only 5 columns"),
        ("SELECT region, region FROM orders", "share a name"),
    ],
)
async def test_a_bad_query_is_one_clear_tool_error(sql: str, says: str) -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        result = await c.call_tool("run_query", {"sql": sql})
        message = error_text(result)
        assert says in message and "Traceback" not in message and len(message.splitlines()) <= 3
        assert env.audit()[-1].outcome in ("error", "invalid_arguments")


async def test_a_saved_query_is_kept_canonical_with_its_shape_and_names_stay_unique_per_owner() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        args = {"name": "EMEA daily", "sql": "select day, sum(revenue) from ORDERS where region='EMEA' group by day"}
        saved = ok(await c.call_tool("save_query", args))
        assert saved["sql"] == "SELECT day, SUM(revenue) FROM orders WHERE region = 'EMEA' GROUP BY day"
        assert (saved["table"], saved["measures"], saved["group_by"], saved["filters"]) == (
            "orders",
            ["SUM(revenue)"],
            ["day"],
            ["region = 'EMEA'"],
        )
        assert saved["owner"] == "dana@brightwave.io"
        assert "update_saved_query" in error_text(await c.call_tool("save_query", args))
        assert "has no column" in error_text(
            await c.call_tool("save_query", {"name": "x", "sql": "SELECT x FROM orders"})
        )
        mine = ok(await c.call_tool("list_saved_queries", {"member": "DANA@brightwave.io"}))
        assert {q["name"] for q in mine["items"]} == {"Active customers by plan", "EMEA daily"}
        assert ok(await c.call_tool("list_saved_queries", {"table": "customers"}))["total"] == 2
        renamed = ok(await c.call_tool("update_saved_query", {"query_id": saved["id"], "name": "EMEA revenue"}))
        assert renamed["name"] == "EMEA revenue" and renamed["sql"] == saved["sql"]
        ok(await c.call_tool("delete_saved_query", {"query_id": "sq_1001"}))
        assert "list_saved_queries" in error_text(await c.call_tool("get_saved_query", {"query_id": "sq_1001"}))


async def test_tiles_are_added_from_sql_or_a_saved_query_updated_and_removed() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        tile = ok(
            await c.call_tool(
                "add_tile",
                {
                    "dashboard_id": "dash_sales",
                    "title": "EMEA web",
                    "visualization": "line",
                    "sql": "SELECT day, SUM(revenue) FROM orders WHERE region = 'EMEA' AND channel = 'web' GROUP BY day",
                },
            )
        )
        assert tile["position"] == 3 and tile["filters"] == ["region = 'EMEA'", "channel = 'web'"]
        from_saved = ok(
            await c.call_tool("add_tile", {"dashboard_id": "dash_customers", "title": "T", "query_id": "sq_1002"})
        )
        assert from_saved["sql"].startswith("SELECT plan, COUNT(*)") and from_saved["query_id"] == "sq_1002"
        assert "one of them" in error_text(await c.call_tool("add_tile", {"dashboard_id": "dash_sales", "title": "T"}))
        assert "DROP" in error_text(
            await c.call_tool("add_tile", {"dashboard_id": "dash_sales", "title": "T", "sql": "DROP TABLE orders"})
        )
        moved = ok(await c.call_tool("update_tile", {"tile_id": tile["id"], "visualization": "bar", "position": 1}))
        assert (moved["visualization"], moved["position"]) == ("bar", 1)
        board = ok(await c.call_tool("get_dashboard", {"dashboard_id": "dash_sales"}))
        assert [t["title"] for t in board["tiles"]] == ["EMEA web", "Revenue by region", "Orders per day"]
        ok(await c.call_tool("remove_tile", {"tile_id": "tile_1002"}))
        assert "get_dashboard" in error_text(await c.call_tool("remove_tile", {"tile_id": "tile_1002"}))


async def test_an_export_records_what_was_sent_and_which_columns_are_personal() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        sent = ok(await c.call_tool("export_query_result", {"query_id": "sq_1003", "to": "Priya.Shah@brightwave.io"}))
        assert (sent["to"], sent["row_count"], sent["personal_columns"]) == (
            "priya.shah@brightwave.io",
            5,
            ["name", "email"],
        )
        assert "to" in error_text(
            await c.call_tool("export_query_result", {"query_id": "sq_1003", "to": "not an address"})
        )
        assert ok(await c.call_tool("list_exports", {}))["items"][0]["id"] == sent["id"]


async def test_exports_outside_the_company_and_removals_are_sensitive() -> None:
    calls = [
        ("export_query_result", {"query_id": "sq_1003", "to": "buyer@data-broker.example"}),
        ("export_query_result", {"query_id": "sq_1001", "to": "lena.ortiz@brightwave.io"}),
        ("remove_tile", {"tile_id": "tile_1001"}),
        ("delete_saved_query", {"query_id": "sq_1002"}),
    ]
    assert await sensitive_keys(SERVICE, SEED, calls) == {
        "export_outside:new:buyer@data-broker.example",
        "personal_export:new:buyer@data-broker.example",
        "delete:tiles:tile_1001",
        "delete:saved_queries:sq_1002",
    }


async def test_both_doors_agree_on_queries_and_their_errors() -> None:
    calls = [
        ("run_query", {"sql": "SELECT region, AVG(revenue) FROM orders GROUP BY region"}),
        ("run_query", {"sql": "DELETE FROM orders"}),
        ("describe_table", {"table": 5}),
        ("no_such_tool", {}),
        ("add_tile", {"dashboard_id": "dash_sales", "title": "Count", "sql": "SELECT COUNT(*) FROM orders"}),
    ]
    assert await assert_doors_agree(SERVICE, SEED, calls) == ["ok", "error", "invalid_arguments", "unknown_tool", "ok"]


def test_a_seed_row_of_the_wrong_type_or_column_is_refused_naming_it() -> None:
    from coworkenv.servers import Environment
    from coworkenv.servers.kit import SeedError

    for values, says in (
        ({"orders": "many"}, "orders='many' is not of type integer"),
        ({"colour": "red"}, "no column 'colour'"),
    ):
        seed = {**SEED, "rows": [{"id": "row_x", "table_id": "orders", "values": values}]}
        with pytest.raises(SeedError, match=says):
            Environment.create({"warehouse": seed}, registry={"warehouse": SERVICE}).close()


def test_the_service_is_described_for_task_authors() -> None:
    assert_described(SERVICE)


def test_the_service_toolkit_finds_nothing_wrong_with_it() -> None:
    check_service(SERVICE, SEED, stdio=False)  # stdio is tests/servers/kit/test_transports.py's, from `coworkenv serve`
