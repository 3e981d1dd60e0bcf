"""Episodes: a fresh environment, the agent's turns and tool calls, limits, errors, the trajectory and the grade."""

from __future__ import annotations

import gc
import json

import anyio
import pytest

from coworkenv.harness.agents.builtin import NoopAgent, ReplayAgent, ScriptedAgent
from coworkenv.harness.episode import EpisodeConfig, run_episode
from coworkenv.harness.tools import system_prompt
from coworkenv.harness.trajectory import Trajectory, to_line
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.library import load_example, load_examples
from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.task import Task
from tests.harness.conftest import LoopingAgent, StuckAgent, synthesized_tasks

EXAMPLES = load_examples()


@pytest.mark.anyio
@pytest.mark.parametrize("task", EXAMPLES, ids=lambda t: t.id)
async def test_replay_scores_one_and_noop_zero_on_every_example(task: Task) -> None:
    with anyio.fail_after(20):
        replay = await run_episode(task, ReplayAgent())
        noop = await run_episode(task, NoopAgent())
    assert replay.status == "completed" and replay.grade is not None
    assert replay.grade.score == 1.0, replay.grade.report()
    assert noop.status == "completed" and noop.grade is not None
    assert noop.grade.score == 0.0, noop.grade.report()


@pytest.mark.anyio
async def test_replay_over_mcp_gives_the_same_grade_and_audit_as_the_direct_door() -> None:
    task = load_example("tickets-escalate-stale-enterprise")
    with anyio.fail_after(20):
        direct = await run_episode(task, ReplayAgent(), config=EpisodeConfig(transport="direct"))
        mcp = await run_episode(task, ReplayAgent(), config=EpisodeConfig(transport="mcp"))
    assert direct.grade is not None and mcp.grade is not None
    assert mcp.grade.score == direct.grade.score == 1.0
    assert [s.name for s in mcp.steps] == [s.name for s in direct.steps]
    assert [s.anchor for s in mcp.steps] == [s.anchor for s in direct.steps]
    assert mcp.final_state_hash == direct.final_state_hash


@pytest.mark.anyio
@pytest.mark.slow
async def test_replay_over_stdio_subprocesses_scores_one() -> None:
    task = load_example("tickets-pending-acme-question")
    with anyio.fail_after(60):
        result = await run_episode(task, ReplayAgent(), config=EpisodeConfig(transport="stdio"))
        gc.collect()  # the SDK's subprocess transports are finalised while the event loop still runs
        await anyio.lowlevel.checkpoint()
    assert result.status == "completed" and result.transport == "stdio"
    assert result.grade is not None and result.grade.score == 1.0


@pytest.mark.anyio
async def test_replay_on_synthesized_tasks_scores_what_the_reference_scores_and_noop_scores_zero() -> None:
    tasks = synthesized_tasks(20)
    if len(tasks) < 5:
        pytest.skip("the procedural families have not landed")
    with anyio.fail_after(60):
        for task in tasks:
            bench = Workbench.of(task)
            reference = grade_trial(bench, await run_steps(bench, task.reference_solution)).score
            replay = await run_episode(task, ReplayAgent())
            noop = await run_episode(task, NoopAgent())
            assert replay.grade is not None and noop.grade is not None
            assert replay.grade.score == reference == 1.0, (task.id, replay.grade.report())
            assert noop.grade.score == 0.0, (task.id, noop.grade.report())


@pytest.mark.anyio
async def test_a_forked_pristine_environment_is_left_untouched_by_the_episode() -> None:
    task = load_example("tickets-escalate-stale-enterprise")
    baseline = Baseline.of(task)
    before = baseline.pristine.state_hash()
    with anyio.fail_after(20):
        first = await run_episode(task, ReplayAgent(), baseline=baseline)
        second = await run_episode(task, ReplayAgent(), baseline=baseline, trial=1)
    assert baseline.pristine.state_hash() == before == first.initial_state_hash
    assert first.final_state_hash == second.final_state_hash != before
    baseline.close()


@pytest.mark.anyio
async def test_the_trajectory_records_messages_tool_calls_anchors_and_the_grade() -> None:
    task = load_example("tickets-escalate-stale-enterprise")
    with anyio.fail_after(20):
        result = await run_episode(task, ReplayAgent(), agent_spec="replay", trial=2)
    assert (result.task_id, result.trial, result.agent, result.difficulty) == (task.id, 2, "replay", "medium")
    assert [m.role for m in result.messages[:2]] == ["system", "user"]
    assert result.messages[1].content == task.request
    tool_steps = [s for s in task.reference_solution if not hasattr(s, "say")]
    assert len(result.steps) == len(tool_steps)
    assert all(s.anchor and len(s.anchor) == 64 for s in result.steps)
    assert result.steps[0].anchor == result.initial_state_hash
    mutating = [i for i, s in enumerate(result.steps) if s.name == "tickets__escalate_ticket"]
    after = mutating[0] + 1
    assert result.steps[after].anchor != result.steps[mutating[0]].anchor
    assert result.said == task.reference_answer()
    assert result.grade is not None and result.grade.checks
    assert Trajectory.model_validate_json(to_line(result)) == result


