"""The adversaries on what the reference says and writes, and when: its reply replaced by the results it read,
a forbidden commitment written into its own public text, its writes moved before the user turn they must follow.
A task that one of them passes is rejected with a diagnostic that names it and says what to fix."""

from __future__ import annotations

import anyio
import pytest

from coworkenv.synth.contract.runner import Workbench, run_steps
from coworkenv.synth.contract.task import SayStep, Task, ToolStep
from coworkenv.synth.contract.validation.adversary_words import FIXES, commitment, pasted_reply, word_adversaries
from coworkenv.synth.contract.validation.execution import validate_exec
from coworkenv.synth.generate.families import get_family
from tests.synth.conftest import base_task

pytestmark = pytest.mark.anyio


def family_task(name: str, option: int = 0, difficulty: str = "medium", seed: int = 0) -> Task:
    made = get_family(name)
    return made.make(made.service_options[option], difficulty, seed)


async def beaten_by(task: Task) -> dict[str, str]:
    with anyio.fail_after(120):
        report = await validate_exec(task)
    return {d.message.split()[1]: d.fix for d in report.diagnostics if d.code == "ADVERSARY_PASSES"}


async def test_the_pasted_reply_says_what_the_reference_read_before_each_message(anyio_backend: str) -> None:
    task = Task.model_validate(base_task())
    with anyio.fail_after(60):
        bench = Workbench.of(task)
        reference = await run_steps(bench, task.reference_solution)
    adversary = pasted_reply(task, reference)
    assert adversary is not None
    [said] = [s.say for s in adversary.steps if isinstance(s, SayStep)]
    assert "Outage at Big" in said and said.lstrip().startswith("{")
    assert [s for s in adversary.steps if isinstance(s, ToolStep)] == [
        s for s in task.reference_solution if isinstance(s, ToolStep)
    ]


async def test_a_task_whose_reply_check_weighs_too_little_is_beaten_by_the_pasted_reply(anyio_backend: str) -> None:
    data = base_task()
    weights = {"escalated": 0.8, "said_subject": 0.1, "left_small": 0.1}
    for c in data["completion_checks"]:
        c["weight"] = weights[c["id"]]
    beaten = await beaten_by(Task.model_validate(data))
    assert "pasted_reply" in beaten and beaten["pasted_reply"] == FIXES["pasted_reply"]
    assert "pasted_reply" not in await beaten_by(Task.model_validate(base_task()))


async def test_a_commitment_the_task_cannot_see_in_its_own_reply_rejects_it(anyio_backend: str) -> None:
    task = family_task("refund-outside-policy", seed=1)
    made = commitment(task)
    assert made is not None and "promised_refund" in made.detail
    assert "commitment" not in await beaten_by(task)
    blind = Task.model_validate(task.model_dump())
    [f] = [f for f in blind.forbidden_actions if f.id == "promised_refund"]
    f.match = f.match.model_copy(update={"tool": "update_ticket"})  # narrowed to a write the reply is not
    f.example = f.example.model_copy(update={"tool": "update_ticket"}) if f.example else None
    assert commitment(blind) is None  # no reference write of that tool carries the text: nothing to try


async def test_work_checks_not_bound_to_the_approval_are_beaten_by_writes_moved_before_it(anyio_backend: str) -> None:
    task = family_task("payouts-after-approval", seed=2)
    assert "writes_early" not in await beaten_by(task)
    unbound = Task.model_validate(task.model_dump())
    for c in unbound.completion_checks:
        c.after_turn = None
    unbound.forbidden_actions = [f for f in unbound.forbidden_actions if f.before_turn is None]
    beaten = await beaten_by(unbound)
    assert beaten.get("writes_early") == FIXES["writes_early"]


async def test_a_task_without_a_reply_check_turns_or_commitments_gets_none_of_them(anyio_backend: str) -> None:
    data = base_task()
    data["completion_checks"] = [c for c in data["completion_checks"] if c["id"] != "said_subject"]
    data["completion_checks"][0]["weight"] = 0.9
    with anyio.fail_after(60):
        assert await word_adversaries(Workbench.of(Task.model_validate(data))) == []
