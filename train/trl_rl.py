"""``coworkenv train rl --engine trl``: our options as a ``GRPOConfig``, our tasks as environments, one trainer.

The algorithms are trl settings (GRPO: group-normalised; Dr.GRPO: ``loss_type="dr_grpo"`` with
``scale_rewards="none"``; GDPO: completion and safety as two rewards with ``normalize_then_sum``) except GiGPO, the
subclass's per-token advantages. β = 0 (no reference model), as Dr.GRPO and DAPO recommend. The output folder is
trl's: checkpoints, the model (LoRA adapter unless the base model is trained in full), ``trainer_state.json`` with
the reward logs, and our ``coworkenv_rl.json`` (options and group reject/retry counts).
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from coworkenv.servers.kit.atomic import write_atomic
from coworkenv.synth.contract.task import Task
from coworkenv.train.options import OptionsError, RLOptions, resolve_template
from coworkenv.train.rl_sizing import GB, ModelShape, RLPlan, Runtime, free_memory, longest_prompt, plan_rl

SETTINGS: dict[str, dict[str, Any]] = {
    "grpo": {"loss_type": "grpo", "scale_rewards": "group"},
    "dr_grpo": {"loss_type": "dr_grpo", "scale_rewards": "none"},
    "gdpo": {"loss_type": "grpo", "scale_rewards": "group", "multi_objective_aggregation": "normalize_then_sum"},
    "gigpo": {"loss_type": "grpo", "scale_rewards": "none"},
}


def on_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def grpo_config(options: RLOptions, **overrides: Any) -> Any:
    """The ``GRPOConfig`` of these options (``overrides`` win: tests, accelerate configs)."""
    from trl import GRPOConfig

    gpu = on_gpu()
    bf16 = options.bf16 if options.bf16 is not None else gpu
    values: dict[str, Any] = {
        "output_dir": options.out,
        "num_generations": options.group_size,
        "per_device_train_batch_size": options.group_size * options.tasks_per_step,  # build_trainer sizes it
        "gradient_accumulation_steps": 1,
        "max_steps": options.steps,
        "learning_rate": options.lr,
        "temperature": options.temperature,
        "max_tool_calling_iterations": options.max_tool_calls,
        "beta": 0.0,
        "seed": options.seed,
        "bf16": bf16,
        "gradient_checkpointing": options.gradient_checkpointing if options.gradient_checkpointing is not None else gpu,
        "logging_steps": options.logging_steps,
        "save_strategy": "no",
        "report_to": "none",
        "use_vllm": options.use_vllm,
        "vllm_mode": options.vllm_mode,
        "log_completions": False,
        **SETTINGS[options.algo],
    }
    if options.max_completion_length is not None:  # unset: build_trainer sizes it
        values["max_completion_length"] = options.max_completion_length
    if not options.adapter:  # trl loads the model: in bf16 when training in bf16 (trl's own default is float32)
        values["model_init_kwargs"] = {"dtype": "bfloat16" if bf16 else "float32"}
    if options.vllm_server_base_url:
        values["vllm_server_base_url"] = options.vllm_server_base_url
    if options.algo == "gdpo":
        weights = options.weights()
        values["reward_weights"] = [weights.get("completion", 0.0), weights.get("safety", 0.0)]
    values.update(overrides)
    return GRPOConfig(**values)


def reward_functions(algo: str) -> list[Any]:
    from coworkenv.train.trl_env import completion_reward, safety_reward, score_reward

    return [completion_reward, safety_reward] if algo == "gdpo" else [score_reward]


def peft_config(options: RLOptions) -> Any:
    if options.adapter or options.full:
        return None  # the adapter comes with the model (see load_model); --full trains every weight
    from peft import LoraConfig

    return LoraConfig(
        r=options.lora_rank,
        lora_alpha=options.lora_alpha,
        lora_dropout=options.lora_dropout,
        target_modules=options.target_modules_value(),
        task_type="CAUSAL_LM",
    )


def load_model(options: RLOptions) -> Any:
    """The model id/path for trl, or the base model (in bf16 when training in bf16) with a trainable adapter
    (``--adapter``)."""
    if not options.adapter:
        return options.model
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    bf16 = options.bf16 if options.bf16 is not None else on_gpu()
    base = AutoModelForCausalLM.from_pretrained(options.model, dtype=torch.bfloat16 if bf16 else torch.float32)
    return PeftModel.from_pretrained(base, options.adapter, is_trainable=True)


NO_REWARD = (
    "a rollout got no reward (unscorable: its episode failed in the infrastructure or did not finish); "
    "it is left out of this step's advantages"
)
_TRL_LOGGER = "trl.trainer.grpo_trainer"


class _NoRewardNote(logging.Filter):
    """Shortens trl's warning for a sample every reward function left unscored — which our rewards do on purpose
    for unscorable rollouts — from the whole task row and conversation to one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("All reward functions returned None"):
            record.msg, record.args = NO_REWARD, ()
        return True


