"""On a GPU: one SFT step and one GRPO step in bf16 on a real small architecture built offline.

The architecture is Qwen2.5-0.5B's (24 layers, hidden 896, 14 heads, 2 KV heads, MLP 4864, RoPE θ 1e6, tied
embeddings) with random weights and a tokenizer trained on the demonstrations (no hub download), so the
vocabulary is smaller than Qwen's. The steps go through the project's own entry points:

1. ``train sft --full --bf16``: full fine-tuning, two optimiser steps on exported (compact) demonstrations;
2. ``train sft --bf16`` with LoRA: one step;
3. ``train rl --engine trl --algo grpo --bf16`` from the full-SFT checkpoint: one GRPOTrainer step, the model
   generating on the GPU against the tasks' environments (a random model rarely calls a tool: the step runs,
   its rewards are whatever the grader gives);
4. the same trl path with the test suite's scripted generator (even rollouts play the reference tool calls),
   ``--algo gigpo``: one step whose rollouts call tools, get graded and carry per-turn advantages.

Writes ``OUT/gpu_check.json`` (device, versions, dtypes, losses, rewards, peak memory, seconds a stage).

Reproduce (data from the main job: ``coworkenv pipeline --out P``):
    HF_HUB_OFFLINE=1 PYTHONPATH=. python bench/gpu/bf16_steps.py --data P/sft-compact.jsonl --tasks P/tasks \
        --out /tmp/gpu-check
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

QWEN25_05B = {
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "rope_theta": 1_000_000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
    "max_position_embeddings": 32768,
}


SMOKE = QWEN25_05B | {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4}


def build(out: Path, data: str, vocab: int, shape: dict[str, Any]) -> tuple[Path, int]:
    """``shape`` (Qwen2.5-0.5B's), random weights, a tokenizer trained on ``data``; saved in bf16."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    from coworkenv.train.tiny import build_tokenizer, render_demonstrations

    tokenizer = build_tokenizer(vocab, render_demonstrations(data))
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        **shape,
    )
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config).to(torch.bfloat16)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out, sum(p.numel() for p in model.parameters())


def saved_dtypes(folder: Path) -> list[str]:
    from safetensors import safe_open

    found: set[str] = set()
    for path in folder.glob("*.safetensors"):
        with safe_open(str(path), framework="pt") as f:
            for name in f.keys():  # noqa: SIM118 - safe_open has keys(), not iteration
                found.add(str(f.get_slice(name).get_dtype()))
    return sorted(found)


def stage(report: dict[str, Any], name: str, fn: Any) -> Any:
    import torch

    gpu = torch.cuda.is_available()
    if gpu:
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    try:
        value = fn()
    except Exception as exc:  # the report says which stage broke and how; the other stages still run
        report[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
        print(f"[{name}] FAILED: {report[name]['error']}", flush=True)
        return None
    report[name] = {
        "ok": True,
        "seconds": round(time.perf_counter() - started, 2),
        "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if gpu else None,
        **(value or {}),
    }
    print(f"[{name}] {json.dumps(report[name])}", flush=True)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="exported chat JSONL (compact template)")
    parser.add_argument("--tasks", required=True, help="task file or folder for the GRPO step")
    parser.add_argument("--out", required=True)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--skip", nargs="*", default=[], choices=["grpo"], help="stages to leave out")
    parser.add_argument("--smoke", action="store_true", help="CPU plumbing check: a 2-layer model, fp32, no GPU needed")
    args = parser.parse_args()

    import peft
    import torch
    import transformers
    import trl

    gpu = torch.cuda.is_available()
    if not gpu and not args.smoke:
        raise SystemExit("no GPU: this check runs only where torch.cuda.is_available()")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if gpu else "cpu",
        "bf16_supported": gpu and torch.cuda.is_bf16_supported(),
        "versions": {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "trl": trl.__version__,
            "peft": peft.__version__,
        },
    }

    from coworkenv.train.options import RLOptions, SFTOptions
    from coworkenv.train.sft import run_sft
    from coworkenv.train.trl_rl import run_trl_rl

    def build_stage() -> dict[str, Any]:
        folder, params = build(out / "base", args.data, args.vocab, SMOKE if args.smoke else QWEN25_05B)
        shape = "smoke (2 layers, hidden 64)" if args.smoke else "Qwen2.5-0.5B shape"
        return {"parameters": params, "architecture": shape, "saved_dtypes": saved_dtypes(folder)}

    stage(report, "build", build_stage)
    base = out / "base"

    def sft(full: bool, steps: int, name: str) -> dict[str, Any]:
        result = run_sft(
            SFTOptions(
                data=args.data,
                model=str(base),
                out=str(out / name),
                full=full,
                bf16=gpu,
                max_steps=steps,
                batch_size=2,
                grad_accum=1,
                max_length=4096,
                lr=1e-4,
            )
        )
        return {"steps": result.steps, "losses": result.losses, "saved_dtypes": saved_dtypes(out / name)}

    stage(report, "sft_full_bf16", lambda: sft(True, 2, "sft-full"))
    stage(report, "sft_lora_bf16", lambda: sft(False, 1, "sft-lora"))
    start = out / "sft-full" if (out / "sft-full" / "config.json").exists() else base

    def grpo(
        algo: str, name: str, tasks: str, group: int, per_step: int, length: int, scripted: type | None = None
    ) -> Any:
        history = run_trl_rl(
            RLOptions(
                tasks=tasks,
                model=str(start),
                out=str(out / name),
                algo=algo,
                group_size=group,
                tasks_per_step=per_step,
                steps=1,
                lr=1e-5,
                max_completion_length=length,
                max_tool_calls=10,
                max_retries=0 if scripted is None else 2,
                bf16=gpu,
            ),
            trainer_cls=scripted,
        )
        logged = history[0] if history else {}
        keep = ("loss", "reward", "reward_std", "tools/call_frequency", "tools/failure_frequency", "grad_norm")
        summary = json.loads((out / name / "coworkenv_rl.json").read_text())
        return {
            "logged": {k: logged[k] for k in keep if k in logged},
            "groups": summary.get("groups"),
            "saved_dtypes": saved_dtypes(out / name),
        }

    # a random model rarely stops: its episodes are kept short (cut ones are rejected, not retried)
    if "grpo" not in args.skip:
        stage(report, "grpo_bf16_generated", lambda: grpo("grpo", "grpo", args.tasks, 4, 2, 1024 if gpu else 64))
    try:
        from tests.train.test_trl_rl import TASK_FILE, Scripted
    except Exception as exc:  # the scripted generator lives in the test suite: run from the repository root
        report["gigpo_bf16_scripted"] = {"ok": False, "error": f"test suite not importable: {exc}"}
    else:
        stage(report, "gigpo_bf16_scripted", lambda: grpo("gigpo", "gigpo", str(TASK_FILE), 2, 1, 6000, Scripted))

    (out / "gpu_check.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
