"""`train rl --engine trl`: one CPU step of GRPOTrainer per algorithm on the tiny model, its tool calls scripted
(a random model never calls tools), plus group reject-and-retry before advantages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("trl")

from coworkenv.harness.agents.registry import make_agent
from coworkenv.harness.episode import run_episode
from coworkenv.synth.contract.taskfile import load_task
from coworkenv.train.options import RLOptions
from coworkenv.train.trl_grpo import CoworkGRPOTrainer
from coworkenv.train.trl_rl import run_trl_rl

EXAMPLES = Path(__file__).parents[2] / "synth" / "examples"
TASK_FILE = EXAMPLES / "tickets-triage-new-urgent.json"


def reference_calls() -> tuple[list[str], str]:
    """The replayed reference solution as completion texts (one tool call a turn) and its closing reply."""

    async def go() -> Any:
        with anyio.fail_after(30):
            return await run_episode(load_task(TASK_FILE), make_agent("replay"))

    episode = anyio.run(go)
    calls = [
        "<tool_call>\n" + json.dumps({"name": s.name, "arguments": s.arguments}) + "\n</tool_call><|im_end|>"
        for s in episode.steps
    ]
    return calls, (" ".join(episode.said) or "Done.") + "<|im_end|>"


CALLS, CLOSING = reference_calls()


class Scripted(CoworkGRPOTrainer):
    """Generation replaced by a script: even rollouts play the reference solution, odd ones give up at once;
    ``cut`` lists first-turn rollouts (by order of generation) whose text stops without an end-of-turn token."""

    cut: tuple[int, ...] = ()

    def _generate_single_turn(self, prompt_ids: Any, *args: Any, **kwargs: Any) -> tuple[list[list[int]], None]:
        texts = []
        for ids in prompt_ids:
            done = self._tokenizer.decode(ids).count("<tool_response>")
            if done == 0:
                n = self.__dict__.setdefault("_firsts", 0)
                self._firsts = n + 1
                if n in self.cut:
                    texts.append("I will look at the")
                    continue
                texts.append(CALLS[0] if n % 2 == 0 else "I can't help with that.<|im_end|>")
            else:
                texts.append(CALLS[done] if done < len(CALLS) else CLOSING)
        return [self._tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts], None


def options(tiny_model: Path, out: Path, algo: str, **extra: Any) -> RLOptions:
    values: dict[str, Any] = {
        "tasks": str(TASK_FILE),
        "model": str(tiny_model),
        "out": str(out),
        "algo": algo,
        "group_size": 2,
        "tasks_per_step": 1,
        "steps": 1,
        "lr": 1e-2,
        "lora_rank": 4,
        "lora_alpha": 8,
        "max_completion_length": 6000,
        "max_tool_calls": 10,
    }
    return RLOptions(**(values | extra))


@pytest.mark.parametrize("algo", ["grpo", "dr_grpo", "gdpo", "gigpo"])
def test_one_trl_step_per_algorithm_trains_on_the_graders_rewards_and_writes_trls_output_folder(
    tiny_model: Path, tmp_path: Path, algo: str
) -> None:
    history = run_trl_rl(options(tiny_model, tmp_path, algo), trainer_cls=Scripted)
    logged = history[0]
    names = ["completion_reward", "safety_reward"] if algo == "gdpo" else ["score_reward"]
    for name in names:
        assert f"rewards/{name}/mean" in logged
    assert logged["reward"] == pytest.approx(1.5 if algo == "gdpo" else 0.5)  # gdpo: completion 0.5 + safety 1
    assert logged["tools/call_frequency"] == pytest.approx(len(CALLS) / 2)
    assert (tmp_path / "adapter_model.safetensors").exists()
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    assert state["global_step"] == 1 and state["log_history"][0]["reward"] == logged["reward"]
    assert json.loads((tmp_path / "coworkenv_rl.json").read_text())["engine"] == "trl"


def test_full_rl_trains_the_models_own_weights_and_writes_a_whole_model(tiny_model: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    run_trl_rl(options(tiny_model, tmp_path, "grpo", full=True), trainer_cls=Scripted)
    assert not (tmp_path / "adapter_model.safetensors").exists()
    before, after = load_file(tiny_model / "model.safetensors"), load_file(tmp_path / "model.safetensors")
    assert before.keys() == after.keys()
    assert any(not after[k].equal(before[k]) for k in before)  # one step at lr 1e-2 moved the weights


def test_gigpo_gives_each_turn_its_own_advantage_from_its_anchor_state(tiny_model: Path, tmp_path: Path) -> None:
    from coworkenv.synth.contract.taskfile import load_task
    from coworkenv.train.trl_rl import build_trainer

    trainer = build_trainer(options(tiny_model, tmp_path, "gigpo"), [load_task(TASK_FILE)], Scripted)
    batch = next(iter(trainer.get_train_dataloader()))
    output = trainer._generate_and_score_completions(batch)
    advantages, mask = output["advantages"], output["completion_mask"] * output["tool_mask"]
    assert advantages.dim() == 2
    solved = advantages[0][mask[0].bool()].unique().tolist()
    gave_up = advantages[1][mask[1].bool()].unique().tolist()
    # the give-up's one turn shares the pristine state with the solver's first turns (reads change nothing):
    # below its episode advantage (-0.5) by the step comparison; the solver's turns differ by their state
    assert len(gave_up) == 1 and gave_up[0] < -0.5
    assert len(solved) >= 2 and min(solved) >= 0.5


def test_a_group_with_a_cut_rollout_is_played_again_before_advantages(tiny_model: Path, tmp_path: Path) -> None:
    class CutOnce(Scripted):
        cut = (0,)

    history = run_trl_rl(options(tiny_model, tmp_path, "grpo"), trainer_cls=CutOnce)
    summary = json.loads((tmp_path / "coworkenv_rl.json").read_text())
    assert summary["groups"] == {"incomplete": 1, "retried": 1}
    assert history[0]["reward"] == pytest.approx(0.5)  # the retried group: one solve, one give-up


def test_a_group_still_bad_after_its_retries_is_rejected_and_scores_nothing(tiny_model: Path, tmp_path: Path) -> None:
    class AlwaysCut(Scripted):
        cut = tuple(range(0, 100, 2))

    run_trl_rl(options(tiny_model, tmp_path, "grpo", max_retries=2), trainer_cls=AlwaysCut)
    summary = json.loads((tmp_path / "coworkenv_rl.json").read_text())
    assert summary["groups"] == {"incomplete": 3, "retried": 2, "rejected": 1}
    logged = summary["log_history"][0]
    assert logged["reward"] != logged["reward"] or logged["reward"] is None  # NaN: nothing was scored


def test_with_at_limit_grade_a_cut_rollout_is_graded_where_it_stopped_instead_of_replayed(
    tiny_model: Path, tmp_path: Path
) -> None:
    class AlwaysCut(Scripted):
        cut = tuple(range(0, 100, 2))

    history = run_trl_rl(options(tiny_model, tmp_path, "grpo", at_limit="grade"), trainer_cls=AlwaysCut)
    summary = json.loads((tmp_path / "coworkenv_rl.json").read_text())
    assert summary["groups"] == {"graded_at_limit": 1}  # no retry, nothing rejected
    assert history[0]["reward"] == pytest.approx(0.0)  # the cut rollout did nothing: graded, and it scores 0


def clarify_script() -> tuple[Any, list[str]]:
    """A task that asks the user (search, ask which contact, update) and its replayed turns as completion texts."""
    from coworkenv.synth.generate.families import get_family

    task = get_family("crm-clarify-contact").make(("crm",), "easy", 7)  # type: ignore[arg-type]

    async def go() -> Any:
        with anyio.fail_after(30):
            return await run_episode(task, make_agent("replay"))

    texts = []
    for message in anyio.run(go).messages:
        if message.role != "assistant":
            continue
        calls = [json.dumps({"name": c.name, "arguments": c.arguments}) for c in message.tool_calls]
        said = "".join(f"<tool_call>\n{c}\n</tool_call>" for c in calls) or message.content
        texts.append(said + "<|im_end|>")
    return task, texts


class Clarifying(CoworkGRPOTrainer):
    """Generation replaced by the replayed turns of a task that asks the user, by the number of turns so far."""

    script: list[str] = []

    def _generate_single_turn(self, prompt_ids: Any, *args: Any, **kwargs: Any) -> tuple[list[list[int]], None]:
        turns = [self._tokenizer.decode(ids).count("<|im_start|>assistant") - 1 for ids in prompt_ids]
        texts = [self.script[n] if n < len(self.script) else "Done.<|im_end|>" for n in turns]
        return [self._tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts], None


def test_a_rollout_goes_on_after_the_users_answer_and_is_rewarded_for_what_it_does_with_it(
    tiny_model: Path, tmp_path: Path
) -> None:
    from coworkenv.synth.contract.taskfile import save_tasks
    from coworkenv.train.trl_rl import build_trainer

    task, script = clarify_script()
    assert any("<tool_call>" not in text for text in script[:-1])  # the replay asks before it updates
    tasks = save_tasks([task], tmp_path / "tasks.jsonl")
    trainer_cls = type("Script", (Clarifying,), {"script": script})
    trainer = build_trainer(options(tiny_model, tmp_path, "grpo", tasks=str(tasks)), [task], trainer_cls)
    output = trainer._generate_and_score_completions(next(iter(trainer.get_train_dataloader())))
    answer = task.user.held_back[0]
    for env, completion in zip(trainer.environments, trainer._completions, strict=True):
        assert [m["role"] for m in completion].count("user") == 1
        assert any(m["role"] == "user" and m["content"] == answer for m in completion)
        assert env._graded().score == 1.0 and env.ended
    ids, learnt = output["completion_ids"][0], (output["completion_mask"] * output["tool_mask"])[0].bool()
    whole, trained = trainer._tokenizer.decode(ids), trainer._tokenizer.decode(ids[learnt])
    assert answer in whole and answer not in trained  # the user's words are context, not the model's to learn
    assert "crm__update_contact" in trained and trained.count("<|im_end|>") == len(script) + 1


def test_trls_warning_for_an_unscored_rollout_is_one_line_not_the_whole_task(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from coworkenv.train.trl_rl import NO_REWARD, quiet_unscored_warning

    quiet_unscored_warning()
    quiet_unscored_warning()  # once is enough: a second call adds nothing
    trl_logger = logging.getLogger("trl.trainer.grpo_trainer")
    assert sum(type(f).__name__ == "_NoRewardNote" for f in trl_logger.filters) == 1
    with caplog.at_level(logging.WARNING, logger="trl.trainer.grpo_trainer"):
        trl_logger.warning("All reward functions returned None for the following kwargs:\n{'task': '%s'}", "x" * 5000)
        trl_logger.warning("something else")
    assert [r.getMessage() for r in caplog.records] == [NO_REWARD, "something else"]


def test_train_rl_reports_a_step_whose_groups_were_all_rejected_instead_of_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from coworkenv.train import trl_rl
    from coworkenv.train.cli import main

    monkeypatch.setattr(trl_rl, "run_trl_rl", lambda options: [{"step": 1, "reward": None}, {"step": 2, "reward": 0.5}])
    args = ["train", "rl", "--tasks", str(TASK_FILE), "--model", "m", "--out", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "step 1: reward none (every group rejected)" in result.output and "step 2: reward 0.500" in result.output


@pytest.mark.parametrize("at_limit", ["reject", "grade"])
def test_a_rollout_the_user_still_had_an_answer_for_when_its_turns_ran_out_is_rejected_or_graded_as_asked(
    tiny_model: Path, tmp_path: Path, at_limit: str
) -> None:
    from coworkenv.synth.contract.taskfile import save_tasks
    from coworkenv.train.trl_rl import build_trainer

    task, script = clarify_script()
    tasks = save_tasks([task], tmp_path / "tasks.jsonl")
    trainer_cls = type("Script", (Clarifying,), {"script": script})
    extra = {"tasks": str(tasks), "max_turns": 0, "max_retries": 0, "at_limit": at_limit}
    trainer = build_trainer(options(tiny_model, tmp_path, "grpo", **extra), [task], trainer_cls)
    trainer._generate_and_score_completions(next(iter(trainer.get_train_dataloader())))
    if at_limit == "reject":  # incomplete: its group is rejected, nothing graded
        assert trainer.group_stats == {"incomplete": 2, "rejected": 1}
        assert all(env.rejected and env._graded() is None for env in trainer.environments)
        return
    assert trainer.group_stats == {"graded_at_limit": 2}
    for env in trainer.environments:  # graded at the state it reached: it asked, and never updated
        graded = env._graded()
        assert not env.rejected and graded is not None and graded.score < 1.0
