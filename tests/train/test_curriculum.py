"""`train rl --curriculum N`: each task is played N times by the policy first, and the run trains on the tasks
whose rewards differ (a group whose rollouts all score the same has nothing to teach); none left is one clear
error, and the probes' findings are kept in coworkenv_rl.json."""

from __future__ import annotations

from dataclasses import replace
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
    assert probed.cached == 1  # the command's probes were kept for the next run of the same policy


def _policy(tmp_path: Path, weights: bytes | None = None) -> Path:
    """A policy folder with one weight file (``weights`` rewrites it: the policy trained further)."""
    folder = tmp_path / "policy"
    folder.mkdir(exist_ok=True)
    if weights is not None or not (folder / "model.safetensors").exists():
        (folder / "model.safetensors").write_bytes(weights or b"weights")
    return folder


def _cached_options(tmp_path: Path, **changes: Any) -> RLOptions:
    values: dict[str, Any] = {"tasks": "-", "out": "-", "curriculum": 2, "template": "compact",
                              "model": str(_policy(tmp_path)), "probe_cache": str(tmp_path / "cache")}  # fmt: skip
    return RLOptions(**{**values, **changes})


def test_a_second_run_of_the_same_policy_takes_the_probes_from_the_cache_and_plays_nothing(tmp_path: Path) -> None:
    first = ByTask({"always"}, {"sometimes"})
    before = probe_tasks(_cached_options(tmp_path), _tasks(), first)
    assert first.calls == 6 and before.cached == 0
    again = ByTask(set(), set())  # would score 0 everywhere: the cache, not this agent, answers
    after = probe_tasks(_cached_options(tmp_path), _tasks(), again)
    assert again.calls == 0 and after.cached == 3
    assert [p.rewards for p in after.probed] == [p.rewards for p in before.probed]
    assert [t.id for t in after.kept] == ["sometimes"]
    assert "3 of 3 tasks' probes from" in after.line() and after.record()["cached"] == 3


@pytest.mark.parametrize(
    "change",
    [{"temperature": 0.5}, {"max_new_tokens": 16}, {"seed": 7}, {"curriculum": 3}, {"tool_names": "tickets__x"}],
)
def test_a_policy_sampled_or_prompted_otherwise_is_probed_again(tmp_path: Path, change: dict[str, Any]) -> None:
    probe_tasks(_cached_options(tmp_path), _tasks(), ByTask({"always"}, set()))
    agent = ByTask({"always"}, set())
    probe_tasks(_cached_options(tmp_path, **change), _tasks(), agent)
    assert agent.calls == 3 * (change.get("curriculum") or 2)


def test_new_weights_are_probed_again_and_the_old_policy_s_probes_are_kept(tmp_path: Path) -> None:
    probe_tasks(_cached_options(tmp_path), _tasks(), ByTask({"always"}, set()))
    _policy(tmp_path, b"trained further")
    agent = ByTask({"always"}, set())
    probe_tasks(_cached_options(tmp_path), _tasks(), agent)
    assert agent.calls == 6
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2


def test_an_edited_task_is_probed_again_while_the_others_come_from_the_cache(tmp_path: Path) -> None:
    probe_tasks(_cached_options(tmp_path), _tasks(), ByTask({"always"}, set()))
    tasks = _tasks()
    tasks[1] = tasks[1].model_copy(update={"request": tasks[1].request + " Today, please."})
    agent = ByTask({"always"}, set())
    curriculum = probe_tasks(_cached_options(tmp_path), tasks, agent)
    assert agent.calls == 2 and curriculum.cached == 2


class StopsAt(ByTask):
    """Plays as ``ByTask`` until the task ``stop``, where the run is stopped (Ctrl-C)."""

    def __init__(self, stop: str) -> None:
        super().__init__({"always"}, set())
        self.stop = stop

    async def run_episode(self, io: Any) -> None:
        if io.task.id == self.stop:
            raise KeyboardInterrupt
        await super().run_episode(io)


