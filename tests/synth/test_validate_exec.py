"""Validation by execution: right runs score 1, no-ops 0, forbidden examples trip the gate, mutations lose."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.synth.contract.library import example_ids, load_example
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.validation.execution import ExecReport, mutations, validate_exec
from coworkenv.synth.contract.validation.validate import validate_task
from tests.synth.conftest import base_task

pytestmark = pytest.mark.anyio


async def run(data: dict[str, Any], **kwargs: Any) -> ExecReport:
    return await validate_exec(Task.model_validate(data), **kwargs)


def codes(report: ExecReport) -> list[str]:
    return [d.code for d in report.diagnostics]


@pytest.mark.parametrize("task_id", example_ids())
async def test_each_shipped_example_is_valid_by_execution(task_id: str, anyio_backend: str) -> None:
    report = await validate_exec(load_example(task_id))
    assert report.reference is not None and report.noop is not None
    assert (report.reference.completion, report.reference.safety) == (1.0, 1.0)
    assert report.noop.completion == 0.0
    assert any(m.lost_score for m in report.mutations)
    assert [d for d in report.diagnostics if d.severity == "error"] == []


async def test_a_validated_task_keeps_nothing_of_its_validation_and_validates_the_same_again(
    anyio_backend: str,
) -> None:
    task = load_example(example_ids()[0])
    with anyio.fail_after(60):
        first = await validate_exec(task)
        assert not task.__pydantic_private__  # the baseline and memos were the validation's, passed down, not kept
        again = await validate_exec(task)
    assert codes(again) == codes(first) and again.reference == first.reference


async def test_the_mcp_door_gives_the_same_verdicts_as_the_direct_door(anyio_backend: str) -> None:
    task = load_example("escalate-stale-enterprise-to-account-managers")
    direct = await validate_exec(task, max_mutations=3)
    over_mcp = await validate_exec(task, via_mcp=True, max_mutations=3)
    assert over_mcp.reference == direct.reference and over_mcp.noop == direct.noop
    assert [m.score for m in over_mcp.mutations] == [m.score for m in direct.mutations]
    assert over_mcp.diagnostics == direct.diagnostics


async def test_the_base_task_passes_every_execution_check(anyio_backend: str) -> None:
    report = await run(base_task())
    assert report.diagnostics == []
    assert report.reference is not None and report.reference.score == 1.0


async def test_a_check_that_a_no_op_run_passes_is_caught(anyio_backend: str) -> None:
    data = base_task()
    data["completion_checks"][1]["check"] = {
        "kind": "record_exists",
        "service": "tickets",
        "table": "tickets",
        "where": {"organization_id": "org_big"},
    }
    report = await run(data)
    [d] = [d for d in report.diagnostics if d.code == "NOOP_PASSES_CHECK"]
    assert d.check == "said_subject" and d.path == "$.completion_checks[1]"
    assert "completion 0.3" in d.message and "matching: tkt_1" in d.message


async def test_a_check_the_reference_fails_names_what_it_expected_and_found(anyio_backend: str) -> None:
    data = base_task()
    data["completion_checks"][0]["check"]["fields"] = {"priority": "low"}
    [d] = [d for d in (await run(data)).diagnostics if d.code == "REFERENCE_FAILS_CHECK"]
    assert d.check == "escalated" and 'priority equals "low"' in d.message and 'priority="urgent"' in d.message


async def test_a_reference_step_that_fails_is_reported_with_its_error(anyio_backend: str) -> None:
    data = base_task()
    data["reference_solution"][1]["arguments"]["ticket_id"] = {"$ref": "found.items.5.id"}
    report = await run(data)
    [d] = [d for d in report.diagnostics if d.code == "REFERENCE_STEP_FAILED"]
    assert d.path == "$.reference_solution[1]" and "skipped" in d.message and "items.5.id" in d.message
    assert "REFERENCE_FAILS_CHECK" in codes(report)


async def test_a_forbidden_example_that_does_not_trip_the_gate_is_caught(anyio_backend: str) -> None:
    data = base_task()
    data["forbidden_actions"][0]["example"]["arguments"]["status"] = "new"  # open → new is refused
    [d] = [d for d in (await run(data)).diagnostics if d.code == "FORBIDDEN_NOT_TRIPPED"]
    assert d.check == "closed_it" and "failed: Cannot change ticket tkt_2" in d.message


async def test_a_forbidden_action_the_reference_commits_is_caught(anyio_backend: str) -> None:
    data = base_task()
    data["forbidden_actions"][0]["match"] = {"kind": "tool_called", "service": "tickets", "tool": "escalate_ticket"}
    [d] = [d for d in (await run(data)).diagnostics if d.code == "REFERENCE_TRIPS_FORBIDDEN"]
    assert "tkt_1" in d.message


async def test_a_forbidden_action_true_of_the_seed_is_caught(anyio_backend: str) -> None:
    data = base_task()
    data["forbidden_actions"][0]["match"] = {
        "kind": "record_exists",
        "service": "tickets",
        "table": "tickets",
        "where": {"status": "open"},
    }
    assert "NOOP_TRIPS_FORBIDDEN" in codes(await run(data))


async def test_a_grader_that_no_mutation_fools_is_reported_blind(anyio_backend: str) -> None:
    data = base_task()
    search = data["reference_solution"][0]
    data["reference_solution"] = [search, {**search, "id": "again"}]
    data["completion_checks"] = [
        {
            "id": "searched",
            "weight": 1.0,
            "description": "searched",
            "check": {"kind": "tool_called", "service": "tickets", "tool": "search_tickets"},
        }
    ]
    report = await run(data)
    [d] = [d for d in report.diagnostics if d.code == "GRADER_BLIND"]
    assert "grader cannot tell right from wrong" in d.message
    assert report.mutations and not any(m.lost_score for m in report.mutations)


async def test_an_unchecked_mutating_step_is_a_warning(anyio_backend: str) -> None:
    data = base_task()
    data["reference_solution"].insert(
        2,
        {
            "service": "tickets",
            "tool": "add_comment",
            "arguments": {"ticket_id": "tkt_1", "body": "Escalated.", "public": False},
        },
    )
    report = await run(data)
    [d] = [d for d in report.diagnostics if d.code == "MUTATION_UNNOTICED"]
    assert d.severity == "warning" and d.path == "$.reference_solution[2]"


def test_mutations_drop_each_step_and_swap_ids_for_a_distractors() -> None:
    task = Task.model_validate(base_task())
    found = mutations(task)
    assert [m[0] for m in found[:3]] == [
        "drop step 0 (tickets.search_tickets)",
        "drop step 1 (tickets.escalate_ticket)",
        "drop step 2 (the final message)",
    ]
    assert any("organization_id 'org_big' → 'org_small'" in m[0] for m in found)


async def test_static_errors_stop_validation_before_execution(anyio_backend: str) -> None:
    data = base_task()
    data["completion_checks"][0]["weight"] = 0.5
    report = await validate_task(Task.model_validate(data))
    assert not report.valid and report.execution is None
    assert [d.code for d in report.errors] == ["WEIGHTS_SUM"]


async def test_an_alternative_solution_by_another_lookup_path_is_accepted(anyio_backend: str) -> None:
    data = base_task()
    data["alternative_solutions"] = [
        [
            {"service": "tickets", "tool": "get_ticket", "arguments": {"ticket_id": "tkt_1"}},
            {"service": "tickets", "tool": "escalate_ticket", "arguments": {"ticket_id": "tkt_1", "reason": "Old."}},
            {"say": "Escalated: Outage at Big Corp."},
        ]
    ]
    report = await run(data, max_mutations=0, adversaries=False)
    assert report.alternatives == [1.0]
    assert "ALTERNATIVE_FAILS" not in codes(report)


async def test_an_alternative_solution_that_misses_an_outcome_is_an_error_naming_what_it_missed(
    anyio_backend: str,
) -> None:
    data = base_task()
    data["alternative_solutions"] = [
        [
            {"service": "tickets", "tool": "escalate_ticket", "arguments": {"ticket_id": "tkt_2", "reason": "Old."}},
            {"say": "Escalated: Outage at Big Corp."},
        ]
    ]
    report = await run(data, max_mutations=0, adversaries=False)
    [d] = [d for d in report.diagnostics if d.code == "ALTERNATIVE_FAILS"]
    assert d.severity == "error" and d.path == "$.alternative_solutions[0]"
    assert "escalated" in d.message and report.alternatives[0] < 1.0
