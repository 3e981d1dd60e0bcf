"""Our trajectory as Claw-Eval's trace events: messages, dispatches and the audit data its graders read."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import pytest

from coworkenv.harness.claw_eval import grading_trace
from coworkenv.harness.claw_eval.grading_trace import audit_data, trace_dispatches, trace_messages
from coworkenv.servers.claw_eval import ClawService
from coworkenv.servers.claw_eval.common import ClawJson
from coworkenv.servers.kit.audit import AuditRow
from coworkenv.servers.kit.tool import tool
from tests.harness.claw_eval.grading_helpers import Episode, claw_task


def episode() -> Episode:
    task = claw_task(user=True)
    return (
        Episode(task)
        .says("Which inbox do you mean?")
        .user("The work one.")
        .calls(
            ("gmail_list_messages", {"max_results": 5}, {"messages": []}),
            ("gmail_get_message", {"message_id": "msg_9"}, "HTTP 404: Message msg_9 not found", "error"),
        )
        .says("Nothing needs a reply.")
    )


def test_the_system_prompt_is_left_out_and_later_user_messages_are_the_user_agents() -> None:
    events = trace_messages("t-0", episode().messages)
    roles = [e["message"]["role"] for e in events]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert events[0]["message"]["content"] == [{"type": "text", "text": claw_task().request}]
    assert events[2]["message"]["content"][0]["text"] == "[user_agent]\nThe work one."
    assert all(e["type"] == "message" and e["trace_id"] == "t-0" for e in events)


def test_a_turns_tool_calls_are_tool_use_blocks_with_claw_names_and_their_results_one_user_message() -> None:
    events = trace_messages("t-0", episode().messages)
    uses = events[3]["message"]["content"]
    assert [(b["type"], b["name"], b["input"]) for b in uses] == [
        ("tool_use", "gmail_list_messages", {"max_results": 5}),
        ("tool_use", "gmail_get_message", {"message_id": "msg_9"}),
    ]
    results = events[4]["message"]["content"]
    assert [(b["type"], b["tool_use_id"], b["is_error"]) for b in results] == [
        ("tool_result", uses[0]["id"], False),
        ("tool_result", uses[1]["id"], True),
    ]
    assert results[0]["content"] == [{"type": "text", "text": '{"messages": []}'}]


def test_dispatches_carry_the_status_and_json_the_mock_would_have_answered() -> None:
    steps = episode().steps
    unknown = steps[0].model_copy(
        update={"name": "email__gmail_nope", "outcome": "unknown_tool", "text": "Unknown tool"}
    )
    invalid = steps[0].model_copy(update={"outcome": "invalid_arguments", "text": "max_results: not an integer"})
    urls = {"gmail_list_messages": "http://localhost:9100/gmail/messages"}
    found = trace_dispatches("t-0", [*steps, unknown, invalid], urls)
    assert [(d["tool_name"], d["response_status"], d["response_body"]) for d in found] == [
        ("gmail_list_messages", 200, {"messages": []}),
        ("gmail_get_message", 404, {"detail": "Message msg_9 not found"}),
        ("gmail_nope", 404, {"error": "unknown tool 'gmail_nope'"}),
        ("gmail_list_messages", 422, {"detail": "max_results: not an integer"}),
    ]
    assert found[0]["endpoint_url"] == urls["gmail_list_messages"] and found[1]["endpoint_url"] == ""
    assert found[1]["request_body"] == {"message_id": "msg_9"} and found[0]["tool_use_id"] == steps[0].call_id


def _row(seq: int, service: str, tool: str, arguments: dict[str, Any]) -> AuditRow:
    return AuditRow(
        seq,
        service,
        "2026-03-02T09:00:00Z",
        "2026-03-02T09:00:00Z",
        "agent",
        tool,
        arguments,
        "ok",
        {},
        None,
        1.0,
        False,
    )


def test_audit_data_per_claw_service_is_rebuilt_from_our_state_and_its_own_tools_audit_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[Mapping[str, Any], list[Mapping[str, Any]]]] = []

    def rebuild(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
        seen.append((tables, rows))
        return {"calls": [{"endpoint": r["tool"], "request_body": r["arguments"]} for r in rows]}

    @tool(name="gmail_send_message")
    def send(ctx: Any, to: str) -> ClawJson:
        """Send an email."""
        return ClawJson.of({"to": to})

    gmail = ClawService("gmail", "email", (send,), lambda f: {}, rebuild, lambda f: datetime(2026, 3, 2))

    def lookup(name: str) -> ClawService:
        if name == "gmail":
            return gmail
        raise KeyError("needs web (web pages fetched live)")

    monkeypatch.setattr(grading_trace, "claw_service", lookup)
    task = claw_task(services=("gmail", "web"))
    state = {"email": {"messages": [{"id": "msg_1"}]}}
    rows = [
        _row(1, "email", "gmail_send_message", {"to": "a@b.c"}),
        _row(2, "email", "send_message", {"to": "x"}),  # not a Claw-Eval tool of gmail
        _row(3, "crm", "gmail_send_message", {"to": "y"}),  # another of our services
    ]
    found, notes = audit_data(task, state, rows)
    assert found == {"gmail": {"calls": [{"endpoint": "gmail_send_message", "request_body": {"to": "a@b.c"}}]}}
    assert seen[0][0] == state["email"]
    assert notes == ["no audit data for web: 'needs web (web pages fetched live)'"]
