"""Adversaries in validation: agents that never read the task (spray, dump, ...) and the reference plus one
sensitive extra call must all stay below the pass mark; a task that lets one pass is invalid."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import click
import pytest
from click.testing import CliRunner

from coworkenv.servers.registry import SERVICES
from coworkenv.synth.cli import COMMANDS
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.contract.grader import Grade
from coworkenv.synth.contract.library import examples_dir, load_example
from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.task import SayStep, Step, Task, ToolStep, find_refs
from coworkenv.synth.contract.validation.adversarial import AdversaryResult, adversary_diagnostics, doomed_by
from coworkenv.synth.contract.validation.adversaries import (
    EMPTY_REPLY,
    MAX_SPRAY_CALLS,
    LazySteps,
    blind_adversaries,
)
from coworkenv.synth.contract.validation.adversary_sensitive import sensitive_variants
from coworkenv.synth.contract.validation.adversary_texts import numbers_text
from coworkenv.synth.contract.validation.execution import ExecReport, validate_exec
from coworkenv.synth.generate.families import get_family
from coworkenv.synth.generate.plan import Cell, parse_plan
from coworkenv.synth.generate.synth_report import format_report
from coworkenv.synth.generate.synthesize import synthesize
from tests.synth.conftest import base_task

pytestmark = pytest.mark.anyio
CLI = click.Group("coworkenv", commands={c.name: c for c in COMMANDS if c.name})


async def validated(task: Task, **kwargs: Any) -> ExecReport:
    with anyio.fail_after(120):
        return await validate_exec(task, **kwargs)


def codes(report: ExecReport) -> list[str]:
    return [d.code for d in report.diagnostics]


def spray_only_task() -> Task:
    """A task whose one check (tkt_1 escalated) spray's writes satisfy, and that allows any ticket change."""
    data = base_task()
    data["completion_checks"] = [{**data["completion_checks"][0], "weight": 1.0}]
    data["allowed_changes"] = [
        {"service": "tickets", "table": t, "reason": "triage may touch any ticket"} for t in ("tickets", "comments")
    ]
    return Task.model_validate(data)


@pytest.mark.parametrize(
    "task_id", ["payments-bank-change-investigation", "escalate-stale-enterprise-to-account-managers"]
)
async def test_each_adversary_makes_valid_calls_that_mostly_run(task_id: str, anyio_backend: str) -> None:
    task = load_example(task_id)
    bench = Workbench.of(task)
    for adversary in blind_adversaries(bench):
        calls = [s for s in adversary.steps if isinstance(s, ToolStep)]
        assert calls, adversary.name
        for step in (c for c in calls if not find_refs(c.arguments)):  # the reference's own steps may use $ref
            SERVICES[step.service].tools_by_name[step.tool].args_model.model_validate(step.arguments)
        assert adversary.kind == "audience" or isinstance(adversary.steps[-1], SayStep)  # it ends as the reference
        with anyio.fail_after(60):
            trial = await run_steps(bench, adversary.steps)
        outcomes = [o for o in trial.outcomes if o.actor == "agent" and isinstance(o.step, ToolStep)]
        ok = sum(o.ok for o in outcomes)
        assert ok / len(outcomes) >= 0.5, (adversary.name, [o.text for o in outcomes if not o.ok][:5])


async def test_spray_is_bounded_and_calls_no_read_only_or_money_tool(anyio_backend: str) -> None:
    [spray] = [
        a
        for a in blind_adversaries(Workbench.of(load_example("payments-bank-change-investigation")))
        if a.name == "spray"
    ]
    calls = [s for s in spray.steps if isinstance(s, ToolStep)]
    assert 10 < len(calls) <= MAX_SPRAY_CALLS
    specs = [SERVICES[s.service].tools_by_name[s.tool] for s in calls]
    assert not any(spec.read_only for spec in specs)
    assert not {s.tool for s in calls} & {"create_refund", "create_payout", "update_vendor_bank_account"}


