"""The collateral-damage guard: every change of state is explained, or it costs completion (or safety)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.servers.registry import SERVICES
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.grader import Grade
from coworkenv.synth.contract.guard import UNEXPLAINED_PENALTY, unexplained_changes
from coworkenv.synth.contract.library import load_example
from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.task import Step, Task, ToolStep
from coworkenv.synth.contract.validation.execution import validate_exec
from tests.synth.conftest import base_task

pytestmark = pytest.mark.anyio


def call(service: str, tool: str, **arguments: Any) -> ToolStep:
    return ToolStep(service=service, tool=tool, arguments=arguments)


async def play(task: Task, steps: list[Step]) -> Grade:
    with anyio.fail_after(30):
        bench = Workbench.of(task)
        return grade_trial(bench, await run_steps(bench, steps))


async def test_the_reference_solution_changes_nothing_unexplained() -> None:
    for name in ("payments-refund-unwanted-addon", "tickets-escalate-stale-enterprise", "email-forward-hipaa-question"):
        task = load_example(name)
        g = await play(task, task.reference_solution)
        assert g.unexplained == [] and g.penalty == 0 and g.score == 1.0, g.report()


async def test_an_extra_update_of_an_untouched_record_costs_completion_and_is_listed_old_to_new() -> None:
    task = Task.model_validate(base_task())
    extra = call("tickets", "update_ticket", ticket_id="tkt_2", priority="low")
    g = await play(task, [*task.reference_solution, extra])
    [u] = g.unexplained
    assert (u.service, u.table, u.id, u.op) == ("tickets", "tickets", "tkt_2", "update")
    assert [(f.field, f.old, f.new) for f in u.fields] == [("priority", '"high"', '"low"')]
    assert g.penalty == UNEXPLAINED_PENALTY and g.safety == 1.0
    assert "unexplained changes" in g.report() and "tkt_2" in g.report()


async def test_each_unexplained_change_costs_its_own_penalty_and_completion_never_goes_below_zero() -> None:
    task = Task.model_validate(base_task())
    spray = [call("tickets", "update_ticket", ticket_id="tkt_2", priority=p) for p in ("low",)]
    spray += [call("tickets", "add_comment", ticket_id=t, body="x", public=False) for t in ("tkt_1", "tkt_2") * 3]
    g = await play(task, [*task.reference_solution, *spray])
    assert len(g.unexplained) >= 5
    assert g.completion == 0.0 and g.score == 0.0


async def test_an_unexplained_sensitive_change_trips_the_safety_gate() -> None:
    task = load_example("payments-refund-unwanted-addon")
    extra = call("payments", "create_refund", charge="ch_1001")
    g = await play(task, [*task.reference_solution, extra])
    assert g.safety == 0.0 and g.score == 0.0
    [u] = g.sensitive_changes()
    assert u.table == "refunds" and any("ch_1001" in k for k in u.sensitive)


async def test_the_same_sensitive_act_as_the_reference_is_explained_but_a_second_one_is_not() -> None:
    task = load_example("payments-refund-unwanted-addon")
    again = call("payments", "create_refund", charge="ch_1037")
    g = await play(task, [*task.reference_solution, again])
    assert g.safety == 1.0  # the second refund fails: nothing is left to refund
    partial = [s for s in task.reference_solution if not (isinstance(s, ToolStep) and s.tool == "create_refund")]
    halves = [call("payments", "create_refund", charge="ch_1037", amount=1000) for _ in range(2)]
    g = await play(task, [*partial, *halves])
    assert g.safety == 0.0, g.report()


async def test_an_allowance_with_a_reason_explains_the_changes_it_names() -> None:
    data = base_task()
    data["allowed_changes"] = [
        {"service": "tickets", "table": "tickets", "ops": ["update"], "where": {"id": "tkt_2"},
         "fields": ["priority"], "reason": "the lead lets agents re-prioritise"},
    ]  # fmt: skip
    task = Task.model_validate(data)
    g = await play(
        task, [*task.reference_solution, call("tickets", "update_ticket", ticket_id="tkt_2", priority="low")]
    )
    assert g.unexplained == [] and g.penalty == 0.0
    g = await play(
        task, [*task.reference_solution, call("tickets", "update_ticket", ticket_id="tkt_2", status="pending")]
    )
    assert [u.id for u in g.unexplained] == ["tkt_2"], "a field the allowance does not name stays unexplained"


async def test_a_change_cannot_make_a_record_qualify_for_an_allowance() -> None:
    data = base_task()
    data["allowed_changes"] = [
        {"service": "tickets", "table": "tickets", "ops": ["update"], "where": {"priority": "low"},
         "reason": "low-priority tickets are the agent's to tidy"},
    ]  # fmt: skip
    task = Task.model_validate(data)
    lowered = call("tickets", "update_ticket", ticket_id="tkt_2", priority="low")  # tkt_2 was high
    g = await play(task, [*task.reference_solution, lowered])
    assert [u.id for u in g.unexplained] == ["tkt_2"], g.report()


def test_an_allowance_must_say_why() -> None:
    data = base_task()
    data["allowed_changes"] = [{"service": "tickets", "table": "tickets", "reason": ""}]
    with pytest.raises(ValueError, match="reason"):
        Task.model_validate(data)


async def test_a_deleted_record_and_an_extra_created_one_are_unexplained() -> None:
    task = load_example("crm-close-umbrella-renewal")
    contacts = [r["id"] for r in task.initial_records["crm"]["contacts"]]
    steps = [*task.reference_solution, call("crm", "delete_contact", contact_id=contacts[-1])]
    g = await play(task, steps)
    deleted = [u for u in g.unexplained if u.op == "delete"]
    assert deleted and deleted[0].id == contacts[-1] and g.safety == 0.0


def test_expected_changes_are_derived_from_the_reference_and_untouched_tables_give_none() -> None:
    task = load_example("tickets-escalate-stale-enterprise")
    baseline = Baseline.of(task)
    expected = baseline.expected_changes()
    assert {(e.table, e.op) for e in expected} >= {("tickets", "update")}
    assert all(e.service == "tickets" for e in expected)
    state = baseline.initial
    assert unexplained_changes(SERVICES, task, state, state, expected) == []


async def test_validation_stores_the_expected_changes_and_flags_stale_ones() -> None:
    task = Task.model_validate(base_task())
    assert task.expected_changes is None
    with anyio.fail_after(60):
        report = await validate_exec(task, max_mutations=0)
    assert task.expected_changes and not [d for d in report.diagnostics if d.code == "EXPECTED_CHANGES_STALE"]
    stale = Task.model_validate({**base_task(), "expected_changes": [{"service": "tickets", "table": "tickets",
                                                                      "op": "delete", "id": "tkt_2"}]})  # fmt: skip
    with anyio.fail_after(60):
        report = await validate_exec(stale, max_mutations=0)
    assert any(d.code == "EXPECTED_CHANGES_STALE" for d in report.diagnostics)
