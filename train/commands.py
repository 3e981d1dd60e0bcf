"""``coworkenv train …``: build the tiny model, LoRA SFT, RL. Heavy imports stay inside the commands so this
module imports without the ``train`` extra installed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from coworkenv.train.options import (
    ALGOS,
    AT_LIMIT,
    ENGINES,
    PAPER_MODEL,
    TEMPLATES,
    VLLM_MODES,
    OptionsError,
    RLOptions,
    SFTOptions,
    merge_options,
    read_config_file,
)

_SFT = SFTOptions()
_RL = RLOptions()
INSTALL_HINT = "the training stack is not installed: pip install 'coworkenv[train]'"


def _given(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _count(name: str, default: int, minimum: int, help: str) -> Any:
    """A whole-number option of at least ``minimum``, its default shown."""
    return click.option(name, type=click.IntRange(min=minimum), default=default, show_default=True, help=help)


@click.group("train", context_settings={"help_option_names": ["-h", "--help"]})
def train_group() -> None:
    """Train models on the environments: LoRA SFT on exported trajectories, then RL with the grader as reward."""


@train_group.command("tiny")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Directory to write.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random weights.")
@click.option("--layers", type=click.IntRange(min=1), default=2, show_default=True, help="Decoder layers.")
@click.option(
    "--hidden", type=click.IntRange(min=16), default=64, show_default=True, help="Hidden size (heads: hidden/64, ≥4)."
)
@click.option("--vocab-size", type=click.IntRange(min=300), default=None, help="BPE vocabulary.  [default: 1024]")
@click.option(
    "--tokenizer-from",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Train the tokenizer on these exported demonstrations (chat JSONL) as the chat template renders them.",
)
@click.option(
    "--digits",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Digits a token at most (Qwen2: 1; 2 spells tkt_1803 as tkt _ 18 03).",
)
def tiny_cmd(
    out: Path,
    seed: int,
    layers: int,
    hidden: int,
    vocab_size: int | None,
    tokenizer_from: Path | None,
    digits: int,
) -> None:
    """Build a tiny chat model offline (random weights, Qwen2.5 chat template) for tests, demos and learning
    from scratch (e.g. --layers 4 --hidden 256 --vocab-size 4096 --tokenizer-from demos.jsonl: ~3.0M)."""
    try:
        from coworkenv.train.data import DataError
        from coworkenv.train.tiny import DEFAULT_VOCAB_SIZE, build_tiny, parameter_count
    except ImportError as exc:
        raise click.ClickException(f"{INSTALL_HINT} ({exc})") from exc
    try:
        path = build_tiny(out, seed, vocab_size or DEFAULT_VOCAB_SIZE, layers, hidden, tokenizer_from, digits)
    except (DataError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    params = parameter_count(path)
    click.echo(f"tiny model ({params:,} parameters) written to {path}")


SFT_HELP = f"""LoRA (or --full) SFT on exported chat JSONL, loss on assistant text and tool calls only.

DATA: one JSON object a line, {{"messages": [...], "tools": "<json string>"}}, as `coworkenv` export writes it.
The papers fine-tune {PAPER_MODEL} (used text only) with LoRA; that is the default --model, and any chat
model whose template renders tool calls works. Numeric defaults are this tool's (sized for an 8B model on one
80 GB GPU), not numbers taken from the papers. Options may also come from --config FILE (YAML or JSON, keys
named like the options); the command line wins over the file.

