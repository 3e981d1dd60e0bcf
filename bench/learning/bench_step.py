"""How fast is a training step? Tokens a second and seconds a step of ``train sft``'s recipe and of candidate
changes, side by side in one run on the same data and model.

The learning bench's data and model (``bench_learn.py``): ``--train`` demonstrations of
``tickets-triage-oncall`` (easy, compact tool list, 15 % with a recovery), a Qwen2-style model built offline
(4 layers, hidden 256, a 4,096-token vocabulary trained on the demonstrations, numbers in pieces of 2 digits),
full fine-tuning with the recipe's options (batches of 4 grouped by length, context weight 0.3, AdamW, cosine
after 50 warmup steps, lr 2e-3). Each variant is a worker process (its own threads and environment) holding its
own trainer built by ``build_trainer`` from the same base model, seed and data; the workers take turns,
``--steps-per-turn`` optimiser steps each, ``--rounds`` times (the order rotated each round), so load from other
jobs on a shared machine falls on every variant alike. Each worker's first ``--warmup`` steps are not timed.

A step is the trainer's own: ``training_step`` (forward, loss, backward), gradient clipping, the optimiser and
the schedule. Tokens are real ones (the attention mask's), not padding. Ratios are against ``recipe-before``,
the recipe as it was before this bench (fp32, torch's default threads, OpenMP's default wait policy, the
attention mask always);
``default`` is ``train sft``'s defaults now. ``padding`` is the share of the recipe's batch rows that is
padding: the most packing conversations into rows could save (0.3 % with batches grouped by length, so the
recipe does not pack; ``random-order`` shows the grouping's worth). Losses: the mean
training loss of each variant's timed steps, beside the recipe's on the same batches (a change that alters what
is learned shows there). A timing, never a pass/fail test. With a GPU the variants are the GPU's (bf16 weights
and gradient checkpointing, the defaults there, against without them and fp32; ``gpu-compile``).

Reproduce:  HF_HUB_OFFLINE=1 python bench/learning/bench_step.py [--compile] [--only recipe-before,default]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OMP_WAIT_POLICY = os.environ.get("OMP_WAIT_POLICY")  # the caller's, before importing coworkenv.train sets one


@dataclass(frozen=True)
class Variant:
    name: str
    what: str
    options: dict[str, Any] = field(default_factory=dict)  # SFTOptions fields over the recipe's
    env: dict[str, str] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)  # trainer.args fields set before the optimiser
    attention: str | None = None
    compile: bool = False
    causal: bool = False  # a right-padded batch runs without its attention mask (train sft's default now)


VARIANTS = [
    Variant("recipe-before", "the recipe before this bench: fp32, torch's default threads", {"cpu_bf16": False}),
    Variant("default", "train sft now: cpu_bf16 where the CPU has it, OMP_WAIT_POLICY=PASSIVE, causal-only"),
    Variant("threads-1", "fp32, torch.set_num_threads(1)", {"cpu_bf16": False, "threads": 1}),
    Variant("cpu-bf16", "bf16 autocast on CPU, default threads", {"cpu_bf16": True}),
    Variant("cpu-bf16+threads-1", "bf16 autocast, 1 thread", {"cpu_bf16": True, "threads": 1}),
    Variant("omp-passive", "fp32, OMP_WAIT_POLICY=PASSIVE", {"cpu_bf16": False}, {"OMP_WAIT_POLICY": "PASSIVE"}),
    Variant(
        "cpu-bf16+omp-passive", "bf16 autocast, OMP_WAIT_POLICY=PASSIVE", {"cpu_bf16": True}, {"OMP_WAIT_POLICY": "PASSIVE"}
    ),
    Variant("causal-only", "fp32, right-padded batches without the attention mask", {"cpu_bf16": False}, causal=True),
    Variant("adamw-foreach", "fp32, AdamW foreach instead of fused", {"cpu_bf16": False}, args={"optim": "adamw_torch"}),
    Variant("random-order", "fp32, batches not grouped by length", {"cpu_bf16": False}, args={"train_sampling_strategy": "random"}),
    Variant("eager-attention", "fp32, eager attention instead of SDPA", {"cpu_bf16": False}, attention="eager"),
]  # fmt: skip
COMPILED = Variant("cpu-bf16+compile", "bf16 autocast, torch.compile(dynamic)", {"cpu_bf16": True}, compile=True)
GPU_VARIANTS = [  # with a GPU (cpu_bf16 and the OpenMP policy do nothing there)
    Variant("gpu-recipe", "train sft's defaults on a GPU: bf16 weights, gradient checkpointing"),
    Variant("gpu-no-checkpointing", "bf16 weights, no gradient checkpointing", {"gradient_checkpointing": False}),
    Variant("gpu-fp32", "fp32, no gradient checkpointing", {"bf16": False, "gradient_checkpointing": False}),
    Variant("gpu-compile", "bf16, no checkpointing, torch.compile(dynamic)", {"gradient_checkpointing": False}, compile=True),
]  # fmt: skip


def recipe_options(work: Path, name: str, overrides: dict[str, Any]) -> Any:
    from coworkenv.train.options import SFTOptions

    return SFTOptions(
        data=str(work / "demos.jsonl"), model=str(work / "base"), out=str(work / "out" / name), full=True,
        max_steps=3200, lr=2e-3, batch_size=4, grad_accum=1, max_length=2048, warmup_steps=50, context_weight=0.3,
        weight_decay=0.1, adam_beta2=0.95, logging_steps=100, **overrides,
    )  # fmt: skip


def worker(work: Path, variant: Variant) -> None:
    """Build the variant's trainer, then for each line "N" on stdin take N steps and print one JSON line. Only
    ``default`` imports ``coworkenv.train`` before torch, as ``train sft`` and the learning bench do (its OpenMP
    wait policy then applies); the others load torch first, as before this bench (or with their own env)."""
    if variant.name == "default":
        import coworkenv.train  # noqa: F401
    import torch

    from coworkenv.train import sft
    from coworkenv.train.sft import build_trainer

    if not (variant.causal or variant.name == "default" or variant.name.startswith("gpu-")):
        sft.padded_on_the_right = lambda _mask: False  # the attention mask always, as before

    trainer = build_trainer(recipe_options(work, variant.name, variant.options))
    for key, value in variant.args.items():
        setattr(trainer.args, key, value)
    model = trainer.model
    if variant.attention:
        model.set_attn_implementation(variant.attention)
    model.train()
    trainer.current_gradient_accumulation_steps = 1  # grad_accum 1: a batch is a step
    trainer.create_optimizer_and_scheduler(num_training_steps=trainer.args.max_steps)
    optimizer, scheduler = trainer.optimizer, trainer.lr_scheduler
    step_model = torch.compile(model, dynamic=True) if variant.compile else model
    batches = _epochs(trainer)
    print(json.dumps({"ready": True, "threads": torch.get_num_threads()}), flush=True)
    for line in sys.stdin:
        tokens = padded = 0
        losses: list[float] = []
        t = time.perf_counter()
        for _ in range(int(line)):
            batch = next(batches)
            tokens += int(batch["attention_mask"].sum())
            padded += int(batch["input_ids"].numel())
            losses.append(float(trainer.training_step(step_model, batch)))
            torch.nn.utils.clip_grad_norm_(model.parameters(), trainer.args.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
        out = {"s": time.perf_counter() - t, "tokens": tokens, "padded": padded, "losses": losses}
        print(json.dumps(out), flush=True)


def _epochs(trainer: Any) -> Any:
    """The trainer's batches, epoch after epoch (more steps than the data has batches go round again)."""
    while True:
        yield from trainer.get_train_dataloader()


