"""`train rl --curriculum N`: each task is played N times by the policy first, and the run trains on the tasks
whose rewards differ (a group whose rollouts all score the same has nothing to teach); none left is one clear
error, and the probes' findings are kept in coworkenv_rl.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coworkenv.harness.agents.base import InfrastructureError
from coworkenv.harness.agents.builtin import NoopAgent, ReplayAgent
from coworkenv.synth.contract.taskfile import load_task
from coworkenv.train.curriculum import apply_curriculum, probe_tasks
from coworkenv.train.options import OptionsError, RLOptions

EXAMPLES = Path(__file__).parents[2] / "synth" / "examples"
TASK = load_task(EXAMPLES / "tickets-triage-new-urgent.json")


class ByTask:
    """Plays the reference on tasks whose id is in ``solves``, gives up on the rest; on ``flips`` it alternates."""

    name = "by-task"

    def __init__(self, solves: set[str], flips: set[str]) -> None:
        self.solves, self.flips, self.calls = solves, flips, 0

    async def run_episode(self, io: Any) -> None:
        task_id = io.task.id
        self.calls += 1
        solve = task_id in self.solves or (task_id in self.flips and self.calls % 2 == 0)
        await (ReplayAgent() if solve else NoopAgent()).run_episode(io)


def _tasks() -> list[Any]:
    return [TASK.model_copy(update={"id": name}) for name in ("always", "never", "sometimes")]


def test_only_the_task_whose_probes_score_differently_is_kept_and_the_others_are_counted() -> None:
    options = RLOptions(tasks="-", out="-", curriculum=4)
    kept, curriculum = apply_curriculum(options, _tasks(), ByTask({"always"}, {"sometimes"}))
    assert [t.id for t in kept] == ["sometimes"]
    assert curriculum.counts() == {"differ": 1, "all pass": 1, "all the same": 1, "unplayable": 0}
    assert curriculum.record()["rewards"]["sometimes"] == [0.0, 1.0, 0.0, 1.0]
    assert "1 of 3 tasks have rewards that differ over 4 probes" in curriculum.line()


class FlakyOnce(ByTask):
    """Fails for the infrastructure on its first episode, then plays as ``ByTask``."""

    async def run_episode(self, io: Any) -> None:
        if self.calls == 0:
            self.calls += 1
            raise InfrastructureError("the model server dropped the connection")
        await super().run_episode(io)


def test_a_probe_lost_to_the_infrastructure_is_played_again_and_never_scored_as_the_policy_s() -> None:
    options = RLOptions(tasks="-", out="-", curriculum=2)
    curriculum = probe_tasks(options, _tasks()[:1], FlakyOnce({"always"}, set()))
    assert curriculum.probed[0].rewards == (1.0, 1.0) and curriculum.probed[0].infra_errors == 1


def test_when_no_task_s_rewards_differ_the_run_stops_in_one_line_saying_what_to_do() -> None:
    options = RLOptions(tasks="-", out="-", curriculum=2)
    with pytest.raises(OptionsError, match=r"no task's rewards differ.*--curriculum 0"):
        apply_curriculum(options, _tasks(), ByTask({"always"}, set()))


@pytest.mark.parametrize("probes", [1, -2])
def test_fewer_than_two_probes_cannot_tell_rewards_apart_and_is_refused(probes: int) -> None:
    with pytest.raises(OptionsError, match="curriculum"):
        RLOptions(curriculum=probes)


def test_the_policy_itself_probes_the_tasks_through_the_command(tiny_model: Path, tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from coworkenv.train.commands import train_group

    args = ["rl", "--tasks", str(EXAMPLES / "tickets-triage-new-urgent.json"), "--model", str(tiny_model)]
    args += ["--out", str(tmp_path / "rl"), "--curriculum", "2", "--max-new-tokens", "8", "--max-turns", "2"]
    result = CliRunner().invoke(train_group, args)
    # A random tiny model scores 0 on every probe: nothing to learn from, said plainly, nothing written.
    assert result.exit_code == 1, result.output
    assert "--curriculum 2: no task's rewards differ" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "rl").exists()
    probed = probe_tasks(RLOptions(tasks="-", out="-", model=str(tiny_model), curriculum=2, max_new_tokens=8,
                                   max_turns=2), [TASK])  # fmt: skip
    assert probed.probed[0].rewards == (0.0, 0.0)
