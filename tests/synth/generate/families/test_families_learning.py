"""Families a model learns from draw their people and records from pools large enough that no answer is a
majority guess: a student has to copy the assignee, the ids and the amounts from the request and the tool
results, because no one value is the answer of more than ~10 % of a family's tasks."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest

from coworkenv.servers.registry import get_service
from coworkenv.synth.contract.task import Task, ToolStep, is_ref
from coworkenv.synth.contract.validation.validate import validate_task
from coworkenv.synth.generate.families import FAMILIES

LEARNING_FAMILIES = (("tickets-triage-oncall", ("tickets",)),)
"""The families the learning bench (``bench/learning``) trains on, with the services it builds them over."""
VOCABULARY = frozenset({"role"})
"""Free-text arguments that name a fixed vocabulary of the service (a user's role), not an answer."""
MAJORITY = 0.10


def enum_arguments(service: str, tool: str) -> set[str]:
    """The arguments of ``service``.``tool`` whose schema restricts the value to an enum (status, priority...)."""
    schema = get_service(service).tools_by_name[tool].input_schema()
    return {name for name, prop in schema.get("properties", {}).items() if "'enum'" in repr(prop)}


def answers(task: Task) -> set[tuple[str, str, str]]:
    """(tool, argument, value) for every string or integer the reference writes into a tool call, less enums,
    vocabulary and ``$ref`` values (those come from an earlier result, not from the task author)."""
    found: set[tuple[str, str, str]] = set()
    for step in task.reference_solution:
        if not isinstance(step, ToolStep):
            continue
        skip = enum_arguments(step.service, step.tool) | VOCABULARY

        def walk(argument: str, value: Any, tool: str = step.tool, skip: set[str] = skip) -> None:
            if is_ref(value) or argument in skip:
                return
            if isinstance(value, str | int) and not isinstance(value, bool):
                found.add((tool, argument, str(value)))
            elif isinstance(value, dict):
                for inner in value.values():
                    walk(argument, inner)
            elif isinstance(value, list):
                for inner in value:
                    walk(argument, inner)

        for argument, value in step.arguments.items():
            walk(argument, value)
    return found


@pytest.mark.parametrize(("name", "services"), LEARNING_FAMILIES, ids=[n for n, _ in LEARNING_FAMILIES])
@pytest.mark.parametrize("level", ["easy", "hard"])
def test_no_answer_of_a_learning_family_is_in_more_than_a_tenth_of_its_tasks(
    name: str, services: tuple[str, ...], level: str
) -> None:
    count = 300
    counts = Counter(a for seed in range(count) for a in answers(FAMILIES[name].make(services, level, seed)))
    common = [(value, round(n / count, 3)) for value, n in counts.most_common(5) if n > MAJORITY * count]
    assert not common, f"{name} {level}: answers in more than {MAJORITY:.0%} of {count} tasks: {common}"
    assigned = {v for (tool, argument, v) in counts if (tool, argument) == ("assign_ticket", "assignee_id")}
    assert len(assigned) >= 50, f"only {len(assigned)} distinct assignees over {count} tasks"


def test_the_standing_engineers_are_no_longer_the_on_call_answer_but_still_in_the_seed() -> None:
    tasks = [FAMILIES["tickets-triage-oncall"].make(("tickets",), "easy", seed) for seed in range(40)]
    assignees = {v for t in tasks for (tool, _, v) in answers(t) if tool == "assign_ticket"}
    assert not assignees & {"usr_kim", "usr_omar"}
    seeded = {u["id"] for t in tasks for u in t.initial_records["tickets"]["users"]}
    assert {"usr_kim", "usr_omar"} <= seeded


def test_on_call_triage_tasks_over_new_seeds_still_pass_validation_by_execution() -> None:
    async def main() -> None:
        for level, seed in (("easy", 5), ("easy", 77), ("medium", 8), ("hard", 9)):
            task = FAMILIES["tickets-triage-oncall"].make(("tickets",), level, seed)
            with anyio.fail_after(60):
                report = await validate_task(task)
            assert report.valid, "\n".join(d.line() for d in report.errors)

    anyio.run(main)
