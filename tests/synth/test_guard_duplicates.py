"""A check on created records explains as many as it needs, not every copy: the note the task asks for, posted
once, is the work; the same note posted five more times is five unexplained changes."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.synth.contract.checks import RecordCount, RecordExists, SaidContains
from coworkenv.synth.contract.grader import Grade
from coworkenv.synth.contract.guard import UNEXPLAINED_PENALTY, need
from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.task import Step, Task, ToolStep
from tests.conftest import NOW
from tests.synth.conftest import base_task

pytestmark = pytest.mark.anyio


def note(body: str = "Escalated: enterprise customer waiting too long.") -> ToolStep:
    return ToolStep(
        service="tickets", tool="add_comment", arguments={"ticket_id": "tkt_1", "body": body, "public": False}
    )


def noted_task(check: dict[str, Any], reference_notes: int = 1) -> Task:
    """The base task (escalate tkt_1) that also asks for internal notes on it, checked by ``check``."""
    data = base_task()
    data["completion_checks"][0]["weight"] = 0.3
    data["completion_checks"].append({"id": "noted", "weight": 0.3, "description": "Notes on tkt_1.", "check": check})
    say = data["reference_solution"].pop()
    data["reference_solution"] += [note(f"Note {i}").model_dump() for i in range(reference_notes)] + [say]
    return Task.model_validate(data)


EXISTS = {
    "kind": "record_exists",
    "service": "tickets",
    "table": "comments",
    "where": {"ticket_id": "tkt_1", "created_at": {"gte": NOW}},
}


async def play(task: Task, steps: list[Step]) -> Grade:
    with anyio.fail_after(30):
        bench = Workbench.of(task)
        return grade_trial(bench, await run_steps(bench, steps))


def with_notes(task: Task, count: int, text: str = "Escalated.") -> list[Step]:
    steps = list(task.reference_solution)
    work = [s for s in steps if not (isinstance(s, ToolStep) and s.tool == "add_comment")]
    return [*work[:-1], *(note(text) for _ in range(count)), work[-1]]


async def test_the_note_asked_for_explained_once_and_each_copy_costs_completion(anyio_backend: str) -> None:
    task = noted_task(EXISTS)
    assert (await play(task, with_notes(task, 1))).score == 1.0  # another wording of the note: still the work
    twice = await play(task, with_notes(task, 2))
    assert twice.penalty == UNEXPLAINED_PENALTY and [u.table for u in twice.unexplained] == ["comments"]
    six = await play(task, with_notes(task, 6))
    assert len(six.unexplained) == 5 and six.score == 0.0 and not six.passed


async def test_a_count_check_explains_the_number_it_names(anyio_backend: str) -> None:
    # the escalation writes a comment of its own: two notes make three
    task = noted_task({**EXISTS, "kind": "record_count", "count": 3}, reference_notes=2)
    assert (await play(task, with_notes(task, 2))).score == 1.0
    three = await play(task, with_notes(task, 3))
    assert len(three.unexplained) == 1 and three.score < 1.0


async def test_a_note_the_reference_did_not_write_is_explained_by_the_check_once(anyio_backend: str) -> None:
    handover = {**EXISTS, "where": {"ticket_id": "tkt_1", "body": {"contains": "handover"}}}
    task = noted_task(handover, reference_notes=0)  # only the check asks for it (another path than the reference's)
    assert (await play(task, with_notes(task, 1, "handover to Tier 2"))).unexplained == []
    assert len((await play(task, with_notes(task, 3, "handover to Tier 2"))).unexplained) == 2


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        (RecordExists(service="s", table="t", where={"a": 1}), 1),
        (RecordCount(service="s", table="t", count=3), 3),
        (RecordCount.model_validate({"service": "s", "table": "t", "count": {"gte": 2}}), 2),
        (RecordCount.model_validate({"service": "s", "table": "t", "count": {"gt": 2}}), 3),
        (RecordCount.model_validate({"service": "s", "table": "t", "count": {"lt": 4}}), 3),
        (RecordCount.model_validate({"service": "s", "table": "t", "count": {"in": [1, 5]}}), 5),
        (RecordCount.model_validate({"service": "s", "table": "t", "count": {"exists": True}}), 1),
        (RecordCount(service="s", table="t", count=0), 0),
        (SaidContains(text="x"), 0),
    ],
)
def test_how_many_created_records_a_check_may_explain(check: Any, expected: int) -> None:
    assert need(check) == expected
