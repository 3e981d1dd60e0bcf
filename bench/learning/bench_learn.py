"""Does a small model learn a task family from scratch? Held-out score before and after SFT on the whole
conversation, then GRPO from that checkpoint.

1. Procedural tasks of one family (default ``tickets-triage-oncall``, easy): ``--train`` for demonstrations,
   ``--heldout`` others (seeds from 100000) for evaluation. Reports on all held-out tasks and on those whose
   answers (the string values the reference writes, less those in >= 10 % of training tasks) never appear in
   training: a model that guesses the family's common answers scores there only by copying.
2. Demonstrations: each training task's reference played through the harness (``replay``) and exported with the
   compact tool list of only the family's tools (``export --template compact --tool-names``; the ``hf:`` agent
   gets the same list) and, in ``--recoveries`` of them, a recovery from a tool error (the service's real error,
   then the right call).
3. A Qwen2-style model built offline (``train tiny``, tokenizer trained on the demonstrations), fully fine-tuned
   with ``train sft``'s recipe: the loss on every token, the assistant's at 1 and the context's (system, user,
   tool results) at ``--context-weight`` 0.3, batches of ``--batch`` conversations grouped by length, AdamW
   (betas 0.9/0.95, weight decay 0.1 off norms and biases), ``--lr`` after ``--warmup`` steps, cosine decay.
   Copying an id read in a tool result into the next call forms from the context's own next-token signal.
   On a CPU with bf16 instructions the matmuls run in bf16 under autocast (weights, optimiser and loss fp32),
   right-padded batches run causal-only and OpenMP's idle threads sleep: 1.9x-2.2x the tokens a second of the
   fp32 steps the times below were taken with (``bench_step.py``, issue 46).
4. Checkpoints every ``--save-every`` steps in ``WORK/sft``: the same command with ``--resume`` goes on from the
   newest one (weights, optimiser, schedule, step), so a long run survives stops; those at scored steps are kept in
   ``WORK/kept`` (a later ``--resume`` run starts from one put in its own ``WORK/sft``). ``--eval-every`` scores the
   model on the held-out tasks, teacher-forced copy rates and the held-out loss along the way (``WORK/during.jsonl``,
   kept across resumes).
5. ``--grpo-steps`` of RL (``--rl-algo``: GRPO by default, GiGPO, ...) through the trl path from the SFT model
   (``learn_grpo.py``), held-out score again. With ``--resume`` on a finished SFT run, only this step runs anew.

Reproduce (``B``: ``HF_HUB_OFFLINE=1 python bench/learning/bench_learn.py``):
    B --work W --seed S --threads 1 --steps 4000 --min-lr-ratio 0.25 --eval-every 400 --grpo-steps 0
                                          # the straight recipe (issue 46): no restart, the cosine stops at 5e-4;
                                          # seeds 0/1/2: 0.933/0.958/1.000 held-out (result-2026-12-07-floor-s*.json),
                                          # ~88 min each with three runs on 2 cores; 0.000 up to step 3,200 in both
    B --work W2 --resume --steps 3600 --seed 1 --threads 1 --heldout 48 --grpo-steps 160 --grpo-full \
      --grpo-lr 1e-4 --grpo-temperature 0.7 --grpo-length 1024 --grpo-curriculum 4 --grpo-pool 400
                                          # RL from seed 1's checkpoint-3600 (copied to W2/sft; W/base to W2/base):
                                          # GRPO 0.479 -> 0.562 on 48 held-out tasks on RL seeds 1 and 2
                                          # (--grpo-seed 2), ~55 min each after 33 min of probes
                                          # (result-2026-12-07-floor-s1-3600-grpo-pool400-lr1e-4-160*.json);
                                          # --rl-algo dr_grpo: 0.604 and 0.521; the probes are kept by policy in
                                          # the probe cache (train rl --probe-cache): the next run reuses them
    B --work W                            # the recipe: 3,200 steps of SFT, ~75 min on 2 cores, held-out 0.000 ->
                                          # 0.05-0.65 (0.333 in result-2026-12-06c-digit-pairs-3200.json; stop it
                                          # any time), then 25 GRPO steps (2 tasks x 8 rollouts, ~21 min):
                                          # 0.333 -> 0.408 (result-2026-12-06c-digit-pairs-3200-grpo.json)
    B --work W --resume --steps 4800 --grpo-steps 0
                                          # 1,600 more steps (the schedule restarts at ~5e-4), ~63 min: 0.333 ->
                                          # 1.000, pass 1.00, unseen-answer 1.000 (result-2026-12-06c-...-4800.json)
    B --work W --resume --steps 4800 --grpo-steps 0 --distill-steps 300 --distill-lmbda 0.5
                                          # ... into 2 of its 4 layers (1.85M), ~24 min: student 0.000 -> 1.000
    B --work W --resume                   # continue from W/sft's newest checkpoint, to --steps in all (a
                                          # finished SFT run: only the RL step; --grpo-steps 0 skips RL)
    B --work W --resume --steps 6000      # ... and further
    B --quick                             # ~3 min: plumbing, not learning
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from learn_data import (
    answers,
    answers_seen,
    by_family,
    curve,
    demonstrations,
    evaluate,
    family_services,
    family_tools,
    id_tokens,
    subset,
    tasks_of,
    unseen,
)
from learn_distill import distill_into_smaller  # beside this file (run as a script)
from learn_grpo import continue_with_grpo

from coworkenv.harness.agents.hf_agent import load_tokenizer
from coworkenv.harness.export.chat import token_lengths
from coworkenv.synth.contract.task import Task
from coworkenv.synth.generate.families import FAMILIES
from coworkenv.train.copy_accuracy import copy_accuracy
from coworkenv.train.data import read_chat_jsonl
from coworkenv.train.options import ALGOS, AT_LIMIT, OptionsError, SFTOptions
from coworkenv.train.sft import last_checkpoint, run_sft
from coworkenv.train.tiny import build_tiny, parameter_count

FULL = {"train": 1200, "heldout": 24, "layers": 4, "hidden": 256, "vocab": 4096, "steps": 3200, "batch": 4,
        "grpo_steps": 25, "grpo_group": 8, "grpo_length": 3072, "save_every": 100}  # fmt: skip
QUICK = {"train": 40, "heldout": 4, "layers": 2, "hidden": 64, "vocab": 1024, "steps": 12, "batch": 2,
         "grpo_steps": 1, "grpo_group": 4, "grpo_length": 192, "save_every": 6}  # fmt: skip


def scoring_every(every: int, work: Path, held_groups: dict[str, list[Task]], novel: list[Task],
                  held_rows: list[dict[str, Any]], args: argparse.Namespace) -> Any:  # fmt: skip
    """A ``TrainerCallback`` that every ``every`` steps (the last excepted: the run scores that itself) scores the
    model on the held-out tasks and teacher-forced copying, appending a row to ``work/during.jsonl``."""
    from transformers import TrainerCallback

    class ScoreEvery(TrainerCallback):
        def on_save(self, args_: Any, state: Any, control: Any, **kwargs: Any) -> None:
            """A checkpoint at a scored step is kept (``WORK/kept/checkpoint-N``: the trainer keeps only the
            last two), so RL or distillation can later start from the step that scored what they need."""
            step = state.global_step
            source = Path(args_.output_dir) / f"checkpoint-{step}"
            if step % every == 0 and source.is_dir() and not (work / "kept" / source.name).exists():
                shutil.copytree(source, work / "kept" / source.name)

        def on_step_end(self, _args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
            if state.global_step % every or state.global_step >= state.max_steps:
                return
            out = work / "scored"
            model.save_pretrained(str(out))
            kwargs["processing_class"].save_pretrained(str(out))
            t = time.perf_counter()
            scored = evaluate(out, [t for group in held_groups.values() for t in group], args)
            row = {"step": state.global_step, "score": scored["score"], "pass_rate": scored["pass_rate"],
                   "by_family": by_family(scored, held_groups), "unseen_answers": subset(scored, novel), "copying": copy_accuracy(out, held_rows),
                   "tool_calls_ok": scored["tool_calls_ok"], "tool_calls": scored["tool_calls"],
                   "first_calls": scored["first_calls"][:2], "s": round(time.perf_counter() - t, 1)}  # fmt: skip
            with (work / "during.jsonl").open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
            print(f"step {row['step']}: {json.dumps({k: v for k, v in row.items() if k != 'first_calls'})}", flush=True)
            model.train()

    return ScoreEvery()


def _scored_these(before_file: Path, heldout: list[Task]) -> bool:
    """Whether ``before_file`` holds a score of exactly these held-out tasks."""
    if not before_file.is_file():
        return False
    try:
        cached = json.loads(before_file.read_text(encoding="utf-8"))
    except ValueError:
        return False
    return isinstance(cached, dict) and set(cached.get("by_task") or {}) == {t.id for t in heldout}


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="A small run that checks the plumbing.")
    parser.add_argument(
        "--family",
        default="tickets-triage-oncall",
        help="A family, or several (a,b,c): one student on all of them, scored family by family.",
    )
    parser.add_argument("--services", help="A single family's services (a+b) [default: its first option].")
    parser.add_argument("--forbidden-tools", action="store_true",
                        help="List the tools the families' forbidden actions name too (the harmful move is one the "
                             "model can make: the harmful-action rate means something).")  # fmt: skip
    parser.add_argument("--difficulty", default="easy")
    what = {"train": "Training tasks (demonstrations), per family.",
            "heldout": "Held-out tasks scored before and after, per family.",
            "steps": "SFT steps in all (with --resume: to this step).", "batch": "Conversations a step.",
            "grpo_steps": "RL steps after SFT (0: none; with --resume on a finished SFT run, only RL runs).",
            "grpo_group": "RL: rollouts per task.", "grpo_length": "RL: tokens of a rollout after the prompt.",
            "save_every": "Steps between checkpoints."}  # fmt: skip
    for name in FULL:
        flag = f"--{name.replace('_', '-')}"
        parser.add_argument(flag, type=int, help=f"{what.get(name, '')} [default: {FULL[name]}, --quick {QUICK[name]}]")
    parser.add_argument("--context-weight", type=float, default=0.3, help="Loss weight of the context's tokens.")
    parser.add_argument("--digits", type=int, default=2, help="Digits a token at most (the tokenizer's number pieces).")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--min-lr-ratio", type=float, default=0.0,
                        help="The cosine decays to this share of --lr instead of 0 (0.25: a floor of 5e-4).")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="The model's initial weights and the order of batches.")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch's CPU threads (0: one a core); 1 for runs side by side, each repeatable.")  # fmt: skip
    parser.add_argument("--warmup", type=int, default=50, help="Steps of learning-rate warmup.")
    parser.add_argument("--recoveries", type=float, default=0.15, help="Share of demonstrations with a recovery.")
    parser.add_argument("--eval-every", type=int, default=0, help="Score the held-out tasks every N steps too.")
    parser.add_argument("--resume", action="store_true", help="Continue from WORK/sft's newest checkpoint.")
    parser.add_argument("--rl-algo", default="grpo", choices=ALGOS, help="The RL algorithm after SFT.")
    parser.add_argument("--grpo-tasks", type=int, default=2, help="GRPO: tasks per step.")
    parser.add_argument("--grpo-lr", type=float, default=3e-4, help="GRPO: learning rate (LoRA on the SFT model).")
    parser.add_argument("--grpo-temperature", type=float, default=0.7, help="GRPO: sampling temperature of rollouts.")
    parser.add_argument("--grpo-seed", type=int, default=None,
                        help="RL: the seed of the rollouts and the task order [default: --seed]; the curriculum's "
                             "probes keep --seed, so a second RL seed reuses them from the probe cache.")  # fmt: skip
    parser.add_argument("--grpo-curriculum", type=int, default=0,
                        help="RL: probe each task of the pool N times with the SFT model first and train on those whose "
                             "rewards differ (train rl --curriculum).")  # fmt: skip
    parser.add_argument("--grpo-pool", type=int, default=0,
                        help="RL: fresh tasks to draw from, per family [default: steps x tasks a step; with "
                             "--grpo-curriculum, 4 times that].")  # fmt: skip
    parser.add_argument("--grpo-full", action="store_true", help="GRPO: train every weight instead of LoRA.")
    parser.add_argument("--grpo-at-limit", default="reject", choices=AT_LIMIT,
                        help="GRPO: a rollout cut by the run's limits: reject its group, or grade it (train rl "
                             "--at-limit).")  # fmt: skip
    parser.add_argument("--grpo-on", default="fresh", choices=("fresh", "train"),
                        help="GRPO's tasks: fresh ones of the family (seeds from 200000: neither demonstrated nor "
                             "held out), or the SFT's own training tasks.")  # fmt: skip
    parser.add_argument(
        "--distill-steps",
        type=int,
        default=0,
        help="Then on-policy distillation from the SFT model into a smaller student, N steps.",
    )
    parser.add_argument("--distill-teacher",
                        help="Distillation: this stronger model (same tokenizer) teaches the SFT model itself, instead "
                             "of the SFT model teaching a smaller student.")  # fmt: skip
    parser.add_argument("--student-layers", type=int, default=2, help="Distillation: the student's layers.")
    parser.add_argument("--distill-lr", type=float, default=5e-4, help="Distillation: learning rate (full).")
    parser.add_argument(
        "--distill-lmbda",
        type=float,
        default=1.0,
        help="Distillation: share of steps on the student's own samples (else the reference turns).",
    )
    parser.add_argument("--max-length", type=int, default=2048)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--work", default="bench-learn-work", help="Scratch folder (data, models, result.json).")
    args = parser.parse_args()
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.quick:
        args.max_new_tokens, args.max_turns = min(args.max_new_tokens, 48), min(args.max_turns, 4)
    args.families = [name.strip() for name in args.family.split(",") if name.strip()]
    unknown = [name for name in args.families if name not in FAMILIES]
    if unknown or not args.families:
        parser.error(
            f"--family: unknown {', '.join(unknown) or '(none given)'}; the families: {', '.join(sorted(FAMILIES))}"
        )
    if args.services and len(args.families) > 1:
        parser.error("--services names one family's services; with several families each uses its first option")
    if args.digits < 1:
        parser.error(f"--digits must be 1 or more, not {args.digits}")
    if args.student_layers < 1 or args.student_layers > args.layers:
        parser.error(f"--student-layers must be 1 to --layers ({args.layers}), not {args.student_layers}")
    if not 0.0 <= args.distill_lmbda <= 1.0:
        parser.error(f"--distill-lmbda must be between 0 and 1, not {args.distill_lmbda}")
    if args.distill_teacher and not (Path(args.distill_teacher) / "config.json").is_file():
        parser.error(f"--distill-teacher: no model in {args.distill_teacher} (a folder with config.json)")
    if args.distill_steps < 0 or args.grpo_steps < 0:
        parser.error("--distill-steps and --grpo-steps must be 0 (off) or more")
    if args.resume and not last_checkpoint(Path(args.work) / "sft"):
        parser.error(f"--resume: no checkpoint in {args.work}/sft to continue from; run once without --resume")
    return args


def main() -> None:
    for key in ("HF_HUB_OFFLINE", "TQDM_DISABLE", "HF_DATASETS_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(key, "1")
    args = parse()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    families = family_services(args.families, args.services)
    t0 = time.perf_counter()
    train_groups = tasks_of(families, args.difficulty, range(args.train))
    held_groups = tasks_of(families, args.difficulty, range(100_000, 100_000 + args.heldout))
    train = [t for group in train_groups.values() for t in group]
    heldout = [t for group in held_groups.values() for t in group]
    novel = unseen(train, heldout)
    args.tools = family_tools(train, args.forbidden_tools)
    rows, dropped = demonstrations(train, work / "demos.jsonl", args.recoveries, args.tools)
    demonstrations(heldout, work / "heldout.jsonl", 0.0, args.tools)
    held_rows = read_chat_jsonl(work / "heldout.jsonl")
    print(f"demonstrations: {len(rows)} of {len(train)} (dropped/closed: {dropped or 'none'}); "
          f"{len(novel)} of {len(heldout)} held-out tasks have answers never seen in training")  # fmt: skip
    base = work / "base"
    if not args.resume:  # the same seed and data give the same model
        build_tiny(base, args.seed, args.vocab, args.layers, args.hidden, work / "demos.jsonl", args.digits)
    lengths = token_lengths(rows, args.max_length, str(base))
    tokenizer = load_tokenizer(base)
    probe = sorted(answers(novel[0]) - answers_seen(train)) if novel else []
    ids = {value: id_tokens(tokenizer, held_rows[heldout.index(novel[0])], value) for value in probe} if novel else {}
    print(f"model: {parameter_count(base):,} parameters; {lengths.line() if lengths else 'no rows'}; "
          f"an unseen task's answers as tokens (read, written): {ids}")  # fmt: skip
    before_file = work / "before.json"
    if not _scored_these(before_file, heldout):  # a cached score of other held-out tasks (--heldout changed) is redone
        t1 = time.perf_counter()
        before = evaluate(base, heldout, args)
        before["copying"] = copy_accuracy(base, held_rows)
        before["by_family"] = by_family(before, held_groups)
        before_file.write_text(json.dumps(before), encoding="utf-8")
        print(f"before: score {before['score']} pass {before['pass_rate']} ({time.perf_counter() - t1:.0f} s)")
    before = json.loads(before_file.read_text(encoding="utf-8"))
    options = SFTOptions(
        data=str(work / "demos.jsonl"), model=str(base), out=str(work / "sft"), full=True, max_steps=args.steps,
        lr=args.lr, batch_size=args.batch, grad_accum=1, max_length=args.max_length, warmup_steps=args.warmup,
        context_weight=args.context_weight, weight_decay=0.1, seed=args.seed, threads=args.threads,
        min_lr_ratio=args.min_lr_ratio, adam_beta2=0.95, eval_data=str(work / "heldout.jsonl"),
        eval_steps=args.eval_every or args.save_every, save_steps=args.save_every, resume=args.resume,
        logging_steps=max(1, min(args.save_every, args.steps // 50)),
    )  # fmt: skip
    scorer = scoring_every(args.eval_every, work, held_groups, novel, held_rows, args) if args.eval_every else None
    t2 = time.perf_counter()
    result = run_sft(options, callbacks=[scorer] if scorer else ())
    sft = work / "sft"
    print(f"SFT: {result.steps} steps, loss {result.first_loss:.3f} -> {result.last_loss:.3f}, held-out "
          f"{result.eval_losses[0][1]:.3f} -> {result.eval_losses[-1][1]:.3f} ({time.perf_counter() - t2:.0f} s)")  # fmt: skip
    after = evaluate(sft, heldout, args)
    after["copying"] = copy_accuracy(sft, held_rows)
    after["by_family"] = by_family(after, held_groups)
    during_file = work / "during.jsonl"
    during = [json.loads(line) for line in during_file.read_text().splitlines()] if during_file.is_file() else []
    summary: dict[str, Any] = {
        "args": vars(args), "demonstrations": len(rows), "dropped": dropped, "parameters": parameter_count(base),
        "lengths": lengths.__dict__ if lengths else None, "id_tokens": ids, "before": before, "after": after,
        "unseen_answers": {"tasks": [t.id for t in novel], "before": subset(before, novel), "after": subset(after, novel)},
        "sft_steps": result.steps, "resumed_from": str(result.resumed_from) if result.resumed_from else None,
        "sft_loss_curve": curve(result.losses), "heldout_loss": result.eval_losses, "during_sft": during,
        "sft_s_this_run": round(time.perf_counter() - t2, 1), "wall_s_this_run": round(time.perf_counter() - t0, 1),
        "grpo": None, "distill": None,
    }  # fmt: skip
    (work / "result.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"held-out score {before['score']:.3f} -> {after['score']:.3f}, pass {before['pass_rate']:.2f} -> "
          f"{after['pass_rate']:.2f}; unseen-answer tasks {summary['unseen_answers']['before']} -> "
          f"{summary['unseen_answers']['after']}; copying {after['copying']}", flush=True)  # fmt: skip
    if len(held_groups) > 1:
        print(f"by family: {json.dumps(after['by_family'])}", flush=True)
    if args.grpo_steps:
        t3 = time.perf_counter()
        pool = args.grpo_pool or args.grpo_steps * args.grpo_tasks * (4 if args.grpo_curriculum else 1)
        seeds = range(200_000, 200_000 + pool)
        fresh = [t for group in tasks_of(families, args.difficulty, seeds).values() for t in group]
        rl_tasks = fresh if args.grpo_on == "fresh" else train
        try:
            grpo = continue_with_grpo(work, sft, rl_tasks, args)
        except OptionsError as exc:  # the curriculum found no task to learn from: said, and the run goes on
            print(f"{args.rl_algo}: not run: {exc}", flush=True)
            summary.update(grpo={"algo": args.rl_algo, "not_run": str(exc)})
            (work / "result.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        else:
            grpo["after"] = evaluate(work / args.rl_algo, heldout, args)
            grpo["unseen_answers"] = subset(grpo["after"], novel)
            grpo["after"]["by_family"] = by_family(grpo["after"], held_groups)
            grpo["s"] = round(time.perf_counter() - t3, 1)
            summary.update(grpo=grpo, wall_s_this_run=round(time.perf_counter() - t0, 1))
            (work / "result.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
            print(f"{args.rl_algo} ({args.grpo_steps} steps, rewards {grpo['rewards']}): held-out score {after['score']:.3f} -> "
                  f"{grpo['after']['score']:.3f}, pass {after['pass_rate']:.2f} -> {grpo['after']['pass_rate']:.2f}; "
                  f"unseen-answer tasks {grpo['unseen_answers']} ({grpo['s']:.0f} s)")  # fmt: skip

    if args.distill_steps:
        t4 = time.perf_counter()
        distill = distill_into_smaller(work, sft, train[:200], args)
        distill["before"] = after if args.distill_teacher else evaluate(work / "student-base", heldout, args)
        teacher_score = evaluate(Path(args.distill_teacher), heldout, args)["score"] if args.distill_teacher else None
        distill["teacher_score"] = teacher_score if teacher_score is not None else after["score"]
        distill["after"] = evaluate(work / "student", heldout, args)
        distill["after"]["by_family"] = by_family(distill["after"], held_groups)
        distill["unseen_answers"] = {
            "before": subset(distill["before"], novel),
            "after": subset(distill["after"], novel),
        }
        distill["s"] = round(time.perf_counter() - t4, 1)
        summary.update(distill=distill, wall_s_this_run=round(time.perf_counter() - t0, 1))
        (work / "result.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        print(f"distillation into {distill['student_parameters']:,} parameters ({args.distill_steps} steps, loss "
              f"{distill['loss_curve'][:1]} -> {distill['loss_curve'][-1:]}): held-out score "
              f"{distill['before']['score']:.3f} -> {distill['after']['score']:.3f} (teacher {distill['teacher_score']:.3f}), "
              f"pass {distill['before']['pass_rate']:.2f} -> {distill['after']['pass_rate']:.2f}; unseen-answer "
              f"tasks {distill['unseen_answers']} ({distill['s']:.0f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
