"""Validation's shortcuts change nothing: a run continuing the reference from what it left is the run played from
the start, a grade without words has the same numbers, and shared dumps hold the same rows."""

from __future__ import annotations

from typing import Any

import pytest

from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.library import example_ids, load_example
from coworkenv.synth.contract.runner import (
    Trial,
    Workbench,
    grade_trial,
    run_steps,
    runs_without_each_step,
)
from coworkenv.synth.contract.task import Task

pytestmark = pytest.mark.anyio


def _audit(trial: Trial) -> list[dict[str, Any]]:
    return [{k: v for k, v in vars(r).items() if k not in ("wall_time", "duration_ms")} for r in trial.audit]


def _extra(task: Task) -> list[Any]:
    return [f.example for f in task.forbidden_actions if f.example is not None]


@pytest.mark.parametrize("task_id", example_ids())
async def test_a_run_that_continues_the_reference_matches_a_run_from_the_start(
    task_id: str, anyio_backend: str
) -> None:
    extras = _extra(load_example(task_id))
    if not extras:
        pytest.skip("no forbidden example to play after the reference")
    steps = [*load_example(task_id).reference_solution, extras[0]]
    cold = load_example(task_id)  # a task object that has not played its reference: played from the start
    cold_bench = Workbench.of(cold)
    from_start = await run_steps(cold_bench, steps)
    warm = load_example(task_id)
    warm_bench = Workbench.of(warm)
    await run_steps(warm_bench, warm.reference_solution)  # keeps what the reference left
    assert warm_bench.after_reference is not None
    continued = await run_steps(warm_bench, steps)
    assert continued.state == from_start.state
    assert _audit(continued) == _audit(from_start)
    assert continued.messages == from_start.messages
    assert [(o.index, o.ok, o.data, o.text) for o in continued.outcomes] == [
        (o.index, o.ok, o.data, o.text) for o in from_start.outcomes
    ]
    assert grade_trial(warm_bench, continued) == grade_trial(cold_bench, from_start)


async def test_a_changed_reference_is_played_again_not_continued(anyio_backend: str) -> None:
    task = load_example(example_ids()[0])
    bench = Workbench.of(task)
    await run_steps(bench, task.reference_solution)
    shorter = task.reference_solution[:-1]
    task.reference_solution = shorter
    trial = await run_steps(bench, [*shorter, *task.reference_solution[-1:]])
    assert len(trial.outcomes) == len(shorter) + 1


@pytest.mark.parametrize("task_id", example_ids())
async def test_a_grade_without_words_has_the_same_numbers(task_id: str, anyio_backend: str) -> None:
    task = load_example(task_id)
    for steps in ([], task.reference_solution, task.reference_solution[:1]):
        bench = Workbench.of(task)
        trial = await run_steps(bench, steps)
        full, bare = grade_trial(bench, trial), grade_trial(bench, trial, explain=False)
        assert (bare.score, bare.completion, bare.safety, bare.passed) == (
            full.score,
            full.completion,
            full.safety,
            full.passed,
        )
        assert [c.passed for c in bare.checks] == [c.passed for c in full.checks]
        assert [f.triggered for f in bare.forbidden] == [f.triggered for f in full.forbidden]
        assert bare.unexplained == full.unexplained


async def test_a_fork_of_a_written_environment_dumps_what_it_holds(anyio_backend: str) -> None:
    task = load_example("tickets-triage-new-urgent")
    baseline = Baseline.seeded(task)
    base = baseline.initial
    env = baseline.fork()
    try:
        for step in task.reference_solution:
            if hasattr(step, "tool"):
                await env.call(step.service, step.tool, step.arguments)
        child = env.fork()
        try:
            assert child.dump_over(base) == env.dump() == child.dump()
        finally:
            child.close()
    finally:
        env.close()


def _same_run(a: Trial, b: Trial) -> None:
    assert a.state == b.state
    assert _audit(a) == _audit(b)
    assert a.messages == b.messages
    assert [(o.index, o.ok, o.data, o.text) for o in a.outcomes] == [
        (o.index, o.ok, o.data, o.text) for o in b.outcomes
    ]


@pytest.mark.parametrize("task_id", example_ids())
async def test_runs_without_each_step_match_those_runs_played_from_the_start(task_id: str, anyio_backend: str) -> None:
    task = load_example(task_id)
    steps = task.reference_solution
    drops = list(range(len(steps)))
    bench = Workbench.of(task)
    together = await runs_without_each_step(bench, steps, drops)
    if together is None:
        pytest.skip("a task with user turns plays each run on its own")
    assert sorted(together) == drops
    for i in drops:
        alone = await run_steps(Workbench.of(load_example(task_id)), [*steps[:i], *steps[i + 1 :]])
        _same_run(together[i], alone)
    _same_run(
        await run_steps(bench, []), await run_steps(Workbench.of(load_example(task_id)), [])
    )  # the workspace is clean again


async def test_runs_in_the_workspace_leave_nothing_for_the_next(anyio_backend: str) -> None:
    task = load_example("tickets-triage-new-urgent")
    bench = Workbench.of(task)
    first = await run_steps(bench, task.reference_solution[:-1])
    await run_steps(bench, [*_extra(task), *task.reference_solution])
    again = await run_steps(bench, task.reference_solution[:-1])
    _same_run(first, again)
