"""The learning bench's distillation step (``bench_learn.py --distill-steps``): on-policy distillation
(``train distill``, trl's GKD) from the SFT model as teacher into a smaller student — the teacher's first and
last layers (``--student-layers`` of them, evenly spaced), its embeddings and tokenizer — scored on the held-out
tasks before and after."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from coworkenv.synth.contract.task import Task


def kept_layers(layers: int, keep: int) -> list[int]:
    """``keep`` of ``layers`` layer indices, evenly spaced, the first and the last among them."""
    if keep >= layers:
        return list(range(layers))
    if keep == 1:
        return [layers - 1]
    return sorted({round(i * (layers - 1) / (keep - 1)) for i in range(keep)})


def smaller_student(teacher: Path, out: Path, keep: int) -> Path:
    """A student of ``keep`` of the teacher's layers (weights copied), its embeddings, norm and tokenizer."""
    import copy

    from transformers import AutoModelForCausalLM

    from coworkenv.harness.agents.hf_agent import load_tokenizer

    model = AutoModelForCausalLM.from_pretrained(str(teacher))
    config = copy.deepcopy(model.config)
    chosen = kept_layers(config.num_hidden_layers, keep)
    config.num_hidden_layers = len(chosen)
    if getattr(config, "layer_types", None):
        config.layer_types = [config.layer_types[i] for i in chosen]
    student = AutoModelForCausalLM.from_config(config)
    state = {}
    for name, tensor in model.state_dict().items():
        if name.startswith("model.layers."):
            index, rest = name[len("model.layers.") :].split(".", 1)
            if int(index) not in chosen:
                continue
            name = f"model.layers.{chosen.index(int(index))}.{rest}"
        state[name] = tensor
    student.load_state_dict(state, strict=True)
    student.save_pretrained(str(out))
    load_tokenizer(teacher).save_pretrained(str(out))
    return out


def same_student(model: Path, out: Path) -> Path:
    """The SFT model itself as the student (``--distill-teacher``: a stronger teacher distils into it)."""
    import shutil

    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(model, out, ignore=shutil.ignore_patterns("checkpoint-*", "optimizer.pt", "scheduler.pt"))
    return out


def distill_into_smaller(work: Path, teacher: Path, tasks: list[Task], args: argparse.Namespace) -> dict[str, Any]:
    """``args.distill_steps`` of on-policy distillation (a ``--distill-lmbda`` share of completions the student's,
    the rest the reference turns; reverse KL) from
    ``teacher`` into a ``--student-layers`` student (full fine-tuning), on the model turns of ``tasks``'
    reference episodes, prompted as the teacher was trained (compact template, the family's tools). With
    ``--distill-teacher T`` the teacher is ``T`` and the student the SFT model ``teacher`` itself, whole
    (Cowork-Gym's SFT -> on-policy distillation path)."""
    from coworkenv.harness.agents.hf_agent import load_tokenizer
    from coworkenv.synth.contract.taskfile import save_tasks
    from coworkenv.train.distill import DistillOptions, run_distill
    from coworkenv.train.tiny import parameter_count

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    if args.distill_teacher:
        student = same_student(teacher, work / "student-base")
        teacher = Path(args.distill_teacher)
    else:
        student = smaller_student(teacher, work / "student-base", args.student_layers)
    tasks_file = save_tasks(tasks, work / "distill_tasks.jsonl")
    options = DistillOptions(
        tasks=str(tasks_file), model=str(student), teacher=str(teacher), out=str(work / "student"), full=True,
        lmbda=args.distill_lmbda, beta=1.0, temperature=1.0, max_new_tokens=args.max_new_tokens, max_length=args.max_length,
        steps=args.distill_steps, lr=args.distill_lr, batch_size=4, template="compact",
        tool_names=",".join(args.tools) if args.tools else None, logging_steps=max(1, args.distill_steps // 20),
    )  # fmt: skip
    history = run_distill(options)
    load_tokenizer(student).save_pretrained(str(work / "student"))  # as saved with it: its pre-tokenizer kept
    return {
        "teacher": str(teacher),
        "student_layers": args.student_layers if not args.distill_teacher else None,
        "student_parameters": parameter_count(student),
        "teacher_parameters": parameter_count(teacher),
        "tasks": len(tasks),
        "steps": args.distill_steps,
        "lmbda": args.distill_lmbda,
        "loss_curve": [round(float(e["loss"]), 4) for e in history if "loss" in e],
    }
