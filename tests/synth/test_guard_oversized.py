"""A write stuffed with everything the agent read (so that a check for a few words in it passes) is an oversized
write: its text is far longer than any call of the reference writes, and it costs completion."""

from __future__ import annotations

import anyio
import pytest

from coworkenv.synth.contract.grader import Grade, grade, grade_trial
from coworkenv.synth.contract.oversized import (
    OVERSIZED,
    OVERSIZED_FACTOR,
    OVERSIZED_FLOOR,
    OVERSIZED_PENALTY,
    oversized_writes,
    write_limit,
)
from coworkenv.synth.contract.runner import run_steps
from coworkenv.synth.contract.task import Step, Task, ToolStep
from coworkenv.synth.contract.validation.adversary_texts import records_text
from coworkenv.synth.generate.families import get_family
from tests.synth.conftest import base_task

pytestmark = pytest.mark.anyio


def noted_task() -> Task:
    """The base task, whose check now also wants an internal note on tkt_1 that names the outage."""
    data = base_task()
    data["completion_checks"][0]["weight"] = 0.3
    data["completion_checks"].append(
        {
            "id": "noted",
            "weight": 0.3,
            "description": "A note on tkt_1 says why.",
            "check": {
                "kind": "record_exists",
                "service": "tickets",
                "table": "comments",
                "where": {"ticket_id": "tkt_1", "body": {"contains": "Outage"}},
            },
        }
    )
    say = data["reference_solution"].pop()
    data["reference_solution"] += [
        note("Outage at Big: escalated, the customer has waited too long.").model_dump(),
        say,
    ]
    return Task.model_validate(data)


def note(body: str) -> ToolStep:
    return ToolStep(
        service="tickets", tool="add_comment", arguments={"ticket_id": "tkt_1", "body": body, "public": False}
    )


def with_note(task: Task, body: str) -> list[Step]:
    steps = [s for s in task.reference_solution if not (isinstance(s, ToolStep) and s.tool == "add_comment")]
    return [*steps[:-1], note(body), steps[-1]]


async def play(task: Task, steps: list[Step]) -> Grade:
    with anyio.fail_after(30):
        return grade_trial(task, await run_steps(task, steps))


async def test_a_note_stuffed_with_every_record_is_an_oversized_write_and_fails(anyio_backend: str) -> None:
    made = get_family("crm-close-deal")
    task = made.make(made.service_options[0], "medium", 0)
    dump = records_text(task)
    assert len(dump) > write_limit(task)
    steps = [
        s.model_copy(update={"arguments": {**s.arguments, "body": dump}})
        if isinstance(s, ToolStep) and isinstance(s.arguments.get("body"), str)
        else s
        for s in task.reference_solution
    ]
    g = await play(task, steps)
    assert all(c.passed for c in g.checks)  # every check finds its words in the dump...
    [u] = g.unexplained
    assert u.op == OVERSIZED and u.service == "crm"
    assert g.penalty == OVERSIZED_PENALTY and not g.passed  # ...and it fails all the same
    assert (
        f"{OVERSIZED} crm.log_activity call" in g.report() and f"at most {OVERSIZED_FLOOR} characters →" in g.report()
    )


async def test_a_note_longer_than_the_reference_s_but_natural_is_no_oversized_write(anyio_backend: str) -> None:
    task = noted_task()
    chatty = "Outage at Big Corp: " + "the customer has been waiting and asked twice for an update. " * 20
    assert len(chatty) < OVERSIZED_FLOOR
    g = await play(task, with_note(task, chatty))
    assert g.unexplained == [] and g.score == 1.0


def test_the_limit_is_the_floor_or_a_multiple_of_the_reference_s_longest_write() -> None:
    task = noted_task()
    assert write_limit(task) == OVERSIZED_FLOOR
    data = base_task()
    long_body = "x" * 2000
    data["reference_solution"].insert(-1, note(long_body).model_dump())
    assert write_limit(Task.model_validate(data)) == OVERSIZED_FACTOR * (2000 + len("tkt_1"))


def test_only_the_agent_s_successful_writes_count() -> None:
    task = noted_task()
    big = {"ticket_id": "tkt_1", "body": "y" * 5000, "public": False}
    row = {"service": "tickets", "tool": "add_comment", "seq": 3, "arguments": big, "state_changed": True}
    assert len(oversized_writes(task, [row | {"actor": "agent", "outcome": "ok"}])) == 1
    assert oversized_writes(task, [row | {"actor": "user", "outcome": "ok"}]) == []
    assert oversized_writes(task, [row | {"actor": "agent", "outcome": "error", "state_changed": False}]) == []
    reads = row | {"tool": "search_tickets", "arguments": {"query": "z" * 5000}, "state_changed": False}
    assert oversized_writes(task, [reads | {"actor": "agent", "outcome": "ok"}]) == []
    assert grade(task, {}, [row | {"actor": "agent", "outcome": "ok"}]).penalty == 0  # nothing earned to lose
