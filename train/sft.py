"""SFT on exported trajectories with trl's ``SFTTrainer``: LoRA adapters, or every weight with ``full``.

The loss is on assistant text and tool-call tokens only (``assistant_only_loss=True``): trl renders each
conversation with a training variant of the model's chat template (``{% generation %}`` markers) and masks
system, user and tool-result tokens out of the labels. Every trained token weighs the same, unless
``copy_weight`` weighs the tool-call values copied from the context (names, ids) more: a model trained from
scratch otherwise learns the values' prior instead of copying them.

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

    @property
    def first_loss(self) -> float:
        return self.losses[0] if self.losses else math.nan

    @property
    def last_loss(self) -> float:
        return self.losses[-1] if self.losses else math.nan


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
        per_device_train_batch_size=options.batch_size,
        gradient_accumulation_steps=options.grad_accum,
        max_length=options.max_length,
        assistant_only_loss=True,
        packing=False,
        bf16=bf16,
        use_cpu=not gpu_available(),
        logging_steps=options.logging_steps,
        save_strategy="no",
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


def copy_weighted(
    base: type, weight: float, values: list[tuple[list[int], list[int]]] | None = None, value_batch: int = 0
) -> type:
    """``base`` (trl's ``SFTTrainer``) with a loss that weighs the tokens of copied tool-call values ``weight``
    times the other trained tokens (:func:`coworkenv.train.copying.copy_weights`): the per-token cross-entropy,
    weighted, over the weights' sum. With ``values`` (:func:`coworkenv.train.copying.value_examples`) and
    ``value_batch``, each training step adds the loss of ``value_batch`` of them drawn at random (the loss only
    on the values they copy): the copy objective trained jointly with the demonstrations, not before them."""
    import random

    import torch

    from coworkenv.train.copying import copy_weights, labelled_loss
    from coworkenv.train.copying import value_batch as draw_values

    rng = random.Random(0)

    class CopyWeightedSFTTrainer(base):
        def compute_loss(
            self, model: Any, inputs: dict[str, Any], return_outputs: bool = False, num_items_in_batch: Any = None
        ) -> Any:
            ids, labels = inputs["input_ids"], inputs["labels"]
            rows = zip(ids.tolist(), labels.tolist(), strict=True)
            weights = torch.tensor([copy_weights(self.processing_class, i, x, weight) for i, x in rows])
            outputs = model(input_ids=ids, attention_mask=inputs.get("attention_mask"))
            logits = outputs.logits[:, :-1].float()
            w = weights[:, 1:].to(logits.device)
            ce = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1).clamp(min=0), reduction="none"
            ).view_as(w)
            loss = (ce * w).sum() / w.sum().clamp(min=1.0)
            if values and value_batch and model.training:
                pad = self.processing_class.pad_token_id
                batch = {k: v.to(ids.device) for k, v in draw_values(values, rng, value_batch, pad).items()}
                loss = loss + labelled_loss(model, batch)
            return (loss, outputs) if return_outputs else loss

    return CopyWeightedSFTTrainer


def build_trainer(options: SFTOptions, callbacks: Sequence[Any] = ()) -> Any:
    """An ``SFTTrainer`` with its dataset prepared (tokenised, labels masked), not yet trained; ``callbacks``
    (transformers ``TrainerCallback``s) are added to it."""
    from trl import SFTTrainer

    if not options.out:
        raise ValueError("--out is required: the directory the LoRA adapter is written to")
    records = read_chat_jsonl(options.data)
    processing_class = load_processing_class(options)
    check_template(processing_class, has_tool_calls(records), options.model)
    values = None
    if options.value_batch:
        from coworkenv.train.copying import value_examples

        values = value_examples(records, processing_class, options.value_tokens, window=True)
        if not values:
            raise OptionsError(f"--value-batch: no demonstration of {options.data} copies a value into a tool call")
    plain = options.copy_weight == 1.0 and not values
    trainer_class = SFTTrainer if plain else copy_weighted(SFTTrainer, options.copy_weight, values, options.value_batch)
    return trainer_class(
        model=options.model,
        args=sft_config(options),
        train_dataset=to_dataset(records),
        processing_class=processing_class,
        peft_config=None if options.full else lora_config(options),
        callbacks=list(callbacks) or None,
    )


def run_sft(options: SFTOptions, callbacks: Sequence[Any] = ()) -> SFTResult:
    """Train a LoRA adapter (or, with ``full``, the whole model); writes it, the tokenizer and
    ``coworkenv_sft.json`` (options, losses) to ``out``. ``callbacks``: transformers ``TrainerCallback``s called
    during training (e.g. to score a checkpoint every N steps)."""
    trainer = build_trainer(options, callbacks)
    if len(trainer.train_dataset) == 0:
        from coworkenv.train.data import DataError

        raise DataError(
            f"no example of {options.data} has an assistant token within --max-length {options.max_length} "
            "(the tool schemas and system prompt come first and were all that fit); raise --max-length, or "
            "export with --template compact for a small model (and prompt it with hf:PATH?template=compact)"
        )
    trainer.train()
    out = Path(options.out)
    trainer.save_model(str(out))
    trainer.processing_class.save_pretrained(str(out))
    losses = [float(entry["loss"]) for entry in trainer.state.log_history if "loss" in entry]
    if not losses:  # fewer steps than logging_steps: the run's average is all there is
        losses = [float(e["train_loss"]) for e in trainer.state.log_history if "train_loss" in e]
    result = SFTResult(
        adapter_dir=out, examples=len(trainer.train_dataset), steps=trainer.state.global_step, losses=losses
    )
    records = read_chat_jsonl(options.data)
    template = "compact" if any(template_of(r["messages"]) == "compact" for r in records) else "full"
    summary = {
        "options": asdict(options),
        "template": template,  # the hf: agent prompts this folder's model with the same tool list
        "examples": result.examples,
        "steps": result.steps,
        "losses": losses,
    }
    write_atomic(out / "coworkenv_sft.json", json.dumps(summary, indent=2))
    return result
