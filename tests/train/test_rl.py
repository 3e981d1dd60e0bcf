"""RL: episodes in a real environment with the tiny model, reject-and-retry of groups, one training step."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("trl")

from coworkenv.harness.agents.base import ModelAgent
from coworkenv.harness.agents.builtin import ScriptedAgent
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.taskfile import load_task
from coworkenv.train.options import RLOptions
from coworkenv.train.rollout import Rollout, collect_groups
from tests.train.fixtures import reference_turns

EXAMPLES = Path(__file__).parents[2] / "synth" / "examples"
TASK_FILE = EXAMPLES / "tickets-triage-new-urgent.json"


def half_solves(task: Task, index: int) -> ModelAgent:
    """Even rollouts play the reference solution as tool calls; odd ones give up."""
    if index % 2 == 0:
        return ScriptedAgent.from_turns(reference_turns(task), then="Done: both tickets are assigned to Kim.")
    return ScriptedAgent.from_turns([], then="I can't help with that.")


@pytest.fixture(scope="module")
def policy(tiny_model: Path) -> tuple[Any, Any]:
    from coworkenv.train.rl import load_policy

    return load_policy(RLOptions(model=str(tiny_model), lora_rank=4, lora_alpha=8))


@pytest.fixture(scope="module")
def scripted_group(policy: tuple[Any, Any]) -> list[Rollout]:
    from coworkenv.train.policy import PolicyAgent
    from coworkenv.train.rollout import EpisodeRollouts

    model, tokenizer = policy
    rollouts = EpisodeRollouts(lambda task, i: PolicyAgent(model, tokenizer, inner=half_solves(task, i)))
    try:
        groups, stats = anyio.run(collect_groups, [load_task(TASK_FILE)], rollouts, 2)
    finally:
        rollouts.close()
    assert stats.groups == 1 and stats.rejected == 0
    return groups[0]


def test_rollouts_in_a_real_environment_carry_the_graders_rewards_and_anchor_states(
    scripted_group: list[Rollout],
) -> None:
    solved, gave_up = scripted_group
    assert solved.status == gave_up.status == "ok"
    assert solved.rewards == {"completion": 1.0, "safety": 1.0, "score": 1.0}
    assert gave_up.rewards == {"completion": 0.0, "safety": 1.0, "score": 0.0}
    assert solved.turns == len(reference_turns(load_task(TASK_FILE))) + 1 and gave_up.turns == 1
    assert len(solved.anchors) == solved.turns
    assert solved.trajectory is not None and solved.anchors[0] == solved.trajectory.initial_state_hash
    assert gave_up.anchors[0] == solved.anchors[0]  # both start from the task's seeded state
    assert len(set(solved.anchors)) > 1  # the assignments change the state


@pytest.mark.parametrize(("at_limit", "status"), [("reject", "incomplete"), ("grade", "ok")])
def test_a_rollout_that_loops_until_its_tool_call_limit_is_rejected_or_graded_as_asked(
    policy: tuple[Any, Any], at_limit: str, status: str
) -> None:
    from coworkenv.harness.episode import EpisodeConfig
    from coworkenv.train.policy import PolicyAgent
    from coworkenv.train.rollout import EpisodeRollouts

    task = load_task(TASK_FILE)
    first = reference_turns(task)[0]
    loops = ScriptedAgent.from_turns([{**first, "tool_calls": [{**c, "id": f"c{n}"} for c in first["tool_calls"]]}
                                      for n in range(10)])  # fmt: skip
    model, tokenizer = policy
    rollouts = EpisodeRollouts(
        lambda t, i: PolicyAgent(model, tokenizer, inner=loops), EpisodeConfig(max_tool_calls=3), at_limit
    )

    async def play() -> Rollout:
        with anyio.fail_after(60):
            return await rollouts(task, 0)

    try:
        rollout = anyio.run(play)
    finally:
        rollouts.close()
    assert rollout.trajectory is not None and rollout.trajectory.status == "max_turns"
    assert rollout.status == status
    assert rollout.rewards is not None and rollout.rewards["score"] == 0.0  # graded: it only read, nothing done


def test_the_env_mask_covers_the_policys_tool_calls_and_text_and_nothing_the_environment_said(
    scripted_group: list[Rollout], policy: tuple[Any, Any]
) -> None:
    _, tokenizer = policy
    solved = scripted_group[0]
    assert len(solved.segments) == 1  # the template is prefix-preserving: one sequence for the whole episode
    segment = solved.segments[0]
    generated = tokenizer.decode([t for t, m in zip(segment.ids, segment.mask, strict=True) if m])
    context = tokenizer.decode([t for t, m in zip(segment.ids, segment.mask, strict=True) if not m])
    assert generated.count("<tool_call>") == 6 and generated.count("<|im_end|>") == solved.turns
    assert '"name": "tickets__assign_ticket"' in generated and "Done: both tickets" in generated
    assert "<tool_response>" not in generated and "<|im_start|>" not in generated
    assert "Kim Nguyen is on call" not in generated and "Kim Nguyen is on call" in context
    assert set(segment.turn[i] for i, m in enumerate(segment.mask) if m) == set(range(solved.turns))


@pytest.mark.parametrize("algo", ["grpo", "dr_grpo", "gdpo", "gigpo"])
def test_each_algo_gives_the_solving_rollout_the_higher_advantage(scripted_group: list[Rollout], algo: str) -> None:
    from coworkenv.train.rl import turn_advantages

    solved, gave_up = turn_advantages([scripted_group], RLOptions(algo=algo, gigpo_gamma=0.5))[0]
    assert len(solved) == scripted_group[0].turns and len(gave_up) == 1
    assert min(solved) > 0 > gave_up[0]
    if algo == "gigpo":  # the first turns share the seeded state with the give-up turn: a step group
        assert solved[0] != solved[-1]


def test_one_rl_step_end_to_end_on_cpu_with_the_tiny_model_trains_the_lora_weights(
    tiny_model: Path, tmp_path: Path
) -> None:
    from safetensors.torch import load_file

    from coworkenv.train.rl import run_rl

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    shutil.copy(TASK_FILE, tasks)
    options = RLOptions(
        tasks=str(tasks), model=str(tiny_model), out=str(tmp_path / "rl"), algo="gigpo", group_size=2,
        tasks_per_step=1, steps=1, lr=1e-2, lora_rank=4, lora_alpha=8, max_turns=12,
    )  # fmt: skip
    history = run_rl(options, inner=half_solves)
    assert len(history) == 1
    step = history[0]
    assert step["groups"] == 1 and step["reward"] == 0.5 and step["rollouts"] == 2
    assert step["grad_norm"] > 0
    weights = load_file(str(tmp_path / "rl" / "adapter_model.safetensors"))
    lora_b = [w for name, w in weights.items() if "lora_B" in name]
    assert lora_b and any(float(w.abs().sum()) > 0 for w in lora_b)  # B starts at zero: the step moved it
    logged = [json.loads(line) for line in (tmp_path / "rl" / "metrics.jsonl").read_text().splitlines()]
    assert logged[0]["rejected"] == 0 and logged[0]["dropped"] == 0


def test_the_rl_command_with_the_native_engine_samples_the_tiny_model_in_an_environment(
    tiny_model: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from coworkenv.train.commands import train_group

    args = ["rl", "--engine", "native", "--tasks", str(TASK_FILE), "--model", str(tiny_model)]
    args += [
        "--out",
        str(tmp_path / "rl"),
        "--group-size",
        "2",
        "--tasks-per-step",
        "1",
        "--steps",
        "1",
        "--max-new-tokens",
        "8",
        "--max-turns",
        "2",
    ]
    result = CliRunner().invoke(train_group, [*args, "--lora-rank", "4", "--lr", "1e-3"])
    assert result.exit_code == 0, result.output
    assert "step 0: reward" in result.output and (tmp_path / "rl" / "adapter_config.json").is_file()


# --- reject-and-retry and drop, with a fake environment -------------------------------------------------


class FakeEpisodes:
    """Plays scripted outcomes: ``plan[(task_id, attempt)]`` lists each rollout's (status, score)."""

    def __init__(self, plan: dict[tuple[str, int], list[tuple[str, float | None]]]) -> None:
        self.plan = plan
        self.attempts: dict[str, int] = {}

    async def __call__(self, task: Task, index: int) -> Rollout:
        attempt = self.attempts.get(task.id, 0)
        if index == 0:
            attempt = self.attempts[task.id] = attempt + 1
        outcomes = self.plan.get((task.id, attempt)) or self.plan[(task.id, 0)]
        status, score = outcomes[index]
        rewards = None if score is None else {"completion": score, "safety": 1.0, "score": score}
        return Rollout(task_id=task.id, status=status, rewards=rewards, anchors=["s0"], turns=1)


