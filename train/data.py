"""Reading exported chat JSONL into a dataset trl can train on.

Each line is ``{"messages": [...], "tools": "<json string>"}`` with OpenAI-style messages: assistant
``tool_calls`` as ``{"type": "function", "function": {"name": ..., "arguments": {...}}}`` and ``role: tool``
results. Messages are stored as JSON values (``datasets.Json``), not Arrow structs: with structs, the tool
arguments of every row are merged into one schema and each call gains the other calls' keys as nulls, which
the chat template would then render and the model would learn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class DataError(ValueError):
    """The training data cannot be used; the message says where and what to do."""


ROLES = ("system", "user", "assistant", "tool")


def _normalise_call(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, dict):
        raise DataError(f"{where}: a tool call must be an object, got {type(call).__name__}")
    function = call.get("function", call)  # also accept the flat harness shape {"id", "name", "arguments"}
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or not name:
        raise DataError(f"{where}: a tool call has no function name")
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: tool call {name!r} has arguments that are not JSON: {exc}") from exc
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise DataError(f"{where}: tool call {name!r} arguments must be a JSON object")
    out: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call.get("id"):
        out["id"] = call["id"]
    return out


def normalise_messages(messages: Any, where: str) -> list[dict[str, Any]]:
    """Messages in the shape the chat templates expect: string content, nested tool calls with dict arguments."""
    if not isinstance(messages, list) or not messages:
        raise DataError(f"{where}: 'messages' must be a non-empty list")
    out = []
    for i, message in enumerate(messages):
        at = f"{where}, message {i}"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise DataError(f"{at}: each message needs a role among {', '.join(ROLES)}")
        content = message.get("content")
        if isinstance(content, list):  # content blocks: keep the text ones
            content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
        clean: dict[str, Any] = {"role": message["role"], "content": "" if content is None else str(content)}
        if message["role"] == "assistant" and message.get("tool_calls"):
            clean["tool_calls"] = [_normalise_call(c, at) for c in message["tool_calls"]]
        for key in ("tool_call_id", "name"):
            if message["role"] == "tool" and message.get(key):
                clean[key] = message[key]
        out.append(clean)
    if not any(m["role"] == "assistant" for m in out):
        raise DataError(f"{where}: no assistant message, so nothing to train on")
    return out


def _tools_string(tools: Any, where: str) -> str | None:
    if tools is None or tools == "":
        return None
    if isinstance(tools, str):
        try:
            decoded = json.loads(tools)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: 'tools' is a string but not JSON: {exc}") from exc
    else:
        decoded = tools
    if not isinstance(decoded, list):
        raise DataError(f"{where}: 'tools' must be a JSON list of tool schemas")
    return json.dumps(decoded) if decoded else None


def read_chat_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The records of an exported chat JSONL file, validated and normalised."""
    path = Path(path)
    if not path.is_file():
        raise DataError(
            f"data file {path} does not exist: export demonstrations first (coworkenv export RUNDIR --out {path})"
        )
    records = []
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{where}: not a JSON line: {exc}") from exc
            if not isinstance(row, dict) or "messages" not in row:
                raise DataError(f"{where}: each line must be an object with 'messages' (and optionally 'tools')")
            records.append(
                {
                    "messages": normalise_messages(row["messages"], where),
                    "tools": _tools_string(row.get("tools"), where),
                }
            )
    if not records:
        raise DataError(f"data file {path} holds no examples: nothing to train on")
    return records


def has_tool_calls(records: list[dict[str, Any]]) -> bool:
    return any(m.get("tool_calls") or m["role"] == "tool" for r in records for m in r["messages"])


def to_dataset(records: list[dict[str, Any]]) -> Any:
    """A ``datasets.Dataset`` with messages as JSON values and tools as a JSON string."""
    from datasets import Dataset, Features, Json, List, Value

    features = Features({"messages": List(Json()), "tools": Value("string")})
    return Dataset.from_list(records, features=features)


def load_chat_dataset(path: str | Path) -> Any:
    return to_dataset(read_chat_jsonl(path))
