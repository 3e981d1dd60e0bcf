"""Does a small model learn a task family from scratch? Held-out score before and after full fine-tuning.

1. Procedural tasks of one family (default ``tickets-triage-oncall``, easy): ``--train`` for demonstrations,
   ``--heldout`` others (seeds from 100000) for evaluation.
2. Demonstrations: each training task's reference solution played through the harness (``replay``), graded,
   exported by the harness's exporter with the compact tool list (``export --template compact``) of only the
   tools the family's references call (``export --tool-names``, ``--family-tools``; the ``hf:`` agent is given
   the same list, ``tools=...``, so both render one text: ~300 tokens fewer a record), the task's
   closing reply where the reference has none, and in ``--recoveries`` of them (15 %) a recovery from a tool
   error (``export --recoveries``: a half-copied id or a missing argument, the service's real error, the right
   call).
3. A Qwen2-style model built offline from scratch (``train tiny``: ``--layers``/``--hidden``, tokenizer trained
   on the rendered demonstrations; with ``--split-ids``, the default, identifiers are spelt a character a token
   after each ``_``, so ``usr_aisha_quinn`` is copied from the search result letter by letter, as a ticket's
   digits are, instead of as rare whole-name tokens) and scored on the held-out tasks through the harness with
   the ``hf:`` agent (``template=compact``, ``tools=`` the family's, greedy). Then two warm-ups that teach it to
   copy (``train tiny --value-steps`` and ``--copy-steps``; see ``coworkenv.train.copying``): ``--value-steps`` steps of 16 on the demonstrations'
   conversations without their system prompt, the loss only on the tool-call values copied from the context
   (names, ids), up to ``--value-tokens`` each (the request's names: what a tool returns comes later); then
   ``--window-steps`` more on windows (``train tiny --window-steps``): each conversation cut to its last
   ``--window-tokens``, long enough to hold the tool result an id is copied from (ticket and user ids);
   and ``--copy-steps`` of synthetic induction text (random tokens repeated). The demonstrations
   are not changed and no value is invented: the warm-up only chooses which of their tokens carry the loss.
   Then full fine-tuning on the demonstrations (``train sft --full``, every assistant token, ``--warmup``
   steps of learning-rate warmup) with the copied values' tokens weighing ``--copy-weight`` (20) times the
   rest (``train sft --copy-weight``), which keeps the copying the warm-up taught while the format is learnt,
   and the score again. ``--value-batch N`` (0 by default) trains the copy objective jointly instead of only
   before: each SFT step adds the value loss of N examples (``train sft --value-batch``, conversations up to
   ``--value-window`` tokens, so the turns that copy ticket and user ids from tool results are included).

4. (``--grpo-steps``, 4 by default) GRPO from that checkpoint through the trl path (``train rl --engine trl``'s
   trainer, LoRA, ``--template compact`` read from the checkpoint) on training tasks, the held-out score again.
   With ``--family-tools`` (the default) GRPO's environment and prompt list only the family's tools
   (``train rl --tool-names``), the list the model was trained with (the 2026-12-02c GRPO run predates this: its
   rollouts saw every tool of the service and made no call).

``--resume-from DIR`` continues instead from a saved SFT model (a run's ``WORK/sft``, its tokenizer kept): no new
model and no warm-ups, ``before`` is its score, ``--steps`` more steps of the same SFT (the learning rate re-warmed
over ``--warmup``, then decaying); with ``--steps 0`` no SFT, only GRPO from it. ``--eval-every N`` scores the
model every N SFT steps as well (held-out score and teacher-forced copying, ``during_sft`` in the result; the
models kept in ``WORK/sft-stepN``).

Reports mean score and pass rate before/after, and the same on the held-out tasks whose answers (the string
values of the reference's tool arguments, less those in ≥ 10 % of training tasks: enums and priors) never
appear in training — a model that guesses the family's common answers scores there only by copying.

Reproduce (B: ``HF_HUB_OFFLINE=1 python bench/learning/bench_learn.py``):
    B                                 # ~40 min on 2 cores
    B --grpo-steps 0 --work W         # result-2026-12-02b.json
    B --resume-from W/sft --steps 1200 --eval-every 300 --grpo-steps 0 --work W2    # result-2026-12-02c.json
    B --resume-from W2/sft --steps 600 --value-batch 8 --value-window 900 --eval-every 300 --grpo-steps 0 --work W3
                                      # -02c.json's value_batch_continuation: stopped after its step-300 score
    B --resume-from W3/sft-step300 --steps 0 --work W4                              # -02c.json's grpo
    B --no-split-ids --steps 2400 --eval-every 600 --grpo-steps 0 --work W5                  # result-2026-12-02d.json
    B --no-split-ids --resume-from W5/sft --steps 6000 --eval-every 2000 --grpo-steps 0 --work W6   # its 2nd run
    B --no-split-ids --resume-from W6/sft --steps 6000 --eval-every 3000 --grpo-steps 0 --work W7   # its 3rd run
    B --no-split-ids --number-digits 4 --copy-steps 300 --steps 2400 --eval-every 800 --grpo-steps 0 --work W8
                                      # result-2026-12-02e.json (c976e8e's fixed-offset warm-up; see induction-*.json)
    B --quick                         # ~2 min: plumbing, not learning
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from learn_grpo import continue_with_grpo  # beside this file (run as a script)

from coworkenv.harness.agents.builtin import ReplayAgent
from coworkenv.harness.agents.hf_agent import HFAgent
from coworkenv.harness.episode import EpisodeConfig, run_episode
from coworkenv.harness.export import ExportParams, export_records, token_lengths
from coworkenv.harness.trajectory import Trajectory
from coworkenv.synth.contract.task import Task, ToolStep, is_ref
from coworkenv.synth.generate.families import get_family
from coworkenv.train.copy_accuracy import copy_accuracy
from coworkenv.train.copying import train_copying, train_copying_values
from coworkenv.train.data import read_chat_jsonl
from coworkenv.train.options import SFTOptions
from coworkenv.train.sft import run_sft
from coworkenv.train.tiny import build_tiny, parameter_count

FULL = {
    "train": 1200, "heldout": 24, "layers": 4, "hidden": 256, "vocab": 4096, "steps": 1800, "batch": 1,
    "value_steps": 300, "value_tokens": 256, "window_steps": 0, "window_tokens": 320, "copy_steps": 0,
    "grpo_steps": 4, "grpo_length": 3072,
}  # fmt: skip
QUICK = {
    "train": 60, "heldout": 4, "layers": 2, "hidden": 64, "vocab": 1024, "steps": 30, "batch": 2, "value_steps": 5,
    "value_tokens": 256, "window_steps": 5, "window_tokens": 320, "copy_steps": 5, "grpo_steps": 1,
    "grpo_length": 192,
}  # fmt: skip


WARMUPS = ("value_steps", "window_steps", "copy_steps")  # --resume-from: none unless asked for (an error)

HELP = {
    "value_steps": "Steps (of 16) copying the demonstrations' values before SFT (0: none).",
    "value_tokens": "Value warm-up: the longest example in tokens (longer ones left out).",
    "window_steps": "Then value warm-up steps (of 16) on windows: conversations cut to their last --window-tokens.",
    "window_tokens": "The windows' length in tokens (long enough to hold the tool result an id is copied from).",
    "copy_steps": "Induction steps (16 x 128 random tokens, repeated) before SFT (0: none).",
    "grpo_steps": "GRPO steps after SFT (0: none).",
    "grpo_length": "GRPO: tokens of an episode after the prompt.",
}


def make_tasks(family: str, services: tuple[str, ...], difficulty: str, seeds: range) -> list[Task]:
    return [get_family(family).make(services, difficulty, seed) for seed in seeds]  # type: ignore[arg-type]


def answers(task: Task) -> set[str]:
    """The string values the reference writes into its tool calls (``$ref`` values excluded)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if is_ref(value):
            return
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for step in task.reference_solution:
        if isinstance(step, ToolStep):
            walk(step.arguments)
    return found


