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
assistant turns than ``min_assistant_turns``), have too many tool calls, are over the character budget, or end
on a tool result with no known task (no closing reply to the user: the last turn would teach nothing; counted
as ``ends_on_tool``). When the task is known (``tasks``: task files, or those run.json names), a demonstration
that ends on a tool result gets the closing reply the task expects (its reference answer, else "Done.") and
is counted as ``closed``. User messages after the last assistant turn (and its tool results) are cut.
``recoveries`` (a fraction) inserts into that share of the rows a wrong tool call with the real service's
error result before the right call (:mod:`coworkenv.harness.export.recoveries`).

``template`` is the tool list's form, rendered by the ``hf:`` agent's own :func:`prompt_messages`: ``full``
writes the schemas to ``tools``; ``compact`` lists them in the system message (no ``tools`` column). The report
gives token lengths (p50, max, how many exceed ``max_length``), exact with a tokenizer, else estimated.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from coworkenv.harness.agents.hf_agent import TEMPLATES, only_tools, prompt_messages, tool_content
from coworkenv.harness.export.recoveries import chosen, with_recovery
from coworkenv.harness.messages import Message
from coworkenv.harness.tools import openai_tools, tool_views
from coworkenv.harness.trajectory import Trajectory, read_trajectories, scrub_env_values, trajectory_path
from coworkenv.servers.kit.atomic import atomic_open, write_atomic
from coworkenv.synth.contract.task import Task

RULES = (
    "not_completed",
    "below_score",
    "not_chat",
    "too_short",
    "too_many_tool_calls",
    "over_budget",
    "ends_on_tool",
)
TOOL_MODES = ("task", "used", "none")


@dataclass(frozen=True)
class ExportParams:
    min_score: float = 0.0
    min_assistant_turns: int = 2
    max_tool_calls: int = 40
    max_chars: int = 60_000
    system: bool = True
    """Keep the system prompt (the one the agent saw) as the first message."""
    tools: bool | str = True
    """Which tool schemas to write: ``task`` (every tool of the task's services, what the agent saw; also
    ``True``), ``used`` (only those the demonstration calls) or ``none`` (also ``False``). They are most of a
    record's length."""
    template: str = "full"
    """``full`` (schemas in ``tools``) or ``compact`` (one line a tool, in the system message)."""
    max_length: int = 16384
    """The training context the report compares token lengths with (``train sft --max-length``)."""
    tokenizer: str | None = None
    """A model folder or id whose tokenizer and chat template count the tokens; None estimates (chars / 4)."""
    recoveries: float = 0.0
    """The fraction of demonstrations given a recovery from a tool error: a wrong call, the real service's error
    result, then the right call (:mod:`coworkenv.harness.export.recoveries`); they need their task."""
    recovery_seed: int = 0
    """Which demonstrations get one, and which mistake (same seed, same rows)."""
    tool_names: tuple[str, ...] | None = None
    """Only these of the task's tools (in the task's order); the ``hf:`` agent's ``tools=`` option renders the
    same list. None: every tool ``tools`` chooses."""

    def tool_mode(self) -> str:
        mode = {True: "task", False: "none"}.get(self.tools, self.tools) if isinstance(self.tools, bool) else self.tools
        if mode not in TOOL_MODES:
            raise ValueError(f"tools must be one of {', '.join(TOOL_MODES)}, not {mode!r}")
        return str(mode)


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
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": tool_content(m)})
    last = max((i for i, o in enumerate(out) if o["role"] == "assistant"), default=None)
    if last is None:
        raise NotChat("no assistant turn")
    end = last + 1
    while end < len(out) and out[end]["role"] == "tool":  # the results of the last turn's calls stay
        end += 1
    return out[:end]


def closing_reply(task: Task) -> str:
    """What the task expects the agent to close with: its reference answer, else a plain "Done."."""
    return "\n".join(task.reference_answer()) or "Done."


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
    if messages[-1]["role"] == "tool":  # no closing reply: its last turn would teach nothing
        return "ends_on_tool"
    return None


def to_record(
    record: Trajectory,
    messages: list[dict[str, Any]],
    tools: bool | str = True,
    template: str = "full",
    tool_names: Sequence[str] | None = None,
) -> dict[str, Any]:
    if template not in TEMPLATES:
        raise ValueError(f"template must be one of {', '.join(TEMPLATES)}, not {template!r}")
    out: dict[str, Any] = {"messages": messages}
    mode = ExportParams(tools=tools).tool_mode()
    if mode != "none":
        views = tool_views(record.services)
        if mode == "used":
            used = {c["function"]["name"] for m in messages for c in m.get("tool_calls", [])}
            views = [v for v in views if v.name in used]
        chat, schemas = prompt_messages(messages, only_tools(openai_tools(views), tool_names), template)
        out["messages"] = chat
        if schemas:
            out["tools"] = json.dumps(schemas, ensure_ascii=False)
    return {**out, "task_id": record.task_id, "trial": record.trial, "score": record.score}


@dataclass
class LengthReport:
    """Token lengths of the written records, as the chat template renders them, against the training context."""

    p50: int
    max: int
    over: int
    max_length: int
    exact: bool

    def line(self) -> str:
        how = "tokens" if self.exact else "tokens (estimated as chars/4; pass --tokenizer MODEL for exact counts)"
        return f"lengths: p50 {self.p50}, max {self.max} {how}; {self.over} over --max-length {self.max_length}"


def _rendered(row: dict[str, Any], tokenizer: Any) -> str:
    tools = json.loads(row["tools"]) if row.get("tools") else None
    if tokenizer is not None and getattr(tokenizer, "chat_template", None):
        return str(tokenizer.apply_chat_template(row["messages"], tools=tools, tokenize=False))
    return json.dumps(row["messages"], ensure_ascii=False) + (row.get("tools") or "")