\b
Several GPUs: accelerate launch --num_processes N "$(which coworkenv)" train sft ...
"""


@train_group.command("sft", help=SFT_HELP)
@click.option("--data", help="Exported chat JSONL file.")
@click.option("--model", help=f"Hub id or local path of the base model.  [default: {_SFT.model}]")
@click.option("--out", help="Directory for the LoRA adapter, tokenizer and coworkenv_sft.json.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), help="YAML/JSON options.")
@click.option("--lora-rank", type=int, help=f"LoRA rank r.  [default: {_SFT.lora_rank}]")
@click.option("--lora-alpha", type=int, help=f"LoRA alpha.  [default: {_SFT.lora_alpha}]")
@click.option("--lora-dropout", type=float, help=f"LoRA dropout.  [default: {_SFT.lora_dropout}]")
@click.option(
    "--target-modules", help=f"'all-linear' or comma-separated module names.  [default: {_SFT.target_modules}]"
)
@click.option("--epochs", type=float, help=f"Training epochs.  [default: {_SFT.epochs}]")
@click.option("--max-steps", type=int, help="Stop after this many optimiser steps (overrides --epochs).")
@click.option("--lr", type=float, help=f"Learning rate.  [default: {_SFT.lr}]")
@click.option("--batch-size", type=int, help=f"Per-device batch size.  [default: {_SFT.batch_size}]")
@click.option("--grad-accum", type=int, help=f"Gradient accumulation steps.  [default: {_SFT.grad_accum}]")
@click.option(
    "--max-length", type=int, help=f"Max tokens per example (longer ones are cut).  [default: {_SFT.max_length}]"
)
@click.option("--seed", type=int, help=f"Random seed.  [default: {_SFT.seed}]")
@click.option("--chat-template", help="A .jinja chat template to use instead of the model's own.")
@click.option(
    "--full", is_flag=True, default=None, help="Full fine-tuning (every weight) instead of LoRA; for small models."
)
@click.option("--warmup-steps", type=int, help=f"Steps of linear learning-rate warmup.  [default: {_SFT.warmup_steps}]")
@click.option(
    "--context-weight",
    type=float,
    help="Loss weight of the context's tokens (system, user, tool results); the assistant's weigh 1. 0 for a "
    f"pretrained student; ~0.3 for a small model trained from scratch.  [default: {_SFT.context_weight}]",
)
@click.option("--lr-scheduler", help=f"Learning-rate schedule after the warmup.  [default: {_SFT.lr_scheduler}]")
@click.option(
    "--min-lr-ratio",
    type=float,
    help="Cosine only: decay to this share of --lr instead of 0.  [default: 0]",
)
@click.option(
    "--weight-decay", type=float, help=f"AdamW weight decay (not on biases, norms).  [default: {_SFT.weight_decay}]"
)
@click.option("--adam-beta2", type=float, help=f"AdamW beta2.  [default: {_SFT.adam_beta2}]")
@click.option("--eval-data", help="Held-out chat JSONL: the assistant tokens' loss on it before, during, after.")
@click.option("--eval-steps", type=int, help="Held-out loss every N steps too (needs --eval-data).  [default: 0: off]")
@click.option(
    "--save-steps", type=int, help="A checkpoint every N steps in OUT/checkpoint-N, for --resume.  [default: 0: off]"
)
@click.option(
    "--resume",
    is_flag=True,
    default=None,
    help="Continue from the newest checkpoint in --out (weights, optimiser, schedule, step): a stopped run goes on.",
)
@click.option("--bf16/--no-bf16", default=None, help="bf16 training.  [default: on with a GPU, off on CPU]")
@click.option(
    "--gradient-checkpointing/--no-gradient-checkpointing",
    default=None,
    help="Gradient checkpointing.  [default: on with a GPU, off on CPU]",
)
@click.option(
    "--cpu-bf16/--no-cpu-bf16",
    default=None,
    help="On CPU, matmuls in bf16 under autocast (weights, optimiser, loss in fp32).  [default: on where the CPU "
    "has bf16 instructions and there is no GPU]",
)
@click.option("--threads", type=int, help="torch's CPU threads.  [default: 0: torch's default, one a core]")
def sft_cmd(config_file: Path | None, **values: Any) -> None:
    try:
        file_values = read_config_file(config_file, SFTOptions) if config_file else {}
        options = merge_options(SFTOptions, file_values, _given(values))
    except OptionsError as exc:
        raise click.ClickException(str(exc)) from exc
    if not options.data:
        raise click.UsageError("--data is required (or 'data' in --config)")
    if not options.out:
        raise click.UsageError("--out is required (or 'out' in --config)")
    try:
        from coworkenv.train.data import DataError
        from coworkenv.train.sft import ModelTemplateError, last_checkpoint, run_sft
    except ImportError as exc:
        raise click.ClickException(f"{INSTALL_HINT} ({exc})") from exc
    if options.resume and last_checkpoint(options.out) is None:
        click.echo(f"no checkpoint in {options.out} yet: --resume starts from the beginning", err=True)
    try:
        result = run_sft(options)
    except (DataError, ModelTemplateError, OptionsError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(sft_summary(result, options.full))


def sft_summary(result: Any, full: bool) -> str:
    """The line `train sft` ends with: steps, losses, held-out losses, and plainly whether the loss fell."""
    kind = "model" if full else "adapter"
    resumed = f" (resumed from {result.resumed_from.name})" if result.resumed_from else ""
    line = (
        f"trained {result.steps} steps{resumed} on {result.examples} examples; "
        f"loss {result.first_loss:.4f} -> {result.last_loss:.4f}"
    )
    held = result.eval_losses
    if len(held) >= 2:
        line += f"; held-out loss {held[0][1]:.4f} -> {held[-1][1]:.4f}"
    line += f"; {kind} in {result.adapter_dir}"
    falls = held[-1][1] < held[0][1] if len(held) >= 2 else result.last_loss < result.first_loss
    if not falls:
        line += " -- the loss did not fall: this model learnt nothing (more steps, another --lr, or more data)"
    return line


RL_HELP = """RL in the environments: the student plays each task --group-size times, the grader's completion and
safety are the rewards, and a policy-gradient step updates LoRA adapters.