def prepare(work: Path, train: int) -> None:
    """The learning bench's demonstrations and tiny model in ``work`` (kept if there)."""
    sys.path.insert(0, str(HERE))
    from learn_data import demonstrations, family_tools, make_tasks

    from coworkenv.train.tiny import build_tiny

    work.mkdir(parents=True, exist_ok=True)
    marker = work / "prepared.json"
    if marker.is_file() and json.loads(marker.read_text())["train"] == train:
        return
    tasks = make_tasks("tickets-triage-oncall", ("tickets",), "easy", range(train))
    demonstrations(tasks, work / "demos.jsonl", 0.15, family_tools(tasks))
    build_tiny(work / "base", 0, 4096, 4, 256, work / "demos.jsonl", 2)
    marker.write_text(json.dumps({"train": train}))


class Worker:
    def __init__(self, work: Path, variant: Variant) -> None:
        env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
        env |= {"OMP_WAIT_POLICY": OMP_WAIT_POLICY} if OMP_WAIT_POLICY is not None else {}
        env |= variant.env
        command = [sys.executable, __file__, "--worker", variant.name, "--work", str(work)]
        self.variant = variant
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.ready: dict[str, Any] = self._read()
        self.runs: list[dict[str, Any]] = []

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                return dict(json.loads(line))
        raise SystemExit(f"worker {self.variant.name} stopped (exit {self.proc.wait()}); its error is above")

    def steps(self, n: int) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{n}\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def summarise(workers: list[Worker]) -> list[dict[str, Any]]:
    rows = []
    for w in workers:
        s = sum(r["s"] for r in w.runs)
        steps = sum(len(r["losses"]) for r in w.runs)
        tokens = sum(r["tokens"] for r in w.runs)
        padded = sum(r["padded"] for r in w.runs)
        losses = [x for r in w.runs for x in r["losses"]]
        rows.append({"variant": w.variant.name, "what": w.variant.what, "threads": w.ready["threads"],
                     "tokens_per_s": round(tokens / s, 1), "s_per_step": round(s / steps, 3), "steps": steps,
                     "padding": round(1 - tokens / padded, 3), "mean_loss": round(sum(losses) / len(losses), 4),
                     "losses": [round(x, 4) for x in losses]})  # fmt: skip
    base = rows[0]
    for row in rows:
        row["speedup"] = round(row["tokens_per_s"] / base["tokens_per_s"], 2)
        row["loss_vs_recipe"] = round(row["mean_loss"] - base["mean_loss"], 4)
    return rows


