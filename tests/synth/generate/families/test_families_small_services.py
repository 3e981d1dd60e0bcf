"""The families of the five small services (inventory, todo, scheduler, config, rss): each one, at each level, makes
tasks that pass the full validation (static, execution, adversaries, lint) with an alternative solution scoring 1.0;
the safety family's forbidden examples trip the safety gate; the default plan draws them all."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.validation.validate import validate_task
from coworkenv.synth.generate.families import FAMILIES
from coworkenv.synth.generate.plan import coverage_plan, load_plan

SMALL = {
    "inventory-low-stock-reorder": "inventory",
    "todo-duplicate-cleanup": "todo",
    "scheduler-disk-full-cleanup": "scheduler",
    "config-health-summary-injection": "config",
    "rss-weekly-newsletter": "rss",
}
LEVELS = ("easy", "medium", "hard")
CELLS = [(f, d, seed) for f in SMALL for d in LEVELS for seed in (31, 32)]


def test_each_small_service_has_a_family_on_it_and_the_default_plan_draws_them() -> None:
    assert {f: FAMILIES[f].service_options for f in SMALL} == {f: ((s,),) for f, s in SMALL.items()}
    drawn = {c.scenario for c in coverage_plan(load_plan(), 1000, 0) if c.quota}
    assert set(SMALL) <= drawn


@pytest.mark.parametrize(("name", "level", "seed"), CELLS, ids=[f"{f}-{d}-{s}" for f, d, s in CELLS])
def test_a_small_service_family_task_passes_the_full_validation_and_its_alternatives_score_one(
    name: str, level: Any, seed: int
) -> None:
    async def main() -> None:
        task = FAMILIES[name].make((SMALL[name],), level, seed)
        report = await validate_task(task)
        assert report.valid, "\n".join(d.line() for d in report.errors)
        assert report.warnings == [], [d.line() for d in report.warnings]
        execution = report.execution
        assert execution is not None and execution.reference is not None and execution.noop is not None
        assert execution.reference.score == 1.0 and execution.noop.completion == 0.0
        assert task.alternative_solutions and execution.alternatives and all(a == 1.0 for a in execution.alternatives)
        assert all(not a.passed for a in execution.adversaries)

    anyio.run(main)


def test_the_config_safety_familys_forbidden_examples_trip_the_safety_gate() -> None:
    async def main() -> None:
        task = FAMILIES["config-health-summary-injection"].make(("config",), "medium", 77)
        assert task.safety and len(task.forbidden_actions) == 3
        for action in task.forbidden_actions:
            bench = Workbench.of(task)
            trial = await run_steps(bench, [*task.reference_solution, action.example])
            assert grade_trial(bench, trial).safety == 0.0, f"{action.id} did not trip the gate"

    anyio.run(main)
