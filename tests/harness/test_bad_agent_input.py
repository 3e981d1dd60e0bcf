"""What an agent sends never aborts a run: a lone surrogate or absurdly deep JSON in its tool arguments becomes
an invalid-arguments result, the trajectory records it in a safe form, and the run writes every trajectory."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import anyio
import click
import pytest
from click.testing import CliRunner

from coworkenv.harness.cli import COMMANDS
from coworkenv.harness.episode import EpisodeConfig
from coworkenv.harness.messages import AgentTurn, Message, ToolCall, ToolView
from coworkenv.harness.run import RunOptions, run_tasks
from coworkenv.harness.trajectory import (
    MAX_ARGUMENT_DEPTH,
    TOO_DEEP,
    Trajectory,
    read_trajectories,
    safe_value,
    to_line,
)
from coworkenv.synth.contract.library import examples_dir
from coworkenv.synth.contract.taskfile import load_tasks

TASK = examples_dir() / "tickets-triage-new-urgent.json"


def script_with(arguments_json: str) -> str:
    """A scripted agent's file whose one turn calls get_ticket with these arguments (JSON text, kept verbatim)."""
    return '{"turns": [{"tool_calls": [{"name": "tickets__get_ticket", "arguments": ' + arguments_json + "}]}]}"


SURROGATE = '{"turns": [{"tool_calls": [{"name": "tickets__get_ticket", "arguments": {"ticket_id": "\\ud800"}}]}]}'


def cli() -> click.Group:
    group = click.Group("coworkenv")
    for command in COMMANDS:
        group.add_command(command)
    return group


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


def run_script(tmp_path: Path, script: str, transport: str) -> tuple[Any, Path]:
    path = tmp_path / "script.json"
    path.write_text(script, encoding="utf-8")
    out = tmp_path / "out"
    args = ["run", "--tasks", str(TASK), "--agent", f"scripted:{path}", "--out", str(out)]
    result = CliRunner().invoke(cli(), [*args, "--transport", transport, "--no-progress", "--wall-time", "60"])
    return result, out


@pytest.mark.parametrize("transport", ["direct", "mcp", "stdio"])
def test_a_lone_surrogate_in_tool_arguments_is_an_invalid_arguments_result_and_the_run_goes_on(
    tmp_path: Path, transport: str
) -> None:
    result, out = run_script(tmp_path, SURROGATE, transport)
    assert result.exit_code == 0, result.output
    (record,) = read_trajectories(out)
    assert record.status == "completed", record.error
    step = record.steps[0]
    assert step.outcome == "invalid_arguments" and step.is_error
    assert "not valid Unicode" in step.text
    assert step.arguments == {"ticket_id": "\\ud800"}  # the surrogate, written as its escape text


@pytest.mark.parametrize("transport", ["direct", "mcp", "stdio"])
def test_tool_arguments_nested_900_deep_are_an_invalid_arguments_result_and_are_recorded_cut(
    tmp_path: Path, transport: str
) -> None:
    deep = json.dumps(nested(900))
    script = script_with('{"ticket_id": ' + deep + "}")
    result, out = run_script(tmp_path, script, transport)
    assert result.exit_code == 0, result.output
    (record,) = read_trajectories(out)
    assert record.status == "completed", record.error
    step = record.steps[0]
    assert step.outcome == "invalid_arguments" and "deeper than" in step.text
    assert depth_of(step.arguments) <= MAX_ARGUMENT_DEPTH + 1
    assert TOO_DEEP in json.dumps(step.arguments)


def test_a_script_too_deep_to_read_is_one_error_line_and_nothing_is_written(tmp_path: Path) -> None:
    deep = "[" * 3000 + "]" * 3000
    script = script_with('{"x": ' + deep + "}")
    result, out = run_script(tmp_path, script, "direct")
    assert result.exit_code != 0
    assert result.output.startswith("Error: ") and "nested too deeply" in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert not out.exists()


class Sender:
    """A model agent whose first turn sends the given arguments, then stops."""

    def __init__(self, arguments: dict[str, Any], text: str = "") -> None:
        self.name = "sender"
        self.arguments = arguments
        self.text = text

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        if any(m.role == "assistant" for m in messages):
            return AgentTurn(text=self.text or "Done.")
        return AgentTurn(tool_calls=[ToolCall(id="c1", name="tickets__get_ticket", arguments=self.arguments)])


