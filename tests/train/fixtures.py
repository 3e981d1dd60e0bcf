"""Chat JSONL lines in the export format: multi-turn, with tool calls and their results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "tickets__get_ticket",
            "description": "Get one ticket by id, e.g. 'tkt_0001'.",
            "parameters": {
                "type": "object",
                "properties": {"ticket_id": {"type": "string"}},
                "required": ["ticket_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "payments__create_refund",
            "description": "Refund a charge, amount in cents.",
            "parameters": {
                "type": "object",
                "properties": {"charge": {"type": "string"}, "amount": {"type": "integer"}},
                "required": ["charge"],
            },
        },
    },
]


def example(i: int = 0) -> dict[str, Any]:
    """One exported trajectory: system, user, assistant tool call, tool result, a second call, final answer,
    a user follow-up and a last answer. The tool calls have different argument keys (as real exports do)."""
    ticket = f"tkt_{i:04d}"
    amount = 1000 + 100 * i
    return {
        "messages": [
            {"role": "system", "content": "SYSTEM-PROMPT You are a support agent."},
            {"role": "user", "content": f"USER-ASK Please refund the customer of ticket {ticket}."},
            {
                "role": "assistant",
                "content": "Let me look at the ticket.",
                "tool_calls": [
                    {
                        "id": f"call_{i}_a",
                        "type": "function",
                        "function": {"name": "tickets__get_ticket", "arguments": {"ticket_id": ticket}},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": f"call_{i}_a",
                "name": "tickets__get_ticket",
                "content": json.dumps({"TOOL-RESULT": True, "charge": "ch_123", "amount": amount}),
            },
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"call_{i}_b",
                        "type": "function",
                        "function": {
                            "name": "payments__create_refund",
                            "arguments": {"charge": "ch_123", "amount": amount},
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": f"call_{i}_b",
                "name": "payments__create_refund",
                "content": json.dumps({"TOOL-RESULT": True, "status": "succeeded"}),
            },
            {"role": "assistant", "content": f"I refunded {amount} cents on ch_123."},
            {"role": "user", "content": "USER-THANKS Thank you, that is all."},
            {"role": "assistant", "content": "You are welcome. Goodbye."},
        ],
        "tools": json.dumps(TOOLS),
    }


def write_jsonl(path: Path, n: int = 1) -> Path:
    path.write_text("".join(json.dumps(example(i)) + "\n" for i in range(n)), encoding="utf-8")
    return path


def assistant_spans(record: dict[str, Any]) -> list[str]:
    """What the Qwen2.5 template renders for each assistant turn after ``<|im_start|>assistant``: exactly the
    text the loss must cover (content, each tool call, the end-of-turn token and its newline)."""
    spans = []
    for message in record["messages"]:
        if message["role"] != "assistant":
            continue
        text = "\n" + message["content"] if message["content"] or not message.get("tool_calls") else ""
        for call in message.get("tool_calls", []):
            function = call["function"]
            text += f'\n<tool_call>\n{{"name": "{function["name"]}", "arguments": {json.dumps(function["arguments"])}}}\n</tool_call>'
        spans.append(text + "<|im_end|>\n")
    return spans


def reference_turns(task: Any) -> list[dict[str, Any]]:
    """A task's reference solution as scripted turns: one tool call a turn (call ids = step ids, so the
    solution's ``$ref`` s resolve), ``say`` steps as text."""
    from coworkenv.harness.messages import qualified_name
    from coworkenv.synth.contract.task import SayStep

    turns: list[dict[str, Any]] = []
    for n, step in enumerate(task.reference_solution):
        if isinstance(step, SayStep):
            turns.append({"text": step.say})
        else:
            call = {
                "id": step.id or f"ref_{n}",
                "name": qualified_name(step.service, step.tool),
                "arguments": step.arguments,
            }
            turns.append({"tool_calls": [call]})
    return turns
