"""Shared builders for the harness tests: a multi-turn task, crafted trajectories, agents that fail on cue."""

from __future__ import annotations

import copy
import importlib
import inspect
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.harness.agents.base import EpisodeIO, InfrastructureError
from coworkenv.harness.messages import AgentTurn, Message, ToolCall, ToolView, Usage
from coworkenv.harness.tools import TaskServices
from coworkenv.harness.trajectory import Trajectory
from coworkenv.synth.contract.grader import Grade
from coworkenv.synth.contract.task import Difficulty, Task
from tests.conftest import BIG_CORP_SEED, NOW

SEED = BIG_CORP_SEED  # the shared tickets seed (tests/conftest.py)
FACT = "The escalation reason is the contract SLA breach."


AFTER_ESCALATION = {"after_tool": "tickets.escalate_ticket"}

SLOW_START = """import os, sys, time
def _parent():
    try:
        with open(f"/proc/{os.getppid()}/comm") as f:
            return f.read()
    except OSError:
        return ""
if "coworkenv.servers" in " ".join(getattr(sys, "orig_argv", sys.argv)):
    if os.environ.get("COWORKENV_TEST_SERVER_PARENT", "") in _parent():
        time.sleep(float(os.environ["COWORKENV_TEST_SERVER_DELAY_S"]))
"""


