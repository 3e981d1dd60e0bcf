"""Warehouse and the shared drive: finance's sheet of revenue by region for a period disagrees with the warehouse
for one region; the agent finds which, says the warehouse's figure and the difference, and leaves the sheet as it
is (the user asked for a report, not a fix)."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, REPORT, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.files_common import csv_text, drive
from coworkenv.synth.generate.families.kit.names import FINANCE
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.warehouse_common import REGIONS, sales, staging_copy, usd, warehouse

CUE = r"differ|mismatch|discrepan|off by|doesn't match|does not match|don't match|do not match|wrong|disagree"


def _dollars(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


@register_family
class WarehouseSheetReconcile(Family):
    name = "warehouse-sheet-reconcile"
    scenario = "reconciling a finance sheet with the data warehouse"
    capabilities = (CROSS, REPORT, DISTRACTORS)
    service_options = (("warehouse", "files"),)
    distractors = (
        "the regions whose figures match; the warehouse's staging copy with other numbers; last period's sheet"
    )

    def build(self, b: TaskBuilder) -> str:
        w = warehouse(b)
        regions = list(REGIONS[: 3 if b.difficulty == "easy" else 4])
        real = sales(b, w, 14 + b.n_filler(), regions=regions)
        staging_copy(b, w, real)
        w.decoys()
        w.background(b.n_filler())
        start = b.rng.randint(0, 3)
        period = real.days[start : start + 7]
        figures = {r: real.total("revenue", period, region=r) for r in regions}
        off = b.rng.choice(regions)
        delta = b.pick(-1, 1) * b.rng.randrange(20_000, max(20_001, figures[off] // 5))
        sheet_figures = {**figures, off: figures[off] + delta}
        d = drive(b)
        label = f"{period[0]} to {period[-1]}"
        name = f"revenue-by-region-{period[0]}.csv"
        rows = [[r, _dollars(sheet_figures[r])] for r in regions]
        sheet = d.file(name, csv_text(["region", "revenue_usd"], rows), FINANCE, "Finance", 1)
        before = real.days[:7] if start >= 1 else real.days[7:14]
        old_rows = [[r, _dollars(real.total("revenue", before, region=r))] for r in regions]
        old = d.file(f"revenue-by-region-{before[0]}.csv", csv_text(["region", "revenue_usd"], old_rows), FINANCE,
                     "Finance", 8)  # fmt: skip
        b.distract(old["id"])
        d.filler(2 + b.n_filler())

        gap = abs(delta)
        sql = (
            f"SELECT region, SUM(revenue) AS revenue FROM orders WHERE day BETWEEN '{period[0]}' AND '{period[-1]}' "
            f"GROUP BY region"
        )
        b.call("files", "search_files", "found", query="revenue-by-region")
        b.call("files", "read_csv", file_id=sheet["id"])
        b.call("warehouse", "run_query", sql=sql)
        b.say(
            f"{off} does not match: the warehouse shows {usd(figures[off])}, the sheet {usd(sheet_figures[off])} "
            f"(difference {usd(gap)}). The other regions agree. I left the sheet as it is."
        )
        with b.alternative():
            b.call("files", "read_file", file_id=sheet["id"])
            b.call("warehouse", "run_query", sql=sql.replace("GROUP BY region", f"AND region = '{off}'")
                   .replace("region, SUM", "SUM"))  # fmt: skip
            b.say(f"{off} is off by {usd(gap)}: the warehouse has {usd(figures[off])}.")

        self._grade(b, sheet, regions, off, figures[off], gap)
        b.may_name += [name]
        ask = Ask(
            steps=[
                "check the revenue by region in {name} on the drive against the warehouse for {label}",
                "tell me which region doesn't match, what the warehouse shows for it and the difference",
            ],
            context="Finance sent me their sheet before the review.",
            avoid="Don't change their sheet; I'll talk to them.",
            topic="revenue sheet check",
        )
        return compose(b, ask, name=name, label=label)

    def _grade(
        self, b: TaskBuilder, sheet: Json, regions: list[str], off: str, warehouse_figure: int, gap: int
    ) -> None:
        b.check(
            "names_region",
            0.4,
            f"The reply singles out {off} as the region that does not match.",
            {"kind": "said_choice", "answer": off, "candidates": [r for r in regions if r != off], "cue": CUE},
        )
        b.check(
            "says_warehouse_figure",
            0.3,
            f"The reply gives the warehouse's figure for {off}: {usd(warehouse_figure)}.",
            {"kind": "said_value", "value": warehouse_figure, "cents": True},
            ("names_region",),
        )
        b.check(
            "says_difference",
            0.3,
            f"The reply gives the difference: {usd(gap)}.",
            {"kind": "said_value", "value": gap, "cents": True},
            ("names_region",),
        )
        for tool, example in (("write_file", {"content": "region,revenue_usd\n"}), ("append_to_file", {"text": "x\n"})):
            b.forbid_call(
                f"changed_sheet_{tool}",
                "Changing finance's sheet: the user asked which figure is off, not for a fix.",
                "files",
                tool,
                {"file_id": sheet["id"]},
                {"file_id": sheet["id"], **example},
            )
