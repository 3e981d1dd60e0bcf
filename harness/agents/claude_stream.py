"""Claude Code's stream-JSON output (``--output-format stream-json --verbose``) parsed into the episode's records:
the ``system``/``init`` event (the MCP servers and their statuses), assistant turns, tool results and the run's
``result`` event (cost, usage, session id)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coworkenv.harness.messages import AgentTurn, ToolCall, Usage
from coworkenv.servers.kit.door import CallOutcome, outcome_of

MCP_PREFIX = "mcp__"


def unprefixed(name: str) -> str:
    """``mcp__tickets__get_ticket`` → ``tickets__get_ticket``; other names (Claude Code's own tools) unchanged."""
    return name[len(MCP_PREFIX) :] if name.startswith(MCP_PREFIX) else name


def usage_of(raw: Any) -> Usage:
    raw = raw if isinstance(raw, dict) else {}
    return Usage(
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_tokens=int(raw.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(raw.get("cache_creation_input_tokens") or 0),
    )


def result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return "" if content is None else json.dumps(content)


# ---------------------------------------------------------------------------------------------- the stream
@dataclass
class RunResult:
    """What one ``claude -p`` run ended with (its ``result`` event)."""

    session_id: str | None = None
    text: str = ""
    subtype: str | None = None
    is_error: bool = False
    cost_usd: float = 0.0
    usage: Usage = field(default_factory=Usage)
    num_turns: int = 0
    api_error_status: int | None = None
    mcp_servers: dict[str, str] | None = None
    """The init event's ``mcp_servers`` as {name: status} (``connected``, ``pending``, ``failed`` ...); None before
    the init event, or when it does not report them."""


def unconnected(servers: dict[str, str], expected: list[str]) -> list[str]:
    """``name: status`` for each expected server that is not ``connected`` (``missing`` when not reported)."""
    return [f"{name}: {servers.get(name, 'missing')}" for name in expected if servers.get(name) != "connected"]


class StreamParser:
    """Turns stream-JSON events into the session's records, in order.

    Content blocks of one API message may come as several ``assistant`` events with the same message id:
    they are gathered into one turn, recorded when the next message, a tool result or the result arrives."""

    def __init__(self, io: Any) -> None:
        self.io = io
        self.result = RunResult()
        self.calls: dict[str, ToolCall] = {}
        self._message_id: str | None = None
        self._texts: list[str] = []
        self._calls: list[ToolCall] = []
        self._usage = Usage()
        self._stop: str | None = None
        self._started = 0.0
        self._t0 = time.perf_counter()
        clock = getattr(io, "elapsed", None)  # the episode's clock, so timings line up with its other records
        self._clock: Callable[[], float] | None = clock if callable(clock) else None

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if event.get("session_id"):
            self.result.session_id = str(event["session_id"])
        if kind == "system" and event.get("subtype") == "init":
            self._init(event)
        elif kind == "assistant":
            self._assistant(event.get("message") or {})
        elif kind == "user":
            self._tool_results(event.get("message") or {})
        elif kind == "result":
            self.flush()
            self._result(event)

    def _init(self, event: dict[str, Any]) -> None:
        servers = event.get("mcp_servers")
        if isinstance(servers, list):
            self.result.mcp_servers = {
                str(s.get("name")): str(s.get("status")) for s in servers if isinstance(s, dict) and s.get("name")
            }

    def _assistant(self, message: dict[str, Any]) -> None:
        message_id = message.get("id")
        if message_id is None or message_id != self._message_id:
            self.flush()
            self._message_id = message_id
            self._started = self._elapsed()
        if message.get("usage"):
            self._usage = usage_of(message["usage"])
        self._stop = message.get("stop_reason") or self._stop
        for block in message.get("content") or []:
            if block.get("type") == "text" and block.get("text"):
                self._texts.append(str(block["text"]))
            elif block.get("type") == "tool_use":
                arguments = block.get("input") if isinstance(block.get("input"), dict) else {}
                call = ToolCall(
                    id=str(block.get("id", "")), name=unprefixed(str(block.get("name", ""))), arguments=arguments
                )
                self._calls.append(call)
                self.calls[call.id] = call

    def _tool_results(self, message: dict[str, Any]) -> None:
        content = message.get("content")
        if not isinstance(content, list):
            return
        self.flush()
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call_id = str(block.get("tool_use_id", ""))
            call = self.calls.get(call_id, ToolCall(id=call_id, name="unknown__tool"))
            is_error = bool(block.get("is_error"))
            text = result_text(block.get("content"))
            outcome = CallOutcome(text, is_error, outcome_of(text) if is_error else "ok")
            if hasattr(self.io, "record_tool_result"):
                self.io.record_tool_result(call, outcome)

    def _result(self, event: dict[str, Any]) -> None:
        r = self.result
        r.text = str(event.get("result") or "")
        r.subtype = event.get("subtype")
        r.is_error = bool(event.get("is_error"))
        r.cost_usd = float(event.get("total_cost_usd") or event.get("cost_usd") or 0.0)
        r.usage = usage_of(event.get("usage"))
        r.num_turns = int(event.get("num_turns") or 0)
        status = event.get("api_error_status")
        r.api_error_status = int(status) if isinstance(status, int | float) else None

    def flush(self) -> None:
        if self._message_id is None and not self._texts and not self._calls:
            return
        turn = AgentTurn(
            text="\n".join(self._texts), tool_calls=list(self._calls), usage=self._usage, stop_reason=self._stop
        )
        if hasattr(self.io, "record_turn"):
            self.io.record_turn(turn, self._started, self._elapsed() - self._started)
        self._message_id, self._texts, self._calls, self._usage, self._stop = None, [], [], Usage(), None

    def _elapsed(self) -> float:
        return float(self._clock()) if self._clock is not None else time.perf_counter() - self._t0