--engine trl (default): trl's GRPOTrainer with the tasks as environments (tools bound from the services'
specs, vLLM with --use-vllm, several devices with `accelerate launch --config_file train/configs/...`); the
output folder is trl's (trainer_state.json holds the reward logs). --engine native: the single-process loop.

--algo: grpo (group-normalised), dr_grpo (no std scaling, constant-length loss), gdpo (completion and safety
normalised separately, weighted by --gdpo-weights), gigpo (episode advantage plus --gigpo-omega × step
advantage over turns that start from the same environment state). A rollout without a grade is dropped; a
group with an incomplete (turn/time limit) or infrastructure-failed rollout is played again, up to
--max-retries times; metrics.jsonl counts both. --at-limit grade keeps a rollout that ran into the run's own
limits (trl: --max-completion-length, the tool-calling iterations, --max-turns; native: --max-turns,
--max-tool-calls) and grades the state it reached, as the harness does, so a policy that loops scores low
instead of going unseen; infrastructure faults and wall-time limits are rejected either way. Start from SFT
with --adapter DIR (the output of train sft).

--template compact (trl): the prompt lists the tools in the system message, as export --template compact and
hf:PATH?template=compact do; by default, the template the model (or adapter) folder was trained on.

Sizing (trl): before it starts, the run sizes --max-completion-length (unless given) from the model's
max_position_embeddings and the tasks' longest prompt, trains each step's rollouts in the largest micro-batch
that fits, and checks a memory estimate against --memory-gb (default: what is free); a run that cannot fit
ends in one line naming the option to lower.
"""


@train_group.command("rl", help=RL_HELP)
@click.option("--tasks", help="A task file or folder (JSON/YAML/JSONL).")
@click.option("--model", help=f"Base model id or path.  [default: {_RL.model}]")
@click.option("--adapter", help="A LoRA adapter directory to continue from (e.g. train sft's --out).")
@click.option("--out", help="Directory for the adapter, metrics.jsonl and coworkenv_rl.json.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), help="YAML/JSON options.")
@click.option("--algo", type=click.Choice(ALGOS), help=f"Advantage estimator.  [default: {_RL.algo}]")
@click.option("--engine", type=click.Choice(ENGINES), help=f"trl or the native loop.  [default: {_RL.engine}]")
@click.option(
    "--max-completion-length",
    type=click.IntRange(min=1),
    help="trl: tokens of an episode after the prompt.  [default: sized from the model's positions, the longest "
    "prompt and the memory, at most 4096]",
)
@click.option(
    "--memory-gb",
    type=click.FloatRange(min=0, min_open=True),
    help="trl: memory the run may use, in GB.  [default: what the machine, or the GPU, has free]",
)
@click.option("--use-vllm/--no-use-vllm", default=None, help="trl: generate with vLLM.")
@click.option("--vllm-mode", type=click.Choice(VLLM_MODES), help="trl: colocate or server (`trl vllm-serve`).")
@click.option("--vllm-server-base-url", help="trl, server mode: the vLLM server, e.g. http://10.0.0.2:8000")
@click.option("--group-size", type=int, help=f"Rollouts per task per step.  [default: {_RL.group_size}]")
@click.option("--tasks-per-step", type=int, help=f"Tasks per step.  [default: {_RL.tasks_per_step}]")
@click.option("--steps", type=int, help=f"Training steps.  [default: {_RL.steps}]")
@click.option("--lr", type=float, help=f"Learning rate.  [default: {_RL.lr}]")
@click.option("--lora-rank", type=int, help=f"LoRA rank (new adapters).  [default: {_RL.lora_rank}]")
@click.option("--lora-alpha", type=int, help=f"LoRA alpha.  [default: {_RL.lora_alpha}]")
@click.option("--target-modules", help=f"'all-linear' or comma-separated names.  [default: {_RL.target_modules}]")
@click.option("--full", is_flag=True, default=None, help="trl: train every weight instead of LoRA; for small models.")
@click.option("--max-new-tokens", type=int, help=f"Tokens per model turn.  [default: {_RL.max_new_tokens}]")
@click.option("--temperature", type=float, help=f"Sampling temperature.  [default: {_RL.temperature}]")
@click.option(
    "--max-turns", type=int, help=f"Model turns per episode (trl: the user's answers).  [default: {_RL.max_turns}]"
)
@click.option("--max-tool-calls", type=int, help=f"Tool calls per episode.  [default: {_RL.max_tool_calls}]")
@click.option("--max-retries", type=int, help=f"Replays of a rejected group.  [default: {_RL.max_retries}]")
@click.option(
    "--curriculum",
    type=int,
    help="Probe each task N times with the policy first and train on those whose rewards differ (a group whose "
    "rollouts all score the same teaches nothing).  [default: 0: off]",
)
@click.option(
    "--probe-cache",
    help="Folder that keeps the curriculum's probes by policy, so a second run of the same weights (or a stopped "
    "one) probes only the tasks not yet probed; 'off' for none.  [default: $COWORKENV_PROBE_CACHE, else "
    "~/.cache/coworkenv/probes]",
)
@click.option(
    "--at-limit",
    type=click.Choice(AT_LIMIT),
    help=f"A rollout that ran into the run's limits: reject its group, or grade it.  [default: {_RL.at_limit}]",
)
@click.option("--gdpo-weights", help=f"GDPO reward weights.  [default: {_RL.gdpo_weights}]")
@click.option("--gigpo-omega", type=float, help=f"GiGPO step-advantage weight.  [default: {_RL.gigpo_omega}]")
@click.option("--gigpo-gamma", type=float, help=f"GiGPO discount.  [default: {_RL.gigpo_gamma}]")
@click.option("--seed", type=int, help=f"Random seed.  [default: {_RL.seed}]")
@click.option("--bf16/--no-bf16", default=None, help="bf16 weights.  [default: on with a GPU, off on CPU]")
@click.option(
    "--template",
    type=click.Choice(TEMPLATES),
    help="trl: the prompt's tool list, as export --template and hf:PATH?template= render it.  "
    "[default: the one the model/adapter was trained on (coworkenv_sft.json), else full]",
)
@click.option(
    "--tool-names",
    help="trl: only these tools (comma-separated <service>__<tool>), in the prompt and the environment: the list "
    "the model was trained with (export --tool-names, hf:PATH?tools=).  [default: every tool of the task's services]",
)
def rl_cmd(config_file: Path | None, **values: Any) -> None:
    try:
        file_values = read_config_file(config_file, RLOptions) if config_file else {}
        options = merge_options(RLOptions, file_values, _given(values))
        if not options.tasks or not options.out:
            raise click.UsageError("--tasks and --out are required (or 'tasks' and 'out' in --config)")
        options.weights()
    except OptionsError as exc:
        raise click.ClickException(str(exc)) from exc
    if options.engine == "trl":
        _run_trl(options)
        return
    try:
        from coworkenv.harness.run import RunError
        from coworkenv.train.rl import run_rl
    except ImportError as exc:
        raise click.ClickException(f"{INSTALL_HINT} ({exc})") from exc
    try:
        history = run_rl(options)
    except (OptionsError, RunError) as exc:
        raise click.ClickException(str(exc)) from exc
    for m in history:
        click.echo(
            f"step {m['step']}: reward {m['reward']:.3f} (completion {m['completion']:.3f}, safety {m['safety']:.3f}); "
            f"groups {m['groups']}, rejected {m['rejected']}, retried {m['retried']}, dropped {m['dropped']}"
        )
    click.echo(f"adapter and metrics in {options.out}")


def _run_trl(options: RLOptions) -> None:
    try:
        from coworkenv.harness.run import RunError
        from coworkenv.train.trl_rl import run_trl_rl
    except ImportError as exc:
        raise click.ClickException(f"{INSTALL_HINT} ({exc})") from exc
    try:
        history = run_trl_rl(options)
    except (OptionsError, RunError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    for entry in history:
        if "reward" in entry:
            reward = entry["reward"]  # None when every group of the step was rejected (no scored rollout)
            shown = f"{reward:.3f}" if isinstance(reward, int | float) else "none (every group rejected)"
            click.echo(f"step {entry.get('step', '?')}: reward {shown} (trl log: trainer_state.json)")
    click.echo(f"model, trainer_state.json and coworkenv_rl.json in {options.out}")


@train_group.command("distill")
@click.option("--tasks", required=True, help="A task file or folder (JSON/YAML/JSONL).")
@click.option("--model", required=True, help="The student: a model id or path.")
@click.option("--teacher", required=True, help="The teacher: a local model with the student's vocabulary.")
@click.option("--out", required=True, help="Directory for the student and trainer_state.json.")
@click.option("--lmbda", type=float, default=1.0, show_default=True, help="Share of on-policy (student) samples.")
@click.option("--beta", type=float, default=1.0, show_default=True, help="Generalised JSD; 1 = reverse KL.")
@click.option("--steps", type=int, default=100, show_default=True)
@click.option("--lr", type=float, default=1e-5, show_default=True)
@click.option("--max-new-tokens", type=int, default=512, show_default=True)
@click.option("--full", is_flag=True, help="Full fine-tuning instead of LoRA.")
@click.option(
    "--template",
    type=click.Choice(TEMPLATES),
    help="The prompt's tool list, as export --template and hf:PATH?template= render it.  "
    "[default: the one the teacher (else the student) was trained on (coworkenv_sft.json), else full]",
)
@click.option("--tool-names", help="Only these tools (comma-separated <service>__<tool>), as export --tool-names.")
def distill_cmd(**values: Any) -> None:
    """On-policy distillation (trl's GKD trainer): the student samples each model turn of the tasks' reference
    episodes, the teacher scores its tokens."""
    try:
        from coworkenv.train.distill import DistillOptions, run_distill
    except ImportError as exc:
        raise click.ClickException(f"{INSTALL_HINT} ({exc})") from exc
    try:
        history = run_distill(DistillOptions(**values))
    except OptionsError as exc:
        raise click.ClickException(str(exc)) from exc
    losses = [e["loss"] for e in history if "loss" in e]
    click.echo(f"distilled {len(losses)} logged steps; student in {values['out']}")


COMMANDS: list[click.Command] = [train_group]
