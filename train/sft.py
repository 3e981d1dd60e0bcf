"""SFT on exported trajectories with trl's ``SFTTrainer``: LoRA adapters, or every weight with ``full``.

The loss is on assistant text and tool-call tokens (``assistant_only_loss=True``): trl renders each
conversation with a training variant of the model's chat template (``{% generation %}`` markers) and masks
system, user and tool-result tokens out of the labels. ``context_weight`` W > 0 puts those context tokens back
in the loss at weight W (the assistant's stay at 1, padding 0): a model trained from scratch learns to copy an
id from a tool result into its next call from the context's own next-token signal (ids repeat inside results,
between a search and a get, in the request and the reply), which assistant tokens alone are too few to teach.
Pretrained students keep W = 0, the SFT convention. Batches of several conversations are grouped by length;
the schedule is cosine after ``warmup_steps``; AdamW's weight decay skips biases and norms. On a CPU with bf16
instructions a training step's matmuls run in bf16 under autocast (``cpu_bf16``; weights, optimiser and loss fp32).

Multi-device: the same command runs under ``accelerate launch`` (DDP, DeepSpeed ZeRO or FSDP configs), e.g.
``accelerate launch --num_processes 8 "$(which coworkenv)" train sft --data demos.jsonl --out runs/sft``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from coworkenv.harness.agents.hf_agent import template_of
from coworkenv.servers.kit.atomic import write_atomic
from coworkenv.train.data import has_tool_calls, read_chat_jsonl, to_dataset
from coworkenv.train.options import OptionsError, SFTOptions


class ModelTemplateError(ValueError):
    """The model's chat template cannot be used for assistant-only training."""


@dataclass
class SFTResult:
    adapter_dir: Path
    examples: int
    steps: int
    losses: list[float] = field(default_factory=list)
    eval_losses: list[tuple[int, float]] = field(default_factory=list)  # (step, assistant tokens' held-out loss)
    resumed_from: Path | None = None

    @property
    def first_loss(self) -> float:
        return self.losses[0] if self.losses else math.nan

    @property
    def last_loss(self) -> float:
        return self.losses[-1] if self.losses else math.nan


_NO_LOSS = -100


def gpu_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def resolve_precision(options: SFTOptions) -> tuple[bool, bool]:
    """(bf16, gradient checkpointing): as given, else on with a GPU (bf16 where supported), off on CPU."""
    import torch

    gpu = gpu_available()
    bf16 = options.bf16 if options.bf16 is not None else gpu and bool(torch.cuda.is_bf16_supported())
    checkpointing = options.gradient_checkpointing if options.gradient_checkpointing is not None else gpu
    if bf16 and not gpu:
        raise OptionsError("bf16 was asked for but no GPU is present: drop --bf16 on CPU")
    return bf16, checkpointing


def cpu_bf16_supported() -> bool:
    """Whether this CPU runs bf16 matmuls natively (oneDNN: AVX512-BF16 or AMX)."""
    import torch

    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def resolve_cpu_bf16(options: SFTOptions) -> bool:
    """Whether training on CPU runs its matmuls in bf16 under autocast: as given, else where the CPU has bf16
    instructions. Never with a GPU (``bf16`` is the GPU's setting). Measured on the learning bench's model
    (``bench/learning/bench_step.py``, 2 AVX512-BF16 cores): 1.6x-1.8x the tokens a second of fp32."""
    if gpu_available():
        return False
    if options.cpu_bf16 is None:
        return cpu_bf16_supported()
    if options.cpu_bf16 and not cpu_bf16_supported():
        raise OptionsError("cpu_bf16 was asked for but this CPU has no bf16 instructions: drop --cpu-bf16")
    return options.cpu_bf16


def load_processing_class(options: SFTOptions) -> Any:
    """The model's tokenizer (or processor for a vision-language model), with ``--chat-template`` applied."""
    from transformers import AutoProcessor

    from coworkenv.harness.agents.hf_agent import load_tokenizer, saves_its_own_tokenizer

    if saves_its_own_tokenizer(options.model):  # train tiny's, as saved (its pre-tokenizer kept)
        processing_class = load_tokenizer(options.model)
    else:
        processing_class = AutoProcessor.from_pretrained(options.model)
    if options.chat_template:
        path = Path(options.chat_template)
        if not path.is_file():
            raise ModelTemplateError(f"chat template file {path} does not exist")
        processing_class.chat_template = path.read_text(encoding="utf-8")
    return processing_class


