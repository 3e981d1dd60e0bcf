"""The wire shapes of OpenEnv's environment protocol, as its clients (``EnvClient``, ``GenericEnvClient``,
``MCPToolClient`` of the ``openenv`` package, 0.4.1 to 0.10.0) send and read them. Written here from the protocol,
not from its code: the server must run where the ``openenv`` package cannot be installed (its pins clash with ours).

- A result (HTTP ``/reset`` and ``/step``, the ``data`` of a WebSocket ``observation`` frame) is
  ``{"observation": {...}, "reward": float | null, "done": bool, "metadata": {...}}``; the observation carries its
  own ``metadata`` too, and ``metadata`` at the top only when not empty.
- Actions are MCP-style: ``{"type": "list_tools"}`` and ``{"type": "call_tool", "tool_name": ..., "arguments":
  {...}}`` (``type`` may be left out when ``tool_name`` is given). An observation with ``tools`` answers the first,
  one with ``tool_name``, ``result`` and ``error`` (``{"error_type", "message"}``) the second: that is how the
  clients tell them apart.
- WebSocket frames in: ``reset`` (``data``: the reset arguments), ``step`` (``data``: the action), ``state``,
  ``close``, ``mcp`` (``data``: a JSON-RPC request); out: ``observation``, ``state``, ``mcp``, ``error``
  (``data``: ``message`` and ``code``).
"""

from __future__ import annotations

from typing import Any

INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
SESSION_ERROR = "SESSION_ERROR"

# ToolError.error_type values, by the kit's call outcome
TOOL_NOT_FOUND = "tool_not_found"
INVALID_ARGS = "invalid_args"
EXECUTION = "execution_error"
ERROR_TYPES = {"unknown_tool": TOOL_NOT_FOUND, "invalid_arguments": INVALID_ARGS}

RESERVED_NAMES = frozenset({"reset", "step", "state", "close"})
"""Never tool names: they are the protocol's own verbs."""

# JSON-RPC error codes
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
SERVER_ERROR = -32000


class ActionError(ValueError):
    """An action that is not a ``list_tools`` or ``call_tool`` action (answered as a validation error)."""


def result(observation: dict[str, Any], reward: float | None = None, done: bool = False) -> dict[str, Any]:
    """One step's or reset's result on the wire."""
    metadata = dict(observation.get("metadata") or {})
    out: dict[str, Any] = {"observation": {**observation, "metadata": metadata}, "reward": reward, "done": done}
    if metadata:
        out["metadata"] = metadata
    return out


def tool_result(name: str, text: str, data: Any = None, error: tuple[str, str] | None = None) -> dict[str, Any]:
    """A ``call_tool`` observation. ``result`` has the shape of an MCP tool result (text content, structured data);
    a failed call also carries ``error`` (``error_type``, ``message``), as OpenEnv's MCP environments report it."""
    failed = error is not None
    observation: dict[str, Any] = {
        "tool_name": name,
        "result": {
            "content": [{"type": "text", "text": text}],
            "structured_content": data if isinstance(data, dict) else None,
            "data": None if failed else (data if data is not None else text),
            "is_error": failed,
        },
        "error": {"error_type": error[0], "message": error[1]} if error else None,
    }
    return observation


def error_frame(message: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "data": {"message": message, "code": code, **extra}}


def parse_action(data: Any) -> tuple[str, str, dict[str, Any]]:
    """``("list_tools", "", {})`` or ``("call_tool", tool_name, arguments)``; :class:`ActionError` otherwise."""
    if not isinstance(data, dict):
        raise ActionError("an action is a JSON object: {'type': 'call_tool', 'tool_name': ..., 'arguments': {...}}")
    kind = data.get("type", "call_tool" if "tool_name" in data else None)
    allowed = {"type", "metadata"} | ({"tool_name", "arguments"} if kind == "call_tool" else set())
    if kind not in ("list_tools", "call_tool"):
        raise ActionError(f"unknown action type {kind!r}: send 'list_tools' or 'call_tool'")
    extra = sorted(set(data) - allowed)
    if extra:
        raise ActionError(f"a {kind} action takes no field {', '.join(map(repr, extra))}")
    if not isinstance(data.get("metadata", {}), dict):
        raise ActionError("an action's metadata is a JSON object")
    if kind == "list_tools":
        return kind, "", {}
    name, arguments = data.get("tool_name"), data.get("arguments", {})
    if not isinstance(name, str) or not name:
        raise ActionError("a call_tool action needs tool_name, the name of a tool that list_tools gives")
    if not isinstance(arguments, dict):
        raise ActionError(f"the arguments of {name} are a JSON object of the tool's input schema")
    return kind, name, arguments


# ---------------------------------------------------------------------------------------------- /schema
_METADATA = {"type": "object", "additionalProperties": True, "description": "Additional metadata"}

ACTION_SCHEMA: dict[str, Any] = {
    "title": "CallToolAction",
    "description": (
        "Call one tool: a task's service tool (<service>__<tool>, as list_tools gives them) or reply, the agent's "
        "message to the user. {'type': 'list_tools'} lists the tools."
    ),
    "type": "object",
    "properties": {
        "metadata": _METADATA,
        "type": {"const": "call_tool", "default": "call_tool", "type": "string", "title": "Type"},
        "tool_name": {"type": "string", "title": "Tool Name", "description": "Name of the tool to call"},
        "arguments": {
            "type": "object",
            "additionalProperties": True,
            "title": "Arguments",
            "description": "Arguments to pass to the tool",
        },
    },
    "required": ["tool_name"],
    "additionalProperties": False,
}

_TOOL_ERROR = {
    "anyOf": [
        {
            "type": "object",
            "properties": {
                "error_type": {
                    "enum": [TOOL_NOT_FOUND, INVALID_ARGS, EXECUTION, "transport_error", "timeout"],
                    "type": "string",
                },
                "message": {"type": "string"},
            },
            "required": ["error_type", "message"],
        },
        {"type": "null"},
    ]
}

OBSERVATION_SCHEMA: dict[str, Any] = {
    "title": "CallToolObservation",
    "type": "object",
    "properties": {
        "done": {"type": "boolean", "default": False},
        "reward": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
        "metadata": _METADATA,
        "tool_name": {"type": "string", "description": "Name of the tool that was called"},
        "result": {"description": "The tool's result: text content, structured data, is_error"},
        "error": _TOOL_ERROR,
        "user_message": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "description": "What the user said: their answer to reply, or a message after a tool call",
        },
    },
    "required": ["tool_name"],
}

RESET_OBSERVATION_SCHEMA: dict[str, Any] = {
    "title": "TaskObservation",
    "type": "object",
    "properties": {
        "done": {"type": "boolean", "default": False},
        "reward": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
        "metadata": _METADATA,
        "task_id": {"type": "string"},
        "request": {"type": "string", "description": "What the user asks, in their words"},
        "instructions": {"type": "string", "description": "The agent's instructions (a system prompt)"},
        "services": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["task_id", "request"],
}

STATE_SCHEMA: dict[str, Any] = {
    "title": "State",
    "type": "object",
    "additionalProperties": True,
    "properties": {
        "episode_id": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "step_count": {"type": "integer", "minimum": 0, "default": 0},
        "task_id": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "done": {"type": "boolean", "default": False},
    },
}

SCHEMAS = {
    "action": ACTION_SCHEMA,
    "observation": OBSERVATION_SCHEMA,
    "reset_observation": RESET_OBSERVATION_SCHEMA,
    "state": STATE_SCHEMA,
}