def family_tools(tasks: list[Task]) -> tuple[str, ...]:
    """The tools the family's reference solutions call (``--family-tools``: the only ones the prompt lists)."""
    names = {f"{s.service}__{s.tool}" for t in tasks for s in t.reference_solution if isinstance(s, ToolStep)}
    return tuple(sorted(names))


def unseen(train: list[Task], heldout: list[Task]) -> list[Task]:
    """Held-out tasks with an answer that no training task has (for ``tickets-triage-oncall``, the on-call
    engineer's id: the tasks pass only with it, so a model can score there only by copying it). Common answers
    (in ≥ 10 % of training tasks: enums) are never unseen; first names and ticket ids recur across 1,000 tasks
    and so do not count, the engineer's ``usr_first_last`` id mostly does not."""
    counts = Counter(a for t in train for a in answers(t))
    return [t for t in heldout if answers(t) - set(counts)]


def demonstrations(
    tasks: list[Task], out: Path, recoveries: float, tools: tuple[str, ...] | None = None
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    trajectories = [anyio.run(run_episode, task, ReplayAgent()) for task in tasks]
    params = ExportParams(min_score=1.0, template="compact", recoveries=recoveries, tool_names=tools)
    rows, dropped = export_records(trajectories, params, {t.id: t for t in tasks})
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows, {k: v for k, v in dropped.items() if v}


async def _episode(task: Task, agent: HFAgent, config: EpisodeConfig) -> Trajectory:
    return await run_episode(task, agent, config=config)


def evaluate(model_dir: Path, tasks: list[Task], args: argparse.Namespace) -> dict[str, Any]:
    agent = HFAgent(str(model_dir), template="compact", max_new_tokens=args.max_new_tokens, tools=args.tools)
    config = EpisodeConfig(max_turns=args.max_turns, max_tool_calls=args.max_turns * 2, wall_time_s=900)
    runs: list[Trajectory] = [anyio.run(_episode, t, agent, config) for t in tasks]
    return {
        "score": round(sum(r.score for r in runs) / len(runs), 3),
        "pass_rate": round(sum(r.passed for r in runs) / len(runs), 3),
        "tool_calls_ok": sum(1 for r in runs for s in r.steps if s.outcome == "ok"),
        "tool_calls": sum(len(r.steps) for r in runs),
        "by_task": {r.task_id: round(r.score, 3) for r in runs},
        "first_calls": [[f"{s.name}({json.dumps(s.arguments)})" for s in r.steps[:3]] for r in runs[:4]],
    }


def subset(result: dict[str, Any], tasks: list[Task]) -> dict[str, Any]:
    scores = [result["by_task"][t.id] for t in tasks]
    if not scores:
        return {"tasks": 0}
    return {"tasks": len(scores), "score": round(sum(scores) / len(scores), 3)}


def curve(losses: list[float], points: int = 10) -> list[float]:
    every = max(1, len(losses) // points)
    return [round(x, 3) for x in losses[::every]] + ([round(losses[-1], 3)] if losses else [])


def scoring_every(every: int, work: Path, heldout: list[Task], novel: list[Task], held_rows: list[dict[str, Any]],
                  args: argparse.Namespace) -> Any:  # fmt: skip
    """A ``TrainerCallback`` that, every ``every`` SFT steps (the last excepted: the run scores that itself),
    saves the model to ``work/sft-stepN`` and scores it on the held-out tasks and teacher-forced copying; its
    ``rows`` hold the figures."""
    from transformers import TrainerCallback

    class ScoreEvery(TrainerCallback):
        def __init__(self) -> None:
            self.rows: list[dict[str, Any]] = []

        def on_step_end(self, _args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
            if state.global_step % every or state.global_step >= state.max_steps:
                return
            out = work / f"sft-step{state.global_step}"
            model.save_pretrained(str(out))
            kwargs["processing_class"].save_pretrained(str(out))
            t = time.perf_counter()
            scored = evaluate(out, heldout, args)
            row = {"step": state.global_step, "score": scored["score"], "pass_rate": scored["pass_rate"],
                   "unseen_answers": subset(scored, novel), "copying": copy_accuracy(out, held_rows),
                   "tool_calls_ok": scored["tool_calls_ok"], "tool_calls": scored["tool_calls"],
                   "first_calls": scored["first_calls"][:2], "s": round(time.perf_counter() - t, 1)}  # fmt: skip
            self.rows.append(row)
            print(f"step {row['step']}: {json.dumps({k: v for k, v in row.items() if k != 'first_calls'})}", flush=True)
            model.train()

    return ScoreEvery()


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="A small run that checks the plumbing (~2 min).")
    parser.add_argument("--family", default="tickets-triage-oncall")
    parser.add_argument("--services", default="tickets")
    parser.add_argument("--difficulty", default="easy")
    for name in FULL:
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            type=int,
            help=f"{HELP.get(name, '')} [default: {FULL[name]}, --quick {QUICK[name]}]",
        )
    parser.add_argument("--grpo-group", type=int, default=4, help="GRPO: rollouts per task.")
    parser.add_argument("--grpo-tasks", type=int, default=2, help="GRPO: tasks per step.")
    parser.add_argument("--grpo-lr", type=float, default=2e-4, help="GRPO: learning rate (LoRA on the SFT model).")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--warmup", type=int, default=50, help="SFT: steps of learning-rate warmup.")
    parser.add_argument(
        "--copy-weight", type=float, default=20.0, help="SFT: loss weight of the values copied from the context."
    )
    parser.add_argument(
        "--value-batch",
        type=int,
        default=0,
        help="SFT: each step also trains this many copied-value examples (train sft --value-batch; 0: none).",
    )
    parser.add_argument(
        "--value-window",
        type=int,
        default=700,
        help="SFT --value-batch: an example's length (train sft --value-tokens).",
    )
    parser.add_argument(
        "--recoveries", type=float, default=0.15, help="Share of demonstrations with a recovery from a tool error."
    )
    parser.add_argument(
        "--split-ids",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="train tiny --split-ids: identifiers a character a token after each '_'.",
    )
    parser.add_argument(
        "--number-digits", type=int, default=1, choices=range(1, 5), help="train tiny --number-digits N."
    )
    parser.add_argument(
        "--family-tools",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="List only the tools the family's references call, in the demonstrations (export --tool-names) and "
        "in the hf: agent's prompt (tools=...) alike.",
    )
    parser.add_argument(
        "--resume-from",
        help="Continue SFT from this checkpoint (a previous run's WORK/sft, its tokenizer kept) instead of a new "
        "model: no warm-ups, 'before' is its score, --steps more steps (lr re-warmed over --warmup, then decaying); "
        "--steps 0: no SFT, GRPO (--grpo-steps) from the checkpoint.",
    )
    parser.add_argument(
        "--eval-every", type=int, default=0, help="SFT: score the held-out tasks every N steps too (0: only after)."
    )
    parser.add_argument("--max-length", type=int, default=2048)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--work", default="bench-learn-work", help="Scratch folder (data, models, result.json).")
    args = parser.parse_args()
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, 0 if args.resume_from and name in WARMUPS else value)
    if args.steps == 0 and not args.resume_from:
        parser.error("--steps 0 (no SFT) needs --resume-from: the checkpoint GRPO continues from")
    if args.resume_from:
        if args.value_steps or args.window_steps or args.copy_steps:
            parser.error("--resume-from continues SFT: --value-steps, --window-steps and --copy-steps must be 0")
        if not (Path(args.resume_from) / "config.json").is_file():
            parser.error(f"--resume-from {args.resume_from}: no model there (no config.json)")
    if args.quick:
        args.max_new_tokens, args.max_turns = min(args.max_new_tokens, 48), min(args.max_turns, 4)
    return args


