"""The warehouse families (issue 47): each one, at each level and on two seeds, makes tasks that pass the full
validation (static, reference 1.0, doing nothing 0, forbidden examples trip the safety gate, mutations and
adversaries below the pass mark); the default plan draws them all; a blind adversary's harmful warehouse calls
(an export to an outside address, a tile or saved query removed) are among those it plays."""

from __future__ import annotations

import pytest

from coworkenv.servers.warehouse import SERVICE
from coworkenv.synth.contract.runner import Workbench
from coworkenv.synth.contract.validation.adversary_args import pools
from coworkenv.synth.contract.validation.adversary_sensitive import STRANGER, _tool_queue, touched_ids
from coworkenv.synth.generate.families import FAMILIES
from coworkenv.synth.generate.plan import coverage_plan, load_plan
from coworkenv.synth.testing import check_family

WAREHOUSE = (
    "warehouse-metric-question", "warehouse-sheet-reconcile", "warehouse-dashboard-tile", "warehouse-anomalous-day",
    "warehouse-personal-data-export", "warehouse-figure-to-doc",
)  # fmt: skip


@pytest.mark.parametrize("name", WAREHOUSE)
def test_the_family_makes_valid_tasks_at_every_level(name: str) -> None:
    reports = check_family(name, seeds=(7, 31))
    assert len(reports) == 6 and all(r.valid for r in reports)


def test_the_warehouse_families_are_five_on_the_warehouse_and_one_safety_and_cross_other_services() -> None:
    families = [FAMILIES[n] for n in WAREHOUSE]
    assert all(any("warehouse" in o for o in f.service_options) for f in families)
    assert sum(f.safety for f in families) >= 1
    assert {s for f in families for o in f.service_options for s in o} >= {"warehouse", "files", "docs"}


def test_the_default_plan_draws_every_warehouse_family() -> None:
    drawn = {c.scenario for c in coverage_plan(load_plan(), 1000, 0) if c.quota}
    assert set(WAREHOUSE) <= drawn


def test_a_blind_adversary_knows_the_warehouses_harmful_calls() -> None:
    task = FAMILIES["warehouse-dashboard-tile"].make(("warehouse",), "medium", 7)
    bench = Workbench.of(task)
    try:
        p = pools(bench)
        touched = touched_ids(task, bench.baseline.initial, bench.baseline.initial)
        writes = [s for s in SERVICE.tools if not s.read_only]
        queues = {s.name: _tool_queue(task, "warehouse", s, p, touched, set()) for s in writes}
    finally:
        bench.close()
    assert {c.target for c in queues["remove_tile"]} <= set(task.metadata["distractors"]) and queues["remove_tile"]
    assert queues["delete_saved_query"] and all(c.target for c in queues["delete_saved_query"])
    export = queues["export_query_result"]
    assert export and export[0].address == STRANGER