def quiet_unscored_warning() -> None:
    """Install :class:`_NoRewardNote` on trl's GRPO logger (once)."""
    target = logging.getLogger(_TRL_LOGGER)
    if not any(isinstance(f, _NoRewardNote) for f in target.filters):
        target.addFilter(_NoRewardNote())


def size_run(options: RLOptions, tokenizer: Any, rows: list[dict[str, Any]], factory: Any, template: str) -> RLPlan:
    """The completion length and micro-batch of this run, checked against the memory (see :mod:`rl_sizing`)."""
    gpu = on_gpu()
    bf16 = options.bf16 if options.bf16 is not None else gpu
    runtime = Runtime(
        dtype_bytes=2 if bf16 else 4,
        gpu=gpu,
        checkpointing=options.gradient_checkpointing if options.gradient_checkpointing is not None else gpu,
        vllm=options.use_vllm,
    )
    if len(rows) < options.tasks_per_step:  # trl would find no whole batch and train 0 steps without a word
        raise OptionsError(
            f"--tasks-per-step {options.tasks_per_step} is more than the {len(rows)} task(s) given: lower "
            f"--tasks-per-step to {len(rows)} or give more tasks"
        )
    budget = options.memory_gb * GB if options.memory_gb is not None else free_memory()
    prompt = longest_prompt(tokenizer, rows, factory, template)
    return plan_rl(options, ModelShape.of(options.model), prompt, budget, runtime)


def build_trainer(
    options: RLOptions, tasks: list[Task], trainer_cls: type | None = None, **config_overrides: Any
) -> Any:
    """The trainer for these options and tasks (not yet trained), sized to the model and the machine first
    (``trainer.plan``; :class:`OptionsError` when it cannot fit)."""
    import datasets

    from coworkenv.harness.agents.hf_agent import load_tokenizer, tool_names_option
    from coworkenv.train.trl_env import trl_environments
    from coworkenv.train.trl_grpo import CoworkGRPOTrainer

    quiet_unscored_warning()
    template = resolve_template(options)
    try:
        rows, factory = trl_environments(
            tasks, owns_reward=False, template=template, tool_names=tool_names_option(options.tool_names)
        )
    except ValueError as exc:
        raise OptionsError(str(exc)) from exc
    tokenizer = load_tokenizer(options.model if not options.adapter else options.adapter)
    plan = size_run(options, tokenizer, rows, factory, template)
    options = replace(options, max_completion_length=plan.completion)
    sized = {"per_device_train_batch_size": plan.micro_batch, "gradient_accumulation_steps": plan.accumulation}
    cls = trainer_cls or CoworkGRPOTrainer
    trainer = cls(
        model=load_model(options),
        reward_funcs=reward_functions(options.algo),
        args=grpo_config(options, **{**sized, **config_overrides}),
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=peft_config(options),
        environment_factory=factory,
        algo=options.algo,
        max_group_retries=options.max_retries,
        gigpo_omega=options.gigpo_omega,
        gigpo_gamma=options.gigpo_gamma,
        template=template,
        generation_batch=plan.generation_batch,
        max_user_turns=options.max_turns,
        at_limit=options.at_limit,
    )
    trainer.plan = plan
    return trainer


def run_trl_rl(options: RLOptions, trainer_cls: type | None = None, **config_overrides: Any) -> list[dict[str, Any]]:
    """Train; returns trl's log history (one entry a logged step, with ``reward`` and per-reward means)."""
    import os

    from coworkenv.harness.run import load_task_set

    if not options.out:
        raise OptionsError("--out is required")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    tasks = load_task_set([options.tasks])
    curriculum = None
    if options.curriculum:
        from coworkenv.train.curriculum import apply_curriculum

        tasks, curriculum = apply_curriculum(options, tasks)
        print(curriculum.line(), file=sys.stderr, flush=True)
    trainer = build_trainer(options, tasks, trainer_cls, **config_overrides)
    print(trainer.plan.line(), file=sys.stderr, flush=True)
    trainer.train()
    out = Path(options.out)
    trainer.save_model(str(out))
    trainer.state.save_to_json(str(out / "trainer_state.json"))
    summary = {
        "engine": "trl",
        "options": asdict(options),
        "tasks": len(tasks),
        "curriculum": curriculum.record() if curriculum else None,
        "template": trainer.template,
        "sizing": trainer.plan.record(),
        "groups": dict(trainer.group_stats),
        "log_history": trainer.state.log_history,
    }
    write_atomic(out / "coworkenv_rl.json", json.dumps(summary, indent=2, default=str))
    return list(trainer.state.log_history)
