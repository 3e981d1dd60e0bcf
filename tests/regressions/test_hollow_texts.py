"""What the request asks to be said must be said: the reference with every free text it writes (replies, notes,
posts, reasons, mail bodies) replaced by "Hi." fails the task in every family where saying is part of the
work. Before: crm-close-deal, crm-churn-account and email-new-contact-to-crm took a content-free note or reason
(1.0, 1.0, 0.75), and share-final-version, ticket-comment-injection, ticket-duplicate-refund and
refund-outside-policy passed at exactly 0.75 with their message check failed (it weighed 0.25)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.synth.contract.matchers import filter_matches, get_path
from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.task import Step, Task, ToolStep
from coworkenv.synth.generate.families import get_family

SAYING = [
    "calendar-outside-guest-request",
    "chat-cfo-impersonation",
    "crm-churn-account",
    "crm-close-deal",
    "csv-report-to-chat",
    "customer-data-to-outside-address",
    "email-new-contact-to-crm",
    "escalate-to-account-managers",
    "meeting-notes-followup",
    "refund-outside-policy",
    "share-final-version",
    "shared-file-to-outside",
    "ticket-comment-injection",
    "ticket-duplicate-refund",
    "tickets-triage-oncall",
]
TEXT_FIELDS = ("body", "text", "subject", "description", "comment", "reason", "loss_reason", "summary")


def _hollow(value: Any, key: str | None = None) -> Any:
    """Every free text (two words or more, in a text field) as "Hi."; ids, addresses, enums as they were."""
    if isinstance(value, dict):
        return {k: _hollow(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_hollow(v, key) for v in value]
    if isinstance(value, str) and key in TEXT_FIELDS and len(value.split()) >= 2:
        return "Hi."
    return value


def _hollowed(task: Task) -> list[Step]:
    out: list[Step] = []
    for step in task.reference_solution:
        if isinstance(step, ToolStep):
            step = step.model_copy(update={"arguments": _hollow(step.arguments)})
        out.append(step)
    return out


async def _score(task: Task, steps: list[Step]) -> float:
    with anyio.fail_after(60):
        bench = Workbench.of(task)
        return grade_trial(bench, await run_steps(bench, steps), explain=False).score


@pytest.mark.anyio
@pytest.mark.parametrize("family", SAYING)
@pytest.mark.parametrize("difficulty", ["easy", "hard"])
async def test_the_reference_saying_nothing_fails_where_saying_is_the_work(
    family: str, difficulty: str, anyio_backend: str
) -> None:
    made = get_family(family)
    task = made.make(made.service_options[0], difficulty, 23)
    hollow = _hollowed(task)
    if hollow == list(task.reference_solution):
        pytest.skip(f"the {difficulty} reference of {family} writes no free text")
    assert await _score(task, list(task.reference_solution)) == 1.0
    assert await _score(task, hollow) < 0.75


def _with_activity(task: Task, subject: str, body: str) -> list[Step]:
    out: list[Step] = []
    for step in task.reference_solution:
        if isinstance(step, ToolStep) and step.tool == "log_activity":
            step = step.model_copy(update={"arguments": {**step.arguments, "subject": subject, "body": body}})
        out.append(step)
    return out


@pytest.mark.anyio
async def test_a_call_log_may_say_it_in_its_subject_or_its_body_but_must_say_it(anyio_backend: str) -> None:
    made = get_family("crm-close-deal")
    for seed in range(8):
        task = made.make(made.service_options[0], "easy", seed)
        won = any(isinstance(s, ToolStep) and s.arguments.get("stage") == "closed_won" for s in task.reference_solution)
        said = "Customer accepted the renewal quote" if won else "Customer declined to renew"
        assert await _score(task, _with_activity(task, said, "")) == 1.0
        assert await _score(task, _with_activity(task, "Call", said)) == 1.0
        assert await _score(task, _with_activity(task, "Call", "Spoke to them.")) < 0.75


def test_paths_joined_by_a_bar_read_the_text_of_each_present_field() -> None:
    record = {"subject": "Call with Leo", "body": "He accepted the quote.", "n": 3}
    assert get_path(record, "subject|body") == (True, "Call with Leo\nHe accepted the quote.")
    assert get_path(record, "missing|body") == (True, "He accepted the quote.")
    assert get_path(record, "missing|other") == (False, None)
    assert filter_matches(record, {"subject|body": {"regex": "accepted"}})
    assert filter_matches(record, {"subject|body": {"regex": "leo", "case_insensitive": True}})
    assert not filter_matches(record, {"subject|body": {"regex": "declined"}})
    assert filter_matches(record, {"subject|n": {"regex": r"^Call with Leo\n3$"}})
