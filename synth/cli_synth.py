"""Command line of synthesis: ``coworkenv plan`` (the coverage plan of a capability plan) and ``coworkenv synth``.

``COMMANDS`` are wired into the top-level ``coworkenv`` group.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

from coworkenv.servers.cli import make_folder
from coworkenv.synth.generate.generator import GENERATORS, make_generator
from coworkenv.synth.generate.plan import CapabilityPlan, PlanError, coverage_plan, format_coverage, load_plan
from coworkenv.synth.generate.resources import ResourceError, ResourceSet, load_resources
from coworkenv.synth.generate.resources.plan import grounded_plan
from coworkenv.synth.generate.synth_folder import JOURNAL, FolderError, SynthFolder, run_options
from coworkenv.synth.generate.synth_report import REPORT_FILE, format_report
from coworkenv.synth.generate.synthesize import synthesize


def _plan(ref: str | None) -> CapabilityPlan:
    try:
        return load_plan(None if ref in (None, "default") else ref)
    except PlanError as exc:
        raise click.ClickException(str(exc)) from exc


def _grounding(folder: Path, plan_ref: str | None) -> tuple[ResourceSet, CapabilityPlan]:
    """The files of ``--from`` (a line on stderr for each that cannot be loaded) and the plan: ``--plan``'s, else
    the families that find a subject in them."""
    try:
        resources = load_resources(folder)
    except ResourceError as exc:
        raise click.ClickException(str(exc)) from exc
    for line in resources.problems:
        click.echo(f"warning: {line}", err=True)
    try:
        plan = _plan(plan_ref) if plan_ref is not None else grounded_plan(resources)
    except ResourceError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"loaded {resources.summary()} from {folder}", err=True)
    return resources, plan


@click.command("plan")
@click.argument("plan", required=False, metavar="[PLAN]")
@click.option("--count", "-n", type=click.IntRange(min=1), help="How many tasks (default: the plan's count).")
@click.option("--seed", "-s", type=int, default=0, show_default=True, help="Breaks ties between cells.")
@click.option("--json", "as_json", is_flag=True, help="Print the cells as JSON.")
@click.option("--all", "show_all", is_flag=True, help="Also list cells whose quota is 0.")
def plan_cmd(plan: str | None, count: int | None, seed: int, as_json: bool, show_all: bool) -> None:
    """Print the coverage plan of a capability plan (YAML or JSON; the shipped default when omitted):
    the cells (capability x scenario x services x difficulty) and their quotas, summing to --count."""
    cap_plan = _plan(plan)
    try:
        cells = coverage_plan(cap_plan, count, seed)
    except PlanError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        shown = [c.as_dict() for c in cells if c.quota or show_all]
        click.echo(json.dumps({"plan": cap_plan.name, "seed": seed, "cells": shown}, indent=2))
        return
    click.echo(f"plan {cap_plan.name!r}, seed {seed}\n")
    click.echo(format_coverage(cells, show_empty=show_all))


@click.command("synth")
@click.option("--plan", "plan_ref", metavar="PLAN", help="A capability plan (YAML or JSON); default: the shipped one.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("synth_tasks"),
    show_default=True,
    help=f"Folder for the task files, synthesis_report.json and the run's {JOURNAL} (empty or new).",
)
@click.option("--generator", type=click.Choice(GENERATORS), default="procedural", show_default=True)
@click.option(
    "--model",
    help="The LLM generator's model: claude-... (Anthropic, the default provider) or openai:MODEL "
    "(an OpenAI-compatible endpoint, e.g. a local vLLM).",
)
@click.option(
    "--base-url",
    metavar="URL",
    help="The endpoint of an openai:MODEL, e.g. http://127.0.0.1:8000/v1 (env: OPENAI_BASE_URL; "
    "the key comes from OPENAI_API_KEY, and a local server needs none).",
)
@click.option("--count", "-n", type=click.IntRange(min=1), help="How many tasks (default: the plan's count).")
@click.option("--seed", "-s", type=int, default=0, show_default=True, help="Same seed, same tasks (byte for byte).")
@click.option(
    "--workers",
    "-w",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Processes for the procedural generator; requests in flight for the LLM one.",
)
@click.option("--max-rounds", type=click.IntRange(min=1), default=3, show_default=True, help="Tries per task slot.")
@click.option(
    "--overwrite", is_flag=True, help="Replace the tasks of a folder that is not empty, once the new set is complete."
)
@click.option(
    "--resume",
    is_flag=True,
    help="Finish an interrupted run in --out: keep its whole task files, make the rest (same options needed).",
)
@click.option(
    "--from",
    "from_dir",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Ground the tasks on a folder of your files (.md/.txt documents, .csv sheets, .eml mail, .ics calendars): "
    "they become the seed records the tasks are about; without --plan, the families that fit them are drawn.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def synth_cmd(
    plan_ref: str | None,
    out: Path,
    generator: str,
    model: str | None,
    base_url: str | None,
    count: int | None,
    seed: int,
    workers: int,
    max_rounds: int,
    overwrite: bool,
    resume: bool,
    from_dir: Path | None,
    quiet: bool,
) -> None:
    """Synthesize validated tasks from a capability plan: one JSON file per task plus synthesis_report.json,
    and a table of what was made (accepted, rejected by reason, repaired, duplicates, coverage, cost)."""
    resources, cap_plan = _grounding(from_dir, plan_ref) if from_dir is not None else (None, _plan(plan_ref))
    try:
        if base_url and generator != "llm":
            raise click.UsageError("--base-url is for --generator llm")
        gen = make_generator(generator, model=model, workers=workers, base_url=base_url, resources=resources)
    except RuntimeError as exc:  # GeneratorUnavailable (not installed), or a model spec that names no model
        raise click.ClickException(str(exc)) from exc
    make_folder(out, "--out")  # before any work: a folder that cannot be made is said now, not after synthesis
    options = run_options(cap_plan, count, seed, generator, model, max_rounds)
    if resources is not None:
        options["resources"] = resources.fingerprint()
    try:
        folder = SynthFolder(out, options, resume=resume, overwrite=overwrite)
    except (FolderError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    if folder.dropped:
        click.echo(f"warning: {folder.dropped}", err=True)
    total = sum(c.quota for c in coverage_plan(cap_plan, count, seed))
    started = time.perf_counter()
    console = Console(file=sys.stderr, highlight=False, quiet=quiet)
    columns = (TextColumn("{task.description}", style="bold"), BarColumn(bar_width=24), MofNCompleteColumn())
    with Progress(*columns, TaskProgressColumn(), TimeRemainingColumn(), console=console) as bar:
        slots = bar.add_task("synthesizing", total=total)
        try:
            result = synthesize(
                cap_plan,
                count=count,
                seed=seed,
                generator=gen,
                workers=workers,
                max_rounds=max_rounds,
                progress=lambda n: bar.advance(slots, n),
                model=model,
                folder=folder,
            )
        except (RuntimeError, ImportError, FolderError) as exc:  # no API key, a missing extra: nothing a retry fixes
            raise click.ClickException(f"synthesis stopped: {exc}") from exc
        except OSError as exc:  # a full disk, a folder taken away: what was written is whole and journaled
            again = "the same command again" if folder.swap else "the same command with --resume to finish"
            raise click.ClickException(
                f"synthesis stopped: cannot write into {folder.folder}: {exc.strerror or exc}; fix that, then run "
                f"{again} (nothing written so far is torn)"
            ) from exc
    seconds = time.perf_counter() - started
    click.echo(format_report(result.report, seconds, workers))
    kept = f", {folder.replayed} kept from the earlier run" if folder.replayed else ""
    kept += f", {folder.remade} made again (missing or changed)" if folder.remade else ""
    click.echo(f"\n{len(result.tasks)} task file(s){kept} and {REPORT_FILE} in {out}")
    if result.report["unfilled"]:
        sys.exit(1)


COMMANDS: list[click.Command] = [plan_cmd, synth_cmd]
