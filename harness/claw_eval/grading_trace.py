"""An episode of an imported task as Claw-Eval's trace: its messages, its tool dispatches and its audit data.

Claw-Eval's runner writes a JSONL trace that its graders read back as typed events; this module builds the same
events from our trajectory, as the plain JSON its trace file would hold (``{"type": "message", ...}``,
``{"type": "tool_dispatch", ...}``), so the checkout's own models validate them (:mod:`.grading_checkout`) and the
declared checks read them (:mod:`.grading_declared`). As its runner does:

- the system prompt is not in the trace; the request is the first user message; a later user message (the
  simulated user's reply) is a user text starting ``[user_agent]`` followed by a line break;
- an assistant turn is its text block and one ``tool_use`` block per call (tool names as Claw-Eval's, without our
  ``<service>__`` prefix); the results of one turn's calls are one user message of ``tool_result`` blocks;
- a dispatch records the call's arguments as ``request_body``, the HTTP status the mock would have answered
  (:func:`~coworkenv.servers.claw_eval.common.http_status`) and the JSON it answered (an error's ``{"detail"}``
  as FastAPI writes it; an unknown tool's ``{"error"}`` and 404 as its dispatcher writes them).

``audit_data`` per Claw-Eval service is what its ``/audit`` route would have returned, rebuilt from our final state
and the audit rows of that service's tools (:attr:`ClawService.audit_data`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.harness.messages import Message
from coworkenv.harness.trajectory import ToolStepRecord, Trajectory
from coworkenv.servers.claw_eval import claw_service
from coworkenv.servers.claw_eval.common import http_status
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.turns import TOOL_SEPARATOR

USER_AGENT_PREFIX = "[user_agent]\n"
_HTTP = re.compile(r"^HTTP \d{3}:\s*", re.DOTALL)
Event = dict[str, Any]


def bare_tool(name: str) -> str:
    """Claw-Eval's tool name of one of ours: ``email__gmail_send_message`` → ``gmail_send_message``."""
    _, sep, tool = name.partition(TOOL_SEPARATOR)
    return tool if sep and tool else name


def trace_id(task: Task, record: Trajectory) -> str:
    return f"{task.id}-trial{record.trial}"


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _message(tid: str, role: str, content: list[dict[str, Any]]) -> Event:
    return {"type": "message", "trace_id": tid, "message": {"role": role, "content": content}}


def trace_messages(tid: str, messages: Sequence[Message]) -> list[Event]:
    """The trace's message events of our conversation (see the module doc)."""
    out: list[Event] = []
    results: list[dict[str, Any]] = []
    users = 0

    def flush() -> None:
        if results:
            out.append(_message(tid, "user", list(results)))
            results.clear()

    for m in messages:
        if m.role == "tool":
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": m.tool_call_id or "",
                    "content": [_text(m.content)],
                    "is_error": m.is_error,
                }
            )
            continue
        flush()
        if m.role == "system":
            continue
        if m.role == "user":
            users += 1
            out.append(_message(tid, "user", [_text(m.content if users == 1 else USER_AGENT_PREFIX + m.content)]))
            continue
        blocks = [_text(m.content)] if m.content else []
        blocks += [
            {"type": "tool_use", "id": c.id, "name": bare_tool(c.name), "input": dict(c.arguments)}
            for c in m.tool_calls
        ]
        out.append(_message(tid, "assistant", blocks))
    flush()
    return out


def response_body(step: ToolStepRecord, status: int) -> Any:
    """The JSON the mock would have answered this call with."""
    if step.outcome == "unknown_tool":
        return {"error": f"unknown tool '{bare_tool(step.name)}'"}
    try:
        return json.loads(step.text)
    except (json.JSONDecodeError, TypeError):
        pass
    if status >= 400:
        return {"detail": _HTTP.sub("", step.text or "", count=1)}
    return step.text


def trace_dispatches(tid: str, steps: Sequence[ToolStepRecord], endpoints: Mapping[str, str]) -> list[Event]:
    """The trace's dispatch events of our tool calls; ``endpoints``: tool → the mock's URL (task.yaml's
    ``tool_endpoints``; "" for a tool it does not name, as its dispatcher writes)."""
    out: list[Event] = []
    for step in steps:
        tool = bare_tool(step.name)
        status = 404 if step.outcome == "unknown_tool" else http_status(step.outcome, step.text)
        out.append(
            {
                "type": "tool_dispatch",
                "trace_id": tid,
                "tool_use_id": step.call_id,
                "tool_name": tool,
                "endpoint_url": endpoints.get(tool, ""),
                "request_body": dict(step.arguments),
                "response_status": status,
                "response_body": response_body(step, status),
                "latency_ms": step.duration_ms,
            }
        )
    return out


def _row(row: Any) -> dict[str, Any]:
    if isinstance(row, Mapping):
        return dict(row)
    if dataclasses.is_dataclass(row) and not isinstance(row, type):
        return dataclasses.asdict(row)
    raise TypeError(f"an audit row must be a mapping or an AuditRow, not {type(row).__name__}")


def claw_services_of(task: Task) -> list[str]:
    """The Claw-Eval services the task uses."""
    return list(task.tool_profile.services) if task.tool_profile is not None else []


def audit_data(
    task: Task, state: Mapping[str, Mapping[str, list[dict[str, Any]]]], audit: Sequence[Any]
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """What each Claw-Eval service's ``/audit`` route would have returned, and a note per service whose data
    could not be rebuilt (its graders then find none, as when Claw-Eval's best-effort fetch fails)."""
    rows = [_row(r) for r in audit]
    out: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for name in claw_services_of(task):
        try:
            claw = claw_service(name)
        except (KeyError, ImportError, AttributeError) as exc:
            notes.append(f"no audit data for {name}: {exc}")
            continue
        tools = {t.name for t in claw.tools}
        mine: list[Mapping[str, Any]] = [
            r for r in rows if r.get("service") == claw.serves_on and r.get("tool") in tools
        ]
        try:
            out[name] = claw.audit_data(state.get(claw.serves_on, {}), mine)
        except Exception as exc:  # a bad rebuild costs the grader its audit data, not the grade
            notes.append(f"no audit data for {name}: {type(exc).__name__}: {exc}")
    return out, notes


def assistant_texts(messages: Sequence[Event]) -> list[str]:
    """The text of each assistant message of a trace, as Claw-Eval's ``Message.text`` joins its text blocks."""
    return [
        "\n".join(b["text"] for b in m["message"]["content"] if b.get("type") == "text")
        for m in messages
        if m["message"]["role"] == "assistant"
    ]
