"""``coworkenv run`` over a folder of imported Claw-Eval tasks: the noop agent completes every trial with no
infrastructure error and passes none; a scripted agent passes; ``--tool-faults`` injects faults reproducibly;
summary and curation read such runs."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from coworkenv.harness.cli import COMMANDS
from coworkenv.harness.curate import curate
from coworkenv.harness.metrics import print_summary, summarize
from coworkenv.harness.trajectory import Trajectory, read_trajectories
from tests.harness.claw_eval.runtime_helpers import RIGHT, script, talk_task, todo_task, write_tasks


@pytest.fixture(autouse=True)
def _no_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAW_EVAL_PATH", raising=False)


def cli() -> click.Group:
    group = click.Group("coworkenv")
    for command in COMMANDS:
        group.add_command(command)
    return group


def run(tmp_path: Path, name: str, *args: str) -> list[Trajectory]:
    tasks = write_tasks(tmp_path / "tasks", todo_task(), todo_task("claw-eval.t901_todo"), talk_task())
    out = tmp_path / name
    result = CliRunner().invoke(cli(), ["run", "--tasks", str(tasks), "--out", str(out), "--no-progress", *args])
    assert result.exit_code == 0, result.output
    return sorted(read_trajectories(out), key=lambda r: (r.task_id, r.trial))


def test_the_noop_agent_completes_every_imported_task_with_no_infra_error_and_passes_none(tmp_path: Path) -> None:
    records = run(tmp_path, "noop", "--agent", "noop", "--transport", "mcp")
    assert [r.status for r in records] == ["completed"] * 3, [r.error for r in records]
    assert all(r.grade is not None and not r.grade.passed for r in records)
    summary = summarize(records)
    assert summary["overall"]["pass^1"] == 0
    print_summary(summary, io.StringIO())
    assert curate(records).kept == []


def test_a_scripted_agent_passes_the_todo_tasks_through_the_run_command(tmp_path: Path) -> None:
    agent = script(tmp_path, RIGHT)
    records = run(tmp_path, "scripted", "--agent", f"scripted:{agent}", "--trials", "2")
    passed = {(r.task_id, r.trial): r.passed for r in records}
    assert passed == {
        ("claw-eval.c900_mortgage", 0): False,  # its agent turns call tools it does not have
        ("claw-eval.c900_mortgage", 1): False,
        ("claw-eval.t900_todo", 0): True,
        ("claw-eval.t900_todo", 1): True,
        ("claw-eval.t901_todo", 0): True,
        ("claw-eval.t901_todo", 1): True,
    }
    assert summarize(records)["overall"]["pass@1"] > 0


def _fault_run(tmp_path: Path, name: str, seed: str) -> list[Trajectory]:
    reads: list[dict[str, Any]] = [{"tool_calls": [{"name": "todo__todo_list_tasks", "arguments": {}}]}] * 6
    agent = script(tmp_path, [*reads, {"text": "todo_001"}])
    args = ["--agent", f"scripted:{agent}", "--tool-faults", "0.5", "--tool-fault-slow", "0", "--seed", seed]
    return run(tmp_path, name, *args)


def test_tool_faults_of_a_run_are_reproducible_at_a_seed_and_recorded(tmp_path: Path) -> None:
    first, again, other = _fault_run(tmp_path, "a", "3"), _fault_run(tmp_path, "b", "3"), _fault_run(tmp_path, "c", "4")

    def texts(records: list[Trajectory]) -> list[list[str]]:
        return [[s.text[:8] for s in r.steps] for r in records]

    assert texts(first) == texts(again) != texts(other)
    assert sum(r.tool_faults for r in first) > 0 and all(r.faults_injected == 0 for r in first)
    meta = json.loads((tmp_path / "a" / "run.json").read_text())
    assert meta["episode"]["tool_faults"] == {"rate": 0.5, "seed": 3, "slow_s": [0.0, 0.0]}


def test_a_bad_tool_fault_wait_is_one_clear_error(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks", todo_task())
    args = ["run", "--tasks", str(tasks), "--out", str(tmp_path / "o"), "--agent", "noop", "--tool-fault-slow", "4,2"]
    result = CliRunner().invoke(cli(), args)
    assert result.exit_code == 2 and "MIN,MAX" in result.output and "Traceback" not in result.output
