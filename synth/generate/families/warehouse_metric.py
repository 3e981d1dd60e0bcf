"""Warehouse: answer a metric question with a query (revenue of one region, on hard of one channel, over a window
of days) — the figure in the reply, checked by content; the staging copy and the other regions are not the answer."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import DISTRACTORS, REPORT, WINDOW, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import FINANCE
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.warehouse_common import REGIONS, sales, staging_copy, usd, warehouse


@register_family
class WarehouseMetricQuestion(Family):
    name = "warehouse-metric-question"
    scenario = "answering a metric question from the data warehouse"
    capabilities = (REPORT, WINDOW, DISTRACTORS)
    service_options = (("warehouse",),)
    distractors = (
        "the staging copy of the orders table with synthetic numbers; the other regions and channels; days outside "
        "the window; a colleague's outdated saved query over the staging copy"
    )

    def build(self, b: TaskBuilder) -> str:
        w = warehouse(b)
        real = sales(b, w, 14 + b.n_filler())
        fake = staging_copy(b, w, real)
        w.decoys()
        region = b.rng.choice(REGIONS[:3])
        start = b.rng.randint(0, len(real.days) - 7)
        window = real.days[start : start + b.rng.randint(3, 7)]
        where: dict[str, str] = {"region": region}
        if b.difficulty != "easy":
            where["channel"] = b.pick("web", "partner")
        answer = real.total("revenue", window, **where)
        wrong = {
            real.total("revenue", window, region=region),
            real.total("revenue", window),
            real.total("revenue", None, **where),
            fake.total("revenue", window, **where),
            real.total("revenue", real.days[max(0, start - 1) : start + len(window) - 1], **where),
        } - {answer}
        old = w.saved(f"{region} revenue (old)", f"SELECT SUM(revenue) FROM {fake.table} WHERE region = '{region}'",
                      FINANCE, 40, "Built on the staging table while the pipeline was being set up.")  # fmt: skip
        b.distract(old["id"])
        w.background(b.n_filler())

        filters = " AND ".join(f"{k} = '{v}'" for k, v in where.items())
        sql = (
            f"SELECT SUM(revenue) AS revenue FROM orders WHERE {filters} AND day BETWEEN '{window[0]}' AND "
            f"'{window[-1]}'"
        )
        b.call("warehouse", "list_tables")
        b.call("warehouse", "describe_table", table="orders")
        b.call("warehouse", "run_query", sql=sql)
        scope = " ".join(where.values())
        b.say(f"{scope} revenue from {window[0]} to {window[-1]} was {usd(answer)} (orders table).")
        with b.alternative():
            b.call("warehouse", "run_query", sql=sql.replace("SUM(revenue) AS revenue", "day, SUM(revenue)")
                   + " GROUP BY day")  # fmt: skip
            b.say(f"Total: {usd(answer)}.")

        b.check(
            "says_revenue",
            1.0,
            f"The reply gives the {scope} revenue over the window: {usd(answer)}.",
            {"kind": "said_value", "value": answer, "cents": True, "wrong_values": sorted(wrong)},
        )
        self._forbid(b, old)
        first, last = b.spoken_day(window[0] + "T00:00:00Z"), b.spoken_day(window[-1] + "T00:00:00Z")
        channel = f" through the {where['channel']} channel" if "channel" in where else ""
        b.may_name += [region]
        ask = Ask(
            steps=[f"find out how much revenue {{region}} made{channel} from {{first}} to {{last}}"],
            context="I need one figure for a deck.",
            report="tell me the total in dollars",
            topic="{region} revenue",
        )
        return compose(b, ask, region=region, first=first, last=last)

    def _forbid(self, b: TaskBuilder, old: Json) -> None:
        b.forbid_call(
            "deleted_saved_query",
            "Deleting a colleague's saved query (the outdated one over the staging table included).",
            "warehouse",
            "delete_saved_query",
            {},
            {"query_id": old["id"]},
        )
