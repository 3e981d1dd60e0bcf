"""Sizing ``train rl`` (trl engine) before it starts: lengths from the model and the tasks' prompts, and a rough
memory estimate checked against what the machine has free.

- The completion length (``--max-completion-length``) is what the model's ``max_position_embeddings`` leaves after
  the longest prompt of the tasks (rendered with their tools, as trl renders it). Left unset, it is the largest of
  4096 (512 on a CPU), 2048, ... 256 tokens that fits both the positions and the memory; given, it must fit, or
  the command ends in one line naming the option to lower.
- The step's rollouts (``--group-size`` × ``--tasks-per-step``) are generated in the largest chunks that fit (trl
  generates them all at once; :class:`~coworkenv.train.trl_grpo.CoworkGRPOTrainer` splits them) and trained in the
  largest micro-batches that fit (gradient accumulation): the same samples per optimizer step either way.
- The estimate, in bytes (a rough model, conservative on purpose): weights (parameters × dtype); the trainable
  weights' gradients and AdamW states (12 bytes a trainable parameter: the LoRA adapters', every one with ``full``); generation (the rollouts' KV cache and the prompts' prefill
  with its B × P² attention mask; nothing with vLLM, which sizes itself); training a micro-batch (activations ~
  batch × sequence × (8 × hidden + 3 × intermediate) × layers × dtype, one hidden vector a layer with gradient
  checkpointing; the attention mask and scores ~ batch × sequence² × (6 + 4 × layers) bytes on CPU, × 2 with
  CUDA's SDPA kernels; logits ~ batch × completion × vocab × (2 × dtype + 4)). Measured on the tiny model on CPU
  (2 layers, SDPA): batch 2 × 4096 tokens forward and backward +0.47 GB, batch 8 × 4096 forward +0.79 GB.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import asdict, dataclass
from typing import Any

from coworkenv.train.options import OptionsError, RLOptions

GB = 1e9
COMPLETION_CAP = 4096
CPU_COMPLETION_CAP = 512
COMPLETION_FLOOR = 256
HEADROOM = 0.8
"""The share of the free memory a run may plan to use (the estimate is rough; other processes move)."""


@dataclass(frozen=True)
class ModelShape:
    """What the estimate needs to know of a causal LM, read from its config (no weights loaded)."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int
    max_positions: int | None
    tied: bool = True

    @classmethod
    def of(cls, model: str) -> ModelShape:
        from transformers import AutoConfig

        try:
            config: Any = AutoConfig.from_pretrained(model)
        except (OSError, ValueError) as exc:
            raise OptionsError(f"cannot read the config of model {model!r}: {exc}") from exc
        text = getattr(config, "text_config", None) or config  # vision-language models keep it apart
        hidden = int(text.hidden_size)
        heads = int(getattr(text, "num_attention_heads", 1) or 1)
        return cls(
            hidden=hidden,
            layers=int(text.num_hidden_layers),
            heads=heads,
            kv_heads=int(getattr(text, "num_key_value_heads", None) or heads),
            intermediate=int(getattr(text, "intermediate_size", None) or 4 * hidden),
            vocab=int(text.vocab_size),
            max_positions=getattr(text, "max_position_embeddings", None),
            tied=bool(getattr(config, "tie_word_embeddings", False)),
        )

    @property
    def kv_width(self) -> int:
        return self.kv_heads * (self.hidden // self.heads)

    def parameters(self) -> int:
        attention = 2 * self.hidden * self.hidden + 2 * self.hidden * self.kv_width
        mlp = 3 * self.hidden * self.intermediate
        embeddings = self.vocab * self.hidden * (1 if self.tied else 2)
        return self.layers * (attention + mlp) + embeddings

    def lora_parameters(self, rank: int) -> int:
        """Adapters on every linear layer (``all-linear``): rank × (in + out) each."""
        h, kv, inter = self.hidden, self.kv_width, self.intermediate
        per_layer = (h + h) * 2 + (h + kv) * 2 + (h + inter) * 3
        return self.layers * rank * per_layer


@dataclass(frozen=True)
class MemoryEstimate:
    weights: float
    optimizer: float
    generation: float
    training: float

    @property
    def total(self) -> float:
        """The peak: generation (no gradients) and training take turns."""
        return self.weights + self.optimizer + max(self.generation, self.training)

    def parts(self) -> str:
        return ", ".join(f"{k} {v / GB:.1f}" for k, v in asdict(self).items())


@dataclass(frozen=True)
class Runtime:
    """How the run computes: these change the estimate's terms."""

    dtype_bytes: int = 4  # 2 in bf16
    gpu: bool = False  # CUDA's SDPA kernels keep no sequence² scores; a CPU run's attention does
    checkpointing: bool = False  # gradient checkpointing keeps one tensor a layer
    vllm: bool = False  # generation happens in vLLM, whose memory is its own setting


def estimate(
    shape: ModelShape,
    *,
    chunk: int,
    micro_batch: int,
    prompt: int,
    completion: int,
    rank: int,
    runtime: Runtime,
    full: bool = False,
) -> MemoryEstimate:
    """Bytes of one RL step whose rollouts are generated ``chunk`` at a time and trained ``micro_batch`` at a time."""
    dtype, sequence = runtime.dtype_bytes, prompt + completion
    square = 2 if runtime.gpu else 6 + 4 * shape.layers  # bytes per (sample, position, position)
    kv_cache = chunk * sequence * shape.layers * 2 * shape.kv_width * dtype
    prefill = chunk * prompt * prompt * (2 if runtime.gpu else 6) + chunk * prompt * shape.vocab * dtype
    layer = 8 * shape.hidden + 3 * shape.intermediate  # what one layer keeps per position for the backward pass
    kept = shape.hidden * shape.layers + layer if runtime.checkpointing else layer * shape.layers
    activations = micro_batch * sequence * kept * dtype
    logits = micro_batch * completion * shape.vocab * (2 * dtype + 4)
    return MemoryEstimate(
        weights=float(shape.parameters() * dtype),
        optimizer=float((shape.parameters() if full else shape.lora_parameters(rank)) * 12),
        generation=0.0 if runtime.vllm else float(kv_cache + prefill),
        training=float(activations + micro_batch * sequence * sequence * square + logits),
    )


def free_memory() -> float:
    """Bytes free for the run: the GPU's free memory with CUDA, else the machine's available memory."""
    import torch

    if torch.cuda.is_available():
        return float(torch.cuda.mem_get_info()[0])
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))


