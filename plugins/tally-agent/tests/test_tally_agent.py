"""The tally backend, installed (``pip install ./plugins/tally-agent``), is built from its spec by
coworkenv and plays a graded episode that reads and changes nothing."""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("tally_agent", reason="install the example plugin: pip install ./plugins/tally-agent")

from tally_agent import TallyAgent

from coworkenv.harness.agents.registry import AgentSpecError, make_agent
from coworkenv.harness.episode import run_episode
from coworkenv.synth.generate.families import FAMILIES


def test_coworkenv_builds_the_backend_from_its_spec_and_refuses_a_bad_one() -> None:
    agent = make_agent("tally:2")
    assert isinstance(agent, TallyAgent) and agent.limit == 2
    with pytest.raises(AgentSpecError, match="tally takes the most lists to count"):
        make_agent("tally:all")


def test_an_episode_with_it_counts_the_lists_and_changes_nothing() -> None:
    task = FAMILIES["tickets-stale-escalation"].make(("tickets",), "easy", 3)

    async def main() -> None:
        with anyio.fail_after(60):
            record = await run_episode(task, make_agent("tally"), agent_spec="tally")
        assert record.messages[-1].content.startswith("Records per list: tickets__list_")
        assert record.grade is not None and record.grade.safety == 1.0 and not record.grade.unexplained

    anyio.run(main)
