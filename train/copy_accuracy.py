"""How well a model writes the values its demonstrations copy into tool calls, teacher-forced: the learning
bench's leading indicator (an id read in a tool result and written into the next call is what a student must
learn to copy before any held-out task can pass)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from coworkenv.synth.contract.validation.adversary_pools import strings_in

SYSTEM_TURN = re.compile(r"<\|im_start\|>system\n.*?<\|im_end\|>", re.DOTALL)


def copied_values(messages: list[dict[str, Any]]) -> list[set[str]]:
    """For each message, the string values of its tool calls' arguments that appear in an earlier user or tool
    message and not in the system message (which lists the enums: those are format, not copying)."""

    system = "\n".join(m.get("content") or "" for m in messages if m["role"] == "system")
    seen = ""
    out: list[set[str]] = []
    for m in messages:
        found: set[str] = set()
        for call in m.get("tool_calls") or []:
            arguments = call.get("function", call).get("arguments") or {}
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            for value in strings_in(arguments):
                if value and value in seen and value not in system:
                    found.add(value)
        out.append(found)
        if m["role"] in ("user", "tool"):
            seen += "\n" + (m.get("content") or "")
    return out


def _value_kinds(tokenizer: Any, record: dict[str, Any]) -> tuple[list[int], list[str | None]]:
    """A record's tokens as the chat template renders it (with its tools, if any), and for each token the
    argument (its key) of the copied value it spells in an assistant's tool call (see :func:`copied_values`),
    or None."""
    messages = record["messages"]
    tools = json.loads(record["tools"]) if record.get("tools") else None
    text = str(tokenizer.apply_chat_template(messages, tools=tools, tokenize=False))
    encoded = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    kinds: dict[int, str] = {}
    system = SYSTEM_TURN.search(text)  # its tool list names the tools too
    at = system.end() if system else 0
    for message, values in zip(messages, copied_values(messages), strict=True):
        calls = (message.get("tool_calls") or []) if message["role"] == "assistant" else []
        for call in calls:
            function = call.get("function", call)
            arguments = function.get("arguments") or {}
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            start = text.find(json.dumps(function["name"]), at)
            end = text.find("</tool_call>", start)
            if start < 0 or end < 0:
                break
            at = end
            for key, value in arguments.items():
                if isinstance(value, str) and value in values:
                    for m in re.finditer(re.escape(json.dumps(value)), text[start:end]):
                        kinds.update((c, key) for c in range(start + m.start() + 1, start + m.end() - 1))
    return list(encoded["input_ids"]), [
        next((kinds[c] for c in range(s, e) if c in kinds), None) for s, e in encoded["offset_mapping"]
    ]


def copy_accuracy(folder: str | Path, records: list[dict[str, Any]]) -> dict[str, dict[str, float | int]]:
    """How well the model saved in ``folder`` writes the values the demonstrations ``records`` (as
    :func:`~coworkenv.train.data.read_chat_jsonl` reads them) copy into their
    tool calls, teacher-forced (greedy prediction of each token given the reference before it), by argument:
    ``tokens`` the share of the values' tokens predicted, ``values`` the share of values with every token
    right, ``n`` the values. A model that guesses gets the fixed pieces (``tkt``, ``_``) but not the values."""
    import torch
    from transformers import AutoModelForCausalLM

    from coworkenv.harness.agents.hf_agent import load_tokenizer

    tokenizer = load_tokenizer(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    tokens: dict[str, list[int]] = {}
    values: dict[str, list[int]] = {}
    for record in records:
        ids, kinds = _value_kinds(tokenizer, record)
        with torch.no_grad():
            predicted = model(input_ids=torch.tensor([ids])).logits[0, :-1].argmax(-1).tolist()
        i = 1
        while i < len(ids):
            key = kinds[i]
            if key is None:
                i += 1
                continue
            right = True
            while i < len(ids) and kinds[i] == key:
                hit = predicted[i - 1] == ids[i]
                count = tokens.setdefault(key, [0, 0])
                count[0], count[1], right = count[0] + hit, count[1] + 1, right and hit
                i += 1
            count = values.setdefault(key, [0, 0])
            count[0], count[1] = count[0] + right, count[1] + 1
    return {
        key: {"tokens": round(hit / n, 3), "values": round(values[key][0] / values[key][1], 3), "n": values[key][1]}
        for key, (hit, n) in tokens.items()
    }
