"""RL in the environments: the student plays each task ``group_size`` times through the harness, the grader
scores each episode (completion, safety), and a policy-gradient step on the LoRA parameters follows.

One step: collect groups (rejecting and retrying any group with an incomplete or infra-failed rollout,
dropping samples without a reward) → advantages per model turn with the chosen estimator → the clipped
policy-gradient loss on the tokens the policy generated (tool results, user turns and prompts are masked
by the env mask) → one optimiser step. No KL penalty and no reference model (β = 0, as Dr.GRPO and DAPO
recommend). trl's GRPOTrainer has no hook for a custom advantage nor for group retry, so the loop is ours
and small; the estimators are the pure functions of :mod:`coworkenv.train.advantages`.

One process, one device: this loop is not distributed (``accelerate launch`` is the multi-device path for
SFT only). Scaling rollouts out — the policy served by vLLM behind the harness's OpenAI-compatible agent,
episodes scheduled with Ray — is not built here.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.agents.base import ModelAgent
from coworkenv.harness.episode import EpisodeConfig
from coworkenv.servers.kit.atomic import append_line, write_atomic
from coworkenv.synth.contract.task import Task
from coworkenv.train.advantages import (
    Step,
    dr_grpo_advantages,
    gdpo_advantages,
    gigpo_advantages,
    grpo_advantages,
    mean,
)
from coworkenv.train.options import OptionsError, RLOptions
from coworkenv.train.policy import PolicyAgent
from coworkenv.train.rollout import EpisodeRollouts, Rollout, RolloutFn, collect_groups

InnerFactory = Callable[[Task, int], ModelAgent | None]


def turn_advantages(groups: Sequence[Sequence[Rollout]], options: RLOptions) -> list[list[list[float]]]:
    """For each group, rollout and model turn: its advantage under ``options.algo``."""

    def scores() -> list[list[float]]:
        return [[float(r.reward or 0.0) for r in g] for g in groups]

    if options.algo in ("grpo", "dr_grpo", "gdpo"):
        if options.algo == "grpo":
            per_rollout = grpo_advantages(scores())
        elif options.algo == "dr_grpo":
            per_rollout = dr_grpo_advantages(scores())
        else:
            weights = options.weights()
            components = [[{k: (r.rewards or {}).get(k, 0.0) for k in weights} for r in g] for g in groups]
            per_rollout = gdpo_advantages(components, weights)
        return [
            [[a] * r.turns for a, r in zip(adv, g, strict=True)] for adv, g in zip(per_rollout, groups, strict=True)
        ]
    out = []
    for g in groups:
        # the grader's reward arrives with the last turn; every earlier turn earns 0
        steps = [
            [Step(anchor, float(r.reward or 0.0) if t == r.turns - 1 else 0.0) for t, anchor in enumerate(r.anchors)]
            for r in g
        ]
        out.append(
            gigpo_advantages(
                steps, [float(r.reward or 0.0) for r in g], omega=options.gigpo_omega, gamma=options.gigpo_gamma
            )
        )
    return out


def _rollout_loss(
    model: Any, rollout: Rollout, advantages: list[float], normaliser: float, options: RLOptions
) -> float:
    """Backpropagates this rollout's share of the loss; returns its value."""
    import torch

    device = next(model.parameters()).device
    total = 0.0
    for segment in rollout.segments:
        if 1 not in segment.mask:
            continue
        first = segment.mask.index(1)
        ids = torch.tensor([segment.ids], device=device)
        keep = len(segment.ids) - first + 1  # logits from the position that predicts the first policy token
        logits = model(input_ids=ids, logits_to_keep=keep).logits[0, :-1].float() / max(options.temperature, 1e-6)
        targets = ids[0, first:]
        logp = torch.log_softmax(logits, dim=-1).gather(-1, targets[:, None]).squeeze(-1)
        mask = torch.tensor(segment.mask[first:], device=device, dtype=torch.float32)
        adv = torch.tensor(
            [advantages[t] if t >= 0 else 0.0 for t in segment.turn[first:]], device=device, dtype=torch.float32
        )
        ratio = torch.exp(logp - logp.detach())  # 1 on policy; the clip matters once rollouts are reused
        clipped = torch.clamp(ratio, 1 - options.clip_eps, 1 + options.clip_eps)
        loss = (-torch.minimum(ratio * adv, clipped * adv) * mask).sum() / normaliser
        loss.backward()
        total += float(loss.detach())
    return total


