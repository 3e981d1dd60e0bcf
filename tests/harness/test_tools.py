"""The episode's door: the kit's direct or MCP door, listing the same tools whichever the transport; and its readiness
check: an episode whose services never came up (an MCP session that does not initialize or list its tools in time) is
an infrastructure error, retried by runs and never graded — for every kind of agent."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from coworkenv.harness.agents.builtin import ReplayAgent, Script, ScriptedAgent
from coworkenv.harness.episode import EpisodeConfig, run_episode
from coworkenv.harness.run import RunOptions, run_tasks
from coworkenv.harness.tools import ServicesUnavailable, open_door, resolve_services
from coworkenv.harness.trajectory import read_trajectories
from coworkenv.servers.kit import Environment
from coworkenv.servers.kit.door import DirectDoor, MCPDoor
from coworkenv.synth.contract.task import Task
from coworkenv.train.cli import main
from tests.synth.conftest import base_task


def task() -> Task:
    return Task.model_validate(base_task())


@pytest.mark.anyio
async def test_each_transport_opens_the_kit_s_door_listing_the_tools_the_agent_sees_and_answering_alike(
    tmp_path: Path,
) -> None:
    services = resolve_services(("tickets",))
    opened: dict[str, tuple[type, list[Any], Any]] = {}
    for transport in ("direct", "mcp", "stdio"):
        db_dir = tmp_path / transport
        env = Environment.create(task().seeds(), now=task().now, db_dir=db_dir if transport == "stdio" else None)
        try:
            with anyio.fail_after(60):
                async with open_door(env, services, transport, db_dir) as (door, tools):
                    answer = await door.call("tickets", "get_ticket", {"ticket_id": "tkt_1"})
                    opened[transport] = (type(door), tools, answer)
        finally:
            env.close()
    assert [opened[t][0] for t in opened] == [DirectDoor, MCPDoor, MCPDoor]
    assert opened["direct"][1] == opened["mcp"][1] == opened["stdio"][1] == list(services.tools)
    assert opened["direct"][2] == opened["mcp"][2] == opened["stdio"][2] and opened["direct"][2].ok


@pytest.mark.anyio
async def test_a_stdio_server_that_never_starts_in_time_is_an_infrastructure_error_naming_it(slow_servers: Any) -> None:
    slow_servers(120)
    config = EpisodeConfig(transport="stdio", startup_timeout_s=3)
    started = time.perf_counter()
    with anyio.fail_after(60):
        record = await run_episode(task(), ReplayAgent(), config=config)
    assert record.status == "infra_error" and record.retryable
    assert record.stop_reason == "ServicesUnavailable"
    assert "tickets service" in (record.error or "") and "within 3 s" in (record.error or "")
    assert record.grade is None and record.steps == []
    assert time.perf_counter() - started < 30  # the deadline, not the server's 120 s, ended it


def test_the_run_command_passes_its_startup_timeout_to_the_episodes(tmp_path: Path, slow_servers: Any) -> None:
    slow_servers(120)
    (tmp_path / "task.json").write_text(json.dumps(base_task()))
    args = ["run", "--tasks", str(tmp_path / "task.json"), "--agent", "replay", "--out", str(tmp_path / "run")]
    args += ["--transport", "stdio", "--startup-timeout", "2", "--retries", "0", "--no-progress"]
    result = CliRunner().invoke(main, args)  # the 2 s deadline, not the server's 120 s, ends the episode
    assert result.exit_code == 0, result.output
    (record,) = read_trajectories(tmp_path / "run")
    assert record.status == "infra_error" and "within 2 s (stdio" in (record.error or "")


@pytest.mark.anyio
async def test_a_stdio_server_that_starts_slowly_within_the_deadline_is_waited_for(slow_servers: Any) -> None:
    slow_servers(2)
    with anyio.fail_after(90):
        record = await run_episode(task(), ReplayAgent(), config=EpisodeConfig(transport="stdio"))
    assert record.status == "completed", record.error
    assert record.grade is not None and record.grade.score == 1.0


@pytest.mark.anyio
async def test_a_model_agent_whose_mcp_session_cannot_list_tools_is_not_scored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(self: Client, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("the server went away")

    monkeypatch.setattr(Client, "list_tools", broken)
    agent = ScriptedAgent(Script(turns=[], then="I could not find anything.", name="nothing"))
    with anyio.fail_after(60):
        record = await run_episode(task(), agent, config=EpisodeConfig(transport="mcp"))
    assert record.status == "infra_error" and record.retryable
    assert "tickets service's MCP session failed to start (mcp)" in (record.error or "")
    assert "the server went away" in (record.error or "")
    assert record.grade is None and record.turns == []  # the model was never asked without its tools


@pytest.mark.anyio
async def test_a_service_that_lists_no_tools_is_unavailable() -> None:
    real = Client.list_tools

    async def empty(self: Client, *args: Any, **kwargs: Any) -> Any:
        listing = await real(self, *args, **kwargs)
        return listing.model_copy(update={"tools": []})

    services = resolve_services(("tickets",))
    env = Environment.create(task().seeds(), now=task().now)
    try:
        with pytest.MonkeyPatch.context() as patch, anyio.fail_after(30):
            patch.setattr(Client, "list_tools", empty)
            with pytest.raises(ServicesUnavailable, match="tickets service listed no tools"):
                async with open_door(env, services, "mcp"):
                    pass
    finally:
        env.close()


@pytest.mark.anyio
async def test_a_run_retries_an_episode_whose_services_failed_to_start_and_scores_the_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Client.list_tools
    failures = [ConnectionError("not yet")]

    async def first_fails(self: Client, *args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(Client, "list_tools", first_fails)
    options = RunOptions(progress=False, backoff_s=0.0, episode=EpisodeConfig(transport="mcp"))
    with anyio.fail_after(60):
        await run_tasks([task()], ReplayAgent(), tmp_path / "run", options=options)
    (record,) = read_trajectories(tmp_path / "run")
    assert record.status == "completed" and record.grade is not None and record.grade.score == 1.0
    assert record.attempts == 2 and "failed to start" in record.attempt_errors[0]
