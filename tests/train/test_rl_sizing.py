"""`train rl` sizes itself before it starts: the completion length from the model's positions and the longest
prompt, generation and training in chunks that fit, and a memory estimate that refuses, in one line naming the
option to lower, what cannot fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("trl")

from coworkenv.train.cli import main
from coworkenv.train.options import OptionsError, RLOptions
from coworkenv.train.rl_sizing import (
    GB,
    HEADROOM,
    ModelShape,
    Runtime,
    estimate,
    free_memory,
    plan_rl,
)
from coworkenv.train.trl_grpo import CoworkGRPOTrainer, _trl

EXAMPLES = Path(__file__).parents[2] / "synth" / "examples"
TASK_FILE = EXAMPLES / "tickets-escalate-stale-enterprise.json"
TINY = ModelShape(hidden=64, layers=2, heads=4, kv_heads=2, intermediate=128, vocab=698, max_positions=32768)
QWEN_8B = ModelShape(
    hidden=4096, layers=36, heads=32, kv_heads=8, intermediate=12288, vocab=151936, max_positions=40960, tied=False
)
CPU, GPU = Runtime(), Runtime(dtype_bytes=2, gpu=True, checkpointing=True)


def rl(**values: Any) -> RLOptions:
    return RLOptions(tasks="t", model="m", out="o", **values)


def test_a_completion_past_the_models_positions_is_refused_naming_the_option() -> None:
    with pytest.raises(OptionsError, match=r"lower --max-completion-length to 28768 or less"):
        plan_rl(rl(max_completion_length=30000), TINY, 4000, 100 * GB, CPU)


def test_a_completion_too_big_for_the_memory_is_refused_naming_the_option() -> None:
    with pytest.raises(OptionsError, match=r"lower --max-completion-length \(now 16384\)") as caught:
        plan_rl(rl(max_completion_length=16384), TINY, 4000, 2 * GB, CPU)
    assert "\n" not in str(caught.value)


def test_a_prompt_too_long_for_the_memory_says_how_to_shorten_it() -> None:
    with pytest.raises(OptionsError, match=r"--template compact or --tool-names"):
        plan_rl(rl(), TINY, 30000, 2 * GB, CPU)


def test_a_model_too_big_for_the_machine_says_so() -> None:
    with pytest.raises(OptionsError, match=r"the model alone does not fit; use a smaller --model"):
        plan_rl(rl(), QWEN_8B, 4000, 8 * GB, CPU)


def test_an_unset_completion_takes_what_the_positions_leave_after_the_prompt() -> None:
    short = ModelShape(**{**TINY.__dict__, "max_positions": 4096})
    plan = plan_rl(rl(), short, 3800, 100 * GB, GPU)
    assert plan.completion == 296 and not plan.completion_given


def test_an_unset_completion_shrinks_and_the_batch_splits_until_the_estimate_fits() -> None:
    roomy = plan_rl(rl(), TINY, 4000, 100 * GB, CPU)
    tight = plan_rl(rl(), TINY, 4000, 3 * GB, CPU)
    assert (roomy.completion, roomy.generation_batch, roomy.micro_batch) == (512, 32, 32)
    assert tight.rollouts == 32 and tight.micro_batch < 32 and tight.accumulation * tight.micro_batch == 32
    assert tight.estimate.total <= 3 * GB * HEADROOM


def test_the_8b_model_of_the_papers_fits_one_h100_with_the_defaults() -> None:
    plan = plan_rl(rl(), QWEN_8B, 6000, 80 * GB, GPU)
    assert plan.completion == 4096 and plan.estimate.total <= 80 * GB * HEADROOM


def test_the_estimate_is_not_below_what_was_measured_on_the_tiny_model() -> None:
    """Measured on CPU: batch 2 × 4096 tokens forward and backward +0.47 GB; batch 8 × 4096 forward +0.79 GB."""
    trained = estimate(TINY, chunk=1, micro_batch=2, prompt=3584, completion=512, rank=16, runtime=CPU)
    generated = estimate(TINY, chunk=8, micro_batch=1, prompt=4096, completion=1, rank=16, runtime=CPU)
    assert trained.training >= 0.47 * GB and generated.generation >= 0.79 * GB


def test_full_training_counts_every_weights_gradient_and_optimizer_state_where_lora_counts_the_adapters() -> None:
    lora = plan_rl(rl(), QWEN_8B, 6000, 80 * GB, GPU)
    assert lora.estimate.optimizer == QWEN_8B.lora_parameters(16) * 12
    assert estimate(
        TINY, chunk=1, micro_batch=1, prompt=8, completion=8, rank=16, runtime=CPU, full=True
    ).optimizer == (TINY.parameters() * 12)
    with pytest.raises(OptionsError, match="the model alone does not fit"):
        plan_rl(rl(full=True), QWEN_8B, 6000, 80 * GB, GPU)  # 8B weights + 96 GB of optimizer state


def test_full_is_a_trl_option_on_a_merged_model_and_says_so_otherwise() -> None:
    with pytest.raises(OptionsError, match="--full is an option of the trl engine"):
        rl(full=True, engine="native")
    with pytest.raises(OptionsError, match="not --adapter"):
        rl(full=True, adapter="a")


def sized(tiny_model: Path, tasks: Path, **values: Any) -> Any:
    from coworkenv.harness.agents.hf_agent import load_tokenizer
    from coworkenv.harness.run import load_task_set
    from coworkenv.train.trl_env import trl_environments
    from coworkenv.train.trl_rl import size_run

    options = RLOptions(tasks=str(tasks), model=str(tiny_model), out="unused", **values)
    rows, factory = trl_environments(load_task_set([tasks]), owns_reward=False)
    return size_run(options, load_tokenizer(str(tiny_model)), rows, factory, "full")


def test_the_defaults_on_the_tiny_model_are_within_this_machine(tiny_model: Path) -> None:
    plan = sized(tiny_model, EXAMPLES)
    assert plan.rollouts == 32 and plan.completion == 512 and plan.prompt_tokens > 10000  # every tool schema
    assert plan.estimate.total <= plan.budget <= free_memory() * 1.5  # what was free, less the headroom
    assert ModelShape.of(str(tiny_model)).max_positions == 32768


def test_more_tasks_per_step_than_tasks_is_refused_naming_the_option(tiny_model: Path) -> None:
    with pytest.raises(OptionsError, match=r"lower --tasks-per-step to 1 or give more tasks"):
        sized(tiny_model, TASK_FILE)


def test_train_rl_refuses_an_impossible_length_in_one_line(tiny_model: Path, tmp_path: Path) -> None:
    args = ["train", "rl", "--tasks", str(TASK_FILE), "--model", str(tiny_model), "--out", str(tmp_path / "rl")]
    args += ["--tasks-per-step", "1"]
    result = CliRunner().invoke(main, [*args, "--max-completion-length", "40000"])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: --max-completion-length 40000") and "Traceback" not in result.output
    assert not (tmp_path / "rl").exists()


def test_generation_goes_a_chunk_of_prompts_at_a_time_and_keeps_their_order(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def generate(self: Any, prompt_ids: list[list[int]], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        seen.append(len(prompt_ids))
        return [[ids[0] * 10] for ids in prompt_ids], None

    monkeypatch.setattr(_trl.GRPOTrainer, "_generate_single_turn", generate)
    trainer = CoworkGRPOTrainer.__new__(CoworkGRPOTrainer)
    trainer.generation_batch, trainer.use_vllm = 2, False
    completions, logprobs = trainer._generate_single_turn([[1], [2], [3], [4], [5]], None, {}, 1)
    assert seen == [2, 2, 1] and completions == [[10], [20], [30], [40], [50]] and logprobs is None


def test_the_readmes_rl_command_on_the_tiny_model_builds_a_trainer_that_fits(tiny_model: Path) -> None:
    """The README's line, its folders swapped for the examples and the tiny model, up to the first step."""
    import shlex

    from coworkenv.harness.run import load_task_set
    from coworkenv.train.commands import _given, rl_cmd
    from coworkenv.train.options import merge_options
    from coworkenv.train.trl_rl import build_trainer

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    (line,) = [x for x in readme.splitlines() if x.startswith("coworkenv train rl") and "tiny-model" in x]
    words = shlex.split(line.split("#", 1)[0])[3:]
    swap = {"tasks": str(EXAMPLES), "tiny-model": str(tiny_model), "rl-tiny": "unused"}
    context = rl_cmd.make_context("rl", [swap.get(w, w) for w in words])
    options = merge_options(RLOptions, {}, _given({k: v for k, v in context.params.items() if k != "config_file"}))
    trainer = build_trainer(options, load_task_set([options.tasks]))
    assert trainer.plan.estimate.total <= trainer.plan.budget <= free_memory() * 1.5
    assert trainer.args.max_completion_length == trainer.plan.completion == 512
    assert trainer.args.per_device_train_batch_size * trainer.args.gradient_accumulation_steps == 32
