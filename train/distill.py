"""``coworkenv train distill``: on-policy distillation (Cowork-Gym) on trl's GKD trainer.

The prompts are our tasks' conversations as the ``hf:`` agent renders them (system prompt, request and the
services' tools through the model's chat template), at every model turn of the task's reference episode (the
replay agent plays it in a fresh environment: the earlier turns, tool results included, are the context). With
``lmbda`` = 1 (the default) every completion is sampled from the student and the teacher scores its tokens (the
generalised JSD with ``beta``; 1 = reverse KL); with ``lmbda`` < 1 the rest train on the reference turn. The
teacher is a local HF model sharing the student's tokenizer (GKD compares full next-token distributions).

One turn a sample: the student's tool calls are not executed here (GKD has no environment loop); for rollouts
in the environments with a reward, use ``train rl``.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.agents.hf_agent import (
    TEMPLATES,
    only_tools,
    prompt_messages,
    recorded_template,
    to_chat,
    tool_names_option,
)
from coworkenv.harness.agents.registry import make_agent
from coworkenv.harness.episode import run_episode
from coworkenv.harness.tools import openai_tools, tool_views
from coworkenv.synth.contract.task import Task
from coworkenv.train.options import PAPER_MODEL, OptionsError


@dataclasses.dataclass
class DistillOptions:
    tasks: str = ""
    model: str = PAPER_MODEL  # the student
    teacher: str = ""  # a local model directory (or hub id) with the student's vocabulary
    out: str = ""
    lmbda: float = 1.0
    beta: float = 1.0
    temperature: float = 1.0
    max_new_tokens: int = 512
    max_length: int = 16384
    steps: int = 100
    lr: float = 1e-5
    batch_size: int = 1
    seed: int = 0
    full: bool = False  # full fine-tuning instead of LoRA
    lora_rank: int = 16
    lora_alpha: int = 32
    logging_steps: int = 1
    template: str | None = None  # the prompt's tool list, full|compact; None: as the teacher was trained
    tool_names: str | None = None  # only these tools (a,b,c: <service>__<tool>), as export --tool-names

    def __post_init__(self) -> None:
        if self.template is not None and self.template not in TEMPLATES:
            raise OptionsError(f"unknown template {self.template!r}; use one of {', '.join(TEMPLATES)}")

    def resolved_template(self) -> str:
        """``template``, else the one the teacher (then the student) folder was trained on, else ``full``."""
        found = (recorded_template(p) for p in (self.teacher, self.model) if p)
        return self.template or next((t for t in found if t), None) or "full"


def turn_rows(
    task: Task, tokenizer: Any, template: str = "full", tool_names: str | None = None
) -> list[dict[str, Any]]:
    """One row per model turn of the task's reference episode: the prompt rendered as the ``hf:`` agent renders
    it under ``template`` (with only ``tool_names``, if given), and the reference turn."""

    async def play() -> Any:
        with anyio.fail_after(120):
            return await run_episode(task, make_agent("replay"))

    episode = anyio.run(play)
    chat = to_chat(episode.messages)
    listed = only_tools(openai_tools(tool_views(task.services)), tool_names_option(tool_names))
    rows = []
    for k, message in enumerate(chat):
        if message["role"] != "assistant":
            continue
        before, tools = prompt_messages(chat[:k], listed, template)
        prompt = tokenizer.apply_chat_template(before, tools=tools, add_generation_prompt=True, tokenize=False)
        upto, tools = prompt_messages(chat[: k + 1], listed, template)
        full = tokenizer.apply_chat_template(upto, tools=tools, tokenize=False)
        if not full.startswith(prompt):
            raise OptionsError("the chat template does not render an assistant turn after its generation prompt")
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        turn_ids = tokenizer(full[len(prompt) :], add_special_tokens=False)["input_ids"]
        rows.append(
            {
                "prompt": prompt,
                "input_ids": prompt_ids + turn_ids,
                "attention_mask": [1] * (len(prompt_ids) + len(turn_ids)),
                "completion_mask": [0] * len(prompt_ids) + [1] * len(turn_ids),
                "task_id": task.id,
            }
        )
    return rows


def gkd_config(options: DistillOptions, **overrides: Any) -> Any:
    import torch
    from trl.experimental.gkd import GKDConfig

    gpu = torch.cuda.is_available()
    values: dict[str, Any] = {
        "output_dir": options.out,
        "lmbda": options.lmbda,
        "beta": options.beta,
        "temperature": options.temperature,
        "max_new_tokens": options.max_new_tokens,
        "max_length": options.max_length,
        "max_steps": options.steps,
        "learning_rate": options.lr,
        "per_device_train_batch_size": options.batch_size,
        "seed": options.seed,
        "bf16": gpu,
        "gradient_checkpointing": gpu,
        "logging_steps": options.logging_steps,
        "save_strategy": "no",
        "report_to": "none",
        "remove_unused_columns": False,
    }
    values.update(overrides)
    return GKDConfig(**values)


def build_distiller(options: DistillOptions, tasks: list[Task], **overrides: Any) -> Any:
    import datasets
    from peft import LoraConfig
    from trl.experimental.gkd import GKDTrainer

    from coworkenv.harness.agents.hf_agent import load_tokenizer

    if not options.teacher:
        raise OptionsError("--teacher is required: a local model with the student's vocabulary")
    tokenizer = load_tokenizer(options.model)
    template = options.resolved_template()
    rows = [row for task in tasks for row in turn_rows(task, tokenizer, template, options.tool_names)]
    lora = None
    if not options.full:
        lora = LoraConfig(
            r=options.lora_rank, lora_alpha=options.lora_alpha, target_modules="all-linear", task_type="CAUSAL_LM"
        )
    return GKDTrainer(
        model=options.model,
        teacher_model=options.teacher,
        args=gkd_config(options, **overrides),
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=lora,
    )


def run_distill(options: DistillOptions, **overrides: Any) -> list[dict[str, Any]]:
    """Distil; saves the student (adapter or full) and ``trainer_state.json`` to ``out``; returns the log."""
    from coworkenv.harness.run import load_task_set

    if not options.out or not options.tasks:
        raise OptionsError("--tasks and --out are required")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    trainer = build_distiller(options, load_task_set([options.tasks]), **overrides)
    trainer.train()
    out = Path(options.out)
    trainer.save_model(str(out))
    trainer.state.save_to_json(str(out / "trainer_state.json"))
    return list(trainer.state.log_history)