def train_on_groups(model: Any, optimizer: Any, groups: list[list[Rollout]], options: RLOptions) -> dict[str, float]:
    """One optimiser step on the kept groups. GRPO, GDPO and GiGPO average each rollout's token losses over
    its own policy tokens; Dr.GRPO divides every rollout's token sum by one constant length."""
    import torch

    advantages = turn_advantages(groups, options)
    rollouts = [(r, adv) for g, ag in zip(groups, advantages, strict=True) for r, adv in zip(g, ag, strict=True)]
    model.train()
    optimizer.zero_grad(set_to_none=True)
    loss = 0.0
    constant = options.max_new_tokens * options.max_turns
    for rollout, adv in rollouts:
        if not any(adv):
            continue  # no signal: it only counts in the normaliser
        length = constant if options.algo == "dr_grpo" else max(rollout.generated_tokens, 1)
        loss += _rollout_loss(model, rollout, adv, float(length * len(rollouts)), options)
    params = [p for p in model.parameters() if p.requires_grad]
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, 1.0)) if params else 0.0
    optimizer.step()
    flat = [a for _, adv in rollouts for a in adv]
    return {
        "loss": loss,
        "grad_norm": grad_norm,
        "adv_abs_mean": mean([abs(a) for a in flat]),
        "rollouts": len(rollouts),
    }


async def rl_step(
    model: Any, optimizer: Any, tasks: Sequence[Task], rollout: RolloutFn, options: RLOptions
) -> dict[str, Any]:
    """Collect the groups of ``tasks`` (with reject-and-retry) and take one training step on them."""
    groups, stats = await collect_groups(tasks, rollout, options.group_size, options.max_retries)
    flat = [r for g in groups for r in g]
    metrics: dict[str, Any] = {
        **stats.as_dict(),
        "reward": mean([float(r.reward or 0.0) for r in flat]),
        "completion": mean([(r.rewards or {}).get("completion", 0.0) for r in flat]),
        "safety": mean([(r.rewards or {}).get("safety", 0.0) for r in flat]),
        "turns": mean([float(r.turns) for r in flat]),
        "policy_tokens": sum(r.generated_tokens for r in flat),
    }
    if groups:
        metrics.update(train_on_groups(model, optimizer, groups, options))
    return metrics


def load_policy(options: RLOptions) -> tuple[Any, Any]:
    """(model with trainable LoRA adapters, tokenizer)."""
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM
    from trl.chat_template_utils import supports_tool_calling

    from coworkenv.harness.agents.hf_agent import load_tokenizer

    tokenizer = load_tokenizer(options.model)
    if not supports_tool_calling(tokenizer):
        raise OptionsError(f"model {options.model}'s chat template does not render tool calls and results")
    gpu = torch.cuda.is_available()
    bf16 = options.bf16 if options.bf16 is not None else gpu and torch.cuda.is_bf16_supported()
    base: Any = AutoModelForCausalLM.from_pretrained(options.model, dtype=torch.bfloat16 if bf16 else torch.float32)
    if gpu:
        base.to("cuda")
    model: Any
    if options.adapter:
        model = PeftModel.from_pretrained(base, options.adapter, is_trainable=True)
    else:
        lora = LoraConfig(
            r=options.lora_rank,
            lora_alpha=options.lora_alpha,
            lora_dropout=options.lora_dropout,
            target_modules=options.target_modules_value(),
            task_type="CAUSAL_LM",
        )
        model = get_peft_model(base, lora)
    return model, tokenizer


def run_rl(options: RLOptions, inner: InnerFactory | None = None) -> list[dict[str, Any]]:
    """Train; writes ``metrics.jsonl`` (one line a step), the adapter and ``coworkenv_rl.json`` to ``out``.
    ``inner`` makes a scripted agent whose turns the policy plays (tests, warm starts)."""
    import torch

    from coworkenv.harness.run import load_task_set

    if not options.out:
        raise OptionsError("--out is required")
    tasks = load_task_set([options.tasks])
    torch.manual_seed(options.seed)
    model, tokenizer = load_policy(options)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=options.lr)
    lock = anyio.Lock()

    def make_agent(task: Task, index: int) -> PolicyAgent:
        agent = inner(task, index) if inner else None
        return PolicyAgent(
            model,
            tokenizer,
            max_new_tokens=options.max_new_tokens,
            temperature=options.temperature,
            inner=agent,
            lock=lock,
        )

    curriculum = None
    if options.curriculum:
        from coworkenv.train.curriculum import apply_curriculum

        probe = PolicyAgent(model, tokenizer, max_new_tokens=options.max_new_tokens, temperature=options.temperature)
        tasks, curriculum = apply_curriculum(options, tasks, probe)
        print(curriculum.line(), file=sys.stderr, flush=True)
    config = EpisodeConfig(max_turns=options.max_turns, max_tool_calls=options.max_tool_calls)
    rollouts = EpisodeRollouts(make_agent, config, options.at_limit)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(options.seed)
    history = []
    try:
        with (out / "metrics.jsonl").open("a", encoding="utf-8") as log:
            for step in range(options.steps):
                batch = rng.sample(tasks, min(options.tasks_per_step, len(tasks)))
                metrics = {"step": step, **anyio.run(rl_step, model, optimizer, batch, rollouts, options)}
                history.append(metrics)
                append_line(log, json.dumps(metrics))
    finally:
        rollouts.close()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    summary = {
        "options": asdict(options),
        "tasks": len(tasks),
        "curriculum": curriculum.record() if curriculum else None,
        "steps": history,
    }
    write_atomic(out / "coworkenv_rl.json", json.dumps(summary, indent=2))
    return history