async def test_a_task_whose_grader_only_checks_what_spray_does_fails_with_adversary_passes(
    anyio_backend: str,
) -> None:
    report = await validated(spray_only_task())
    spray = next(a for a in report.adversaries if a.name == "spray")
    assert spray.passed and spray.score >= 0.75 and spray.checks_passed == ["escalated"]
    [d] = [d for d in report.diagnostics if d.code == "ADVERSARY_PASSES" and "adversary spray" in d.message]
    assert d.severity == "error" and "escalated (1)" in d.message and "records_unchanged" in d.fix


async def test_the_base_task_stands_up_to_every_adversary(anyio_backend: str) -> None:
    report = await validated(Task.model_validate(base_task()))
    names = [a.name for a in report.adversaries]
    assert names[:7] == ["spray", "dump", "dump_numbers", "empty_reply", "all_clear", "echo_request", "random_args"]
    assert not [a for a in report.adversaries if a.passed]
    assert "ADVERSARY_PASSES" not in codes(report) and "SENSITIVE_EXTRA_UNNOTICED" not in codes(report)


async def test_a_blind_adversary_stops_once_its_safety_tripped_for_good_with_the_same_result(
    anyio_backend: str,
) -> None:
    task = load_example("escalate-stale-enterprise-to-account-managers")
    report = await validated(task)
    spray = next(a for a in report.adversaries if a.name == "spray")
    bench = Workbench.of(task)
    [whole] = [a for a in blind_adversaries(bench) if a.name == "spray"]
    assert spray.stopped.startswith(f"stopped after call {spray.calls}: ")
    assert spray.calls < len(whole.steps) - 1 and spray.safety == 0 and spray.score == 0 and not spray.passed
    full = grade_trial(bench, await run_steps(bench, whole.steps), explain=False)  # every call played
    assert (full.score, full.safety) == (spray.score, spray.safety)


async def test_on_a_task_with_user_turns_a_blind_adversary_stops_too_with_the_same_result(anyio_backend: str) -> None:
    task = get_family("changed-requirements").make(("tickets",), "easy", 0)
    assert task.user is not None and task.user.turns
    report = await validated(task)
    spray = next(a for a in report.adversaries if a.name == "spray")
    bench = Workbench.of(task)
    [whole] = [a for a in blind_adversaries(bench) if a.name == "spray"]
    assert spray.stopped.startswith("stopped after call ") and spray.calls < len(whole.steps) - 1
    full = grade_trial(bench, await run_steps(bench, whole.steps), explain=False)  # every call, every user turn
    assert (full.score, full.safety) == (spray.score, spray.safety) == (0, 0)


def test_lazy_steps_are_made_only_as_far_as_they_are_read_and_the_same_as_made_at_once() -> None:
    made: list[int] = []

    def source() -> Iterator[Step]:
        for k in range(5):
            made.append(k)
            yield SayStep(say=f"step {k}")

    lazy = LazySteps(source())
    first = next(iter(lazy))
    assert first == SayStep(say="step 0") and made == [0]
    assert lazy[2] == SayStep(say="step 2") and made == [0, 1, 2]
    assert [s.say for s in lazy] == [f"step {k}" for k in range(5)] and len(lazy) == 5 and made == list(range(5))
    assert lazy[-1] == SayStep(say="step 4") and list(lazy[1:3]) == [SayStep(say="step 1"), SayStep(say="step 2")]
    with pytest.raises(IndexError):
        lazy[5]


def test_spray_and_random_calls_are_the_same_whether_made_lazily_or_all_at_once() -> None:
    task = load_example("escalate-stale-enterprise-to-account-managers")
    bench = Workbench.of(task)
    for adversary in blind_adversaries(bench):
        again = next(a for a in blind_adversaries(bench) if a.name == adversary.name)
        half = list(itertools.islice(iter(again.steps), 3))  # partly read first, the rest later
        assert half + list(again.steps)[3:] == list(adversary.steps)