def _task(task_id: str) -> Task:
    data = json.loads(TASK_FILE.read_text())
    return Task.model_validate({**data, "id": task_id})


def test_a_group_with_an_infra_failure_is_rejected_retried_and_counted() -> None:
    plan = {
        ("a", 0): [("ok", 1.0), ("ok", 0.0)],
        ("a", 1): [("ok", 1.0), ("infra_error", None)],  # first attempt: rejected, played again
        ("b", 0): [("ok", 0.5), ("ok", 0.0)],
    }
    groups, stats = anyio.run(collect_groups, [_task("a"), _task("b")], FakeEpisodes(plan), 2, 2)
    assert stats.rejected == 1 and stats.retried == 1 and stats.given_up == 0 and stats.groups == 2
    assert stats.reasons == {"infra_error": 1}
    assert sorted(g[0].task_id for g in groups) == ["a", "b"]
    assert all(r.status == "ok" for g in groups for r in g)


def test_a_group_that_stays_incomplete_is_given_up_after_the_last_retry() -> None:
    plan = {("a", 0): [("ok", 1.0), ("incomplete", None)]}
    groups, stats = anyio.run(collect_groups, [_task("a")], FakeEpisodes(plan), 2, 1)
    assert groups == [] and stats.rejected == 2 and stats.retried == 1 and stats.given_up == 1
    assert stats.reasons == {"incomplete": 2}


def test_an_ungraded_rollout_is_dropped_from_its_group_and_counted() -> None:
    plan = {("a", 0): [("ok", 1.0), ("ok", None), ("ok", 0.0)]}
    groups, stats = anyio.run(collect_groups, [_task("a")], FakeEpisodes(plan), 3, 0)
    assert stats.dropped == 1 and stats.rejected == 0
    assert [r.reward for r in groups[0]] == [1.0, 0.0]


def test_an_unknown_at_limit_in_a_config_file_ends_in_one_line_naming_the_choices(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from coworkenv.train.commands import train_group

    config = tmp_path / "rl.yaml"
    config.write_text("tasks: x\nout: y\nat_limit: ignore\n", encoding="utf-8")
    result = CliRunner().invoke(train_group, ["rl", "--config", str(config)])
    assert result.exit_code == 1
    assert result.output.strip() == "Error: unknown at_limit 'ignore'; use one of reject, grade"