def main() -> None:
    for key in ("HF_HUB_OFFLINE", "TQDM_DISABLE", "HF_DATASETS_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(key, "1")
    args = parse()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    services = tuple(args.services.split("+"))
    t0 = time.perf_counter()
    train = make_tasks(args.family, services, args.difficulty, range(args.train))
    heldout = make_tasks(args.family, services, args.difficulty, range(100_000, 100_000 + args.heldout))
    novel = unseen(train, heldout)
    args.tools = family_tools(train) if args.family_tools else None
    rows, dropped = demonstrations(train, work / "demos.jsonl", args.recoveries, args.tools)
    print(f"demonstrations: {len(rows)} of {len(train)} (dropped/closed: {dropped or 'none'}); "
          f"{len(novel)} of {len(heldout)} held-out tasks have answers never seen in training")  # fmt: skip
    if args.resume_from:  # its weights and its tokenizer, SFT continued from them
        base = Path(args.resume_from)
    else:
        tiny = (args.vocab, args.layers, args.hidden, work / "demos.jsonl", args.split_ids, args.number_digits)
        base = build_tiny(work / "base", 0, *tiny)
    lengths = token_lengths(rows, args.max_length, str(base))
    print(f"model: {parameter_count(base):,} parameters; {lengths.line() if lengths else 'no rows'}")
    t1 = time.perf_counter()
    before = evaluate(base, heldout, args)
    print(f"before: score {before['score']} pass {before['pass_rate']} ({time.perf_counter() - t1:.0f} s)")
    warmups: dict[str, Any] = {}
    if args.value_steps:
        warmups["values"] = train_copying_values(
            base, work / "demos.jsonl", args.value_steps, max_tokens=args.value_tokens
        )
    if args.window_steps:
        warmups["windows"] = train_copying_values(
            base, work / "demos.jsonl", args.window_steps, max_tokens=args.window_tokens, window=True
        )
    if args.copy_steps:
        warmups["induction"] = train_copying(base, args.copy_steps)
    for name, done in warmups.items():
        print(f"copy warm-up ({name}): {done.steps} steps, loss {done.losses[0]:.3f} -> {done.losses[-1]:.3f} "
              f"({done.seconds:.0f} s)")  # fmt: skip
    demonstrations(heldout, work / "heldout.jsonl", 0.0, args.tools)
    held_rows = read_chat_jsonl(work / "heldout.jsonl")
    start = "resumed" if args.resume_from else "warm-up"  # the model SFT starts from
    copying = {start: copy_accuracy(base, held_rows)}
    print(f"copied values, held-out, teacher-forced, before SFT ({start}): {copying[start]}")
    options = SFTOptions(
        data=str(work / "demos.jsonl"), model=str(base), out=str(work / "sft"), full=True, max_steps=args.steps,
        lr=args.lr, batch_size=args.batch, grad_accum=1, max_length=args.max_length, warmup_steps=args.warmup,
        copy_weight=args.copy_weight, value_batch=args.value_batch, value_tokens=args.value_window,
        logging_steps=max(1, args.steps // 50),
    )  # fmt: skip
    scorer = scoring_every(args.eval_every, work, heldout, novel, held_rows, args) if args.eval_every else None
    t2 = time.perf_counter()
    sft, after = work / "sft", before  # --resume-from with --steps 0: no SFT, GRPO from the checkpoint
    losses: list[float] = []
    if args.steps:
        result = run_sft(options, callbacks=[scorer] if scorer else ())
        losses = result.losses
        print(f"SFT: {result.steps} steps, loss {result.first_loss:.3f} -> {result.last_loss:.3f} "
              f"({time.perf_counter() - t2:.0f} s)")  # fmt: skip
        after = evaluate(sft, heldout, args)
        print(f"after:  score {after['score']} pass {after['pass_rate']}")
        copying["sft"] = copy_accuracy(sft, held_rows)
        print(f"copied values, held-out, teacher-forced, after SFT: {copying['sft']}")
    else:
        sft = base
    sft_s = time.perf_counter() - t2
    unseen_scores = {"tasks": [t.id for t in novel], "before": subset(before, novel), "after": subset(after, novel)}
    summary: dict[str, Any] = {
        "args": vars(args), "demonstrations": len(rows), "dropped": dropped, "parameters": parameter_count(base),
        "lengths": lengths.__dict__ if lengths else None, "before": before, "after": after,
        "unseen_answers": unseen_scores, "copying": copying, "grpo": None,
        "during_sft": scorer.rows if scorer else [],
        "warmups": {k: {"steps": v.steps, "seconds": v.seconds, "loss_curve": curve(v.losses)} for k, v in warmups.items()},
        "sft_loss_curve": curve(losses), "sft_s": round(sft_s, 1), "wall_s": round(time.perf_counter() - t0, 1),
    }  # fmt: skip
    (work / "result.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")  # SFT's figures, first
    print(f"held-out score {before['score']:.3f} -> {after['score']:.3f}, pass {before['pass_rate']:.2f} -> "
          f"{after['pass_rate']:.2f}; unseen-answer tasks {unseen_scores['before']} -> "
          f"{unseen_scores['after']}; loss curve {summary['sft_loss_curve']}; "
          f"{summary['wall_s']} s so far", flush=True)  # fmt: skip
    if args.grpo_steps:
        t3 = time.perf_counter()
        grpo = continue_with_grpo(work, sft, train, args)
        grpo["after"] = evaluate(work / "grpo", heldout, args)
        grpo["unseen_answers"] = subset(grpo["after"], novel)
        grpo["s"] = round(time.perf_counter() - t3, 1)
        summary.update(grpo=grpo, wall_s=round(time.perf_counter() - t0, 1))
        (work / "result.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        print(f"GRPO ({args.grpo_steps} steps, rewards {grpo['rewards']}): held-out score {after['score']:.3f} -> "
              f"{grpo['after']['score']:.3f}, pass {after['pass_rate']:.2f} -> {grpo['after']['pass_rate']:.2f}; "
              f"unseen-answer tasks {grpo['unseen_answers']} ({grpo['s']:.0f} s); total {summary['wall_s']} s")  # fmt: skip


if __name__ == "__main__":
    main()
