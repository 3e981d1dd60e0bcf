"""Claude Code on imported Claw-Eval tasks: it gets the declared tools as ``mcp__<service>__<tool>`` from the
``.mcp.json`` the episode writes (the stand-in CLI calls them over stdio; the real CLI, against a scripted Messages
API on 127.0.0.1, sends them to the model), and a conversation-only task runs with no servers at all."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.harness.agents.claude_code import EXECUTABLE_ENV, ClaudeCodeAgent
from coworkenv.harness.episode import run_episode
from coworkenv.harness.trajectory import read_trajectories
from tests.fakes.messages_api import serve_messages_api
from tests.harness.agents.test_claude_code import fake_claude  # noqa: F401 (a fixture)
from tests.harness.agents.test_claude_code_real import COWORKENV, real_claude  # noqa: F401 (a fixture)
from tests.harness.claw_eval.runtime_helpers import DECLARED, talk_task, todo_task, write_tasks

pytestmark = pytest.mark.slow
LIST = {"name": "mcp__todo__todo_list_tasks", "input": {}}
UPDATE = {"name": "mcp__todo__todo_update_task", "input": {"task_id": "todo_001", "status": "completed"}}


@pytest.fixture(autouse=True)
def _no_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAW_EVAL_PATH", raising=False)


@pytest.mark.anyio
async def test_claude_code_calls_the_declared_tools_of_an_imported_task_over_stdio(fake_claude: Path) -> None:  # noqa: F811
    steps = [{"tool": LIST["name"], "input": LIST["input"]}, {"tool": UPDATE["name"], "input": UPDATE["input"]}]
    fake_claude.write_text(json.dumps({"turns": [{"steps": steps, "final": "todo_001 is completed."}]}))
    with anyio.fail_after(90):
        record = await run_episode(todo_task(), ClaudeCodeAgent())
    assert record.status == "completed", record.error
    assert [(s.name, s.outcome) for s in record.steps] == [
        ("todo__todo_list_tasks", "ok"),
        ("todo__todo_update_task", "ok"),
    ]
    assert record.grade is not None and record.grade.passed, record.grade


@pytest.mark.anyio
async def test_claude_code_on_a_conversation_only_task_starts_no_server(fake_claude: Path) -> None:  # noqa: F811
    fake_claude.write_text(json.dumps({"turns": [{"final": "Prepaying saves interest."}]}))
    with anyio.fail_after(60):
        record = await run_episode(talk_task(), ClaudeCodeAgent())
    assert record.status == "completed", record.error
    (run,) = [json.loads(line) for line in (fake_claude.parent / "invocations.jsonl").read_text().splitlines()]
    assert run["argv"][run["argv"].index("--mcp-config") + 1]
    assert record.steps == [] and record.grade is not None


def test_the_real_claude_code_sends_the_model_the_declared_tools_by_their_claw_names(
    tmp_path: Path,
    real_claude: Path,  # noqa: F811
) -> None:
    replies: list[list[dict[str, Any]]] = [
        [{"type": "tool_use", "id": "toolu_a", **LIST}],
        [{"type": "tool_use", "id": "toolu_b", **UPDATE}],
        [{"type": "text", "text": "I marked todo_001 as completed."}],
    ]
    tasks = write_tasks(tmp_path / "tasks", todo_task(), talk_task())
    out = tmp_path / "run"
    with serve_messages_api(replies) as api:
        env = {k: v for k, v in os.environ.items() if k != "CLAW_EVAL_PATH"}
        env |= {
            EXECUTABLE_ENV: str(real_claude),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key-not-secret",
            "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        }
        cmd = [*COWORKENV, "run", "--tasks", str(tasks), "--agent", "claude-code", "--out", str(out)]
        cmd += ["--concurrency", "2", "--wall-time", "120", "--retries", "1", "--no-progress"]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=400)
        requests = list(api.requests)
    assert done.returncode == 0, done.stderr[-2000:]
    records = {r.task_id: r for r in read_trajectories(out)}
    todo, talk = records["claw-eval.t900_todo"], records["claw-eval.c900_mortgage"]
    assert todo.status == "completed" and talk.status == "completed", (todo.error, talk.error)
    assert [s.name for s in todo.steps] == ["todo__todo_list_tasks", "todo__todo_update_task"]
    assert todo.grade is not None and todo.grade.passed, todo.grade
    with_tools = [q for q in requests if any(t.get("name", "").startswith("mcp__") for t in q.get("tools", []))]
    offered = {t["name"]: t for t in with_tools[0]["tools"] if t["name"].startswith("mcp__")}
    assert sorted(offered) == sorted(f"mcp__todo__{d['name']}" for d in DECLARED)
    listed = offered["mcp__todo__todo_list_tasks"]
    assert DECLARED[0]["description"] in listed["description"]
    assert listed["input_schema"]["properties"] == DECLARED[0]["input_schema"]["properties"]
    assert talk.steps == [] and talk.grade is not None