def token_lengths(
    rows: list[dict[str, Any]], max_length: int, tokenizer_name: str | None = None
) -> LengthReport | None:
    """p50/max token length of ``rows`` and how many exceed ``max_length`` (None for no rows)."""
    if not rows:
        return None
    tokenizer = None
    if tokenizer_name:
        from coworkenv.harness.agents.hf_agent import load_tokenizer

        tokenizer = load_tokenizer(tokenizer_name)
    if tokenizer is not None:
        lengths = [len(tokenizer(_rendered(r, tokenizer), add_special_tokens=False)["input_ids"]) for r in rows]
    else:
        lengths = [len(_rendered(r, None)) // 4 for r in rows]
    ordered = sorted(lengths)
    over = sum(n > max_length for n in lengths)
    return LengthReport(ordered[len(ordered) // 2], ordered[-1], over, max_length, tokenizer is not None)


@dataclass
class ExportReport:
    read: int
    written: int
    dropped: dict[str, int]
    out: Path
    closed: int = 0
    lengths: LengthReport | None = None
    recoveries: dict[str, int] | None = None

    def line(self) -> str:
        dropped = ", ".join(f"{k} {v}" for k, v in self.dropped.items() if v) or "nothing"
        closed = f"; {self.closed} given the task's closing reply" if self.closed else ""
        text = f"{self.written} of {self.read} trajectories written to {self.out}; dropped: {dropped}{closed}"
        if self.recoveries:
            r = self.recoveries
            text += f"; {r.get('recoveries', 0)} given a recovery from a tool error"
            missed = {"task unknown": r.get("recovery_no_task", 0), "no error found": r.get("recovery_none", 0)}
            if any(missed.values()):
                text += " (not given: " + ", ".join(f"{v} {k}" for k, v in missed.items() if v) + ")"
        return text + (f"\n{self.lengths.line()}" if self.lengths else "")


def export_records(
    records: Iterable[Trajectory], params: ExportParams, tasks: Mapping[str, Task] | None = None
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The chat rows and a counter of the drop rules (plus ``closed``: rows given their task's closing reply;
    ``recoveries``: rows given a recovery from a tool error; ``recovery_no_task``/``recovery_none``: rows chosen
    for one that could not have it, their task being unknown or no wrong call coming back as an error)."""
    rows: list[dict[str, Any]] = []
    dropped: Counter[str] = Counter()
    for record in records:
        try:
            messages: list[dict[str, Any]] | None = chat_messages(record, params.system)
        except NotChat:
            messages = None
        task = (tasks or {}).get(record.task_id)
        closing = messages is not None and messages[-1]["role"] == "tool" and task is not None
        if closing and messages is not None and task is not None:
            messages = [*messages, {"role": "assistant", "content": closing_reply(task)}]
        reason = drop_reason(record, messages, params)
        if reason is not None or messages is None:
            dropped[reason or "not_chat"] += 1
            continue
        dropped["closed"] += closing
        rng = chosen(record.task_id, record.trial, params.recoveries, params.recovery_seed)
        if rng is not None:
            recovered = with_recovery(task, messages, rng) if task is not None else None
            if recovered is not None:
                messages = recovered[0]
            dropped["recoveries" if recovered else "recovery_no_task" if task is None else "recovery_none"] += 1
        rows.append(to_record(record, messages, params.tools, params.template, params.tool_names))
    return rows, dropped


def run_task_files(folder: Path) -> list[str]:
    """The task files a run folder's run.json names (``task_sources``), where it records them."""
    meta = folder / "run.json"
    if not meta.is_file():
        return []
    sources = json.loads(meta.read_text(encoding="utf-8")).get("task_sources") or []
    return [str(s) for s in sources if isinstance(s, str) and Path(s).exists()]


def load_tasks_by_id(paths: Sequence[str | Path]) -> dict[str, Task]:
    from coworkenv.synth.contract.taskfile import load_tasks, task_files

    return {t.id: t for f in task_files(paths) for t in load_tasks(f)}


def export(
    sources: Sequence[str | Path],
    out: str | Path,
    params: ExportParams | None = None,
    task_paths: Sequence[str | Path] = (),
) -> ExportReport:
    """Read run or curated folders (or trajectory files), write chat JSON lines to ``out``. Tasks for closing
    replies come from ``task_paths`` and from the task files each run folder's run.json names."""
    params = params or ExportParams()
    records: list[Trajectory] = []
    found: list[str | Path] = list(task_paths)
    for source in sources:
        path = trajectory_path(source)
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist; give a run folder, a curated folder or a .jsonl file")
        records += read_trajectories(path)
        found += run_task_files(path.parent)
    if not records:
        shown = ", ".join(str(trajectory_path(s)) for s in sources)
        raise ValueError(f"no trajectories in {shown}; give run or curated folders that `coworkenv run` wrote")
    rows, dropped = export_records(records, params, load_tasks_by_id(found) if found else None)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(target) as f:  # a kill leaves the old export or the new one, never a part
        for row in rows:
            f.write(scrub_env_values(json.dumps(row, ensure_ascii=False)) + "\n")
    lengths = token_lengths(rows, params.max_length, params.tokenizer)
    recoveries = {k: dropped[k] for k in ("recoveries", "recovery_no_task", "recovery_none") if dropped[k]}
    report = ExportReport(
        len(records),
        len(rows),
        {rule: dropped.get(rule, 0) for rule in RULES},
        target,
        dropped["closed"],
        lengths,
        recoveries or None,
    )
    meta = {**asdict(report), "out": str(target), "params": asdict(params)}
    write_atomic(target.with_suffix(target.suffix + ".report.json"), json.dumps(meta, indent=2) + "\n")
    return report
