"""The main job's last stage: a student learns from the teacher's demonstrations, measured on tasks it never saw.

The tasks are split once (by a hash of each id, so the split does not depend on the order or count of the
others): about a fifth are held out, among the tasks whose demonstration reaches its first assistant turn within
:data:`HELD_OUT_MAX_PROMPT` characters (a longer prompt leaves the student's 2,048 tokens no assistant token to
measure). A small model is built offline (its tokenizer trained on the training
demonstrations only), scored on the held-out tasks through the harness (``hf:`` agent, greedy), fully
fine-tuned on the whole conversation (the assistant's tokens at weight 1, the context's at 0.3, batches of 4
conversations of up to 2,048 tokens, cosine schedule) with the held-out demonstrations' loss measured before and after, and scored again. The
held-out loss is the figure that moves in a few minutes on two cores; the held-out score needs the long run of
``bench/learning`` (a model must learn to copy ids from tool results before any task passes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coworkenv.servers.kit.atomic import write_atomic

HELD_OUT_SHARE = 5  # one task in five
HELD_OUT_MAX_PROMPT = 5_000
"""The most characters a held-out demonstration may hold before its first assistant turn (system prompt with the
compact tool list, and the request): about 1,800 tokens of the tiny tokenizer, which has seen none of its text."""
LEARNING_BENCH = "python bench/learning/bench_learn.py"


def held_out(task_id: str) -> bool:
    """Whether a task is held out of training: about one in :data:`HELD_OUT_SHARE`, by a hash of its id."""
    return int(hashlib.sha256(task_id.encode()).hexdigest(), 16) % HELD_OUT_SHARE == 0


def measurable(path: Path) -> set[str]:
    """The tasks of the chat records in ``path`` whose conversation reaches its first assistant turn within
    :data:`HELD_OUT_MAX_PROMPT` characters."""
    found: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        prompt = 0
        for message in record.get("messages", []):
            if message.get("role") == "assistant":
                break
            prompt += len(str(message.get("content") or ""))
        if prompt <= HELD_OUT_MAX_PROMPT:
            found.add(str(record.get("task_id")))
    return found


def split_rows(path: Path, held_ids: set[str]) -> tuple[list[str], list[str]]:
    """The chat records (lines) of ``path`` whose task is not in ``held_ids``, and those whose task is."""
    kept: dict[bool, list[str]] = {True: [], False: []}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            kept[json.loads(line).get("task_id") in held_ids].append(line)
    return kept[False], kept[True]


def _write_rows(path: Path, lines: list[str]) -> Path:
    write_atomic(path, "".join(f"{line}\n" for line in lines))
    return path


def run_figures(rundir: Path) -> dict[str, Any]:
    """Mean score (0-1) and pass rate of a run's scored trials, and how many trials were scored."""
    from coworkenv.harness.metrics import summarize
    from coworkenv.harness.trajectory import read_trajectories

    records = read_trajectories(rundir / "trajectories.jsonl")
    scored = [r for r in records if r.scored]
    if not scored:
        return {"score": None, "pass_rate": None, "trials": 0}
    overall = summarize(scored)["overall"]
    return {
        "score": round(sum(r.score for r in scored) / len(scored), 3),
        "pass_rate": round(sum(r.score >= 0.75 for r in scored) / len(scored), 3),
        "trials": len(scored),
        "summary": overall,
    }


@dataclass
class Learning:
    """What the stage measured; :meth:`lines` says it in words."""

    train_demonstrations: int
    held_out_tasks: int
    held_out_demonstrations: int
    steps: int
    loss_before: float | None
    loss_after: float | None
    before: dict[str, Any]
    after: dict[str, Any]
    seconds: float

    @property
    def loss_fell(self) -> bool:
        return self.loss_before is not None and self.loss_after is not None and self.loss_after < self.loss_before

    def as_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("before", "after"):
            out[key] = {k: v for k, v in out[key].items() if k != "summary"}
        return {**out, "loss_fell": self.loss_fell}

    def lines(self) -> list[str]:
        if self.loss_before is None or self.loss_after is None:
            return ["no held-out demonstrations: nothing to measure the student on (synthesize more tasks)"]
        loss = f"held-out loss {self.loss_before:.3f} -> {self.loss_after:.3f}"
        out = [f"{loss} on {self.held_out_demonstrations} demonstrations of {self.held_out_tasks} unseen task(s)"]
        if not self.loss_fell:
            out.append("the held-out loss did not fall: this student learnt nothing (raise --sft-steps)")
        b, a = self.before, self.after
        if b.get("score") is not None and a.get("score") is not None:
            out.append(
                f"held-out score {b['score']:.3f} -> {a['score']:.3f}, pass rate {b['pass_rate']:.2f} -> "
                f"{a['pass_rate']:.2f} ({a['trials']} episode(s), hf: agent, greedy)"
            )
            if a["score"] <= b["score"]:
                out.append(
                    "the held-out score did not move in this budget: the student learnt the format, not yet to copy "
                    f"ids from tool results; the long run that does is the learning bench ({LEARNING_BENCH})"
                )
        return out


