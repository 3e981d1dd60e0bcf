"""Export trajectories as chat records for supervised fine-tuning (``datasets`` loads them; trl trains on them).

One JSON line per trajectory::

    {"messages": [{"role": "system", ...}, {"role": "user", "content": ...},
                  {"role": "assistant", "content": ..., "tool_calls": [{"id": ..., "type": "function",
                   "function": {"name": "tickets__get_ticket", "arguments": {...}}}]},
                  {"role": "tool", "tool_call_id": ..., "content": ...}, ...],
     "tools": "<JSON string of OpenAI function schemas>", "task_id": ..., "trial": ..., "score": ...}

``arguments`` are objects (what chat templates render); ``tools`` is a string so rows with different tools
share one column type. Dropped, each counted by rule: trajectories that did not complete, score below
``min_score``, cannot become a user/assistant conversation (no user request first, no assistant turn, an
empty assistant turn, a tool result that answers no call of the turn before it), are too short (fewer
assistant turns than ``min_assistant_turns``), have too many tool calls, or are over the character budget.
User messages after the last assistant turn (and its tool results) are cut.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from coworkenv.harness.messages import Message
from coworkenv.harness.tools import openai_tools, tool_views
from coworkenv.harness.trajectory import Trajectory, read_trajectories, scrub_env_values, trajectory_path

RULES = ("not_completed", "below_score", "not_chat", "too_short", "too_many_tool_calls", "over_budget")


@dataclass(frozen=True)
class ExportParams:
    min_score: float = 0.0
    min_assistant_turns: int = 2
    max_tool_calls: int = 40
    max_chars: int = 60_000
    system: bool = True
    """Keep the system prompt (the one the agent saw) as the first message."""
    tools: bool = True
    """Write the tool schemas (the model sees them in its prompt; they are most of a record's length)."""


class NotChat(ValueError):
    pass


def _assistant(m: Message) -> dict[str, Any]:
    if not m.content.strip() and not m.tool_calls:
        raise NotChat("an assistant turn with neither text nor tool calls")
    out: dict[str, Any] = {"role": "assistant", "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": dict(c.arguments)}}
            for c in m.tool_calls
        ]
    return out


def chat_messages(record: Trajectory, system: bool = True) -> list[dict[str, Any]]:
    """The trajectory as OpenAI-style chat messages; :class:`NotChat` says why it cannot be one."""
    out: list[dict[str, Any]] = []
    open_calls: set[str] = set()
    for m in record.messages:
        if m.role == "system":
            if system and not out:
                out.append({"role": "system", "content": m.content})
            continue
        if not any(o["role"] != "system" for o in out) and m.role != "user":
            raise NotChat(f"the conversation starts with {m.role!r}, not the user's request")
        if m.role == "user":
            if not m.content.strip():
                raise NotChat("an empty user message")
            open_calls = set()
            out.append({"role": "user", "content": m.content})
        elif m.role == "assistant":
            out.append(_assistant(m))
            open_calls = {c.id for c in m.tool_calls}
        else:
            if m.tool_call_id not in open_calls:
                raise NotChat(f"a tool result for {m.tool_call_id!r}, which the turn before did not call")
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
    last = max((i for i, o in enumerate(out) if o["role"] == "assistant"), default=None)
    if last is None:
        raise NotChat("no assistant turn")
    end = last + 1
    while end < len(out) and out[end]["role"] == "tool":  # the results of the last turn's calls stay
        end += 1
    return out[:end]
    return out


def drop_reason(record: Trajectory, messages: list[dict[str, Any]] | None, params: ExportParams) -> str | None:
    if record.status != "completed" or record.grade is None:
        return "not_completed"
    if record.score < params.min_score:
        return "below_score"
    if messages is None:
        return "not_chat"
    if sum(m["role"] == "assistant" for m in messages) < params.min_assistant_turns:
        return "too_short"
    if sum(len(m.get("tool_calls", [])) for m in messages) > params.max_tool_calls:
        return "too_many_tool_calls"
    if sum(len(m["content"]) + len(json.dumps(m.get("tool_calls", []))) for m in messages) > params.max_chars:
        return "over_budget"
    return None


def to_record(record: Trajectory, messages: list[dict[str, Any]], tools: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"messages": messages}
    if tools:
        out["tools"] = json.dumps(openai_tools(tool_views(record.services)), ensure_ascii=False)
    return {**out, "task_id": record.task_id, "trial": record.trial, "score": record.score}


@dataclass
class ExportReport:
    read: int
    written: int
    dropped: dict[str, int]
    out: Path

    def line(self) -> str:
        dropped = ", ".join(f"{k} {v}" for k, v in self.dropped.items() if v) or "nothing"
        return f"{self.written} of {self.read} trajectories written to {self.out}; dropped: {dropped}"


def export_records(records: Iterable[Trajectory], params: ExportParams) -> tuple[list[dict[str, Any]], Counter[str]]:
    rows: list[dict[str, Any]] = []
    dropped: Counter[str] = Counter()
    for record in records:
        try:
            messages: list[dict[str, Any]] | None = chat_messages(record, params.system)
        except NotChat:
            messages = None
        reason = drop_reason(record, messages, params)
        if reason is not None or messages is None:
            dropped[reason or "not_chat"] += 1
            continue
        rows.append(to_record(record, messages, params.tools))
    return rows, dropped


def export(sources: Sequence[str | Path], out: str | Path, params: ExportParams | None = None) -> ExportReport:
    """Read run or curated folders (or trajectory files), write chat JSON lines to ``out``."""
    params = params or ExportParams()
    records: list[Trajectory] = []
    for source in sources:
        path = trajectory_path(source)
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist; give a run folder, a curated folder or a .jsonl file")
        records += read_trajectories(path)
    rows, dropped = export_records(records, params)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(scrub_env_values(json.dumps(row, ensure_ascii=False)) + "\n")
    report = ExportReport(len(records), len(rows), {rule: dropped.get(rule, 0) for rule in RULES}, target)
    meta = {**asdict(report), "out": str(target), "params": asdict(params)}
    target.with_suffix(target.suffix + ".report.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return report
