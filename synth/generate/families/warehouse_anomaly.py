"""Warehouse: find the anomalous day in a daily metric (one day's orders several times the usual, or far below),
while the weekly pattern (quiet weekends) and the staging copy's own oddities are not anomalies."""

from __future__ import annotations

from datetime import date

from coworkenv.synth.generate.families.kit.base import DISTRACTORS, REPORT, WINDOW, Family, TaskBuilder
from coworkenv.synth.generate.families.kit.names import FINANCE
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.warehouse_common import day, sales, staging_copy, warehouse

CUE = r"anomal\w*|outlier|stands? out|spike[sd]?|unusual\w*|abnormal\w*|odd one"


@register_family
class WarehouseAnomalousDay(Family):
    name = "warehouse-anomalous-day"
    scenario = "finding the anomalous day in a daily metric"
    capabilities = (REPORT, WINDOW, DISTRACTORS)
    service_options = (("warehouse",),)
    distractors = "quieter weekend days (the usual weekly pattern); the staging copy with its own odd day"

    def build(self, b: TaskBuilder) -> str:
        w = warehouse(b)
        n_days = 14 + b.n_filler()
        weekdays = [k for k in range(2, n_days - 1) if date.fromisoformat(day(b, k)).weekday() < 5]
        target = day(b, b.rng.choice(weekdays))
        factor = b.pick(3.0, 3.5, 0.2) if b.difficulty != "hard" else b.pick(2.2, 0.35)
        real = sales(b, w, n_days, spike=(target, factor), quiet_weekends=True)
        odd = b.rng.choice([d for d in real.days if d != target])
        staging_copy(b, w, real, odd=odd)
        w.decoys()
        board = w.dashboard("Sales overview", FINANCE)
        tile = w.tile(
            board, "Orders per day", "SELECT day, SUM(orders) FROM orders GROUP BY day ORDER BY day", "line", 1
        )
        b.distract(tile["id"])
        w.background(b.n_filler())

        totals = {d: real.total("orders", [d]) for d in real.days}
        weekends = [d for d in real.days if date.fromisoformat(d).weekday() >= 5 and d != target]
        kind = "spike" if factor > 1 else "drop"
        sql = "SELECT day, SUM(orders) AS orders FROM orders GROUP BY day ORDER BY day"
        b.call("warehouse", "list_tables")
        b.call("warehouse", "run_query", sql=sql)
        b.say(f"The anomalous day is {target}: {totals[target]} orders, a {kind} against the usual level.")
        with b.alternative():
            order = "DESC" if factor > 1 else "ASC"
            b.call("warehouse", "run_query", sql=sql.replace("ORDER BY day", f"ORDER BY orders {order} LIMIT 3"))
            b.say(f"{target} stands out with {totals[target]} orders.")

        candidates = sorted({*weekends[:3], odd, *b.rng.sample([d for d in real.days if d != target], 2)})
        b.check(
            "names_day",
            0.7,
            f"The reply singles out {target} as the anomalous day.",
            {"kind": "said_choice", "answer": target, "candidates": candidates, "cue": CUE},
        )
        b.check(
            "says_orders",
            0.3,
            f"The reply gives that day's orders: {totals[target]}.",
            {"kind": "said_matches", "pattern": rf"(?<![\d,.]){totals[target]:,}(?![\d,]|\.\d)".replace(",", ",?")},
            ("names_day",),
        )
        b.forbid_call(
            "removed_tile",
            "Removing the dashboard's orders tile (hiding the anomaly rather than reporting it).",
            "warehouse",
            "remove_tile",
            {"tile_id": tile["id"]},
            {"tile_id": tile["id"]},
        )
        ask = Ask(
            steps=["look at daily orders in the warehouse over the last {n} days and find the day that is anomalous"],
            context="Something looked off on the sales dashboard.",
            report="tell me the date (as YYYY-MM-DD) and that day's number of orders",
            topic="odd day in orders",
        )
        return compose(b, ask, n=str(n_days))
