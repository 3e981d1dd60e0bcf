"""The data of an HTML report, packed to stay small and fast at 10,000 trajectories.

- **Runs** are labelled by agent (the run folder's name is added when two runs have the same agent).
- **The index** (one row per trajectory: what the table, the filters and the sorting need) is column-oriented
  JSON, gzip-compressed and base64-encoded; the page decodes it once at load.
- **The details** (messages, tool calls with results, turns, user events, the grade) are cut into chunks of
  :data:`CHUNK` trajectories of the same task, each gzip-compressed on its own: the page decodes a chunk only
  when one of its trajectories is opened. System prompts are stored once, and a tool result is not repeated in
  the tool message that carries it (the viewer takes it from the step).
"""

from __future__ import annotations

import base64
import gzip
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coworkenv.harness.trajectory import Trajectory, read_trajectories, trajectory_path

CHUNK = 50
"""Trajectories per detail chunk: small enough to decode in a blink, large enough for gzip to find repeats."""


@dataclass
class Run:
    label: str
    path: Path
    records: list[Trajectory]


@dataclass
class Packed:
    """What the page embeds: the index, the detail chunks (each a base64 gzip blob), and their raw sizes."""

    index: str
    chunks: list[str]
    raw_bytes: int = 0
    packed_bytes: int = 0
    counts: dict[str, int] = field(default_factory=dict)


def load_runs(paths: list[Path]) -> list[Run]:
    """The runs of these folders (or trajectories files), one per (folder, agent), labelled by agent."""
    found: list[tuple[str, Path, list[Trajectory]]] = []
    for path in paths:
        file = trajectory_path(path)
        if not file.exists():
            raise FileNotFoundError(f"{file} does not exist; give run folders made by `coworkenv run --out DIR`")
        by_agent: dict[str, list[Trajectory]] = {}
        for record in read_trajectories(file):
            by_agent.setdefault(record.agent, []).append(record)
        found += [(agent, path, records) for agent, records in by_agent.items()]
    seen = Counter(agent for agent, _, _ in found)
    runs = []
    for agent, path, records in found:
        label = agent if seen[agent] == 1 else f"{agent} ({path.name or path})"
        runs.append(Run(label, path, records))
    labels = Counter(r.label for r in runs)
    for i, run in enumerate(runs):  # the same folder given twice: keep them apart all the same
        if labels[run.label] > 1:
            run.label = f"{run.label} #{i + 1}"
    return runs


def pack(blob: Any) -> tuple[str, int]:
    """``blob`` as compact JSON, gzip-compressed, base64-encoded; and the JSON's size in bytes."""
    raw = json.dumps(blob, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii"), len(raw)


class _Interned:
    def __init__(self) -> None:
        self.values: list[str] = []
        self._ids: dict[str, int] = {}

    def id(self, value: str) -> int:
        if value not in self._ids:
            self._ids[value] = len(self.values)
            self.values.append(value)
        return self._ids[value]


def detail(record: Trajectory, prompts: _Interned) -> dict[str, Any]:
    """Everything the viewer shows of one trajectory, with the system prompt as a reference and tool results
    only in the steps."""
    out = record.model_dump(mode="json", exclude={"messages", "format"})
    results = {s.call_id: s.text for s in record.steps}
    messages = []
    for m in record.messages:
        if m.role == "system":
            out["system"] = prompts.id(m.content)
            continue
        item = m.model_dump(mode="json", exclude_defaults=True)
        if m.role == "tool" and m.tool_call_id in results and results[m.tool_call_id] == m.content:
            item.pop("content", None)
            item["from_step"] = True
        messages.append(item)
    out["messages"] = messages
    return out


INDEX_COLUMNS = (
    "agent",  # index into agents
    "task",  # index into tasks
    "trial",
    "status",  # index into statuses
    "score",
    "completion",
    "safety",  # the grade's safety (0/1), null when ungraded
    "passed",  # 0/1
    "tokens_in",
    "tokens_out",
    "wall_s",
    "tool_calls",
    "turns",
    "chunk",
    "slot",  # position in its chunk
)


def _row(record: Trajectory, agent: int, task: int, status: int, chunk: int, slot: int) -> list[Any]:
    grade = record.grade
    return [
        agent,
        task,
        record.trial,
        status,
        None if grade is None else round(grade.score, 4),
        None if grade is None else round(grade.completion, 4),
        None if grade is None else grade.safety,
        int(record.passed),
        record.usage.input_tokens,
        record.usage.output_tokens,
        round(record.wall_s, 3),
        len(record.steps),
        len(record.turns),
        chunk,
        slot,
    ]


def pack_runs(runs: list[Run], chunk_size: int = CHUNK) -> Packed:
    """The index and the detail chunks of these runs (see the module doc)."""
    items = [(i, r) for i, run in enumerate(runs) for r in run.records]
    items.sort(key=lambda item: (item[1].task_id, item[0], item[1].trial))
    tasks: dict[str, int] = {}
    task_rows: list[list[Any]] = []
    statuses = _Interned()
    prompts = _Interned()
    rows: list[list[Any]] = []
    chunks: list[str] = []
    current: list[dict[str, Any]] = []
    raw = 0

    def flush() -> None:
        nonlocal raw, current
        if current:
            blob, size = pack(current)
            chunks.append(blob)
            raw += size
            current = []

    for agent, record in items:
        if record.task_id not in tasks:
            tasks[record.task_id] = len(task_rows)
            task_rows.append([record.task_id, record.scenario, record.difficulty, int(record.safety), record.request])
        rows.append(_row(record, agent, tasks[record.task_id], statuses.id(record.status), len(chunks), len(current)))
        current.append(detail(record, prompts))
        if len(current) >= chunk_size:
            flush()
    flush()
    columns = {name: [row[i] for row in rows] for i, name in enumerate(INDEX_COLUMNS)}
    index = {
        "agents": [run.label for run in runs],
        "tasks": task_rows,
        "statuses": statuses.values,
        "prompts": prompts.values,
        "columns": columns,
    }
    index_blob, index_raw = pack(index)
    packed = Packed(index_blob, chunks, raw + index_raw)
    packed.packed_bytes = len(index_blob) + sum(len(c) for c in chunks)
    packed.counts = {"trajectories": len(rows), "tasks": len(task_rows), "agents": len(runs), "chunks": len(chunks)}
    return packed
