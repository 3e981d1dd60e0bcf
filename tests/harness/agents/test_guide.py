"""The agent guide's template runs: its module registers a backend that ``make_agent`` builds from its spec, that
refuses a bad argument with one line, and that runs a graded episode; installed as another package's
``coworkenv.agents`` entry point, ``coworkenv run --agent survey:1`` runs it with nothing of ours edited."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import anyio
import pytest

from coworkenv.harness.agents.registry import AgentSpecError, make_agent, model_name, unregister_agent
from coworkenv.harness.episode import run_episode
from coworkenv.harness.messages import AgentTurn, Message, ToolCall, ToolView
from coworkenv.servers.kit.plugins import AGENTS_GROUP
from coworkenv.synth.contract.taskfile import load_task
from tests.guides import ROOT, guide_module, install_dist, python_blocks

GUIDE = "harness/agents/README.md"
TASK = ROOT / "synth/examples/tickets-triage-new-urgent.json"


@pytest.fixture
def survey(tmp_path: Path) -> Iterator[ModuleType]:
    (code,) = python_blocks(GUIDE)
    try:
        with guide_module(tmp_path, "survey", code) as module:
            yield module
    finally:
        unregister_agent("survey")


def test_the_guide_backend_is_built_from_its_spec_and_refuses_a_bad_argument(survey: ModuleType) -> None:
    agent = make_agent("survey:2")
    assert isinstance(agent, survey.SurveyAgent) and agent.max_calls == 2
    assert make_agent("survey").name == "survey:5"
    with pytest.raises(AgentSpecError, match="survey takes a number of lists to read"):
        make_agent("survey:lots")
    assert model_name("survey:2") is None
    with pytest.raises(AgentSpecError, match=r"use one of: .*survey\[:N\]"):
        make_agent("surveys-of-all-kinds")


def test_the_guide_backend_runs_a_graded_episode_that_reads_and_changes_nothing(survey: ModuleType) -> None:
    task = load_task(TASK)

    async def main() -> None:
        with anyio.fail_after(60):
            record = await run_episode(task, make_agent("survey:2"), agent_spec="survey:2")
        calls = [c for m in record.messages for c in m.tool_calls]
        assert len(calls) == 2 and all(c.name.split("__")[1].startswith(("list_", "search_")) for c in calls)
        assert record.messages[-1].content == "I read 2 lists and changed nothing."
        assert record.grade is not None and record.grade.safety == 1.0 and record.grade.completion < 1.0

    anyio.run(main)


@pytest.mark.slow
def test_coworkenv_run_runs_a_backend_of_another_package_through_its_entry_point(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "survey.py").write_text(python_blocks(GUIDE)[0] + "\n")
    install_dist(site, "survey_agent", {AGENTS_GROUP: {"survey": "survey:BACKEND"}})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "coworkenv.train.cli", "run", "--tasks", str(TASK), "--agent", "survey:1"]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "run")], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["agent"] == "survey:1" and record["grade"]["safety"] == 1.0


def test_the_guide_shows_the_tool_results_an_agent_is_handed() -> None:
    text = (ROOT / GUIDE).read_text(encoding="utf-8")
    (shown,) = re.findall(r"```text\n(.+?)\n```", text, flags=re.S)
    seen: list[Message] = []

    class Probe:
        name = "probe"

        async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
            if any(m.role == "tool" for m in messages):
                seen.extend(m for m in messages if m.role == "tool")
                return AgentTurn(text="done", stop_reason="end_turn")
            assert all(t.name == f"{t.service}__{t.tool}" and t.description and t.input_schema for t in tools)
            calls = [ToolCall(id=f"c{i}", name="tickets__get_ticket", arguments={"ticket_id": t})
                     for i, t in ((1, "tkt_1010"), (2, "tkt_nope"))]  # fmt: skip
            return AgentTurn(tool_calls=calls, stop_reason="tool_use")

    async def main() -> None:
        with anyio.fail_after(60):
            await run_episode(load_task(TASK), Probe())

    anyio.run(main)
    found, missing = seen
    assert repr(missing) == shown.splitlines()[1]
    head, tail = shown.splitlines()[0].split(", ..., ")[0], shown.splitlines()[0].split("...}', ")[1]
    assert repr(found).startswith(head) and repr(found).endswith(tail) and json.loads(found.content)["id"] == "tkt_1010"
