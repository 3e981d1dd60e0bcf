"""The real Claude Code CLI (npm ``@anthropic-ai/claude-code``, the pinned release, installed project-local into
``.tools/claude``) driven through ``coworkenv run --agent claude-code`` against a scripted stand-in for the
Messages API on 127.0.0.1 (tests/fakes/messages_api.py, streamed SSE). Three trials run at once, so the CLI
must wait for its MCP servers (``MCP_CONNECTION_NONBLOCKING=0``) or its first request goes out without tools.

Skipped only when the CLI is not installed and npm cannot install it (no registry), and says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.harness import episode as episode_module
from coworkenv.harness.agents.builtin import ReplayAgent
from coworkenv.harness.agents.claude_code import CLAUDE_CODE_VERSION, EXECUTABLE_ENV, ClaudeCodeAgent
from coworkenv.harness.episode import EpisodeConfig, run_episode
from coworkenv.harness.run import RunOptions, run_tasks
from coworkenv.harness.trajectory import read_trajectories
from coworkenv.synth.contract.task import Task
from tests.fakes.load import busy_cores
from tests.fakes.messages_api import serve_messages_api
from tests.synth.conftest import base_task

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[3]
PREFIX = ROOT / ".tools" / "claude"
BINARY = PREFIX / "node_modules" / ".bin" / "claude"
SEARCH = {"name": "mcp__tickets__search_tickets", "input": {"organization_id": "org_big", "status": ["open"]}}
RIGHT = [
    [{"type": "text", "text": "Let me look."}, {"type": "tool_use", "id": "toolu_a", **SEARCH}],
    [
        {
            "type": "tool_use",
            "id": "toolu_b",
            "name": "mcp__tickets__escalate_ticket",
            "input": {"ticket_id": "tkt_1", "reason": "Enterprise, waiting."},
        }
    ],
    [{"type": "text", "text": "I escalated 'Outage at Big'."}],
]
WRONG = [  # escalates the other ticket, then claims the right one
    [{"type": "tool_use", "id": "toolu_a", **SEARCH}],
    [
        {
            "type": "tool_use",
            "id": "toolu_b",
            "name": "mcp__tickets__escalate_ticket",
            "input": {"ticket_id": "tkt_2", "reason": "Waiting."},
        }
    ],
    [{"type": "text", "text": "I escalated 'Outage at Big'."}],
]
COWORKENV = [sys.executable, "-c", "from coworkenv.train.cli import main; main()"]
NOTHING = [[{"type": "text", "text": "Sorry, I cannot help with that."}]]


def _installed_version(binary: Path) -> str:
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip()


@pytest.fixture(scope="module")
def real_claude() -> Path:
    """The pinned Claude Code, installed into .tools/claude (git-ignored) when it is not there yet."""
    if not _installed_version(BINARY).startswith(CLAUDE_CODE_VERSION):
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(f"npm is not installed, so Claude Code {CLAUDE_CODE_VERSION} cannot be installed")
        package = f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"
        cmd = [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund", package]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm could not install {package} within 10 minutes (registry unreachable?)")
        if done.returncode != 0:
            pytest.skip(f"npm could not install {package} (registry unreachable?): {done.stderr.strip()[-300:]}")
    version = _installed_version(BINARY)
    assert version.startswith(CLAUDE_CODE_VERSION), f"{BINARY} --version says {version!r}"
    return BINARY


def _run(
    tmp_path: Path, claude: Path, replies: list[list[dict[str, Any]]], name: str, retries: int = 0
) -> tuple[Any, list[Any]]:
    """``coworkenv run --agent claude-code`` with 3 trials at once."""
    task_file = tmp_path / "task.json"
    task_file.write_text(json.dumps(base_task()))
    out = tmp_path / name
    with serve_messages_api(replies) as api:
        env = {
            **os.environ,
            EXECUTABLE_ENV: str(claude),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key-not-secret",
            "CLAUDE_CONFIG_DIR": str(tmp_path / f"cc-{name}"),
        }
        cmd = [*COWORKENV, "run", "--tasks", str(task_file), "--agent", "claude-code"]
        cmd += [
            "--out",
            str(out),
            "--trials",
            "3",
            "--concurrency",
            "3",
            "--wall-time",
            "90",
            "--retries",
            str(retries),
        ]
        done = subprocess.run([*cmd, "--no-progress"], env=env, capture_output=True, text=True, timeout=400)
        requests = list(api.requests)
    assert done.returncode == 0, done.stderr[-2000:]
    records = sorted(read_trajectories(out), key=lambda r: r.trial)
    assert [r.trial for r in records] == [0, 1, 2]
    return records, requests


def test_the_agent_tells_claude_code_to_wait_for_its_mcp_servers() -> None:
    env = ClaudeCodeAgent().environment()
    assert env["MCP_CONNECTION_NONBLOCKING"] == "0"
    assert env["DISABLE_TELEMETRY"] == "1" and env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"


def test_the_pinned_claude_code_knows_the_setting_that_makes_it_wait(real_claude: Path) -> None:
    binary = real_claude.resolve()
    assert b"MCP_CONNECTION_NONBLOCKING" in binary.read_bytes()


def test_the_real_claude_code_solves_the_task_on_each_of_three_concurrent_trials(
    tmp_path: Path, real_claude: Path
) -> None:
    records, requests = _run(tmp_path, real_claude, RIGHT, "right")
    for r in records:
        assert r.status == "completed", r.error
        assert r.grade is not None and r.grade.score == 1.0, r.grade.report() if r.grade else r.error
        calls = [c.name for m in r.messages if m.role == "assistant" for c in m.tool_calls]
        assert calls == ["tickets__search_tickets", "tickets__escalate_ticket"]
    main = [q for q in requests if any(t.get("name", "").startswith("mcp__") for t in q.get("tools", []))]
    assert len(main) >= 9  # three requests per trial, each with the services' tools
    assert {t["name"] for t in main[0]["tools"]} >= {"mcp__tickets__search_tickets", "mcp__tickets__escalate_ticket"}


def test_the_real_claude_code_escalating_the_wrong_ticket_scores_below_the_bar(
    tmp_path: Path, real_claude: Path
) -> None:
    records, _ = _run(tmp_path, real_claude, WRONG, "wrong")
    for r in records:
        assert r.status == "completed", r.error
        assert r.grade is not None and r.grade.score < 0.75, r.grade.report() if r.grade else r.error
        assert [s.name for s in r.steps] == ["tickets__search_tickets", "tickets__escalate_ticket"]


def test_the_real_claude_code_doing_nothing_scores_zero(tmp_path: Path, real_claude: Path) -> None:
    records, _ = _run(tmp_path, real_claude, NOTHING, "nothing")
    for r in records:
        assert r.status == "completed", r.error
        assert r.steps == [] and r.grade is not None and r.grade.score == 0.0


def test_the_real_claude_code_on_a_busy_machine_scores_like_the_quiet_run(tmp_path: Path, real_claude: Path) -> None:
    """Two spinning processes on top of the three trials: every trial still ends with the quiet run's score 1.0
    (after infra retries if Claude Code reported a server not connected), never a scored 0 without tools."""
    with busy_cores(2):
        records, _ = _run(tmp_path, real_claude, RIGHT, "busy", retries=3)
    for r in records:
        assert r.status == "completed", (r.error, r.attempt_errors)
        assert r.grade is not None and r.grade.score == 1.0, (r.grade.report(), r.attempt_errors)
        assert all("not connected" in e or "did not initialize" in e for e in r.attempt_errors), r.attempt_errors


@pytest.mark.anyio
async def test_the_real_claude_code_waits_for_mcp_servers_that_are_slow_to_start(
    tmp_path: Path, real_claude: Path, monkeypatch: pytest.MonkeyPatch, slow_servers: Callable[..., None]
) -> None:
    """Each of Claude Code's MCP servers starts 4 s late (a busy machine); with MCP_CONNECTION_NONBLOCKING=0
    and MCP_TIMEOUT Claude Code waits for them, so its first request already carries their tools. (The pinned
    release also waited without the variables in this setup; 2.1.197, of the issue, did not, under load.)"""
    slow_servers(4)
    folders: list[Path] = []
    real_mkdtemp = episode_module.tempfile.mkdtemp

    def recorded_mkdtemp(*args: Any, **kwargs: Any) -> str:
        folders.append(Path(real_mkdtemp(*args, **kwargs)))
        return str(folders[-1])

    monkeypatch.setattr(episode_module.tempfile, "mkdtemp", recorded_mkdtemp)
    task = Task.model_validate(base_task())
    with serve_messages_api(RIGHT) as api:
        env = {
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key-not-secret",
            "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        }
        agent = ClaudeCodeAgent(executable=str(real_claude), env=env)
        with anyio.fail_after(120):
            record = await run_episode(task, agent, config=EpisodeConfig(wall_time_s=90))
    assert record.status == "completed", record.error
    assert record.grade is not None and record.grade.score == 1.0, record.grade.report()
    (folder,) = [f for f in folders if f.name.startswith("coworkenv-episode-")]
    assert not folder.exists()  # the episode's databases are gone ...
    assert not [p for p in _live_cmdlines() if str(folder) in p]  # ... and so are the servers that used them


@pytest.mark.anyio
async def test_the_real_claude_code_whose_server_never_connects_is_retried_and_never_scored(
    tmp_path: Path, real_claude: Path, slow_servers: Callable[..., None]
) -> None:
    """Claude Code's own server (not the harness's readiness check) answers after 60 s, Claude Code gives up after
    3 s (MCP_TIMEOUT) and reports it ``failed`` in its init event: each attempt stops there, before any model
    request with tools, and the trial ends ``infra_error`` after its retry, out of the scores."""
    slow_servers(60, parent="claude")
    with serve_messages_api(RIGHT) as api:
        env = {
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key-not-secret",
            "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
            "MCP_TIMEOUT": "3000",
        }
        agent = ClaudeCodeAgent(executable=str(real_claude), env=env)
        options = RunOptions(progress=False, backoff_s=0.0, retries=1, episode=EpisodeConfig(wall_time_s=60))
        with anyio.fail_after(150):
            report = await run_tasks([Task.model_validate(base_task())], agent, tmp_path / "run", options=options)
        requests = list(api.requests)
    (record,) = read_trajectories(tmp_path / "run")
    assert report.statuses == {"infra_error": 1} and record.attempts == 2, record.error
    assert record.stop_reason == "McpServersNotConnected" and "tickets: failed" in (record.error or "")
    assert "tickets: failed" in record.attempt_errors[0]
    assert not record.scored and record.grade is None
    assert not [q for q in requests if any(t.get("name", "").startswith("mcp__") for t in q.get("tools", []))]


def _live_cmdlines() -> list[str]:
    out = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if (proc / "stat").read_text().rpartition(")")[2].split()[0] == "Z":
                continue
            out.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return out


@pytest.mark.anyio
async def test_an_episode_folder_that_cannot_be_removed_never_fails_the_episode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def stubborn(path: Any, ignore_errors: bool = False, **kwargs: Any) -> None:
        if not ignore_errors:
            raise OSError(39, "Directory not empty", str(path))

    monkeypatch.setattr(episode_module.shutil, "rmtree", stubborn)
    with anyio.fail_after(60):
        record = await run_episode(
            Task.model_validate(base_task()), ReplayAgent(), config=EpisodeConfig(transport="stdio")
        )
    assert record.status == "completed" and record.grade is not None and record.grade.score == 1.0
