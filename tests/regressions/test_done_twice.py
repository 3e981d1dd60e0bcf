"""A write done twice that leaves its trace in a field (a row appended twice to a log) is not the same work done
once: the guard explains a field the reference changes whatever its value, so the check reads the value. Before,
invoice-emails-to-log scored 1.0 with every new invoice logged twice."""

from __future__ import annotations

import anyio
import pytest

from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.task import Step, ToolStep
from coworkenv.synth.generate.families import get_family


@pytest.mark.anyio
@pytest.mark.parametrize("difficulty", ["easy", "hard"])
@pytest.mark.parametrize("seed", [0, 1])
async def test_an_invoice_logged_twice_fails_and_logged_once_passes(
    difficulty: str, seed: int, anyio_backend: str
) -> None:
    made = get_family("invoice-emails-to-log")
    task = made.make(made.service_options[0], difficulty, seed)
    twice: list[Step] = []
    for step in task.reference_solution:
        twice.append(step)
        if isinstance(step, ToolStep) and step.tool == "append_to_file":
            twice.append(step.model_copy(update={"id": None}))
    assert len(twice) > len(task.reference_solution)
    with anyio.fail_after(60):
        bench = Workbench.of(task)
        once = grade_trial(bench, await run_steps(bench, task.reference_solution), explain=False)
        doubled = grade_trial(bench, await run_steps(bench, twice), explain=False)
    assert once.score == 1.0
    assert doubled.score < 0.75
    assert not any(c.passed for c in doubled.checks if c.id.startswith("logged_"))
