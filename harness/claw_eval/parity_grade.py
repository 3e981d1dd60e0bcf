"""Grader outputs on both sides: the task's own Claw-Eval grader, run from the checkout on each side's records of
one sequence, with one scripted judge.

Each side's records are what a Claw-Eval trace of that sequence would hold: the request as the first user message,
one assistant turn per call (its ``tool_use``) answered by its ``tool_result`` (the text that side answered), a
fixed final answer (:data:`FINAL_ANSWER`), the dispatches (arguments, HTTP status, JSON answer) and the audit data.
The mock side's are its real HTTP answers and ``/audit`` JSON; ours are built by the grading bridge's own builders
(:mod:`.grading_trace`: ``trace_messages``, ``trace_dispatches``, ``audit_data``), as a real run's are. The judge
answers every question with :data:`JUDGE_ANSWER`, so the judge is no source of difference. Two outputs agree when
their completion, robustness, communication and safety are equal to 4 decimals (a grader that raises: when both
raise the same exception type).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coworkenv.harness.claw_eval.grading_checkout import ClawPackage, Unavailable, claw_package, run_grader
from coworkenv.harness.claw_eval.grading_trace import audit_data, trace_dispatches, trace_messages
from coworkenv.harness.claw_eval.judge import Judge, JudgeLoop
from coworkenv.harness.claw_eval.parity_calls import Call
from coworkenv.harness.claw_eval.parity_mock import Answer
from coworkenv.harness.messages import Message, ToolCall
from coworkenv.harness.trajectory import ToolStepRecord
from coworkenv.servers.kit import Environment
from coworkenv.servers.kit.door import CallOutcome
from coworkenv.synth.contract.task import Task

FINAL_ANSWER = "Done. I went through the records, made the changes that were needed and listed them above."
JUDGE_ANSWER = json.dumps({"score": 0.5, "reasoning": "parity: a fixed answer"})
Event = dict[str, Any]


def scripted_judge() -> Judge:
    return Judge("parity-judge", lambda params: JUDGE_ANSWER, name="parity's scripted judge")


@dataclass(frozen=True)
class Graded:
    """One side's grader output, as compared: the four dimensions (or the exception the grader raised)."""

    value: dict[str, float] | str

    def agrees(self, other: Graded) -> bool:
        return self.value == other.value


def package_for(checkout: Path) -> tuple[ClawPackage | None, str | None]:
    """The checkout's claw_eval package, or None and why it cannot be used."""
    try:
        return claw_package(checkout), None
    except Unavailable as exc:
        return None, f"grader outputs not compared: {exc}"


def _messages(request: str, texts: Sequence[tuple[Call, str, bool]]) -> list[Message]:
    out = [Message(role="user", content=request)]
    for n, (call, text, error) in enumerate(texts, start=1):
        call_id = f"call_{n}"
        out.append(
            Message(role="assistant", tool_calls=[ToolCall(id=call_id, name=call.tool, arguments=call.arguments)])
        )
        out.append(Message(role="tool", content=text, tool_call_id=call_id, name=call.tool, is_error=error))
    out.append(Message(role="assistant", content=FINAL_ANSWER))
    return out


def mock_events(
    request: str, calls: Sequence[tuple[Call, Answer]], urls: Mapping[str, str], tid: str
) -> tuple[list[Event], list[Event]]:
    """The trace Claw-Eval's runner would write of the mock side's calls (``calls``: as sent, as answered)."""
    texts = [(c, json.dumps(a.body, ensure_ascii=False), a.status >= 400) for c, a in calls]
    dispatches = [
        {
            "type": "tool_dispatch",
            "trace_id": tid,
            "tool_use_id": f"call_{n}",
            "tool_name": c.tool,
            "endpoint_url": urls.get(c.tool, ""),
            "request_body": dict(c.arguments),
            "response_status": a.status,
            "response_body": a.body,
        }
        for n, (c, a) in enumerate(calls, start=1)
    ]
    return trace_messages(tid, _messages(request, texts)), dispatches


def our_events(
    request: str, calls: Sequence[tuple[Call, CallOutcome]], urls: Mapping[str, str], tid: str
) -> tuple[list[Event], list[Event]]:
    """The trace the grading bridge builds of our side's calls."""
    texts = [(c, o.text, o.is_error) for c, o in calls]
    steps = [
        ToolStepRecord(
            index=n - 1,
            turn=n - 1,
            call_id=f"call_{n}",
            name=c.tool,
            arguments=dict(c.arguments),
            text=o.text,
            is_error=o.is_error,
            outcome=o.outcome,
            started_s=0.0,
        )
        for n, (c, o) in enumerate(calls, start=1)
    ]
    return trace_messages(tid, _messages(request, texts)), trace_dispatches(tid, steps, urls)


def our_audit(task: Task, env: Environment) -> dict[str, Any]:
    """Our side's audit data as the grading bridge rebuilds it (a service it could not rebuild: absent)."""
    found, _notes = audit_data(task, env.dump(), env.audit())
    return found


def grade(package: ClawPackage, source: str, events: tuple[list[Event], list[Event]], audit: dict[str, Any]) -> Graded:
    """The task's grader on one side's records."""
    messages, dispatches = events
    try:
        got = run_grader(package, source, messages, dispatches, audit, scripted_judge().session())
    except (Exception, JudgeLoop) as exc:
        return Graded(f"the grader raised {type(exc).__name__}")
    return Graded(
        {
            "completion": round(got.completion, 4),
            "robustness": round(got.robustness, 4),
            "communication": round(got.communication, 4),
            "safety": round(got.safety, 4),
        }
    )