def test_the_system_prompt_names_the_services_and_the_simulated_date() -> None:
    task = load_example("escalate-stale-enterprise-to-account-managers")
    prompt = system_prompt(task)
    assert "2026-03-02" in prompt and "Monday" in prompt
    assert all(f"- {s}:" in prompt for s in task.services)
    assert "coworker" in prompt


@pytest.mark.anyio
async def test_a_scripted_model_agent_uses_earlier_results_and_its_final_text_is_graded() -> None:
    task = load_example("tickets-pending-acme-question")
    agent = ScriptedAgent.from_turns(
        [
            {"tool_calls": [{"id": "orgs", "name": "tickets__list_organizations", "arguments": {}}]},
            {"tool_calls": [{"name": "tickets__search_tickets",
                             "arguments": {"organization_id": "org_acme", "status": ["pending"]}}]},
            {"tool_calls": [{"name": "tickets__get_ticket", "arguments": {"ticket_id": "nope"}}]},
            {"text": "Looking at it."},
        ]
    )  # fmt: skip
    with anyio.fail_after(20):
        result = await run_episode(task, agent)
    assert result.status == "completed"
    assert [s.name for s in result.steps] == [
        "tickets__list_organizations",
        "tickets__search_tickets",
        "tickets__get_ticket",
    ]
    assert result.steps[2].is_error and result.steps[2].outcome == "error"
    assert result.said == ["Looking at it."]
    assert len(result.turns) == 4
    assert result.grade is not None and result.grade.score < 1.0


@pytest.mark.anyio
async def test_an_unknown_tool_name_comes_back_to_the_agent_as_an_error_result() -> None:
    task = load_example("tickets-pending-acme-question")
    agent = ScriptedAgent.from_turns([{"tool_calls": [{"name": "crm__delete_everything", "arguments": {}}]}])
    with anyio.fail_after(20):
        result = await run_episode(task, agent)
    assert result.status == "completed"
    assert result.steps[0].is_error and result.steps[0].outcome == "unknown_tool"
    assert "Available tools" in result.messages[3].content


@pytest.mark.anyio
async def test_turn_and_tool_call_limits_end_the_episode_as_max_turns_and_it_is_still_graded() -> None:
    task = load_example("tickets-pending-acme-question")
    with anyio.fail_after(20):
        by_turns = await run_episode(task, LoopingAgent(), config=EpisodeConfig(max_turns=5))
        by_calls = await run_episode(task, LoopingAgent(), config=EpisodeConfig(max_turns=50, max_tool_calls=3))
    assert (by_turns.status, by_turns.stop_reason) == ("max_turns", "max_turns (5)")
    assert len(by_turns.turns) == 5 and by_turns.usage.input_tokens == 50
    assert (by_calls.status, by_calls.stop_reason) == ("max_turns", "max_tool_calls (3)")
    assert len(by_calls.steps) == 3
    assert by_turns.grade is not None and by_calls.grade is not None


@pytest.mark.anyio
async def test_the_wall_time_limit_ends_a_stuck_agent_as_timeout() -> None:
    task = load_example("tickets-pending-acme-question")
    with anyio.fail_after(10):
        result = await run_episode(task, StuckAgent(), config=EpisodeConfig(wall_time_s=0.05))
    assert result.status == "timeout" and result.grade is not None


@pytest.mark.anyio
async def test_agent_errors_are_graded_and_infrastructure_errors_are_not(tmp_path: object) -> None:
    task = load_example("tickets-pending-acme-question")
    broken = ScriptedAgent.from_turns([{"raise": "agent"}])
    down = ScriptedAgent.from_turns([{"raise": "infra"}])
    with anyio.fail_after(20):
        agent_error = await run_episode(task, broken)
        infra_error = await run_episode(task, down)
    assert agent_error.status == "agent_error" and agent_error.grade is not None
    assert "scripted agent failure" in (agent_error.error or "")
    assert infra_error.status == "infra_error" and infra_error.grade is None and not infra_error.scored


@pytest.mark.anyio
async def test_no_api_key_reaches_the_trajectory(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-ant-api03-THISISASECRETKEYVALUE1234567890"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)

    class LeakyAgent:
        name = "leaky"

        async def complete(self, messages: object, tools: object) -> object:
            raise RuntimeError(f"request failed with headers {{'x-api-key': '{secret}'}}")

    task = load_example("tickets-pending-acme-question")
    with anyio.fail_after(20):
        result = await run_episode(task, LeakyAgent())  # type: ignore[arg-type]
    line = to_line(result)
    assert result.status == "agent_error"
    assert secret not in line and "REDACTED" in line
    assert json.loads(line)["error"]