def learning_stage(
    invoke: Callable[..., None],
    out: Path,
    tasks_dir: Path,
    compact_curated: Path,
    compact_teacher: Path,
    task_ids: Iterable[str],
    steps: int,
    seed: int,
) -> Learning:
    """Split, build, score, train, score (see the module's docstring); ``invoke(name, **params)`` runs a sibling
    `coworkenv` command. ``compact_curated`` holds the curated demonstrations (training), ``compact_teacher``
    every teacher demonstration (the held-out tasks' are the held-out loss's data)."""
    import time

    begun = time.perf_counter()
    ids = sorted(task_ids)
    fits = measurable(compact_teacher)
    candidates = [t for t in ids if t in fits] or ids
    held_ids = {t for t in candidates if held_out(t)} or set(candidates[:1] if len(ids) > 1 else [])
    learn = out / "learn"
    learn.mkdir(parents=True, exist_ok=True)
    train_data = _write_rows(learn / "train.jsonl", split_rows(compact_curated, held_ids)[0])
    held_lines = split_rows(compact_teacher, held_ids)[1]
    one_each = {json.loads(line)["task_id"]: line for line in reversed(held_lines)}  # a task's first trial
    held_data = _write_rows(learn / "heldout.jsonl", [one_each[t] for t in sorted(one_each)])
    train_rows = len(train_data.read_text(encoding="utf-8").splitlines())
    held_rows = len(held_data.read_text(encoding="utf-8").splitlines())
    model, student = out / "tiny-model", out / "student"
    invoke("train tiny", out=model, seed=seed, tokenizer_from=train_data, vocab_size=4096, layers=2, hidden=128)
    held_tasks = tuple(str(tasks_dir / f"{t}.json") for t in sorted(held_ids))
    agent = "hf:{}?template=compact&max_new_tokens=160"
    score_run = {"trials": 1, "concurrency": 1, "max_turns": 8, "progress": False}
    before: dict[str, Any] = {}
    if held_tasks:
        invoke("run", tasks=held_tasks, agent_spec=agent.format(model), out=out / "runs/student-before", **score_run)
        before = run_figures(out / "runs/student-before")
    invoke(
        "train sft",
        data=str(train_data),
        model=str(model),
        out=str(student),
        full=True,
        max_steps=steps,
        batch_size=4,
        grad_accum=1,
        lr=2e-3,
        warmup_steps=min(50, max(1, steps // 10)),
        weight_decay=0.1,
        adam_beta2=0.95,
        context_weight=0.3,
        max_length=2048,
        eval_data=str(held_data) if held_rows else None,
        logging_steps=max(1, steps // 20),
    )
    after: dict[str, Any] = {}
    if held_tasks:
        invoke("run", tasks=held_tasks, agent_spec=agent.format(student), out=out / "runs/student-after", **score_run)
        after = run_figures(out / "runs/student-after")
    trained = json.loads((student / "coworkenv_sft.json").read_text(encoding="utf-8"))
    held_losses = trained.get("eval_losses") or []
    return Learning(
        train_demonstrations=train_rows,
        held_out_tasks=len(held_ids),
        held_out_demonstrations=held_rows,
        steps=int(trained["steps"]),
        loss_before=round(held_losses[0][1], 4) if held_losses else None,
        loss_after=round(held_losses[-1][1], 4) if held_losses else None,
        before=before,
        after=after,
        seconds=round(time.perf_counter() - begun, 1),
    )
