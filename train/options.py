"""Training options: dataclasses with documented defaults, loadable from a YAML or JSON file.

A config file's keys are the option names (``lora_rank`` or ``lora-rank``); options given on the command
line win over the file, the file wins over the defaults.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml

from coworkenv.harness.agents.hf_agent import TEMPLATES
from coworkenv.servers.kit.files import load_yaml, yaml_problem

# The papers (CoworkEnv, Cowork-Gym) fine-tune Qwen3-VL-8B-Instruct, text only, with LoRA adapters.
PAPER_MODEL = "Qwen/Qwen3-VL-8B-Instruct"


class OptionsError(ValueError):
    """A bad option or config file; the message names it."""


@dataclasses.dataclass
class LoraOptions:
    lora_rank: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    target_modules: str = "all-linear"  # or a comma-separated list, e.g. "q_proj,k_proj,v_proj,o_proj"

    def target_modules_value(self) -> str | list[str]:
        parts = [p.strip() for p in self.target_modules.split(",") if p.strip()]
        if not parts:
            raise OptionsError("target_modules is empty: use 'all-linear' or a comma-separated list of module names")
        return parts[0] if parts == ["all-linear"] else parts


@dataclasses.dataclass
class SFTOptions(LoraOptions):
    data: str = ""
    model: str = PAPER_MODEL
    out: str = ""
    epochs: float = 3.0
    max_steps: int = -1  # > 0 overrides epochs (smoke runs, tests)
    lr: float = 1e-4
    batch_size: int = 1
    grad_accum: int = 16
    max_length: int = 16384
    seed: int = 0
    chat_template: str | None = None  # a .jinja file to use instead of the model's own template
    bf16: bool | None = None  # None: on where a GPU supports it, off on CPU
    gradient_checkpointing: bool | None = None  # None: on with a GPU, off on CPU
    # CPU training with bf16 matmuls under autocast; weights, optimiser state and the loss stay fp32. None: on
    # where the CPU has bf16 instructions (AVX512-BF16, AMX) and there is no GPU (bench/learning/bench_step.py).
    cpu_bf16: bool | None = None
    threads: int = 0  # torch's CPU threads for the run (0: torch's default, one a core)
    logging_steps: int = 1
    full: bool = False  # full fine-tuning (every weight; a model trained from scratch) instead of LoRA adapters
    warmup_steps: int = 0  # the learning rate rises linearly over these first steps
    context_weight: float = 0.0  # loss weight of system, user and tool-result tokens; the assistant's weigh 1
    lr_scheduler: str = "cosine"  # transformers' scheduler name: cosine, linear, constant_with_warmup, ...
    min_lr_ratio: float = 0.0  # cosine only: decay to this share of lr instead of 0 (a floor the run keeps learning at)
    weight_decay: float = 0.0  # AdamW's (biases and norms excluded); 0.1 for a model trained from scratch
    adam_beta2: float = 0.999  # 0.95 steadies a model trained from scratch at a high learning rate
    eval_data: str | None = None  # held-out chat JSONL: its assistant tokens' loss before, every eval_steps, after
    eval_steps: int = 0  # 0: the held-out loss only before and after training
    save_steps: int = 0  # > 0: a checkpoint every N steps in out/checkpoint-N (the last two kept), for --resume
    resume: bool = False  # continue from the newest checkpoint in out (weights, optimiser, schedule, step)

    def __post_init__(self) -> None:
        if not 0.0 <= self.context_weight <= 1.0:
            raise OptionsError(f"context_weight must be between 0 and 1, not {self.context_weight}")
        if self.batch_size < 1 or self.grad_accum < 1:
            raise OptionsError(
                f"batch_size and grad_accum must be at least 1, not {self.batch_size}, {self.grad_accum}"
            )
        if self.weight_decay < 0 or not 0.0 < self.adam_beta2 < 1.0:
            raise OptionsError(
                f"weight_decay must be >= 0 and adam_beta2 in (0, 1), not {self.weight_decay}, {self.adam_beta2}"
            )
        if self.threads < 0:
            raise OptionsError(f"threads must be 0 (torch's default) or more, not {self.threads}")
        if self.eval_steps < 0 or self.save_steps < 0:
            raise OptionsError(f"eval_steps and save_steps must be 0 or more, not {self.eval_steps}, {self.save_steps}")
        schedulers = ("linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup")
        if self.lr_scheduler not in schedulers:
            raise OptionsError(f"unknown lr_scheduler {self.lr_scheduler!r}; use one of {', '.join(schedulers)}")
        if not 0.0 <= self.min_lr_ratio < 1.0:
            raise OptionsError(f"min_lr_ratio must be at least 0 and below 1, not {self.min_lr_ratio}")
        if self.min_lr_ratio and self.lr_scheduler != "cosine":
            raise OptionsError(f"min_lr_ratio needs lr_scheduler cosine, not {self.lr_scheduler!r}")


T = TypeVar("T")


def _field_names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def read_config_file(path: str | Path, cls: type) -> dict[str, Any]:
    """The options in a YAML or JSON file, keys checked against ``cls``'s fields."""
    path = Path(path)
    if not path.is_file():
        raise OptionsError(f"config file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    try:
        loaded = json.loads(text) if path.suffix == ".json" else load_yaml(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        detail = yaml_problem(exc) if isinstance(exc, yaml.YAMLError) else str(exc)
        raise OptionsError(f"config file {path} does not parse: {detail}") from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise OptionsError(f"config file {path} must hold a mapping of option names to values")
    values = {str(k).replace("-", "_"): v for k, v in loaded.items()}
    unknown = set(values) - _field_names(cls)
    if unknown:
        raise OptionsError(
            f"config file {path}: unknown option(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(_field_names(cls)))}"
        )
    return values


def _coerce(name: str, value: Any, hint: Any) -> Any:
    """A config file value as the option's type (YAML reads ``1e-4`` as a string, for one)."""
    if value is None:
        return None
    kinds = [k for k in typing.get_args(hint) if k is not type(None)] or [hint]
    kind = kinds[0]
    try:
        if kind is bool:
            if isinstance(value, str):
                if value.lower() not in ("true", "false", "yes", "no", "1", "0"):
                    raise ValueError(value)
                return value.lower() in ("true", "yes", "1")
            return bool(value)
        if kind in (int, float, str):
            return kind(value)
    except (TypeError, ValueError) as exc:
        raise OptionsError(f"option {name}: {value!r} is not a valid {kind.__name__}") from exc
    return value


def merge_options(cls: type[T], file_values: dict[str, Any], cli_values: dict[str, Any]) -> T:
    """Defaults ← config file ← command line (only the options the user actually gave)."""
    hints = typing.get_type_hints(cls)
    merged = {k: _coerce(k, v, hints[k]) for k, v in {**file_values, **cli_values}.items()}
    return cls(**merged)


ALGOS = ("grpo", "dr_grpo", "gdpo", "gigpo")
ENGINES = ("trl", "native")
VLLM_MODES = ("colocate", "server")
# What a rollout that ran into the run's own limits (trl: the completion length, the tool-calling iterations, the
# user's turns; native: --max-turns, --max-tool-calls) counts as. reject: its group is played again, then left out
# (an episode cut short says little about the policy). grade: graded at its final state, as the harness grades a
# max_turns episode, so a policy that loops or rambles learns that it scores low. Infrastructure faults and
# wall-time limits are always rejected: they are the machine's, not the policy's.
AT_LIMIT = ("reject", "grade")


@dataclasses.dataclass
class RLOptions(LoraOptions):
    tasks: str = ""
    model: str = PAPER_MODEL  # base model, or a merged SFT checkpoint
    adapter: str | None = None  # a LoRA adapter to start from (e.g. the output of `train sft`)
    out: str = ""
    algo: str = "grpo"
    engine: str = "trl"  # trl: GRPOTrainer + our environments; native: the single-process loop of rl.py
    group_size: int = 8
    tasks_per_step: int = 4
    steps: int = 100
    lr: float = 1e-6
    max_new_tokens: int = 1024
    temperature: float = 1.0
    max_turns: int = 30
    max_tool_calls: int = 60
    max_retries: int = 2
    at_limit: str = "reject"  # a rollout that ran into the run's limits: reject its group (retry) or grade it
    curriculum: int = 0  # > 0: probe each task this many times first, train on those whose rewards differ
    probe_cache: str | None = None  # the curriculum's probes, kept by policy (a folder, or off); None: the default
    clip_eps: float = 0.2
    gdpo_weights: str = "completion=1,safety=1"  # GDPO's reward components and their weights
    gigpo_omega: float = 1.0
    gigpo_gamma: float = 0.95
    seed: int = 0
    lora_dropout: float = 0.0
    bf16: bool | None = None  # None: on where a GPU supports it
    max_completion_length: int | None = (
        None  # trl: tokens of an episode after the prompt (tool results too); None: sized
    )
    memory_gb: float | None = None  # trl: memory the run may use (GB); None: what the machine (or GPU) has free
    use_vllm: bool = False  # trl engine: generate with vLLM
    vllm_mode: str = "colocate"  # colocate (in the training processes) or server (`trl vllm-serve`)
    vllm_server_base_url: str | None = None  # server mode, e.g. http://10.0.0.2:8000
    gradient_checkpointing: bool | None = None  # None: on with a GPU, off on CPU
    logging_steps: int = 1
    template: str | None = None  # trl engine: the prompt's tool list, full|compact; None: as the model was trained
    tool_names: str | None = None  # trl engine: only these tools (a,b,c: <service>__<tool>), as export --tool-names
    full: bool = False  # trl engine: train every weight (a small model trained from scratch) instead of LoRA

    def __post_init__(self) -> None:
        if self.template is not None and self.template not in TEMPLATES:
            raise OptionsError(f"unknown template {self.template!r}; use one of {', '.join(TEMPLATES)}")
        if self.engine not in ENGINES:
            raise OptionsError(f"unknown engine {self.engine!r}; use one of {', '.join(ENGINES)}")
        if self.vllm_mode not in VLLM_MODES:
            raise OptionsError(f"unknown vllm_mode {self.vllm_mode!r}; use one of {', '.join(VLLM_MODES)}")
        if self.algo not in ALGOS:
            raise OptionsError(f"unknown algo {self.algo!r}; use one of {', '.join(ALGOS)}")
        if self.at_limit not in AT_LIMIT:
            raise OptionsError(f"unknown at_limit {self.at_limit!r}; use one of {', '.join(AT_LIMIT)}")
        if self.tool_names and self.engine != "trl":
            raise OptionsError("--tool-names is an option of the trl engine (--engine trl)")
        if self.full and self.engine != "trl":
            raise OptionsError("--full is an option of the trl engine (--engine trl)")
        if self.full and self.adapter:
            raise OptionsError("--full trains the model's own weights: give a merged model as --model, not --adapter")
        if self.group_size < 2:
            raise OptionsError("group_size must be at least 2: advantages compare rollouts of one task")
        if self.tasks_per_step < 1:
            raise OptionsError(f"tasks_per_step must be at least 1, not {self.tasks_per_step}")
        if self.curriculum == 1 or self.curriculum < 0:
            raise OptionsError(f"curriculum must be 0 (off) or at least 2 probes a task, not {self.curriculum}")
        if self.max_completion_length is not None and self.max_completion_length < 1:
            raise OptionsError(f"max_completion_length must be at least 1, not {self.max_completion_length}")
        if self.memory_gb is not None and self.memory_gb <= 0:
            raise OptionsError(f"memory_gb must be positive, not {self.memory_gb}")

    def weights(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for part in self.gdpo_weights.split(","):
            name, sep, value = part.partition("=")
            try:
                out[name.strip()] = float(value) if sep else 1.0
            except ValueError as exc:
                raise OptionsError(f"gdpo_weights: {part!r} is not NAME=NUMBER") from exc
        unknown = set(out) - {"completion", "safety"}
        if unknown:
            raise OptionsError(f"gdpo_weights: unknown reward(s) {', '.join(sorted(unknown))}; use completion, safety")
        return out


def resolve_template(options: RLOptions) -> str:
    """The prompt's tool-list form: ``--template``, else the one the model (or adapter) folder was trained on
    (``train sft`` records it), else ``full`` — the same rule as the ``hf:`` agent's."""
    from coworkenv.harness.agents.hf_agent import recorded_template

    found = [recorded_template(p) for p in (options.adapter, options.model) if p]
    return options.template or next((t for t in found if t), None) or "full"