def main() -> None:
    for key in ("HF_HUB_OFFLINE", "TQDM_DISABLE", "HF_DATASETS_DISABLE_PROGRESS_BARS", "TOKENIZERS_PARALLELISM"):
        os.environ.setdefault(key, "false" if key == "TOKENIZERS_PARALLELISM" else "1")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="bench-step-work", help="Scratch folder (data, model).")
    parser.add_argument("--train", type=int, default=200, help="Demonstrations (training tasks).")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps-per-turn", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, help="Untimed steps each worker takes first.")
    parser.add_argument("--compile", action="store_true", help="Also torch.compile (a minute or more to compile).")
    parser.add_argument("--only", help="Comma-separated variant names (the first, the recipe, always runs).")
    parser.add_argument("--out", help="Write the rows as JSON here too.")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    work = Path(args.work).resolve()
    if args.worker:  # before anything imports torch here (the worker decides what loads first)
        worker(work, next(v for v in [*VARIANTS, COMPILED, *GPU_VARIANTS] if v.name == args.worker))
        return
    from coworkenv.train.sft import gpu_available

    variants = GPU_VARIANTS if gpu_available() else VARIANTS + ([COMPILED] if args.compile else [])
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {v.name for v in variants}
        if unknown:
            parser.error(
                f"unknown variant(s) {', '.join(sorted(unknown))}; known: {', '.join(v.name for v in variants)}"
            )
        variants = [v for k, v in enumerate(variants) if k == 0 or v.name in wanted]
    if args.rounds < 1 or args.steps_per_turn < 1 or args.warmup < 0:
        parser.error("--rounds and --steps-per-turn must be 1 or more, --warmup 0 or more")
    t0 = time.perf_counter()
    prepare(work, args.train)
    workers = [Worker(work, v) for v in variants]
    for w in workers:
        if args.warmup:
            w.steps(args.warmup)
    for r in range(args.rounds):
        for w in workers[r % len(workers) :] + workers[: r % len(workers)]:
            w.runs.append(w.steps(args.steps_per_turn))
        print(f"round {r + 1}/{args.rounds} done ({time.perf_counter() - t0:.0f} s)", flush=True)
    for w in workers:
        w.close()
    rows = summarise(workers)
    print(f"{'variant':<22} {'threads':>7} {'tokens/s':>9} {'s/step':>7} {'x recipe':>8} {'padding':>7} {'loss-Δ':>8}")
    for row in rows:
        print(f"{row['variant']:<22} {row['threads']:>7} {row['tokens_per_s']:>9.0f} {row['s_per_step']:>7.2f} "
              f"{row['speedup']:>8.2f} {row['padding']:>7.3f} {row['loss_vs_recipe']:>+8.4f}")  # fmt: skip
    print(f"load average at the end: {os.getloadavg()[0]:.2f}; {time.perf_counter() - t0:.0f} s in all")
    print(f"reproduce: HF_HUB_OFFLINE=1 python bench/learning/bench_step.py {' '.join(sys.argv[1:])}".rstrip())
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "rows": rows}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