def check_template(processing_class: Any, needs_tools: bool, model: str) -> None:
    """Fail early, with what to do, if trl cannot mask this model's template to assistant tokens."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers, supports_tool_calling

    template = getattr(processing_class, "chat_template", None)
    if not template:
        raise ModelTemplateError(
            f"model {model} has no chat template: pass --chat-template FILE.jinja with a template that has "
            "{% generation %} markers around the assistant turns, or use an instruct/chat model"
        )
    if not has_generation_markers(template):
        try:
            get_training_chat_template(processing_class)
        except ValueError as exc:
            raise ModelTemplateError(
                f"model {model}'s chat template has no {{% generation %}} markers and trl has no training variant "
                "of it, so the loss cannot be limited to assistant tokens: pass --chat-template FILE.jinja with "
                "the markers around each assistant turn (tool calls included)"
            ) from exc
    if needs_tools and not supports_tool_calling(processing_class):
        raise ModelTemplateError(
            f"model {model}'s chat template does not render tool calls and tool results, but the data has them: "
            "pass --chat-template FILE.jinja with a tool-calling template"
        )


def sft_config(options: SFTOptions) -> Any:
    import dataclasses

    from trl import SFTConfig

    bf16, checkpointing = resolve_precision(options)
    names = {f.name for f in dataclasses.fields(SFTConfig)}
    # transformers 5.2x renamed gradient_checkpointing to activation_checkpointing (the old name still works).
    checkpoint_key = "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"
    checkpoint: dict[str, Any] = {checkpoint_key: checkpointing}
    return SFTConfig(
        output_dir=options.out,
        num_train_epochs=options.epochs,
        max_steps=options.max_steps,
        learning_rate=options.lr,
        warmup_steps=options.warmup_steps,
        # A floor under the cosine: transformers' cosine_with_min_lr, the same curve squeezed into [floor, lr].
        lr_scheduler_type="cosine_with_min_lr" if options.min_lr_ratio else options.lr_scheduler,
        lr_scheduler_kwargs={"min_lr_rate": options.min_lr_ratio} if options.min_lr_ratio else None,
        weight_decay=options.weight_decay,  # transformers leaves biases and norms out of it
        adam_beta1=0.9,
        adam_beta2=options.adam_beta2,
        per_device_train_batch_size=options.batch_size,
        per_device_eval_batch_size=options.batch_size,
        # Conversations of like length share a batch, so little of it is padding (padding carries no loss).
        train_sampling_strategy="group_by_length" if options.batch_size > 1 else "random",
        gradient_accumulation_steps=options.grad_accum,
        max_length=options.max_length,
        assistant_only_loss=True,
        packing=False,
        bf16=bf16,
        use_cpu=not gpu_available(),
        logging_steps=options.logging_steps,
        save_strategy="steps" if options.save_steps else "no",
        save_steps=options.save_steps or 500,
        save_total_limit=2,
        # The held-out loss at the start (step 0, or the step a resumed run goes on from), every eval_steps, and
        # (run_sft) at the end.
        eval_strategy="steps" if options.eval_data else "no",
        eval_steps=options.eval_steps or 10**9,
        eval_on_start=bool(options.eval_data),
        report_to="none",
        seed=options.seed,
        disable_tqdm=True,
        model_init_kwargs={"dtype": "bfloat16" if bf16 else "float32"},
        **checkpoint,
    )


def lora_config(options: SFTOptions) -> Any:
    from peft import LoraConfig

    return LoraConfig(
        r=options.lora_rank,
        lora_alpha=options.lora_alpha,
        lora_dropout=options.lora_dropout,
        target_modules=options.target_modules_value(),
        task_type="CAUSAL_LM",
    )


def weighted_loss(logits: Any, input_ids: Any, labels: Any, attention_mask: Any, context_weight: float) -> Any:
    """The next-token cross-entropy of a padded batch, each predicted token weighted: 1 where it is trained
    (``labels`` not -100: assistant text, tool calls, the end of each assistant turn), ``context_weight`` where it
    is context (system, user and tool-result tokens: -100 in ``labels`` but inside ``attention_mask``), 0 where
    it is padding. The weighted sum over the weights' sum, so a batch of long and short conversations counts each
    token once. ``logits`` are the model's for ``input_ids`` (batch × length × vocabulary)."""
    import torch

    trained = labels != _NO_LOSS
    present = attention_mask.bool() if attention_mask is not None else torch.ones_like(trained)
    weights = torch.where(trained, 1.0, torch.where(present, float(context_weight), 0.0))[:, 1:]
    targets = torch.where(trained, labels, input_ids)[:, 1:]
    logits = logits[:, :-1].float()
    ce = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.size(-1)), targets.reshape(-1), reduction="none"
    ).view_as(weights)
    return (ce * weights).sum() / weights.sum().clamp(min=1e-8)


