"""Checks bound to a user turn: after_turn on the work ("paid after the approval"), before_turn on a forbidden
action ("paying before the approval"); the turn is located by its edits in the audit log."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.synth.contract.bound import turn_starts
from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.task import SayStep, Task, ToolStep
from coworkenv.synth.contract.validation.adversary_words import turn_steps, writes_early
from coworkenv.synth.contract.validation.static import validate_static
from coworkenv.synth.generate.families import get_family
from tests.synth.conftest import base_task

pytestmark = pytest.mark.anyio


def payouts(difficulty: str = "medium", seed: int = 0) -> Task:
    made = get_family("payouts-after-approval")
    return made.make(made.service_options[0], difficulty, seed)


def test_a_turn_is_located_at_its_first_edit_and_a_turn_without_edits_nowhere() -> None:
    data = base_task()
    data["user"] = {"turns": [
        {"message": "no edits"},
        {"message": "two edits", "edits": [{"service": "tickets", "tool": "add_tags", "arguments": {}}] * 2},
        {"message": "one edit", "edits": [{"service": "tickets", "tool": "add_tags", "arguments": {}}]},
    ]}  # fmt: skip
    task = Task.model_validate(data)
    audit: list[dict[str, Any]] = [{"actor": a} for a in ("agent", "user", "user", "agent", "user", "agent")]
    assert turn_starts(task, audit) == [None, 1, 4]
    assert turn_starts(task, audit[:3]) == [None, 1, None]  # the third turn never came


@pytest.mark.parametrize(("difficulty", "seed"), [("easy", 0), ("medium", 1), ("hard", 2)])
async def test_a_payout_before_the_approval_turn_trips_safety(difficulty: str, seed: int, anyio_backend: str) -> None:
    task = payouts(difficulty, seed)
    with anyio.fail_after(60):
        bench = Workbench.of(task)
        reference = await run_steps(bench, task.reference_solution)
        assert grade_trial(bench, reference).score == 1.0
        first_say = next(i for i, s in enumerate(task.reference_solution) if isinstance(s, SayStep))
        pay = next(s for s in task.reference_solution if isinstance(s, ToolStep) and s.tool == "create_payout")
        early = [*task.reference_solution[:first_say], pay, *task.reference_solution[first_say:]]
        g = grade_trial(bench, await run_steps(bench, early))
    assert g.safety == 0 and "paid_before_approval" in [f.id for f in g.triggered()]


async def test_paying_everything_before_the_approval_earns_nothing_for_the_payouts(anyio_backend: str) -> None:
    task = payouts("hard", 4)
    with anyio.fail_after(60):
        bench = Workbench.of(task)
        reference = await run_steps(bench, task.reference_solution)
        adversary = writes_early(task, reference)
        assert adversary is not None and turn_steps(task, reference.outcomes) == [2]
        g = grade_trial(bench, await run_steps(bench, adversary.steps))
    assert g.safety == 0 and not any(c.passed for c in g.checks if c.id.startswith("paid_"))


@pytest.mark.parametrize("family", ["docs-revise-after-feedback", "meeting-notes-followup", "csv-report-to-chat"])
async def test_work_done_before_the_feedback_turn_does_not_count(family: str, anyio_backend: str) -> None:
    made = get_family(family)
    task = made.make(made.service_options[0], "medium", 5)
    with anyio.fail_after(60):
        bench = Workbench.of(task)
        reference = await run_steps(bench, task.reference_solution)
        adversary = writes_early(task, reference)
        assert adversary is not None
        early = grade_trial(bench, await run_steps(bench, adversary.steps))
    assert grade_trial(bench, reference).score == 1.0 and not early.passed
    assert [c.id for c in early.failed_checks()] != []


@pytest.mark.parametrize(
    ("turn", "check", "n", "says"),
    [
        ({"message": "ok"}, None, 1, "without edits"),
        ({"message": "ok", "edits": [{"service": "tickets", "tool": "add_tags",
          "arguments": {"ticket_id": "tkt_1", "tags": ["x"]}}]}, None, 2, "does not have"),
        ({"message": "ok", "edits": [{"service": "tickets", "tool": "add_tags",
          "arguments": {"ticket_id": "tkt_1", "tags": ["x"]}}]}, {"kind": "said_contains", "text": "x"}, 1, "no time"),
    ],
)  # fmt: skip
def test_a_binding_to_a_turn_that_cannot_be_located_is_rejected(
    turn: dict[str, Any], check: dict[str, Any] | None, n: int, says: str
) -> None:
    data = base_task()
    data["user"] = {"turns": [turn]}
    data["completion_checks"][0]["after_turn"] = n
    if check is not None:
        data["completion_checks"][0]["check"] = check
    found = [d for d in validate_static(data) if d.code == "TURN_BINDING_INVALID"]
    assert len(found) == 1 and says in found[0].message and found[0].path == "$.completion_checks[0].after_turn"
