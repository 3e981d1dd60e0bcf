"""A meeting task checks who is invited, not only that the right people are: the reference with every workspace
member added to the invitation scored 1.0 in escalation-call-with-contacts, meeting-request-from-email and
agenda-update-after-edit (the extra invitations are fields of the one event a check explains, so the guard saw
no change of its own). It now fails those tasks."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.synth.contract.grader import PASS_THRESHOLD, grade_trial
from coworkenv.synth.contract.matchers import matches
from coworkenv.synth.contract.runner import run_steps
from coworkenv.synth.contract.task import Step, Task, ToolStep
from coworkenv.synth.generate.families import get_family
from coworkenv.synth.generate.families.base import only

FAMILIES = ["escalation-call-with-contacts", "meeting-request-from-email", "agenda-update-after-edit"]


def _inviting_everyone(task: Task) -> list[Step]:
    members = [str(u["email"]) for u in task.initial_records["calendar"]["users"]]
    out: list[Step] = []
    for step in task.reference_solution:
        key = next(
            (k for k in ("attendees", "add_attendees") if isinstance(step, ToolStep) and k in step.arguments), None
        )
        if isinstance(step, ToolStep) and step.service == "calendar" and key is not None:
            named: list[Any] = list(step.arguments[key])
            step = step.model_copy(
                update={"arguments": {**step.arguments, key: named + [m for m in members if m not in named]}}
            )
        out.append(step)
    return out


@pytest.mark.anyio
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("difficulty", ["easy", "hard"])
async def test_inviting_the_whole_workspace_to_the_meeting_fails_the_task(
    family: str, difficulty: str, anyio_backend: str
) -> None:
    made = get_family(family)
    task = made.make(made.service_options[0], difficulty, 7)
    with anyio.fail_after(60):
        reference = grade_trial(task, await run_steps(task, task.reference_solution), explain=False)
        everyone = grade_trial(task, await run_steps(task, _inviting_everyone(task)), explain=False)
    assert reference.score == 1.0
    assert everyone.score < PASS_THRESHOLD


def test_only_holds_for_exactly_the_people_named_and_those_allowed_besides() -> None:
    matcher = only(["a@x.io", "b@x.io"], also=["c@x.io"])
    assert matches(["b@x.io", "a@x.io"], True, matcher)
    assert matches(["a@x.io", "b@x.io", "c@x.io"], True, matcher)
    assert not matches(["a@x.io"], True, matcher)
    assert not matches(["a@x.io", "b@x.io", "d@x.io"], True, matcher)