@pytest.fixture
def slow_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``slow_servers(seconds, parent="")``: every stdio server of the services' ``.mcp.json`` (the harness's own
    door and Claude Code's alike) starts that many seconds late, through a ``sitecustomize`` on its PYTHONPATH;
    with ``parent``, only the servers whose parent process's name contains it (``claude``: Claude Code's)."""
    site = tmp_path / "slow-start"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_START)
    real_config = TaskServices.stdio_config

    def set_delay(seconds: float, parent: str = "") -> None:
        def slow_config(services: TaskServices, db_dir: Path, *args: Any) -> dict[str, Any]:
            config = real_config(services, db_dir, *args)
            for entry in config["mcpServers"].values():  # Claude Code passes a server only the env named here
                entry["env"] = {
                    "PYTHONPATH": str(site),
                    "COWORKENV_TEST_SERVER_DELAY_S": str(seconds),
                    "COWORKENV_TEST_SERVER_PARENT": parent,
                }
            return config

        monkeypatch.setattr(TaskServices, "stdio_config", slow_config)

    return set_delay


def multi_turn_dict(when: Any = AFTER_ESCALATION) -> dict[str, Any]:
    """Escalate the Big Corp ticket; the user holds back the reason and, at ``when``, tags the ticket and asks
    for priority urgent (the checks follow that change)."""
    return {
        "id": "multi-turn-escalate",
        "scenario": "escalation with a change of mind",
        "difficulty": "easy",
        "services": ["tickets"],
        "now": NOW,
        "request": "Escalate the old ticket from our enterprise customer.",
        "user": {
            "persona": "Kim, support lead",
            "held_back": [FACT],
            "turns": [
                {
                    "message": "I tagged it vip myself. Please also set its priority to urgent.",
                    "when": when,
                    "edits": [
                        {
                            "service": "tickets",
                            "tool": "update_ticket",
                            "arguments": {"ticket_id": "tkt_1", "add_tags": ["vip"]},
                        }
                    ],
                }
            ],
        },
        "initial_records": {"tickets": copy.deepcopy(SEED)},
        "completion_checks": [
            {
                "id": "escalated",
                "weight": 0.5,
                "description": "The ticket is escalated.",
                "check": {"kind": "record_fields", "service": "tickets", "table": "tickets", "id": "tkt_1",
                          "fields": {"escalated": True}},
            },
            {
                "id": "urgent",
                "weight": 0.5,
                "description": "The ticket is urgent, as the user asked later.",
                "check": {"kind": "record_fields", "service": "tickets", "table": "tickets", "id": "tkt_1",
                          "fields": {"priority": "urgent"}},
            },
        ],
        "reference_solution": [
            {"id": "found", "service": "tickets", "tool": "search_tickets", "arguments": {"organization_id": "org_big"}},
            {"service": "tickets", "tool": "escalate_ticket",
             "arguments": {"ticket_id": {"$ref": "found.items.0.id"}, "reason": "Contract SLA breach."}},
            {"service": "tickets", "tool": "update_ticket", "arguments": {"ticket_id": "tkt_1", "priority": "urgent"}},
            {"say": "Escalated 'Outage at Big' and set it to urgent."},
        ],
    }  # fmt: skip


@pytest.fixture
def multi_turn_task() -> Task:
    return Task.model_validate(multi_turn_dict())


# ---------------------------------------------------------------------------------------------- agents
class FlakyAgent:
    """Replays nothing: raises InfrastructureError on the first ``failures`` attempts of each task, then noop."""

    def __init__(self, failures: int, error: type[Exception] = InfrastructureError) -> None:
        self.name = "flaky"
        self.failures = failures
        self.error = error
        self.attempts: dict[str, int] = {}

    async def run_episode(self, io: EpisodeIO) -> None:
        task_id = io.task.id  # type: ignore[attr-defined]
        self.attempts[task_id] = self.attempts.get(task_id, 0) + 1
        if self.attempts[task_id] <= self.failures:
            raise self.error("503 service unavailable")
        await io.say("Nothing to do.")


class StuckAgent:
    """A model agent that never answers (for wall-time limits)."""

    name = "stuck"

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        await anyio.Event().wait()
        raise AssertionError("unreachable")


class LoopingAgent:
    """A model agent that calls a read-only tool forever."""

    name = "looping"

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        n = sum(m.role == "assistant" for m in messages)
        call = ToolCall(id=f"c{n}", name="tickets__get_ticket", arguments={"ticket_id": "tkt_1"})
        return AgentTurn(tool_calls=[call], usage=Usage(input_tokens=10, output_tokens=2))


# ---------------------------------------------------------------------------------------------- crafted records
def graded(task_id: str, completion: float, safety: float = 1.0) -> Grade:
    score = round(completion * safety, 6)
    return Grade(task_id=task_id, completion=completion, safety=safety, score=score, passed=score >= 0.75,
                 checks=[], forbidden=[])  # fmt: skip


def conversation(calls: int = 1, answer: str = "Done.") -> list[Message]:
    out = [Message(role="system", content="You are a coworker."), Message(role="user", content="Please help.")]
    for i in range(calls):
        call = ToolCall(id=f"c{i}", name="tickets__get_ticket", arguments={"ticket_id": f"tkt_{i}"})
        out.append(Message(role="assistant", tool_calls=[call]))
        out.append(Message(role="tool", content='{"id": "tkt"}', tool_call_id=f"c{i}", name=call.name))
    out.append(Message(role="assistant", content=answer))
    return out


def record(
    task_id: str,
    trial: int = 0,
    completion: float = 1.0,
    *,
    safety: float = 1.0,
    status: str = "completed",
    request: str | None = None,
    scenario: str = "s",
    difficulty: str = "easy",
    safety_task: bool = False,
    messages: list[Message] | None = None,
) -> Trajectory:
    msgs = messages if messages is not None else conversation()
    return Trajectory(
        task_id=task_id,
        trial=trial,
        agent="teacher",
        scenario=scenario,
        difficulty=difficulty,
        safety=safety_task,
        services=["tickets"],
        request=request or f"Request of {task_id}",
        status=status,  # type: ignore[arg-type]
        messages=msgs,
        grade=None if status == "infra_error" else graded(task_id, completion, safety),
    )


def synthesized_tasks(limit: int = 20) -> list[Task]:
    """Tasks from the procedural families, if they have landed (a few per family and difficulty)."""
    try:
        package = importlib.import_module("coworkenv.synth.generate.families")
        from coworkenv.synth.generate.families.kit.base import Family
    except ImportError:
        return []
    families: list[type[Family]] = []
    for info in pkgutil.iter_modules(package.__path__):
        try:
            module = importlib.import_module(f"coworkenv.synth.generate.families.{info.name}")
        except Exception:
            continue
        families += [c for _, c in inspect.getmembers(module, inspect.isclass)
                     if issubclass(c, Family) and not inspect.isabstract(c) and c.__module__ == module.__name__]  # fmt: skip
    tasks: list[Task] = []
    for seed in range(limit):
        for family in families:
            difficulty: Difficulty = ("easy", "medium", "hard")[seed % 3]
            try:
                tasks.append(family().make(family.service_options[0], difficulty, seed))
            except Exception:
                continue
            if len(tasks) >= limit:
                return tasks
    return tasks
