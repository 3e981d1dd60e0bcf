"""Imported Claw-Eval tasks over real transports: the stdio servers of an episode (what Claude Code's ``.mcp.json``
starts) serve the declared tools, tool faults at a seed are the same on stdio as in process, and ``coworkenv serve
--profile ... --declared ...`` serves a profile over streamable HTTP; its bad options are one line each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from coworkenv.harness.agents.builtin import ScriptedAgent
from coworkenv.harness.episode import EpisodeConfig, run_episode
from coworkenv.harness.tools import task_services
from coworkenv.servers.cli import main
from coworkenv.servers.kit.tool_faults import ToolFaults
from tests.harness.claw_eval.runtime_helpers import AGENT_TOOLS, DECLARED, FIXTURES, RIGHT, todo_task

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _no_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAW_EVAL_PATH", raising=False)


async def test_an_episode_over_stdio_serves_the_declared_tools_and_is_graded() -> None:
    with anyio.fail_after(90):
        record = await run_episode(
            todo_task(), ScriptedAgent.from_turns(RIGHT), config=EpisodeConfig(transport="stdio")
        )
    assert record.status == "completed", record.error
    assert [s.name for s in record.steps] == ["todo__todo_list_tasks", "todo__todo_update_task"]
    assert all(s.outcome == "ok" for s in record.steps)
    assert record.grade is not None and record.grade.passed, record.grade


def test_the_mcp_json_starts_each_server_on_the_profile_with_the_declared_tools(tmp_path: Path) -> None:
    faults = ToolFaults(0.3, 8, (0.0, 0.5))
    (entry,) = task_services(todo_task()).stdio_config(tmp_path, faults)["mcpServers"].values()
    args = entry["args"]
    assert args[:5] == ["-m", "coworkenv.servers.quick", "serve", "todo", "--db"]
    assert args[args.index("--profile") + 1] == "claw-eval:todo"
    assert json.loads(args[args.index("--declared") + 1]) == json.loads(json.dumps(DECLARED, sort_keys=True))
    assert args[args.index("--faults") + 1] == "0.3" and args[args.index("--fault-slow") + 1] == "0.0,0.5"
    assert args[args.index("--fault-seed") + 1] == str(faults.derived("todo").seed)


async def test_tool_faults_at_a_seed_are_the_same_over_stdio_as_in_process() -> None:
    reads = [{"tool_calls": [{"name": "todo__todo_list_tasks", "arguments": {}}]}] * 8 + [{"text": "todo_001"}]
    config = {"tool_faults": ToolFaults(0.6, 21, (0.0, 0.0))}
    seen = {}
    with anyio.fail_after(120):
        for transport in ("direct", "stdio"):
            agent = ScriptedAgent.from_turns(reads)
            record = await run_episode(todo_task(), agent, config=EpisodeConfig(transport=transport, **config))  # type: ignore[arg-type]
            seen[transport] = ([s.text[:8] for s in record.steps], record.tool_faults)
    assert seen["direct"] == seen["stdio"] and seen["direct"][1] > 0


async def test_serve_serves_a_profile_with_its_declared_tools_over_http(tmp_path: Path) -> None:
    seed = tmp_path / "seed.json"
    from coworkenv.servers.claw_eval import claw_service

    seed.write_text(json.dumps(claw_service("todo").seed(FIXTURES)))
    cmd = [sys.executable, "-m", "coworkenv.servers", "serve", "todo", "--db", str(tmp_path / "todo.db")]
    cmd += ["--seed", str(seed), "--profile", "claw-eval:todo", "--declared", json.dumps(DECLARED)]
    cmd += ["--only", "todo_list_tasks,todo_update_task", "--transport", "http", "--port", "0"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr is not None
        with anyio.fail_after(60):
            line = await anyio.to_thread.run_sync(proc.stderr.readline)
            assert "http://127.0.0.1:" in line, line
            async with Client(line.strip().rsplit(" ", 1)[-1]) as client:
                listed = (await client.list_tools()).tools
                answer = await client.call_tool("todo_list_tasks", {})
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert [t.name for t in listed] == [n.split("__")[1] for n in AGENT_TOOLS[:2]]
    assert listed[0].description == DECLARED[0]["description"] and listed[0].input_schema == DECLARED[0]["input_schema"]
    assert not answer.is_error and answer.structured_content and answer.structured_content["total"] == 2


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--only", "todo_list_tasks"], "add --profile"),
        (["--profile", "claw-eval:web_real"], "live web search"),
        (["--profile", "gmail"], "claw-eval:SERVICE"),
        (["--profile", "claw-eval:gmail"], "served on email, not on todo"),
        (["--profile", "claw-eval:todo", "--declared", "[1"], "not JSON"),
        (["--profile", "claw-eval:todo", "--declared", '[{"name": "todo_fly"}]'], "todo_fly"),
        (["--profile", "claw-eval:todo", "--only", "todo_fly"], "todo_fly"),
        (["--profile", "claw-eval:todo", "--declared", "@/nonexistent/tools.json"], "readable JSON file"),
        (["--faults", "0.2", "--fault-slow", "x"], "MIN,MAX"),
    ],
)
def test_bad_profile_or_fault_options_of_serve_are_one_line(tmp_path: Path, args: list[str], words: str) -> None:
    result = CliRunner().invoke(main, ["serve", "todo", "--db", str(tmp_path / "todo.db"), *args])
    assert result.exit_code != 0 and words in result.output, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "todo.db").exists()