@dataclass(frozen=True)
class RLPlan:
    """What ``train rl`` will use, and why it fits."""

    prompt_tokens: int
    completion: int
    completion_given: bool
    rollouts: int
    generation_batch: int
    micro_batch: int
    estimate: MemoryEstimate
    budget: float

    @property
    def accumulation(self) -> int:
        return self.rollouts // self.micro_batch

    def line(self) -> str:
        how = "as given" if self.completion_given else "sized to fit"
        return (
            f"train rl: longest prompt {self.prompt_tokens} tokens, completions up to {self.completion} ({how}); "
            f"{self.rollouts} rollouts a step, generated {self.generation_batch} and trained {self.micro_batch} at "
            f"a time; estimated peak {self.estimate.total / GB:.1f} GB ({self.estimate.parts()}) of "
            f"{self.budget / GB:.1f} GB usable"
        )

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "estimate_total": self.estimate.total}


def _divisors(n: int) -> list[int]:
    return [d for d in range(n, 0, -1) if n % d == 0]


def plan_rl(options: RLOptions, shape: ModelShape, prompt_tokens: int, budget: float, runtime: Runtime) -> RLPlan:
    """The completion length, generation chunk and micro-batch for these options, or :class:`OptionsError` naming
    what to lower."""
    rollouts = options.group_size * options.tasks_per_step
    room = shape.max_positions - prompt_tokens if shape.max_positions else None
    shorten = "shorten the prompt with --template compact or --tool-names"
    if room is not None and room < COMPLETION_FLOOR:
        raise OptionsError(
            f"the tasks' longest prompt is {prompt_tokens} tokens and the model reads {shape.max_positions} "
            f"positions, which leaves no room for an episode: {shorten}"
        )
    given = options.max_completion_length
    if given is not None and room is not None and given > room:
        raise OptionsError(
            f"--max-completion-length {given} and the longest prompt ({prompt_tokens} tokens) exceed the model's "
            f"{shape.max_positions} positions: lower --max-completion-length to {room} or less"
        )
    cap = min(runtime_cap(runtime), room) if room is not None else runtime_cap(runtime)
    lengths = [given] if given is not None else _lengths(cap)
    usable = budget * HEADROOM

    def sized(completion: int, chunk: int, micro: int) -> MemoryEstimate:
        return estimate(
            shape,
            chunk=chunk,
            micro_batch=micro,
            prompt=prompt_tokens,
            completion=completion,
            rank=options.lora_rank,
            runtime=runtime,
            full=options.full,
        )

    for completion in lengths:
        chunk = next((c for c in _divisors(rollouts) if sized(completion, c, 1).total <= usable), None)
        micro = next((m for m in _divisors(rollouts) if sized(completion, 1, m).total <= usable), None)
        if chunk is not None and micro is not None:
            found = sized(completion, chunk, micro)
            return RLPlan(prompt_tokens, completion, given is not None, rollouts, chunk, micro, found, usable)
    smallest = sized(lengths[-1], 1, 1)
    need = (
        f"train rl needs about {smallest.total / GB:.1f} GB ({smallest.parts()}) even one rollout at a time, "
        f"and {usable / GB:.1f} GB is usable"
    )
    if smallest.weights + smallest.optimizer > usable:
        raise OptionsError(f"{need}: the model alone does not fit; use a smaller --model, or --bf16 on a GPU")
    if given is not None and sized(COMPLETION_FLOOR, 1, 1).total <= usable:
        raise OptionsError(f"{need}: lower --max-completion-length (now {given}) or leave it unset to size it")
    raise OptionsError(f"{need}: the prompt ({prompt_tokens} tokens) is too long; {shorten}")