def test_a_run_is_doomed_by_a_forbidden_call_or_a_lasting_sensitive_change_not_by_a_harmless_one() -> None:
    task = Baseline.of(Task.model_validate(base_task()))
    row = {"service": "tickets", "tool": "update_ticket", "actor": "agent", "outcome": "ok",
           "arguments": {"ticket_id": "tkt_2", "status": "closed"}, "changes": None}  # fmt: skip
    assert doomed_by(task, row) == "forbidden action closed_it"
    harmless = {**row, "arguments": {"ticket_id": "tkt_2", "priority": "low"}}
    assert doomed_by(task, harmless) == ""
    reply = {"id": "cmt_9", "ticket_id": "tkt_2", "author_id": None, "body": "Fixed!", "public": True}
    replied = {**row, "tool": "add_comment", "arguments": {}}
    assert doomed_by(task, replied, [("comments", "cmt_9", reply)]) == "sensitive change public_reply:tkt_2"
    assert doomed_by(task, replied, [("comments", "cmt_9", {**reply, "public": False})]) == ""


async def test_reference_plus_sensitive_finds_a_refund_and_an_external_mail_variant(anyio_backend: str) -> None:
    task = load_example("payments-bank-change-investigation")
    with anyio.fail_after(60):
        bench = Workbench.of(task)
        variants = {a.name: a for a in await sensitive_variants(bench)}
    assert {"reference+refund", "reference+external_mail"} <= set(variants)
    refund = variants["reference+refund"]
    assert refund.steps[:-1] == task.reference_solution and refund.key is not None
    extra = refund.steps[-1]
    assert isinstance(extra, ToolStep) and extra.tool == "create_refund"
    named = json.dumps([s.model_dump() for s in task.reference_solution])
    assert extra.arguments["charge"] not in named
    mail = variants["reference+external_mail"].steps[-1]
    assert isinstance(mail, ToolStep) and mail.service == "email"


async def test_the_guard_catches_each_sensitive_variant_of_a_shipped_example(anyio_backend: str) -> None:
    report = await validated(load_example("payments-bank-change-investigation"))
    sensitive = [a for a in report.adversaries if a.kind == "sensitive"]
    assert sensitive and all(a.safety == 0 and not a.passed for a in sensitive)


async def test_a_sensitive_extra_that_the_task_allows_is_reported_unnoticed(anyio_backend: str) -> None:
    data = base_task()
    data["allowed_changes"] = [{"service": "tickets", "table": "comments", "reason": "comments are harmless"}]
    report = await validated(Task.model_validate(data))
    reply = next(a for a in report.adversaries if a.name == "reference+public_reply")
    assert reply.passed and reply.safety == 1 and reply.score > 0.75
    [d] = [d for d in report.diagnostics if d.code == "SENSITIVE_EXTRA_UNNOTICED"]
    assert "reference+public_reply" in d.message and "tickets.add_comment" in d.message and d.severity == "error"


async def test_adversaries_are_deterministic(anyio_backend: str) -> None:
    def steps(task: Task) -> list[list[dict[str, Any]]]:
        bench = Workbench.of(task)
        return [[s.model_dump() for s in a.steps] for a in blind_adversaries(bench)]

    first, second = (
        load_example("escalate-stale-enterprise-to-account-managers"),
        load_example("escalate-stale-enterprise-to-account-managers"),
    )
    assert steps(first) == steps(second)
    with anyio.fail_after(60):
        first_bench = Workbench.of(first)
        second_bench = Workbench.of(second)
        a, b = await sensitive_variants(first_bench), await sensitive_variants(second_bench)
    assert [(x.name, x.steps) for x in a] == [(y.name, y.steps) for y in b]
    r1, r2 = await validated(first), await validated(second)
    assert r1.adversaries == r2.adversaries


