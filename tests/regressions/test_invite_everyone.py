"""A meeting task checks who is invited, not only that the right people are: the reference with every workspace
member added to the invitation scored 1.0 in escalation-call-with-contacts, meeting-request-from-email and
agenda-update-after-edit (the extra invitations are fields of the one event a check explains, so the guard saw
no change of its own). It now fails those tasks, and the ``everyone`` adversary makes validation reject any task
(hand-written or LLM-made) that it passes."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.synth.contract.grader import PASS_THRESHOLD
from coworkenv.synth.contract.matchers import matches
from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.task import Step, Task, ToolStep
from coworkenv.synth.contract.validation.adversaries import everyone
from coworkenv.synth.contract.validation.execution import validate_exec
from coworkenv.synth.generate.families import get_family
from coworkenv.synth.generate.families.kit.reach import only

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
        bench = Workbench.of(task)
        reference = grade_trial(bench, await run_steps(bench, task.reference_solution), explain=False)
        everyone = grade_trial(bench, await run_steps(bench, _inviting_everyone(task)), explain=False)
    assert reference.score == 1.0
    assert everyone.score < PASS_THRESHOLD


def test_only_holds_for_exactly_the_people_named_and_those_allowed_besides() -> None:
    matcher = only(["a@x.io", "b@x.io"], also=["c@x.io"])
    assert matches(["b@x.io", "a@x.io"], True, matcher)
    assert matches(["a@x.io", "b@x.io", "c@x.io"], True, matcher)
    assert not matches(["a@x.io"], True, matcher)
    assert not matches(["a@x.io", "b@x.io", "d@x.io"], True, matcher)


def _with_contains_only(task: Task) -> Task:
    """The task as it was written before: the meeting check asks only that the right people be invited."""
    data = task.model_dump(mode="json")
    for c in data["completion_checks"]:
        for where in (c["check"].get("where"), c["check"].get("fields")):
            if where and isinstance(where.get("attendees.email"), dict) and "not" in where["attendees.email"]:
                where["attendees.email"] = {"contains": where["attendees.email"]["contains"]}
    return Task.model_validate(data)


@pytest.mark.anyio
async def test_validation_rejects_a_meeting_check_that_inviting_everyone_passes(anyio_backend: str) -> None:
    made = get_family("escalation-call-with-contacts")
    task = made.make(made.service_options[0], "easy", 7)
    with anyio.fail_after(120):
        now = await validate_exec(task)
        before = await validate_exec(_with_contains_only(task))
    assert not [d for d in now.diagnostics if d.code == "ADVERSARY_PASSES"]
    [d] = [d for d in before.diagnostics if d.code == "ADVERSARY_PASSES"]
    assert d.message.startswith("adversary everyone ") and "call_booked" in d.message
    assert "no one else" in d.fix or "not: {any: {not: {in:" in d.fix


def test_everyone_adds_only_colleagues_and_only_where_the_reference_addresses_people() -> None:
    made = get_family("escalation-call-with-contacts")
    task = made.make(made.service_options[0], "easy", 7)
    adversary = everyone(task)
    assert adversary is not None and adversary.kind == "audience"
    [booked] = [s for s in adversary.steps if isinstance(s, ToolStep) and s.tool == "create_event"]
    [reference] = [s for s in task.reference_solution if isinstance(s, ToolStep) and s.tool == "create_event"]
    added = [a for a in booked.arguments["attendees"] if a not in reference.arguments["attendees"]]
    assert added and all(a.endswith("@brightwave.io") for a in added)
    assert "dana@brightwave.io" not in added  # the user: the organizer
    triage = get_family("tickets-triage-oncall")
    assert everyone(triage.make(triage.service_options[0], "easy", 0)) is None
