"""The learning bench's last step (``bench_learn.py --grpo-steps``): a few GRPO steps through the trl path from
the SFT checkpoint (LoRA, or every weight with ``--grpo-full``), the adapter merged for evaluation."""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from coworkenv.synth.contract.task import Task


def _number(value: Any) -> float | None:
    """A logged figure rounded, or None where trl logged none (None or NaN: nothing was scored)."""
    return None if value is None or value != value else round(float(value), 3)


def continue_with_grpo(work: Path, model: Path, tasks: list[Task], args: argparse.Namespace) -> dict[str, Any]:
    """A few steps of ``args.rl_algo`` (GRPO, GiGPO, ...) through the trl path (``train rl --engine trl``'s
    trainer, LoRA on the SFT model ``model``, the compact template it was trained on, only the tools it was trained
    with: ``--tool-names``) on ``tasks`` (fresh ones of the family, or the training tasks: ``--grpo-on``); the
    adapter merged into ``work/<algo>`` for evaluation."""
    from coworkenv.synth.contract.taskfile import save_tasks
    from coworkenv.train.curriculum import apply_curriculum
    from coworkenv.train.options import RLOptions
    from coworkenv.train.trl_rl import build_trainer, resolve_template

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    options = RLOptions(
        tasks="-", model=str(model), out=str(work / f"{args.rl_algo}-run"), algo=args.rl_algo, template="compact",
        group_size=args.grpo_group, tasks_per_step=args.grpo_tasks, steps=args.grpo_steps, lr=args.grpo_lr,
        lora_rank=16, lora_alpha=32, temperature=args.grpo_temperature, max_completion_length=args.grpo_length,
        max_tool_calls=args.max_turns, max_turns=args.max_turns, max_new_tokens=args.max_new_tokens, bf16=False,
        seed=args.seed if args.grpo_seed is None else args.grpo_seed, tool_names=",".join(args.tools) if args.tools else None, full=args.grpo_full,
        at_limit=args.grpo_at_limit, curriculum=args.grpo_curriculum,
    )  # fmt: skip
    curriculum = None
    if args.grpo_curriculum:  # the tasks whose probes' rewards differ, out of the whole pool (probes kept by policy)
        tasks, curriculum = apply_curriculum(replace(options, seed=args.seed), tasks)
        print(curriculum.line(), flush=True)
    picked = tasks[: args.grpo_steps * args.grpo_tasks]
    tasks_file = save_tasks(picked, work / f"{args.rl_algo}_tasks.jsonl")
    options = replace(options, tasks=str(tasks_file), curriculum=0)
    trainer = build_trainer(options, picked)
    trainer.train()
    merged = trainer.model if args.grpo_full else trainer.model.merge_and_unload()
    merged.save_pretrained(str(work / args.rl_algo))
    trainer.processing_class.save_pretrained(str(work / args.rl_algo))
    log = trainer.state.log_history
    return {
        "algo": args.rl_algo,
        "at_limit": args.grpo_at_limit,
        "template": resolve_template(options),
        "tasks": len(picked),
        "rewards": [_number(e["reward"]) for e in log if "reward" in e],  # None: every group rejected
        "tool_call_frequency": [_number(e["tools/call_frequency"]) for e in log if "tools/call_frequency" in e],
        "groups": dict(trainer.group_stats),
        "curriculum": curriculum.record() if curriculum else None,
    }
