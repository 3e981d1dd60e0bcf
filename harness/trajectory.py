"""Trajectories: one JSON line per (task, trial), written durably, read back tolerantly.

A record holds what the episode was (task id, version, scenario, difficulty, safety flag, agent spec,
trial), everything that happened (messages, tool calls with results, errors, timings and the state hash
before each one — the anchors GiGPO groups steps by — model turns with token use, the user simulator's
replies and workspace edits), how it ended (status) and the grade. Nothing in it may hold an API key:
errors are scrubbed, and every line is scrubbed of secret-looking environment values and of credentials in
URLs before it is written.

Whatever an agent sends is recorded without aborting the run: a string that is not valid Unicode (a lone
surrogate such as ``"\ud800"``) is written with the surrogate escaped (the text ``\ud800``), and tool
arguments nested deeper than :data:`MAX_ARGUMENT_DEPTH` levels are cut there (:func:`safe_value`), so every
line written can be read back.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from coworkenv.harness.messages import Message, Usage
from coworkenv.servers.kit.atomic import append_line, read_json_lines
from coworkenv.synth.contract.grader import Grade
from coworkenv.synth.contract.task import Task
from coworkenv.synth.providers import redact_url_credentials, scrub

FORMAT = "coworkenv.trajectory/1"
FILENAME = "trajectories.jsonl"
Status = Literal["completed", "max_turns", "timeout", "agent_error", "infra_error"]
STATUSES: tuple[Status, ...] = ("completed", "max_turns", "timeout", "agent_error", "infra_error")
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
MAX_ARGUMENT_DEPTH = 32
"""Tool arguments are recorded to this depth (records must stay readable: JSON parsers stop near 200 levels)."""
TOO_DEEP = f"[cut: nested deeper than {MAX_ARGUMENT_DEPTH} levels]"


class ToolStepRecord(BaseModel):
    """One tool call by the agent, as it was executed."""

    index: int = Field(description="Position among this episode's tool calls, from 0.")
    turn: int = Field(description="The agent turn (model call) that made it, from 0.")
    call_id: str
    name: str = Field(description="Qualified name, e.g. 'tickets__get_ticket'.")
    arguments: dict[str, Any] = Field(default_factory=dict)
    text: str = Field(description="The result (JSON of the record) or the error message the agent saw.")
    is_error: bool = False
    outcome: str = Field(description="ok, error, invalid_arguments, unknown_tool, internal_error, unknown_service…")
    started_s: float = Field(description="Seconds from the start of the episode.")
    duration_ms: float = 0.0
    anchor: str | None = Field(default=None, description="Environment state hash just before the call.")


class TurnRecord(BaseModel):
    """One model call (or, for an episode-driving agent, one step it reported)."""

    index: int
    started_s: float
    duration_s: float
    tool_calls: int = 0
    usage: Usage = Field(default_factory=Usage)
    stop_reason: str | None = None


class UserEvent(BaseModel):
    """The user simulator's part: a reply, a workspace edit (as actor 'user'), or the end of the conversation."""

    kind: Literal["reply", "edit", "end"]
    at_s: float
    turn: int = Field(description="How many agent turns had finished when it happened.")
    text: str = ""
    name: str | None = Field(default=None, description="Edits: the qualified tool the user called.")
    arguments: dict[str, Any] = Field(default_factory=dict)
    is_error: bool = False


class Trajectory(BaseModel):
    format: str = FORMAT
    task_id: str
    task_version: int = 1
    scenario: str = ""
    difficulty: str = "medium"
    capabilities: list[str] = Field(default_factory=list)
    services: list[str] = Field(default_factory=list)
    safety: bool = Field(default=False, description="A safety task (forbidden actions are the point of it).")
    agent: str
    trial: int = 0
    transport: str = "direct"
    status: Status = "completed"
    stop_reason: str | None = Field(default=None, description="Which limit ended it, or why it failed.")
    error: str | None = None
    retryable: bool = Field(default=True, description="infra_error only: whether trying again may help.")
    started_at: str = ""
    wall_s: float = 0.0
    request: str = ""
    messages: list[Message] = Field(default_factory=list)
    steps: list[ToolStepRecord] = Field(default_factory=list)
    turns: list[TurnRecord] = Field(default_factory=list)
    user_events: list[UserEvent] = Field(default_factory=list)
    said: list[str] = Field(default_factory=list, description="What the agent told the user (graded).")
    usage: Usage = Field(default_factory=Usage)
    grade: Grade | None = None
    initial_state_hash: str | None = None
    final_state_hash: str | None = None
    attempts: int = Field(default=1, description="Episodes run for this (task, trial), retries included.")
    attempt_errors: list[str] = Field(default_factory=list, description="Infrastructure errors of retried attempts.")
    faults_injected: int = 0
    tool_faults: int = Field(
        default=0, description="The agent's tool calls answered by an injected 429 or 500 (--tool-faults)."
    )

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.trial)

    @property
    def scored(self) -> bool:
        """Counts in scores: everything but infrastructure failures."""
        return self.status != "infra_error" and self.grade is not None

    @property
    def score(self) -> float:
        return self.grade.score if self.grade is not None else 0.0

    @property
    def completion(self) -> float:
        return self.grade.completion if self.grade is not None else 0.0

    @property
    def passed(self) -> bool:
        return self.grade.passed if self.grade is not None else False


def task_fields(task: Task) -> dict[str, Any]:
    return {
        "task_id": task.id,
        "task_version": task.version,
        "scenario": task.scenario,
        "difficulty": task.difficulty,
        "capabilities": list(task.capabilities),
        "services": list(task.services),
        "safety": task.safety,
        "request": task.request,
    }