def padded_on_the_right(attention_mask: Any) -> bool:
    """Whether each row of a batch is its tokens then its padding (a mask of ones, then zeros). Then the causal
    mask alone keeps every real token from the padding, which comes after it: the model can run without the
    attention mask, on attention's causal fast path (SDPA skips the blocks above the diagonal; ~1.35x a CPU
    step of the learning bench's model), with the same result on every real token."""
    mask = attention_mask.bool()
    return bool((mask[:, 1:] <= mask[:, :-1]).all())


def context_weighted(base: type, context_weight: float, cpu_bf16: bool = False) -> type:
    """``base`` (trl's ``SFTTrainer``) whose training loss is :func:`weighted_loss`: the assistant's tokens at 1,
    the context's at ``context_weight`` (0: ``base``'s own loss). Evaluation reports the assistant tokens' loss
    alone (context weight 0), the figure comparable across runs. Each micro-batch is normalised by its own
    weights, and the trainer divides by the gradient accumulation steps as for any loss it does not scale itself.
    With ``cpu_bf16`` a training step's forward pass (and so its backward) runs under CPU bf16 autocast: matmuls
    in bf16, weights, gradients, optimiser and the loss (:func:`weighted_loss` upcasts the logits) in fp32;
    evaluation stays fp32. A batch padded on the right runs causal-only (:func:`padded_on_the_right`); the loss
    still weighs its padding 0 from the attention mask."""
    import torch

    class ContextWeightedSFTTrainer(base):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if context_weight:
                self.loss_is_scaled_for_ga = False

        def compute_loss(
            self, model: Any, inputs: dict[str, Any], return_outputs: bool = False, num_items_in_batch: Any = None
        ) -> Any:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cpu_bf16 and model.training):
                if not context_weight:
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
                mask = inputs.get("attention_mask")
                causal = mask is None or padded_on_the_right(mask)
                outputs = model(input_ids=inputs["input_ids"], attention_mask=None if causal else mask)
            weight = context_weight if model.training else 0.0
            loss = weighted_loss(outputs.logits, inputs["input_ids"], inputs["labels"], mask, weight)
            return (loss, outputs) if return_outputs else loss

    return ContextWeightedSFTTrainer


def build_trainer(options: SFTOptions, callbacks: Sequence[Any] = ()) -> Any:
    """An ``SFTTrainer`` with its dataset prepared (tokenised, labels masked), not yet trained; ``callbacks``
    (transformers ``TrainerCallback``s) are added to it. With ``eval_data`` its held-out records are the
    evaluation set (the assistant tokens' loss, ``eval_loss``)."""
    from trl import SFTTrainer

    if not options.out:
        raise ValueError("--out is required: the directory the LoRA adapter is written to")
    records = read_chat_jsonl(options.data)
    held_out = read_chat_jsonl(options.eval_data) if options.eval_data else None
    processing_class = load_processing_class(options)
    check_template(processing_class, has_tool_calls(records), options.model)
    cpu_bf16 = resolve_cpu_bf16(options)
    if options.threads:
        import torch

        torch.set_num_threads(options.threads)
    plain = not options.context_weight and not cpu_bf16
    trainer_class = SFTTrainer if plain else context_weighted(SFTTrainer, options.context_weight, cpu_bf16)
    return trainer_class(
        model=options.model,
        args=sft_config(options),
        train_dataset=to_dataset(records),
        eval_dataset=to_dataset(held_out) if held_out else None,
        processing_class=processing_class,
        peft_config=None if options.full else lora_config(options),
        callbacks=list(callbacks) or None,
    )


