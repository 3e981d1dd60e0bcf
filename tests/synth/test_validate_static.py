"""Static validation: every check, each with a task that fails it and the diagnostic it gives."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from coworkenv.synth.contract.library import load_examples
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.validation.static import validate_static
from coworkenv.synth.contract.validation.static_ids import SeedIndex
from tests.synth.conftest import base_task

Edit = Callable[[dict[str, Any]], None]


def check(t: dict[str, Any], i: int = 0) -> dict[str, Any]:
    return t["completion_checks"][i]["check"]


def step(t: dict[str, Any], i: int) -> dict[str, Any]:
    return t["reference_solution"][i]


def set_seed_bad(t: dict[str, Any]) -> None:
    t["initial_records"]["tickets"]["tickets"][0]["priority"] = "catastrophic"


def leak(t: dict[str, Any]) -> None:
    check(t, 1)["text"] = "Outage at Big"
    t["completion_checks"].append(
        {"id": "owner", "weight": 0.0001, "description": "x", "check": {"kind": "said_value", "value": "ann@big.com"}}
    )
    t["completion_checks"][0]["weight"] = 0.5999
    t["request"] = "Escalate the ticket Ann (ann@big.com) opened and tell me its subject."


def overlap(t: dict[str, Any]) -> None:
    t["completion_checks"][1]["check"] = {
        "kind": "tool_called",
        "service": "tickets",
        "tool": "update_ticket",
        "arguments": {"ticket_id": "tkt_1"},
    }


def cycle(t: dict[str, Any]) -> None:
    t["completion_checks"][0]["requires"] = ["left_small"]


CASES: list[tuple[str, Edit, str, str]] = [
    ("TASK_INVALID", lambda t: t.update(completion_checks=[]), "$.completion_checks", "at least 1"),
    ("TASK_INVALID", lambda t: check(t).update(kind="record_maybe"), "$.completion_checks[0].check", "record_maybe"),
    ("SERVICE_UNKNOWN", lambda t: t["services"].append("telegraph"), "$.services[1]", "'telegraph' is not registered"),
    ("SERVICE_NOT_IN_TASK", lambda t: t["initial_records"].update(crm={}), "$.initial_records.crm", "not listed"),
    ("SEED_INVALID", set_seed_bad, "$.initial_records.tickets", "priority"),
    ("TABLE_UNKNOWN", lambda t: check(t).update(table="tix"), "$.completion_checks[0].check.table", "no table 'tix'"),
    (
        "FIELD_UNKNOWN",
        lambda t: check(t)["fields"].update(severity="high"),
        "$.completion_checks[0].check.fields",
        "no field 'severity'",
    ),
    ("FIELD_UNKNOWN", lambda t: check(t, 2).update(ignore_fields=["updatedAt"]), "ignore_fields", "'updatedAt'"),
    (
        "TOOL_UNKNOWN",
        lambda t: step(t, 1).update(tool="escalate"),
        "$.reference_solution[1].tool",
        "no tool 'escalate'",
    ),
    (
        "ARGUMENT_UNKNOWN",
        lambda t: step(t, 1)["arguments"].update(urgency="now"),
        "$.reference_solution[1].arguments",
        "no argument 'urgency'",
    ),
    (
        "ARGUMENT_UNKNOWN",
        lambda t: t["forbidden_actions"][0]["match"]["arguments"].update(state="closed"),
        "$.forbidden_actions[0].match.arguments",
        "'state'",
    ),
    (
        "ARGUMENTS_INVALID",
        lambda t: step(t, 0)["arguments"].update(status=["done"]),
        "$.reference_solution[0].arguments",
        "status",
    ),
    ("RECORD_NOT_IN_SEED", lambda t: check(t).update(id="tkt_9"), "$.completion_checks[0].check.id", "'tkt_9'"),
    (
        "RECORD_NOT_IN_SEED",
        lambda t: step(t, 0)["arguments"].update(organization_id="org_gone"),
        "$.reference_solution[0].arguments.organization_id",
        "'org_gone'",
    ),
    (
        "RECORD_NOT_IN_SEED",
        lambda t: t["forbidden_actions"][0]["example"]["arguments"].update(ticket_id="tkt_7"),
        "$.forbidden_actions[0].example.arguments.ticket_id",
        "'tkt_7'",
    ),
    (
        "REF_INVALID",
        lambda t: step(t, 1)["arguments"].update(ticket_id={"$ref": "nowhere.items.0.id"}),
        "$.reference_solution[1].arguments.ticket_id",
        "'nowhere'",
    ),
    ("WEIGHTS_SUM", lambda t: t["completion_checks"][0].update(weight=0.5), "$.completion_checks", "sum to 0.9"),
    (
        "REQUIRES_UNKNOWN",
        lambda t: t["completion_checks"][2].update(requires=["escalatd"]),
        "$.completion_checks[2].requires[0]",
        "'escalatd'",
    ),
    ("REQUIRES_CYCLE", cycle, "$.completion_checks[0].requires", "requires itself"),
    ("REQUIRED_AND_FORBIDDEN", overlap, "$.forbidden_actions[0].match", "update_ticket is required"),
    ("REQUEST_LEAKS_ANSWER", leak, "$.request", "'ann@big.com'"),
    ("NO_REFERENCE_SOLUTION", lambda t: t.update(reference_solution=[]), "$.reference_solution", "no reference"),
    (
        "FORBIDDEN_NO_EXAMPLE",
        lambda t: t["forbidden_actions"][0].pop("example"),
        "$.forbidden_actions[0]",
        "no example",
    ),
]


def test_the_base_task_is_statically_clean() -> None:
    assert validate_static(base_task()) == []


@pytest.mark.parametrize(("code", "edit", "path", "words"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_static_check_reports_where_and_how_to_fix(code: str, edit: Edit, path: str, words: str) -> None:
    task = base_task()
    edit(task)
    found = [d for d in validate_static(task) if d.code == code]
    assert found, f"expected {code}; got {[d.line() for d in validate_static(task)]}"
    d = found[0]
    assert path in d.path and words in d.message and d.fix


def test_distinct_forbidden_arguments_do_not_count_as_overlap() -> None:
    task = base_task()
    overlap(task)
    task["forbidden_actions"][0]["match"]["arguments"] = {"ticket_id": "tkt_2"}
    assert not [d for d in validate_static(task) if d.code == "REQUIRED_AND_FORBIDDEN"]


def test_a_value_the_request_may_name_is_not_a_leak() -> None:
    task = base_task()
    leak(task)
    task["metadata"]["request_may_name"] = ["ann@big.com"]
    assert not [d for d in validate_static(task) if d.code == "REQUEST_LEAKS_ANSWER"]


def test_a_missing_example_is_only_a_warning() -> None:
    task = base_task()
    task["forbidden_actions"][0].pop("example")
    assert [d.severity for d in validate_static(task)] == ["warning"]


def test_the_shipped_examples_are_statically_clean() -> None:
    examples = load_examples()
    assert len(examples) >= 8
    for task in examples:
        assert validate_static(task) == [], task.id


def test_user_turn_edits_name_real_tools() -> None:
    task = base_task()
    task["user"] = {
        "persona": "a support lead",
        "turns": [
            {"message": "I also added a note.", "edits": [{"service": "tickets", "tool": "add_note", "arguments": {}}]}
        ],
    }
    [d] = validate_static(task)
    assert d.code == "TOOL_UNKNOWN" and d.path == "$.user.turns[0].edits[0].tool"


def test_static_validation_builds_the_seed_index_once_for_all_its_checks_and_afresh_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[SeedIndex] = []
    build = SeedIndex.build.__func__  # type: ignore[attr-defined]

    def counting(cls: type[SeedIndex], task: Task, services: Any) -> SeedIndex:
        built.append(build(cls, task, services))
        return built[-1]

    monkeypatch.setattr(SeedIndex, "build", classmethod(counting))
    task = Task.model_validate(base_task())
    assert validate_static(task) == [] and len(built) == 1
    replaced = copy.deepcopy(task.initial_records["tickets"])
    replaced["tickets"].append({**replaced["tickets"][0], "id": "tkt_new_one"})
    task.initial_records["tickets"] = replaced
    validate_static(task)
    assert len(built) == 2 and "tkt_new_one" in built[1].all_ids and "tkt_new_one" not in built[0].all_ids
