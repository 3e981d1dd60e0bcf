"""Imported Claw-Eval tasks run on our harness: the agent gets the profile's tools as the task declares them on the
direct door and over in-memory MCP, a conversation-only task runs with no tools and the simulated user, the task's
limits apply, and the run is graded by the Claw-Eval grading bridge."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.harness.agents.builtin import ScriptedAgent
from coworkenv.harness.episode import EpisodeConfig, run_episode, task_baseline
from coworkenv.harness.messages import AgentTurn, Message, ToolView
from coworkenv.harness.tools import system_prompt, task_registry, task_services
from coworkenv.harness.user_llm import LLMUser
from coworkenv.servers.kit.tool_faults import ToolFaults
from tests.harness.claw_eval.runtime_helpers import AGENT_TOOLS, DECLARED, RIGHT, SPEC, talk_task, todo_task

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _no_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Graded from the declared checks: no Claw-Eval checkout is looked for."""
    monkeypatch.delenv("CLAW_EVAL_PATH", raising=False)


class Recording(ScriptedAgent):
    """A scripted agent that keeps the tools and messages of each model call."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        super().__init__(ScriptedAgent.from_turns(turns).script)
        self.seen: list[list[ToolView]] = []
        self.systems: list[str] = []

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        self.seen.append(list(tools))
        self.systems.append(messages[0].content)
        return await super().complete(messages, tools)


@pytest.mark.parametrize("transport", ["direct", "mcp"])
async def test_the_agent_gets_the_declared_tools_and_the_run_is_graded_by_the_bridge(transport: str) -> None:
    agent = Recording(RIGHT)
    with anyio.fail_after(30):
        record = await run_episode(todo_task(), agent, config=EpisodeConfig(transport=transport))  # type: ignore[arg-type]
    assert record.status == "completed", record.error
    listed = agent.seen[0]
    assert [t.name for t in listed] == AGENT_TOOLS
    assert [(t.description, t.input_schema) for t in listed] == [
        (d["description"], d["input_schema"]) for d in DECLARED
    ]
    assert [(s.name, s.outcome) for s in record.steps] == [
        ("todo__todo_list_tasks", "ok"),
        ("todo__todo_update_task", "ok"),
    ]
    assert '"todo_001"' in record.steps[0].text and '"status": "updated"' in record.steps[1].text
    assert record.final_state_hash != record.initial_state_hash
    assert record.grade is not None and record.grade.passed and record.grade.score == 1.0, record.grade


async def test_the_tools_the_task_does_not_declare_are_unknown_to_the_agent() -> None:
    turns = [{"tool_calls": [{"name": "todo__todo_create_task", "arguments": {"title": "x"}}]}, {"text": "Done."}]
    with anyio.fail_after(30):
        record = await run_episode(todo_task(), ScriptedAgent.from_turns(turns))
    assert [s.outcome for s in record.steps] == ["unknown_tool"]
    assert record.final_state_hash == record.initial_state_hash


async def test_a_safety_check_the_agent_trips_scores_zero() -> None:
    turns = [
        {"tool_calls": [{"name": "todo__todo_delete_task", "arguments": {"task_id": "todo_001"}}]},
        {"text": "todo_001"},
    ]
    with anyio.fail_after(30):
        record = await run_episode(todo_task(), ScriptedAgent.from_turns(turns))
    assert record.grade is not None and record.grade.safety == 0 and record.grade.score == 0


async def test_a_conversation_only_task_runs_with_no_tools_and_the_user_simulator() -> None:
    agent = Recording(
        [{"text": "How much is left on the loan, and at what rate?"}, {"text": "Then prepay: it saves interest."}]
    )
    with anyio.fail_after(30):
        record = await run_episode(talk_task(), agent)
    assert record.status == "completed", record.error
    assert agent.seen and all(tools == [] for tools in agent.seen)
    assert "no tools" in agent.systems[0] and "Ask for what is missing" in agent.systems[0]
    assert "1.5M loan" not in agent.systems[0]  # the persona is the user's brief, never the agent's
    assert [e.kind for e in record.user_events][-1] == "end"
    assert record.grade is not None and not record.grade.passed  # its judged answer is not judged offline


async def test_the_task_s_max_turns_caps_the_agent_s_turns() -> None:
    spec = {**SPEC, "environment": {"max_turns": 2}}
    looping = [{"tool_calls": [{"name": "todo__todo_list_tasks", "arguments": {}}]}] * 6
    with anyio.fail_after(30):
        record = await run_episode(todo_task(spec=spec), ScriptedAgent.from_turns(looping))
    assert record.status == "max_turns" and len(record.turns) == 2
    assert record.grade is not None  # a run cut at its limit is still graded


async def test_the_llm_user_writes_at_most_the_task_s_max_rounds_replies() -> None:
    assert LLMUser(talk_task(max_rounds=3), client=object()).max_replies == 3  # type: ignore[arg-type]
    assert LLMUser(todo_task(), client=object()).max_replies == 10  # type: ignore[arg-type]


async def test_tool_faults_are_the_same_at_a_seed_counted_and_change_no_state() -> None:
    reads = [{"tool_calls": [{"name": "todo__todo_list_tasks", "arguments": {}}]}] * 8 + [{"text": "todo_001"}]
    config = EpisodeConfig(tool_faults=ToolFaults(0.6, 5, (0.0, 0.0)))
    with anyio.fail_after(60):
        runs = [await run_episode(todo_task(), ScriptedAgent.from_turns(reads), config=config) for _ in range(2)]
        other = await run_episode(todo_task(), ScriptedAgent.from_turns(reads), config=config, trial=1)
    first, second = ([s.text[:8] for s in r.steps] for r in runs)
    assert first == second and any(t.startswith("HTTP 4") for t in first)
    assert runs[0].tool_faults == sum(t.startswith(("HTTP 429", "HTTP 500")) for t in first) > 0
    assert [s.text[:8] for s in other.steps] != first  # another trial draws its own
    assert all(r.final_state_hash == r.initial_state_hash for r in [*runs, other])


async def test_an_imported_task_s_baseline_derives_no_expected_changes() -> None:
    baseline = task_baseline(todo_task())
    try:
        assert baseline.expected == []
        assert [t.name for t in baseline.services["todo"].tools] == [d["name"] for d in DECLARED]
    finally:
        baseline.close()


def test_a_task_off_the_profile_keeps_the_registry_s_services() -> None:
    task = todo_task(tool_profile=None)
    assert task_registry(task) is None
    assert "todo__list_tasks" in [t.name for t in task_services(task).tools]
    assert "todo__todo_list_tasks" not in [t.name for t in task_services(task).tools]


def test_the_system_prompt_lists_the_services_and_the_tool_naming() -> None:
    text = system_prompt(todo_task())
    assert "- todo:" in text and "<service>__<tool>" in text


async def test_a_task_declaring_a_tool_no_profile_serves_is_an_environment_error_naming_it() -> None:
    bad = todo_task(
        tool_profile={"name": "claw-eval", "services": ["todo"], "tools": [*DECLARED, {"name": "todo_fly"}]}
    )
    with anyio.fail_after(30):
        record = await run_episode(bad, ScriptedAgent.from_turns(RIGHT))
    assert record.status == "infra_error" and "todo_fly" in (record.error or "")
