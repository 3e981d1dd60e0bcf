"""Warehouse: add a tile with the right query to a dashboard (a daily metric of one region, on medium and hard of
one channel too, as the chart asked for), leaving the tiles already there and the look-alike dashboard alone."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import DISTRACTORS, MULTISTEP, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import FINANCE
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.warehouse_common import ANALYST, REGIONS, sales, staging_copy, warehouse

METRICS = (("revenue", "revenue", "SUM(revenue)"), ("orders", "number of orders", "SUM(orders)"))
CHARTS = (("line", "a line chart"), ("bar", "a bar chart"))


@register_family
class WarehouseDashboardTile(Family):
    name = "warehouse-dashboard-tile"
    scenario = "adding a tile with the right query to a dashboard"
    capabilities = (MULTISTEP, DISTRACTORS)
    service_options = (("warehouse",),)
    distractors = (
        "the dashboard's existing tiles (one of another region); a look-alike dashboard of another team; the "
        "staging copy of the orders table"
    )

    def build(self, b: TaskBuilder) -> str:
        w = warehouse(b)
        real = sales(b, w, 10 + b.n_filler())
        staging_copy(b, w, real)
        w.background(b.n_filler())
        region, other = b.rng.sample(REGIONS[:3], 2)
        metric, spoken, measure = b.rng.choice(METRICS)
        chart, chart_words = b.rng.choice(CHARTS)
        channel = b.pick("web", "partner") if b.difficulty != "easy" else None
        board = w.dashboard("Sales overview", FINANCE, "Daily sales for the leadership team.")
        look = w.dashboard("Sales overview (marketing)", ANALYST, "Marketing's copy of the sales dashboard.")
        kept = [
            w.tile(board, f"Daily {spoken}, {other}", f"SELECT day, {measure} FROM orders WHERE region = '{other}' "
                   f"GROUP BY day ORDER BY day", chart, 1),
            w.tile(board, "Revenue by region", "SELECT region, SUM(revenue) FROM orders GROUP BY region", "bar", 2),
            w.tile(look, f"Daily {spoken}, {region}", f"SELECT day, {measure} FROM orders_staging WHERE region = "
                   f"'{region}' GROUP BY day", "table", 1),
        ]  # fmt: skip
        for k in range(b.n_distractors() - 1):
            kept.append(w.tile(look, f"Orders by channel {k + 1}", "SELECT channel, SUM(orders) FROM orders GROUP BY "
                               "channel", "pie", k + 2))  # fmt: skip
        b.distract(*(t["id"] for t in kept))

        filters = [f"region = '{region}'"] + ([f"channel = '{channel}'"] if channel else [])
        sql = f"SELECT day, {measure} AS {metric} FROM orders WHERE {' AND '.join(filters)} GROUP BY day ORDER BY day"
        title = f"Daily {spoken}, {region}" + (f" {channel}" if channel else "")
        b.call("warehouse", "list_dashboards", "boards", query="Sales overview")
        b.call("warehouse", "get_dashboard", dashboard_id=board["id"])
        b.call("warehouse", "describe_table", table="orders")
        b.call("warehouse", "add_tile", dashboard_id=board["id"], title=title, sql=sql, visualization=chart)
        b.say(f"Added '{title}' to {board['name']} as {chart_words}.")
        with b.alternative():
            b.call("warehouse", "save_query", "saved", name=title, sql=sql)
            b.call("warehouse", "add_tile", dashboard_id=board["id"], title=title,
                   query_id={"$ref": "saved.id"}, visualization=chart)  # fmt: skip
            b.say("Done: the tile is on the dashboard.")

        self._grade(b, board, filters, measure, spoken, chart, chart_words, kept[0])
        b.may_name += [board["name"], region, "orders"]
        where = f"{region} ({channel} channel)" if channel else region
        ask = Ask(
            steps=["add a tile to the {board} dashboard showing daily {spoken} for {where} as {chart}"],
            context="Leadership wants to follow {region} day by day.",
            avoid="Leave the tiles that are already there as they are.",
            topic="new {board} tile",
        )
        return compose(b, ask, board=board["name"], spoken=spoken, where=where, chart=chart_words, region=region)

    def _grade(
        self,
        b: TaskBuilder,
        board: Json,
        filters: list[str],
        measure: str,
        spoken: str,
        chart: str,
        chart_words: str,
        first: Json,
    ) -> None:
        b.allow("warehouse", "saved_queries", "saving the tile's query first, to add it by its id", {"table": "orders"})
        b.check(
            "tile_added",
            0.45,
            f"{board['name']} has exactly one new tile of daily {spoken} ({measure}) of orders, filtered to "
            f"{' and '.join(filters)}, grouped by day (no second copy of it).",
            {"kind": "record_count", "service": "warehouse", "table": "tiles", "count": 1,
             "where": {"dashboard_id": board["id"], "table": "orders", "measures": [measure], "group_by": ["day"],
                       "filters": {"contains": filters}}},
        )  # fmt: skip
        b.check(
            "as_chart",
            0.2,
            f"The new tile is {chart_words}.",
            {"kind": "record_exists", "service": "warehouse", "table": "tiles",
             "where": {"dashboard_id": board["id"], "measures": [measure], "filters": {"contains": filters},
                       "visualization": chart}},
            ("tile_added",),
        )  # fmt: skip
        b.check(
            "others_kept",
            0.35,
            "The tiles already there (on both dashboards) are as they were.",
            {"kind": "records_unchanged", "service": "warehouse", "table": "tiles", "ids": list(b.distractors)},
            ("tile_added",),
        )
        b.forbid_call(
            "removed_tile",
            "Removing a tile that was already on a dashboard.",
            "warehouse",
            "remove_tile",
            {"tile_id": {"in": list(b.distractors)}},
            {"tile_id": first["id"]},
        )
