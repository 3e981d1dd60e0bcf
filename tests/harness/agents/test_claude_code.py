"""Claude Code as an agent, with a stand-in ``claude`` on PATH that speaks stream-JSON and calls our MCP servers
over stdio (tests/fakes/fake_claude.py). The episode runs for real: file databases, grading from them."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from coworkenv.harness.agents.base import EpisodeAgent
from coworkenv.harness.agents.claude_code import ClaudeCodeAgent, StreamParser, unprefixed
from coworkenv.harness.agents.claude_stream import unconnected
from coworkenv.harness.episode import EpisodeConfig, run_episode
from coworkenv.harness.messages import ToolCall
from coworkenv.harness.run import RunOptions, run_tasks
from coworkenv.harness.trajectory import read_trajectories
from coworkenv.synth.contract.task import Task
from coworkenv.train.cli import main
from tests.synth.conftest import base_task

pytestmark = pytest.mark.slow
FAKE = Path(__file__).resolve().parents[2] / "fakes" / "fake_claude.py"
SEARCH = {"tool": "mcp__tickets__search_tickets", "input": {"organization_id": "org_big", "status": ["open"]}}
ESCALATE = {"tool": "mcp__tickets__escalate_ticket", "input": {"ticket_id": "tkt_1", "reason": "Enterprise, waiting."}}
COMMENT = {
    "tool": "mcp__tickets__add_comment",
    "input": {"ticket_id": "tkt_1", "body": "We are on it.", "public": False},
}


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``claude`` first on PATH that runs the stand-in with this interpreter; returns the plan file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_STATE", str(tmp_path / "sessions"))
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(tmp_path / "invocations.jsonl"))
    plan = tmp_path / "plan.json"
    monkeypatch.setenv("FAKE_CLAUDE_PLAN", str(plan))
    return plan


def invocations(plan: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (plan.parent / "invocations.jsonl").read_text().splitlines()]


def two_turn_task() -> Task:
    data = base_task()
    data["user"] = {
        "persona": "Kim, support lead",
        "turns": [{"message": "Thanks. Please also note on it that we are on it."}],
    }
    data["reference_solution"] += [
        {
            "service": "tickets",
            "tool": "add_comment",
            "arguments": {"ticket_id": "tkt_1", "body": "We are on it.", "public": False},
        },
        {"say": "Noted on the ticket."},
    ]
    return Task.model_validate(data)


def test_claude_code_is_an_episode_agent_that_asks_for_the_stdio_transport() -> None:
    agent = ClaudeCodeAgent()
    assert isinstance(agent, EpisodeAgent)
    assert agent.transport == "stdio" and agent.name == "claude-code"
    assert unprefixed("mcp__tickets__get_ticket") == "tickets__get_ticket" and unprefixed("Bash") == "Bash"


@pytest.mark.anyio
async def test_an_episode_runs_through_claude_code_and_is_graded_from_the_served_databases(fake_claude: Path) -> None:
    fake_claude.write_text(
        json.dumps(
            {
                "turns": [
                    {"say_first": "Let me look.", "steps": [SEARCH, ESCALATE], "final": "I escalated 'Outage at Big'."},
                    {"steps": [COMMENT], "final": "Noted on the ticket."},
                ]
            }
        )
    )
    with anyio.fail_after(60):
        record = await run_episode(two_turn_task(), ClaudeCodeAgent(), config=EpisodeConfig(max_turns=20))
    assert record.status == "completed", record.error
    assert record.transport == "stdio"
    assert record.grade is not None and record.grade.score == 1.0, record.grade.report()

    calls = [c for m in record.messages if m.role == "assistant" for c in m.tool_calls]
    assert [c.name for c in calls] == ["tickets__search_tickets", "tickets__escalate_ticket", "tickets__add_comment"]
    first = next(m for m in record.messages if m.role == "assistant")
    assert first.content == "Let me look." and len(first.tool_calls) == 1  # text and tool_use of one message, merged
    results = [m for m in record.messages if m.role == "tool"]
    assert [m.tool_call_id for m in results] == [c.id for c in calls]
    assert not any(m.is_error for m in results) and '"escalated":true' in results[1].content.replace(" ", "")
    assert [s.name for s in record.steps] == [c.name for c in calls]
    assert "I escalated 'Outage at Big'." in record.said
    assert record.usage.cache_read_tokens > 0
    assert [e.kind for e in record.user_events] == ["reply", "end"]

    first_run, second_run = invocations(fake_claude)
    for flag in ("--mcp-config", "--strict-mcp-config", "--verbose", "bypassPermissions", "stream-json"):
        assert flag in first_run["argv"]
    assert first_run["prompt"] == two_turn_task().request
    assert first_run["env"]["DISABLE_TELEMETRY"] == "1"
    assert first_run["env"]["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert first_run["env"]["MCP_CONNECTION_NONBLOCKING"] == "0" and first_run["env"]["MCP_TIMEOUT"] == "60000"
    if os.geteuid() == 0:
        assert first_run["env"]["IS_SANDBOX"] == "1"
    assert "--resume" not in first_run["argv"]
    resumed = second_run["argv"][second_run["argv"].index("--resume") + 1]
    assert resumed and second_run["prompt"].startswith("Thanks.")


@pytest.mark.anyio
async def test_the_agent_totals_claude_codes_reported_cost(fake_claude: Path) -> None:
    fake_claude.write_text(json.dumps({"turns": [{"steps": [SEARCH], "final": "Nothing to do."}]}))
    agent = ClaudeCodeAgent()
    with anyio.fail_after(60):
        record = await run_episode(Task.model_validate(base_task()), agent)
    assert record.status == "completed", record.error
    assert agent.cost_usd == pytest.approx(0.0125)
    assert agent.usage.input_tokens == 40


@pytest.mark.anyio
async def test_claude_code_unable_to_reach_its_model_is_an_infrastructure_failure(fake_claude: Path) -> None:
    fake_claude.write_text(json.dumps({"turns": [{"final": ""}], "api_error": True}))
    with anyio.fail_after(60):
        record = await run_episode(Task.model_validate(base_task()), ClaudeCodeAgent())
    assert record.status == "infra_error"
    assert "could not reach its model" in (record.error or "")
    assert record.grade is None


@pytest.mark.anyio
@pytest.mark.parametrize("status", ["pending", "failed"])
async def test_claude_code_starting_with_a_server_not_connected_is_an_infrastructure_error_naming_it(
    fake_claude: Path, status: str
) -> None:
    fake_claude.write_text(json.dumps({"turns": [{"steps": [SEARCH, ESCALATE]}], "servers": {"tickets": status}}))
    with anyio.fail_after(60):
        record = await run_episode(Task.model_validate(base_task()), ClaudeCodeAgent())
    assert record.status == "infra_error" and record.retryable, record.error
    assert record.stop_reason == "McpServersNotConnected"
    assert f"tickets: {status}" in (record.error or "")
    assert record.grade is None and record.steps == [] and record.said == []  # its tool-less answer is not kept


@pytest.mark.anyio
async def test_a_run_retries_claude_code_until_its_servers_connect_and_scores_only_the_retry(
    fake_claude: Path, tmp_path: Path
) -> None:
    plan = {"turns": [{"steps": [SEARCH, ESCALATE], "final": "I escalated 'Outage at Big'."}], "pending_runs": 2}
    fake_claude.write_text(json.dumps(plan))
    options = RunOptions(progress=False, backoff_s=0.0, retries=2)
    with anyio.fail_after(120):
        await run_tasks([Task.model_validate(base_task())], ClaudeCodeAgent(), tmp_path / "run", options=options)
    (record,) = read_trajectories(tmp_path / "run")
    assert record.status == "completed", record.error
    assert record.grade is not None and record.grade.score == 1.0
    assert record.attempts == 3 and all("tickets: pending" in e for e in record.attempt_errors)
    assert len(invocations(fake_claude)) == 3


@pytest.mark.anyio
async def test_claude_code_whose_servers_never_connect_is_kept_out_of_scores_after_the_retries(
    fake_claude: Path, tmp_path: Path
) -> None:
    fake_claude.write_text(json.dumps({"turns": [{"steps": [SEARCH]}], "servers": {"tickets": "pending"}}))
    options = RunOptions(progress=False, backoff_s=0.0, retries=1)
    with anyio.fail_after(120):
        report = await run_tasks(
            [Task.model_validate(base_task())], ClaudeCodeAgent(), tmp_path / "run", options=options
        )
    (record,) = read_trajectories(tmp_path / "run")
    assert report.statuses == {"infra_error": 1} and record.attempts == 2
    assert record.grade is None and not record.scored


@pytest.mark.anyio
async def test_claude_code_past_the_tool_call_limit_is_stopped_and_still_graded(fake_claude: Path) -> None:
    fake_claude.write_text(json.dumps({"turns": [{"steps": [SEARCH, ESCALATE], "final": "Done."}]}))
    with anyio.fail_after(60):
        record = await run_episode(
            Task.model_validate(base_task()), ClaudeCodeAgent(), config=EpisodeConfig(max_tool_calls=0)
        )
    assert record.status == "max_turns" and record.stop_reason == "max_tool_calls (0)", record.error
    assert record.grade is not None


def test_servers_not_connected_are_named_with_their_status_and_unreported_ones_are_missing() -> None:
    servers = {"tickets": "connected", "crm": "pending", "email": "failed"}
    assert unconnected(servers, ["crm", "email", "payments", "tickets"]) == [
        "crm: pending",
        "email: failed",
        "payments: missing",
    ]
    assert unconnected(servers, ["tickets"]) == []


@pytest.mark.anyio
async def test_a_missing_claude_executable_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    with anyio.fail_after(60):
        record = await run_episode(Task.model_validate(base_task()), ClaudeCodeAgent(executable="no-such-claude-here"))
    assert record.status == "infra_error"
    assert "npm install -g @anthropic-ai/claude-code" in (record.error or "")


@pytest.mark.parametrize(
    ("version", "said"),
    [
        ("2.0.14", "Claude Code 2.0.14 at "),
        ("not a version", "--version` failed"),
    ],
)
def test_a_claude_code_that_cannot_work_is_named_by_run_before_the_first_trial(
    fake_claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str, said: str
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_VERSION", version)
    task_file = tmp_path / "task.json"
    task_file.write_text(json.dumps(base_task()), encoding="utf-8")
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", "--tasks", str(task_file), "--agent", "claude-code", "--out", str(out)])
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert said in line and "npm install -g @anthropic-ai/claude-code@" in line
    assert not (out / "trajectories.jsonl").exists(), "nothing ran"


def test_the_oldest_tested_claude_code_and_newer_ones_are_taken(
    fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for version, expected in (("2.1.197", (2, 1, 197)), ("2.2.0", (2, 2, 0))):
        monkeypatch.setenv("FAKE_CLAUDE_VERSION", version)
        agent = ClaudeCodeAgent()
        assert agent.check_ready().endswith("claude") and agent.version == expected


@pytest.mark.anyio
async def test_an_episode_out_of_time_kills_claude_code_and_its_servers(fake_claude: Path) -> None:
    fake_claude.write_text(json.dumps({"turns": [{"final": ""}], "hang": True}))
    config = EpisodeConfig(wall_time_s=8)  # long enough for the fake CLI to start on a busy machine
    with anyio.fail_after(60):
        record = await run_episode(Task.model_validate(base_task()), ClaudeCodeAgent(), config=config)
    assert record.status == "timeout"
    (run,) = invocations(fake_claude)
    with pytest.raises(ProcessLookupError):
        os.kill(run["pid"], 0)


class Recorder:
    def __init__(self) -> None:
        self.turns: list[Any] = []
        self.results: list[tuple[ToolCall, Any]] = []

    def record_turn(self, turn: Any, started_s: float | None = None, duration_s: float = 0.0) -> None:
        self.turns.append(turn)

    def record_tool_result(self, call: ToolCall, outcome: Any) -> None:
        self.results.append((call, outcome))


def test_the_stream_parser_maps_events_to_turns_results_and_the_final_result() -> None:
    recorder = Recorder()
    parser = StreamParser(recorder)
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "mcp__crm__get_account", "input": {"account_id": "a"}}
    init = {"type": "system", "subtype": "init", "session_id": "s-1", "tools": ["mcp__crm__get_account"]}
    events = [
        {**init, "mcp_servers": [{"name": "crm", "status": "connected"}, {"name": "email", "status": "pending"}]},
        {"type": "assistant", "message": {"id": "m1", "content": [{"type": "thinking", "thinking": "hmm"}]}},
        {
            "type": "assistant",
            "message": {"id": "m1", "content": [tool_use], "usage": {"input_tokens": 7, "output_tokens": 3}},
        },
        {
            "type": "user",
            "message": {
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "gone", "is_error": True}]
            },
        },
        {"type": "assistant", "message": {"id": "m2", "content": [{"type": "text", "text": "It is gone."}]}},
        {"type": "result", "subtype": "success", "result": "It is gone.", "total_cost_usd": 0.5, "session_id": "s-1"},
    ]
    for event in events:
        parser.feed(event)
    first, second = recorder.turns
    assert first.tool_calls == [ToolCall(id="toolu_1", name="crm__get_account", arguments={"account_id": "a"})]
    assert first.usage.input_tokens == 7 and first.text == ""
    assert second.text == "It is gone." and second.tool_calls == []
    ((call, outcome),) = recorder.results
    assert call.name == "crm__get_account" and outcome.is_error and outcome.text == "gone"
    assert parser.result.session_id == "s-1" and parser.result.cost_usd == 0.5 and parser.result.text == "It is gone."
    assert parser.result.mcp_servers == {"crm": "connected", "email": "pending"}


def test_a_refused_call_in_claude_code_s_stream_is_recorded_with_the_dispatcher_s_outcome() -> None:
    from coworkenv.harness.agents.claude_stream import StreamParser
    from coworkenv.servers.kit.door import CallOutcome

    class Recorder:
        def __init__(self) -> None:
            self.outcomes: list[str] = []

        def record_tool_result(self, _call: object, outcome: CallOutcome) -> None:
            self.outcomes.append(outcome.outcome)

    io = Recorder()
    parser = StreamParser(io)
    answers = [
        ("t1", "Invalid arguments for get_ticket: ticket_id: too long", True),
        ("t2", "Unknown tool frobnicate", True),
        ("t3", "No ticket tkt_9; search_tickets lists them", True),
        ("t4", '{"id": "tkt_1"}', False),
    ]
    for call_id, text, is_error in answers:
        block = {"type": "tool_use", "id": call_id, "name": "mcp__tickets__get_ticket", "input": {}}
        parser.feed({"type": "assistant", "message": {"id": f"m{call_id}", "content": [block]}})
        result = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}
        parser.feed({"type": "user", "message": {"content": [result]}})
    assert io.outcomes == ["invalid_arguments", "unknown_tool", "error", "ok"]