def last_checkpoint(out: str | Path) -> Path | None:
    """The newest ``checkpoint-N`` folder a run saved in ``out`` that holds its trainer state, or None."""
    folders = [p for p in Path(out).glob("checkpoint-*") if p.name.split("-", 1)[1].isdigit()]
    whole = [p for p in folders if (p / "trainer_state.json").is_file()]
    return max(whole, key=_step_of, default=None)


def _step_of(checkpoint: Path) -> int:
    return int(checkpoint.name.split("-", 1)[1])


def _eval_losses(log_history: list[dict[str, Any]]) -> list[tuple[int, float]]:
    """(step, held-out loss) for each evaluation in a trainer's log, one per step (the latest wins)."""
    by_step = {int(e["step"]): float(e["eval_loss"]) for e in log_history if "eval_loss" in e}
    return sorted(by_step.items())


def run_sft(options: SFTOptions, callbacks: Sequence[Any] = ()) -> SFTResult:
    """Train a LoRA adapter (or, with ``full``, the whole model); writes it, the tokenizer and
    ``coworkenv_sft.json`` (options, losses, held-out losses) to ``out``. ``callbacks``: transformers
    ``TrainerCallback``s called during training (e.g. to score a checkpoint every N steps). With ``resume`` the
    run continues from the newest checkpoint in ``out`` (weights, optimiser, schedule, data order and step),
    so a long run stopped at any point goes on where its last ``save_steps`` checkpoint left it."""
    trainer = build_trainer(options, callbacks)
    if len(trainer.train_dataset) == 0:
        from coworkenv.train.data import DataError

        raise DataError(
            f"no example of {options.data} has an assistant token within --max-length {options.max_length} "
            "(the tool schemas and system prompt come first and were all that fit); raise --max-length, or "
            "export with --template compact for a small model (and prompt it with hf:PATH?template=compact)"
        )
    if trainer.eval_dataset is not None and len(trainer.eval_dataset) == 0:
        from coworkenv.train.data import DataError

        raise DataError(
            f"no held-out example of {options.eval_data} has an assistant token within --max-length "
            f"{options.max_length}, so there is no held-out loss to measure; raise --max-length, or hold out "
            "shorter examples"
        )
    checkpoint = last_checkpoint(options.out) if options.resume else None
    if checkpoint is not None and 0 < options.max_steps <= _step_of(checkpoint):
        # The run already reached --max-steps: the trainer would take one more step before it checks, so load the
        # checkpoint's weights and state instead (the result is that checkpoint, not a step past it).
        from transformers import TrainerState

        trainer._load_from_checkpoint(str(checkpoint))
        trainer.state = TrainerState.load_from_json(str(checkpoint / "trainer_state.json"))
    else:
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    history = trainer.state.log_history
    if trainer.eval_dataset is not None and not any(
        "eval_loss" in e and e.get("step") == trainer.state.global_step for e in history
    ):
        trainer.evaluate()
    out = Path(options.out)
    trainer.save_model(str(out))
    trainer.processing_class.save_pretrained(str(out))
    losses = [float(entry["loss"]) for entry in history if "loss" in entry]
    if not losses:  # fewer steps than logging_steps: the run's average is all there is
        losses = [float(e["train_loss"]) for e in history if "train_loss" in e]
    result = SFTResult(
        adapter_dir=out,
        examples=len(trainer.train_dataset),
        steps=trainer.state.global_step,
        losses=losses,
        eval_losses=_eval_losses(history),
        resumed_from=checkpoint,
    )
    records = read_chat_jsonl(options.data)
    template = "compact" if any(template_of(r["messages"]) == "compact" for r in records) else "full"
    summary = {
        "options": asdict(options),
        "template": template,  # the hf: agent prompts this folder's model with the same tool list
        "examples": result.examples,
        "steps": result.steps,
        "losses": losses,
        "eval_losses": result.eval_losses,
        "resumed_from": str(checkpoint) if checkpoint else None,
    }
    write_atomic(out / "coworkenv_sft.json", json.dumps(summary, indent=2))
    return result