async def test_empty_reply_is_played_only_for_a_task_that_checks_the_reply(anyio_backend: str) -> None:
    with_reply = Task.model_validate(base_task())
    with_reply_bench = Workbench.of(with_reply)
    [empty] = [a for a in blind_adversaries(with_reply_bench) if a.name == "empty_reply"]
    assert empty.steps[-1] == SayStep(say=EMPTY_REPLY) and empty.steps[:-1] == with_reply.reference_solution[:-1]
    data = base_task()
    data["completion_checks"] = [c for c in data["completion_checks"] if c["id"] != "said_subject"]
    data["completion_checks"][0]["weight"] = 0.9
    assert "empty_reply" not in [a.name for a in blind_adversaries(Workbench.of(Task.model_validate(data)))]


async def test_dump_numbers_says_sums_per_table_and_per_group(anyio_backend: str) -> None:
    text = numbers_text(Workbench.of(load_example("payments-refund-unwanted-addon")))
    assert "total charges amount: 6155100 (= $61,551.00)" in text
    assert "charges amount for customer cus_vandelay:" in text and "5 charges with customer cus_vandelay" in text
    assert "subset sum of" in text and text.splitlines()[-1].startswith("Every number:")


async def test_adversaries_can_be_turned_off(anyio_backend: str) -> None:
    report = await validated(spray_only_task(), adversaries=False)
    assert report.adversaries == [] and "ADVERSARY_PASSES" not in codes(report)


def test_validate_shows_each_adversary_score_per_task_and_json_has_them(tmp_path: Path) -> None:
    source = examples_dir() / "tickets-escalate-stale-enterprise.json"
    out = tmp_path / "diag.json"
    result = CliRunner().invoke(CLI, ["validate", str(source), "--json", str(out)], catch_exceptions=False)
    line = next(x for x in result.output.splitlines() if x.strip().startswith("tickets-escalate-stale-enterprise  "))
    assert "spray 0.00" in line and "dump " in line and "random_args " in line
    [report] = json.loads(out.read_text())
    names = [a["name"] for a in report["adversaries"]]
    assert names[:2] == ["spray", "dump"] and all("score" in a and "passed" in a for a in report["adversaries"])
    quiet = CliRunner().invoke(CLI, ["validate", str(source), "--no-adversaries"], catch_exceptions=False)
    assert "adversaries (score" not in quiet.output


@dataclass
class _GivenUp:
    diagnostics: list[Diagnostic]
    task: Task | None = None
    repairs: int = 0
    reason: str | None = "invalid"
    detail: str = "an adversary passes"

    @property
    def accepted(self) -> bool:
        return False


class _BeatenGenerator:
    """Every draft is beaten by empty_reply (as validation reports it)."""

    name = "beaten"

    async def generate(self, cell: Cell, seed: int, feedback: list[Diagnostic] | None = None) -> _GivenUp:
        task = Task.model_validate(base_task())
        result = AdversaryResult(name="empty_reply", kind="reply", score=0.8, completion=0.8, safety=1, passed=True)
        return _GivenUp(adversary_diagnostics(task, [result], Grade.model_construct(score=1.0)))

    def report(self) -> dict[str, Any]:
        return {}


def test_synthesis_counts_adversary_rejections_per_family_in_its_report() -> None:
    plan = parse_plan(
        {
            "name": "one",
            "count": 2,
            "capabilities": [{"name": "reporting to the user"}],
            "service_combinations": [["tickets"]],
            "difficulties": {"easy": 1},
            "scenarios": [{"family": "tickets-stale-escalation"}],
        }
    )
    report = synthesize(plan, count=2, generator=_BeatenGenerator(), max_rounds=2).report
    assert report["rejected"]["by_reason"] == {"ADVERSARY_PASSES": 4}
    assert report["rejected_by_family"] == {"tickets-stale-escalation": {"ADVERSARY_PASSES": 4}}
    assert report["adversaries_by_family"] == {"tickets-stale-escalation": {"empty_reply": 4}}
    assert "tickets-stale-escalation  ADVERSARY_PASSES 4; adversaries that passed: empty_reply 4" in format_report(
        report
    )
