"""What a task's reference solution changes, and the task's initial state: the grader's baseline.

Validation derives a task's expected changes by running its reference solution in a fresh environment
(its user turns included) and stores them with the task (``Task.expected_changes``); for a task that does
not carry them, :func:`expected_changes` derives them here, once per task object. Both runs go through
the direct door, whose calls never suspend, so this works from synchronous code and inside an event loop.
"""

from __future__ import annotations

from collections.abc import Sequence

from coworkenv.servers.registry import SERVICES
from coworkenv.synth.contract.guard import State, derive_expected
from coworkenv.synth.contract.runner import Trial, initial_dump, play_now
from coworkenv.synth.contract.task import ExpectedChange, Task


def initial_state(task: Task) -> State:
    """The state every episode of the task starts from (a dump of its pristine environment), cached."""
    return initial_dump(task)


def expected_from_trial(task: Task, trial: Trial) -> list[ExpectedChange]:
    """The expected changes, from the trial of the task's reference solution."""
    return derive_expected(SERVICES, task, initial_state(task), trial.state)


_AUDIENCE_KINDS = ("external_share:", "external_invite:", "external_post:")


def stale_keys(expected: Sequence[ExpectedChange]) -> bool:
    """Whether stored expected changes were derived before the sharing, invitation and outside-post kinds named
    their audience (``external_share:<id>`` where now ``external_share:<id>:<outsiders>``): matched against
    today's keys they would explain nothing, so the grader derives them again instead."""
    return any(k.startswith(_AUDIENCE_KINDS) and k.count(":") == 1 for e in expected for k in e.keys)


def expected_changes(task: Task) -> list[ExpectedChange]:
    """The task's expected changes: as stored with it (unless :func:`stale_keys`), else derived by running its
    reference (cached)."""
    if task.expected_changes is not None and not stale_keys(task.expected_changes):
        return task.expected_changes
    cached = task._cache.get("expected_changes")
    if cached is None:
        trial = play_now(task, task.reference_solution)
        cached = expected_from_trial(task, trial)
        task._cache["expected_changes"] = cached
    return cached