def runtime_cap(runtime: Runtime) -> int:
    """The longest completion sized by default: 4096 tokens with CUDA; 512 on a CPU, where a run is a smoke test."""
    return COMPLETION_CAP if runtime.gpu else CPU_COMPLETION_CAP


def _lengths(cap: int) -> list[int]:
    """``cap``, then the powers of two below it, down to the floor."""
    out = [cap]
    n = 1 << (cap.bit_length() - 1)
    n = n // 2 if n == cap else n
    while n >= COMPLETION_FLOOR:
        out.append(n)
        n //= 2
    return out


def longest_prompt(tokenizer: Any, rows: list[dict[str, Any]], factory: Any, template: str, sample: int = 8) -> int:
    """Tokens of the longest prompt, rendered as trl renders it: with the environment's tool methods as the chat
    template's tools (none under ``template="compact"``, whose rows' system message lists them). Of each
    environment's rows, the ``sample`` longest in characters are tokenized (the tools are the same for all)."""
    from transformers.utils import get_json_schema

    routed = isinstance(factory, dict)
    schemas: dict[Any, list[dict[str, Any]] | None] = {}
    for name, cls in (factory if routed else {None: factory}).items():
        instance = cls()
        methods = [
            getattr(instance, n)
            for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
            if n not in ("reset", "get_reward") and not n.startswith("_")
        ]
        schemas[name] = [get_json_schema(m) for m in methods] if template != "compact" and methods else None
    longest = 0
    for name, tools in schemas.items():
        mine = [r for r in rows if not routed or r.get("environment") == name]
        for row in sorted(mine, key=lambda r: len(str(r["prompt"])), reverse=True)[:sample]:
            rendered = tokenizer.apply_chat_template(
                row["prompt"], tools=tools, add_generation_prompt=True, tokenize=True, return_dict=True
            )
            longest = max(longest, len(rendered["input_ids"]))
    return longest