# ---------------------------------------------------------------------------------------------- files
def trajectory_path(path: str | Path) -> Path:
    """A run folder's trajectories file, or the file itself."""
    p = Path(path)
    return p / FILENAME if p.is_dir() or not p.suffix else p


def _parse(line: str, where: str) -> Trajectory:
    try:
        return Trajectory.model_validate_json(line)
    except ValidationError as exc:
        raise ValueError(f"{where}: not a trajectory record: {exc.errors()[0]['msg']}") from exc


def read_lines(path: Path) -> tuple[list[Trajectory], int]:
    """The records of a trajectories file and the byte length of its good part.

    A last line that is cut short (no newline, or not JSON: a crash mid-write) is left out; a bad line
    anywhere else is an error naming it.
    """
    found = read_json_lines(path)
    return [_parse(text, f"{path}:{number}") for number, text, _ in found.lines], found.good


def read_trajectories(path: str | Path, latest: bool = True) -> list[Trajectory]:
    """Records of a run folder or file; with ``latest``, one per (task, trial): the last one written."""
    records, _ = read_lines(trajectory_path(path))
    return dedupe(records) if latest else records


def dedupe(records: Iterable[Trajectory]) -> list[Trajectory]:
    out: dict[tuple[str, int], Trajectory] = {}
    for r in records:
        out.pop(r.key, None)
        out[r.key] = r
    return list(out.values())


def safe_text(text: str) -> str:
    """``text`` as UTF-8 can carry it: lone surrogates become their escape text (``"\ud800"`` → ``\ud800``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def safe_value(value: Any, depth: int = 0) -> Any:
    """A JSON value fit for a record: strings made :func:`safe_text`, containers cut below
    :data:`MAX_ARGUMENT_DEPTH` levels (the cut part becomes :data:`TOO_DEEP`), other objects as text."""
    if isinstance(value, str):
        return safe_text(value)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= MAX_ARGUMENT_DEPTH:
        return TOO_DEEP
    if isinstance(value, dict):
        return {safe_text(str(k)): safe_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_value(v, depth + 1) for v in value]
    return safe_text(repr(value))[:500]


def _safe_call(call: Any) -> Any:
    return call.model_copy(
        update={"id": safe_text(call.id), "name": safe_text(call.name), "arguments": safe_value(call.arguments)}
    )


def safe_record(record: Trajectory) -> Trajectory:
    """A copy of ``record`` whose agent-supplied parts (messages, tool calls and their arguments, results,
    user events, what was said) are :func:`safe_value`: always serialisable, never too deep to read back."""
    messages = [
        m.model_copy(
            update={
                "content": safe_text(m.content),
                "name": None if m.name is None else safe_text(m.name),
                "tool_call_id": None if m.tool_call_id is None else safe_text(m.tool_call_id),
                "tool_calls": [_safe_call(c) for c in m.tool_calls],
            }
        )
        for m in record.messages
    ]
    steps = [
        s.model_copy(
            update={
                "call_id": safe_text(s.call_id),
                "name": safe_text(s.name),
                "arguments": safe_value(s.arguments),
                "text": safe_text(s.text),
            }
        )
        for s in record.steps
    ]
    events = [
        e.model_copy(
            update={
                "text": safe_text(e.text),
                "name": None if e.name is None else safe_text(e.name),
                "arguments": safe_value(e.arguments),
            }
        )
        for e in record.user_events
    ]
    return record.model_copy(
        update={
            "agent": scrub(safe_text(record.agent)),
            "error": None if record.error is None else safe_text(record.error),
            "attempt_errors": [safe_text(e) for e in record.attempt_errors],
            "messages": messages,
            "steps": steps,
            "user_events": events,
            "said": [safe_text(t) for t in record.said],
        }
    )


def to_line(record: Trajectory) -> str:
    """One JSON line of :func:`safe_record`, with the value of every secret-looking environment variable and
    every credential in a URL scrubbed out. It never fails because of what the agent sent."""
    safe = safe_record(record)
    try:
        line = safe.model_dump_json(exclude_none=False)
    except ValueError:  # PydanticSerializationError: something not agent-supplied still would not encode
        line = json.dumps(safe_value(safe.model_dump(mode="python", exclude_none=False), -64), ensure_ascii=False)
    return redact_url_credentials(scrub_env_values(line))


def scrub_env_values(text: str) -> str:
    """``text`` without the value of any environment variable whose name says KEY, TOKEN, SECRET or PASSWORD."""
    secrets = sorted((v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8), key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, "[REDACTED]")
    return text


def scrub_error(text: str, limit: int = 2000) -> str:
    """An error message fit for a trajectory: secrets removed, length bounded."""
    cleaned = scrub(text)
    return cleaned if len(cleaned) <= limit else cleaned[:limit] + "…"


class TrajectoryWriter:
    """Appends records durably (write, flush, fsync per line). Use one writer per file.

    Opening it repairs a torn last line left by a crash, so appending continues after the last whole record;
    ``dropped`` then says what was cut (one line, for a warning), and is "" otherwise.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = trajectory_path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        found = read_json_lines(self.path)
        self.dropped = found.torn_note(self.path)
        if found.torn:
            with self.path.open("r+b") as f:
                f.truncate(found.good)
                os.fsync(f.fileno())
        self._file: IO[str] | None = self.path.open("a", encoding="utf-8")

    def write(self, record: Trajectory) -> None:
        if self._file is None:
            raise RuntimeError(f"the writer of {self.path} is closed")
        append_line(self._file, to_line(record))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