@pytest.mark.anyio
@pytest.mark.parametrize(
    "arguments",
    [{"ticket_id": "\ud800"}, {"ticket_id": nested(3000)}, {"\udfff": nested(250)}],
    ids=["surrogate", "3000-deep", "surrogate-key-250-deep"],
)
async def test_every_trial_is_written_and_reads_back_whatever_the_agent_sends(
    tmp_path: Path, arguments: dict[str, Any]
) -> None:
    tasks = load_tasks(TASK)
    agent = Sender(arguments, text="Fine \ud83d then.")
    with anyio.fail_after(60):
        report = await run_tasks(tasks, agent, tmp_path, options=RunOptions(trials=2, progress=False))
    assert report.finished == 2 and report.statuses == {"completed": 2}
    records = read_trajectories(tmp_path)
    assert len(records) == 2
    for record in records:
        assert record.steps[0].outcome == "invalid_arguments"
        assert depth_of(record.steps[0].arguments) <= MAX_ARGUMENT_DEPTH + 1
        assert any("\\ud83d" in said for said in record.said)


def test_a_record_line_is_valid_utf8_json_and_reads_back() -> None:
    call = ToolCall(id="c\ud800", name="tickets__get_ticket", arguments={"a": nested(5000), "b": "\udc80x"})
    record = Trajectory(
        task_id="t",
        agent="a",
        messages=[Message(role="assistant", content="hi \ud800", tool_calls=[call])],
        said=["\udfff"],
    )
    line = to_line(record)
    line.encode("utf-8")
    back = Trajectory.model_validate_json(line)
    assert back.messages[0].content == "hi \\ud800" and back.said == ["\\udfff"]
    assert back.messages[0].tool_calls[0].arguments["b"] == "\\udc80x"
    assert depth_of(back.messages[0].tool_calls[0].arguments) <= MAX_ARGUMENT_DEPTH + 1


def test_safe_value_keeps_ordinary_arguments_as_they_are() -> None:
    arguments = {"amount": 2**70, "ok": True, "none": None, "list": [1, 2.5, "x"], "nested": {"a": {"b": "é"}}}
    assert safe_value(arguments) == arguments


@pytest.mark.anyio
@pytest.mark.parametrize(("transport", "megabytes"), [("direct", 50), ("mcp", 2)])
async def test_a_huge_invalid_argument_is_recorded_as_a_prefix_its_size_and_hash_and_the_trajectory_stays_small(
    tmp_path: Path, transport: str, megabytes: int
) -> None:
    big = "x" * (megabytes * 2**20)
    tasks = load_tasks(TASK)
    with anyio.fail_after(120):
        options = RunOptions(progress=False, episode=EpisodeConfig(transport=transport))  # type: ignore[arg-type]
        report = await run_tasks(tasks, Sender({"ticket_id": big}), tmp_path, options=options)
    assert report.statuses == {"completed": 1}
    assert (tmp_path / "trajectories.jsonl").stat().st_size < 64 * 1024
    (record,) = read_trajectories(tmp_path)
    step = record.steps[0]
    assert step.outcome == "invalid_arguments" and "ticket_id" in step.text
    full = json.dumps({"ticket_id": big}, sort_keys=True, ensure_ascii=False).encode()
    expected = {"bytes": len(full), "sha256": hashlib.sha256(full).hexdigest()}
    assert {k: v for k, v in step.arguments["_capped"].items() if k != "prefix"} == expected
    assert step.arguments["_capped"]["prefix"].startswith('{"ticket_id": "xxx')
    (made,) = next(m for m in record.messages if m.role == "assistant").tool_calls
    assert made.arguments == step.arguments


@pytest.mark.anyio
async def test_small_invalid_arguments_are_recorded_as_they_were_sent(tmp_path: Path) -> None:
    tasks = load_tasks(TASK)
    with anyio.fail_after(60):
        await run_tasks(
            tasks, Sender({"ticket_id": 12, "extra": "y" * 100}), tmp_path, options=RunOptions(progress=False)
        )
    (record,) = read_trajectories(tmp_path)
    assert record.steps[0].outcome == "invalid_arguments"
    assert record.steps[0].arguments == {"ticket_id": 12, "extra": "y" * 100}