def test_a_run_stopped_half_way_keeps_the_probes_it_finished_and_the_next_plays_only_the_rest(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        probe_tasks(_cached_options(tmp_path), _tasks(), StopsAt("sometimes"))
    agent = ByTask({"always"}, set())
    curriculum = probe_tasks(_cached_options(tmp_path), _tasks(), agent)
    assert curriculum.cached == 2 and agent.calls == 2


@pytest.mark.parametrize("content", ["", "{not json", '{"policy": 1}', '{"policy": null, "tasks": []}'])
def test_a_cache_file_cut_short_or_of_another_shape_is_probed_again_and_rewritten(tmp_path: Path, content: str) -> None:
    probe_tasks(_cached_options(tmp_path), _tasks(), ByTask({"always"}, set()))
    (cached_file,) = (tmp_path / "cache").glob("*.json")
    cached_file.write_text(content)
    agent = ByTask({"always"}, set())
    assert probe_tasks(_cached_options(tmp_path), _tasks(), agent).cached == 0 and agent.calls == 6
    assert probe_tasks(_cached_options(tmp_path), _tasks(), ByTask(set(), set())).cached == 3


def test_a_probe_lost_to_the_infrastructure_is_not_cached(tmp_path: Path) -> None:
    class Down(ByTask):
        async def run_episode(self, io: Any) -> None:
            self.calls += 1
            raise InfrastructureError("the model server is down")

    probe_tasks(_cached_options(tmp_path), _tasks()[:1], Down(set(), set()))
    agent = ByTask({"always"}, set())
    assert probe_tasks(_cached_options(tmp_path), _tasks()[:1], agent).cached == 0 and agent.calls == 2


def test_a_cache_that_cannot_be_written_is_said_once_and_costs_only_the_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cache").write_text("a file where the folder should be")
    curriculum = probe_tasks(_cached_options(tmp_path), _tasks(), ByTask({"always"}, {"sometimes"}))
    assert [t.id for t in curriculum.kept] == ["sometimes"]
    assert capsys.readouterr().err.count("cannot be written") == 1


@pytest.mark.parametrize("where", ["off", "env-off"])
def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    monkeypatch.setenv("COWORKENV_PROBE_CACHE", "off")
    options = _cached_options(tmp_path, probe_cache="off" if where == "off" else None)
    probe_tasks(options, _tasks(), ByTask({"always"}, set()))
    curriculum = probe_tasks(options, _tasks(), ByTask({"always"}, set()))
    assert curriculum.cached == 0 and curriculum.cache is None and not (tmp_path / "cache").exists()


def test_a_policy_whose_weights_are_not_on_this_machine_is_probed_without_a_cache(tmp_path: Path) -> None:
    options = _cached_options(tmp_path, model="nobody/not-downloaded-model")
    assert probe_tasks(options, _tasks(), ByTask({"always"}, set())).cache is None
    assert not (tmp_path / "cache").exists()


class Coin(ByTask):
    """Solves a task when torch's random draw says so: what it plays depends on the probes' seed."""

    async def run_episode(self, io: Any) -> None:
        import torch

        self.calls += 1
        await (ReplayAgent() if torch.rand(1).item() < 0.5 else NoopAgent()).run_episode(io)


def test_a_task_probes_alike_whatever_tasks_come_before_it(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    options = RLOptions(tasks="-", out="-", curriculum=6, probe_cache="off")
    alone = probe_tasks(options, _tasks()[2:], Coin(set(), set()))
    after_others = probe_tasks(options, _tasks(), Coin(set(), set()))
    assert alone.probed[0].rewards == after_others.probed[2].rewards
    assert (
        probe_tasks(replace(options, seed=1), _tasks()[2:], Coin(set(), set())).probed[0].rewards
        != alone.probed[0].rewards
    )


def test_a_new_release_of_the_code_that_plays_and_grades_the_probes_probes_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import coworkenv.train.curriculum as curriculum_module

    probe_tasks(_cached_options(tmp_path), _tasks(), ByTask({"always"}, set()))
    monkeypatch.setattr(curriculum_module, "_versions", lambda: {"coworkenv": "99.0", "torch": None})
    agent = ByTask({"always"}, set())
    assert probe_tasks(_cached_options(tmp_path), _tasks(), agent).cached == 0 and agent.calls == 6
