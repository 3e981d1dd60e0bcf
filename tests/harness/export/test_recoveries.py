"""export --recoveries: a fraction of demonstrations get a wrong tool call, the error the real service answers it
with, and then the right call as recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.agents.builtin import ReplayAgent
from coworkenv.harness.episode import run_episode
from coworkenv.harness.export.chat import ExportParams, export_records
from coworkenv.harness.messages import split_name
from coworkenv.harness.trajectory import Trajectory
from coworkenv.servers.kit import Environment
from coworkenv.synth.contract.task import Task
from coworkenv.synth.generate.families import get_family


def replays(count: int, family: str = "tickets-triage-oncall") -> tuple[list[Trajectory], dict[str, Task]]:
    tasks = [get_family(family).make(("tickets",), "easy", seed) for seed in range(count)]

    async def go() -> list[Trajectory]:
        with anyio.fail_after(60):
            return [await run_episode(t, ReplayAgent()) for t in tasks]

    return anyio.run(go), {t.id: t for t in tasks}


def errors_at(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, m in enumerate(messages) if m["role"] == "tool" and m["content"].startswith("Error:")]


def without(messages: list[dict[str, Any]], at: int) -> list[dict[str, Any]]:
    """The conversation less the wrong call (at - 1) and its error result (at)."""
    return messages[: at - 1] + messages[at + 1 :]


async def answer_of(task: Task, messages: list[dict[str, Any]], wrong: dict[str, Any]) -> tuple[str, bool]:
    """What the task's services answer the wrong call with, after the calls made before it, run here afresh."""
    with Environment.create(task.seeds(), now=task.now) as env:
        for m in messages:
            for call in m.get("tool_calls") or []:
                if call is wrong:
                    result = await env.call(*split_name(call["function"]["name"]), call["function"]["arguments"])
                    return result.text, result.is_error
                await env.call(*split_name(call["function"]["name"]), call["function"]["arguments"])
    raise AssertionError("the wrong call is not in the conversation")


def test_each_chosen_demonstration_gets_one_wrong_call_its_real_error_and_then_the_right_call() -> None:
    records, tasks = replays(12)
    plain, _ = export_records(records, ExportParams(min_score=1.0), tasks)
    rows, counts = export_records(records, ExportParams(min_score=1.0, recoveries=1.0), tasks)
    assert counts["recoveries"] == len(rows) == len(plain) == 12
    for row, before in zip(rows, plain, strict=True):
        messages = row["messages"]
        (at,) = errors_at(messages)
        wrong, right = messages[at - 1]["tool_calls"][0], messages[at + 1]["tool_calls"][0]
        assert without(messages, at) == before["messages"]
        assert messages[at]["tool_call_id"] == wrong["id"] != right["id"]
        assert wrong["function"]["name"] == right["function"]["name"]
        assert wrong["function"]["arguments"] != right["function"]["arguments"]
        text, is_error = anyio.run(answer_of, tasks[row["task_id"]], messages, wrong)
        assert is_error and messages[at]["content"] == f"Error: {text}"


def test_the_mistakes_are_half_copied_ids_and_missing_arguments() -> None:
    records, tasks = replays(30)
    rows, _ = export_records(records, ExportParams(min_score=1.0, recoveries=1.0), tasks)
    errors = [r["messages"][errors_at(r["messages"])[0]]["content"] for r in rows]
    assert any(e.startswith("Error: No ticket with id") or e.startswith("Error: No user with id") for e in errors)
    assert any("Field required" in e for e in errors)


def test_the_fraction_chooses_rows_by_task_and_seed_the_same_way_every_time() -> None:
    records, tasks = replays(40)
    params = ExportParams(min_score=1.0, recoveries=0.25, recovery_seed=3)
    rows, counts = export_records(records, params, tasks)
    again, _ = export_records(list(reversed(records)), params, tasks)
    chosen = {r["task_id"] for r in rows if errors_at(r["messages"])}
    assert chosen == {r["task_id"] for r in again if errors_at(r["messages"])}
    assert len(chosen) == counts["recoveries"] and 4 <= len(chosen) <= 18
    other, _ = export_records(records, ExportParams(min_score=1.0, recoveries=0.25, recovery_seed=4), tasks)
    assert {r["task_id"] for r in other if errors_at(r["messages"])} != chosen
    none, counts0 = export_records(records, ExportParams(min_score=1.0), tasks)
    assert not any(errors_at(r["messages"]) for r in none) and counts0["recoveries"] == 0


def test_a_demonstration_whose_task_is_unknown_is_left_as_it_is_and_counted() -> None:
    records, _ = replays(3)
    rows, counts = export_records(records, ExportParams(min_score=1.0, recoveries=1.0), None)
    assert counts["recovery_no_task"] == 3 and counts["recoveries"] == 0
    assert not any(errors_at(r["messages"]) for r in rows)


def test_the_export_command_takes_recoveries_and_refuses_a_fraction_over_one(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from coworkenv.harness.cli import export_cmd
    from coworkenv.harness.trajectory import TrajectoryWriter
    from coworkenv.synth.contract.taskfile import save_task

    records, tasks = replays(4)
    writer = TrajectoryWriter(tmp_path / "run")
    for r in records:
        writer.write(r)
    writer.close()
    (tmp_path / "tasks").mkdir()
    for task in tasks.values():
        save_task(task, tmp_path / "tasks" / f"{task.id}.json")
    out = tmp_path / "demos.jsonl"
    args = [str(tmp_path / "run"), "--out", str(out), "--tasks", str(tmp_path / "tasks"), "--template", "compact"]
    result = CliRunner().invoke(export_cmd, [*args, "--recoveries", "1"])
    assert result.exit_code == 0, result.output
    assert "4 given a recovery from a tool error" in result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(len(errors_at(r["messages"])) == 1 for r in rows)
    bad = CliRunner().invoke(export_cmd, [*args, "--recoveries", "1.5"])
    assert bad.exit_code == 2 and "1.5 is not in the range 0.0<=x<=1.0" in bad.output
