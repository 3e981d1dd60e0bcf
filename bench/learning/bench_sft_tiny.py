"""Does SFT on procedural demonstrations move the tiny model? Held-out score before and after.

1. Procedural tasks of one narrow family (default ``tickets-triage-oncall``, easy): ``--train`` tasks for
   demonstrations, ``--heldout`` others (different seeds) for evaluation.
2. Demonstrations: the reference solution of each training task played through the harness (``replay``),
   graded, exported to chat JSONL by the harness's exporter.
3. The tiny model (``coworkenv train tiny``) is scored on the held-out tasks, then LoRA-SFT'd on the
   demonstrations (``coworkenv train sft``), then scored again. Greedy decoding.

Reports mean score, completion, pass rate, and how many model turns held a well-formed tool call.
A 120k-parameter random model is not expected to solve tasks; the bench says what happens, whatever it is.

Reproduce:  HF_HUB_OFFLINE=1 python bench/learning/bench_sft_tiny.py [--train 200 --heldout 10 --epochs 2]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.agents.builtin import ReplayAgent
from coworkenv.harness.agents.hf_agent import HFAgent
from coworkenv.harness.episode import EpisodeConfig, run_episode
from coworkenv.harness.export.chat import ExportParams, export_records
from coworkenv.harness.trajectory import Trajectory
from coworkenv.synth.contract.task import Task
from coworkenv.synth.generate.families import get_family
from coworkenv.train.options import SFTOptions
from coworkenv.train.sft import run_sft
from coworkenv.train.tiny import build_tiny


def make_tasks(family: str, services: tuple[str, ...], seeds: range) -> list[Task]:
    return [get_family(family).make(services, "easy", seed) for seed in seeds]


def demonstrations(tasks: list[Task], out: Path) -> tuple[int, dict[str, int]]:
    trajectories = [anyio.run(run_episode, task, ReplayAgent()) for task in tasks]
    records, dropped = export_records(trajectories, ExportParams(min_score=1.0))
    out.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return len(records), dict(dropped)


def evaluate(model: Any, tokenizer: Any, tasks: list[Task], args: argparse.Namespace) -> dict[str, float]:
    agent = HFAgent("bench", model=model, tokenizer=tokenizer, max_new_tokens=args.max_new_tokens)
    config = EpisodeConfig(max_turns=args.max_turns, max_tool_calls=args.max_turns * 2, wall_time_s=600)
    runs: list[Trajectory] = [anyio.run(lambda t=t: run_episode(t, agent, config=config)) for t in tasks]
    turns = sum(len(r.turns) for r in runs)
    calls = sum(len(r.steps) for r in runs)
    valid = sum(1 for r in runs for s in r.steps if s.outcome == "ok")
    return {
        "score": sum(r.score for r in runs) / len(runs),
        "completion": sum(r.completion for r in runs) / len(runs),
        "pass_rate": sum(r.passed for r in runs) / len(runs),
        "turns": turns,
        "tool_calls": calls,
        "tool_calls_ok": valid,
    }


def load(model_dir: Path, adapter: Path | None) -> tuple[Any, Any]:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from coworkenv.harness.agents.hf_agent import load_tokenizer

    model: Any = AutoModelForCausalLM.from_pretrained(model_dir)
    if adapter is not None:
        model = PeftModel.from_pretrained(model, adapter).merge_and_unload()
    return model.eval(), load_tokenizer(model_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", default="tickets-triage-oncall")
    parser.add_argument("--services", default="tickets")
    parser.add_argument("--train", type=int, default=200)
    parser.add_argument("--heldout", type=int, default=10)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--max-turns", type=int, default=6)
    parser.add_argument("--work", default="bench-learning-work", help="Scratch folder (model, data, adapter).")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    services = tuple(args.services.split("+"))
    t0 = time.perf_counter()
    train_tasks = make_tasks(args.family, services, range(args.train))
    heldout = make_tasks(args.family, services, range(100_000, 100_000 + args.heldout))
    written, dropped = demonstrations(train_tasks, work / "demos.jsonl")
    print(f"demonstrations: {written} of {len(train_tasks)} written (dropped: {dropped or 'none'})")
    model_dir = build_tiny(work / "tiny", seed=0)

    t1 = time.perf_counter()
    before = evaluate(*load(model_dir, None), heldout, args)
    print(f"before SFT: {before}  ({time.perf_counter() - t1:.0f} s)")
    options = SFTOptions(
        data=str(work / "demos.jsonl"), model=str(model_dir), out=str(work / "adapter"), epochs=args.epochs,
        lr=args.lr, batch_size=1, grad_accum=4, max_length=16384, lora_rank=16, lora_alpha=32, logging_steps=10,
    )  # fmt: skip
    t2 = time.perf_counter()
    result = run_sft(options)
    print(
        f"SFT: {result.steps} steps, loss {result.first_loss:.3f} -> {result.last_loss:.3f} ({time.perf_counter() - t2:.0f} s)"
    )
    after = evaluate(*load(model_dir, work / "adapter"), heldout, args)
    print(f"after SFT:  {after}")
    summary = {"args": vars(args), "demonstrations": written, "before": before, "after": after,
               "sft_losses": result.losses, "wall_s": round(time.perf_counter() - t0, 1)}  # fmt: skip
    (work / "result.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"held-out score {before['score']:.3f} -> {after['score']:.3f}; "
          f"ok tool calls {before['tool_calls_ok']} -> {after['tool_calls_ok']}; total {summary['wall_s']} s")  # fmt: skip


if __name__ == "__main__":
    main()
