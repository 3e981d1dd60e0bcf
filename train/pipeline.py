"""``coworkenv pipeline``: the whole offline path in one command, each stage the same command a user runs.

synthesize → validate → run (the teacher, plus ``noop`` as the floor) → summary → curate → export → a student
learns: a small model built offline is trained on the demonstrations of about four fifths of the tasks (the
whole conversation, :mod:`coworkenv.train.pipeline_learn`) and measured on the rest, held-out loss and score
before and after. ``--quick`` ends instead with a few LoRA steps (the plumbing, nothing measured). With
``ANTHROPIC_API_KEY`` set the default teacher is Claude; without it, ``replay`` (the tasks' reference solutions)
stands in, so the pipeline runs offline.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import click

from coworkenv.servers.kit.atomic import write_atomic

DEFAULT_TEACHER_MODEL = "claude-sonnet-4-5"


def _stage(title: str) -> float:
    click.echo(f"\n=== {title}")
    return time.perf_counter()


def _done(started: float) -> None:
    click.echo(f"    ({time.perf_counter() - started:.1f} s)")


def _invoke(ctx: click.Context, name: str, **params: Any) -> None:
    """Run a sibling command of the `coworkenv` group in-process, with its defaults for what is not given."""
    group = ctx.parent.command if ctx.parent else None
    if not isinstance(group, click.Group):
        raise click.ClickException("the pipeline must run as a subcommand of coworkenv")
    command: click.Command = group
    for part in name.split():
        found = command.get_command(ctx, part) if isinstance(command, click.Group) else None  # lazy groups too
        if found is None:
            raise click.ClickException(f"coworkenv {name} is not installed")
        command = found
    ctx.invoke(command, **params)


def teacher_spec(teacher: str | None) -> str:
    if teacher:
        return teacher
    return f"anthropic:{DEFAULT_TEACHER_MODEL}" if os.environ.get("ANTHROPIC_API_KEY") else "replay"


@click.command("pipeline")
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), default=Path("pipeline-out"), show_default=True
)
@click.option("--count", type=click.IntRange(min=1), default=50, show_default=True, help="Tasks to synthesize.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--trials", type=click.IntRange(min=1), default=3, show_default=True, help="Teacher trials per task.")
@click.option("--teacher", help="Agent spec; default anthropic:claude-sonnet-4-5 with ANTHROPIC_API_KEY, else replay.")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--sft-steps", type=click.IntRange(min=0), help="SFT steps; 0 skips training.  [default: 200, --quick 8]")
@click.option(
    "--quick", is_flag=True, help="The plumbing tour: a few LoRA steps on a tiny model, no learning measured."
)
@click.pass_context
def pipeline_cmd(
    ctx: click.Context,
    out: Path,
    count: int,
    seed: int,
    trials: int,
    teacher: str | None,
    concurrency: int,
    sft_steps: int | None,
    quick: bool,
) -> None:
    """Synthesize, validate, run the teacher and a no-op floor, summarise, curate, export, and train a small
    student on most tasks' demonstrations, measured on the others — offline with the built-in defaults."""
    if out.exists() and any(out.iterdir()):
        raise click.ClickException(f"{out} is not empty; remove it or pass another --out")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the demo model is built locally; nothing reaches for a hub
    # One progress style: the stages draw rich bars; the tqdm bars of datasets/transformers/trl stay off.
    os.environ.setdefault("TQDM_DISABLE", "1")
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    spec = teacher_spec(teacher)
    if sft_steps is None:
        sft_steps = 8 if quick else 200
    tasks, runs = out / "tasks", out / "runs"
    begun = time.perf_counter()

    t = _stage(f"1. synthesize {count} tasks (procedural, seed {seed})")
    _invoke(ctx, "synth", out=tasks, count=count, seed=seed)
    _done(t)

    t = _stage("2. validate them (static, then by execution)")
    try:
        _invoke(ctx, "validate", paths=(str(tasks),))
    except SystemExit as exc:
        if exc.code:
            raise click.ClickException("synthesized tasks failed validation; see the table above") from exc
    _done(t)

    for agent, n in ((spec, trials), ("noop", 1)):
        name = agent.split(":", 1)[0]
        t = _stage(f"3. run {agent} × {n} trial(s)")
        _invoke(
            ctx,
            "run",
            tasks=(str(tasks),),
            agent_spec=agent,
            out=runs / name,
            trials=n,
            concurrency=concurrency,
        )
        _invoke(ctx, "summary", rundir=runs / name)
        _done(t)

    teacher_run = runs / spec.split(":", 1)[0]
    t = _stage("4. curate the teacher's trajectories and export chat records")
    _invoke(ctx, "curate", rundir=teacher_run, out=out / "curated")
    _invoke(ctx, "export", sources=(out / "curated",), out=out / "sft.jsonl", task_paths=(str(tasks),))
    # The tiny student's format: the system prompt and a compact tool list, exactly what `hf:...?template=compact`
    # prompts it with at evaluation (the full JSON schemas alone would fill its context).
    compact = out / "sft-compact.jsonl"
    _invoke(
        ctx,
        "export",
        sources=(out / "curated",),
        out=compact,
        template="compact",
        task_paths=(str(tasks),),
        max_length=4096,
    )
    _done(t)

    rows = sum(1 for line in compact.read_text().splitlines() if line.strip())
    learning = None
    if not sft_steps or not rows:
        click.echo("\n=== 5. SFT skipped" + ("" if sft_steps else " (--sft-steps 0)"))
    elif quick:
        t = _stage(f"5. LoRA SFT of a tiny offline model on {rows} demonstrations ({sft_steps} steps: plumbing only)")
        _invoke(ctx, "train tiny", out=out / "tiny-model", seed=seed, tokenizer_from=compact, vocab_size=4096)
        _invoke(ctx, "train sft", data=str(compact), model=str(out / "tiny-model"), out=str(out / "sft-adapter"),
                max_steps=sft_steps, batch_size=1, grad_accum=1, max_length=4096)  # fmt: skip
        click.echo(f"    evaluate it as it was trained: --agent 'hf:{out / 'sft-adapter'}?template=compact'")
        _done(t)
    else:
        from coworkenv.train.pipeline_learn import learning_stage

        t = _stage(f"5. a student learns: {sft_steps} steps of SFT on the whole conversation, scored on unseen tasks")
        teacher_compact = out / "learn" / "teacher-compact.jsonl"
        _invoke(ctx, "export", sources=(teacher_run,), out=teacher_compact, template="compact",
                task_paths=(str(tasks),), max_length=4096)  # fmt: skip
        ids = [p.stem for p in sorted(tasks.glob("*.json")) if p.name != "synthesis_report.json"]
        learning = learning_stage(lambda name, **params: _invoke(ctx, name, **params), out, tasks, compact,
                                  teacher_compact, ids, sft_steps, seed)  # fmt: skip
        for line in learning.lines():
            click.echo(f"    {line}")
        _done(t)
    summary = {
        "out": str(out),
        "teacher": spec,
        "tasks": count,
        "demonstrations": rows,
        "seconds": round(time.perf_counter() - begun, 1),
        "learning": learning.as_json() if learning else None,
    }
    write_atomic(out / "pipeline.json", json.dumps(summary, indent=2) + "\n")
    click.echo(f"\nDone in {summary['seconds']} s: tasks in {tasks}, runs in {runs}, chat data in {out / 'sft.jsonl'}")
