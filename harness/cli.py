"""Command line of the harness: run agents on tasks, summarise a run, curate it; the commands that write a run or
tasks out (``export``, ``report``, ``export-tasks``) are :mod:`coworkenv.harness.cli_outputs`.

``COMMANDS`` (all of them) are wired into the top-level ``coworkenv`` group.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import click

from coworkenv.harness.cli_outputs import _task_sources, export_cmd, export_tasks_cmd, report_cmd
from coworkenv.harness.curate import CurationParams, format_report, write_curation
from coworkenv.harness.episode import EpisodeConfig, UserFactory
from coworkenv.harness.faults import FaultInjector
from coworkenv.harness.metrics import print_summary, summarize
from coworkenv.harness.run import RunError, RunOptions, load_task_set, run_tasks
from coworkenv.harness.tools import STARTUP_TIMEOUT_S, TRANSPORTS
from coworkenv.harness.trajectory import read_trajectories, trajectory_path
from coworkenv.servers.kit.tool_faults import ToolFaults, parse_slow
from coworkenv.synth.contract.taskfile import TaskFileError


def _user_factory(spec: str) -> UserFactory | None:
    if spec == "scripted":
        return None
    try:
        module = importlib.import_module("coworkenv.harness.user_llm")
    except ModuleNotFoundError as exc:
        raise click.BadParameter(f"the LLM user simulator is not available ({exc.name} is missing)") from exc
    try:
        factory: UserFactory = module.from_spec(spec)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--user") from exc
    return factory


def _records(rundir: Path) -> list[Any]:
    path = trajectory_path(rundir)
    if not path.exists():
        raise click.ClickException(f"{path} does not exist; run `coworkenv run ... --out {rundir}` first")
    try:
        records = read_trajectories(path)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if not records:
        raise click.ClickException(
            f"no trajectories in {path} (a last line cut short by a crash is not one); "
            "give the folder or trajectories.jsonl that `coworkenv run` wrote"
        )
    return records


@click.command("run")
@click.option("--tasks", "tasks", multiple=True, required=True, help="Task file or folder (repeatable), or 'examples'.")
@click.option("--agent", "agent_spec", required=True, help="replay, noop, scripted:PATH, anthropic:MODEL, ...")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Run folder.")
@click.option("--trials", type=click.IntRange(min=1), default=1, show_default=True, help="Trials per task.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option("--max-turns", type=click.IntRange(min=1), default=40, show_default=True, help="Model calls per episode.")
@click.option("--max-tool-calls", type=click.IntRange(min=1), default=100, show_default=True)
@click.option(
    "--wall-time", type=click.FloatRange(min=0.1), default=600.0, show_default=True, help="Seconds per episode."
)
@click.option("--transport", type=click.Choice(TRANSPORTS), default="direct", show_default=True)
@click.option(
    "--startup-timeout",
    type=click.FloatRange(min=0.1),
    default=STARTUP_TIMEOUT_S,
    show_default=True,
    help="Seconds for the services' MCP sessions to start and list their tools; longer is an infra error.",
)
@click.option(
    "--user", "user_spec", default="scripted", show_default=True, help="User simulator: scripted or an LLM spec."
)
@click.option("--retries", type=click.IntRange(min=0), default=3, show_default=True, help="Retries of infra failures.")
@click.option("--backoff", type=click.FloatRange(min=0), default=2.0, show_default=True, help="First retry delay (s).")
@click.option("--retry-infra", is_flag=True, help="On resume, also redo trials recorded as infra_error.")
@click.option("--inject-errors", type=click.FloatRange(0, 1), default=0.0, help="Rate of injected transient errors.")
@click.option("--inject-latency", type=click.FloatRange(min=0), default=0.0, help="Added latency up to S seconds.")
@click.option(
    "--tool-faults",
    type=click.FloatRange(0, 1),
    default=0.0,
    help="Rate of injected tool faults on the agent's calls, as Claw-Eval injects them: 429 or 500 answers "
    "(nothing runs) or slow calls.",
)
@click.option(
    "--tool-fault-slow", default="2,4", show_default=True, help="MIN,MAX seconds a slow injected tool fault waits."
)
@click.option("--seed", type=int, default=None, help="Seed of the error injector and of the tool faults.")
@click.option("--no-anchors", is_flag=True, help="Do not record state hashes before tool calls.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
@click.option(
    "--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True, help="Where episodes run."
)
@click.option("--address", help="--backend ray: a Ray cluster's address (default: start Ray on this machine).")
def run_cmd(
    tasks: tuple[str, ...],
    agent_spec: str,
    out: Path,
    trials: int,
    concurrency: int,
    max_turns: int,
    max_tool_calls: int,
    wall_time: float,
    transport: str,
    startup_timeout: float,
    user_spec: str,
    retries: int,
    backoff: float,
    retry_infra: bool,
    inject_errors: float,
    inject_latency: float,
    tool_faults: float,
    tool_fault_slow: str,
    seed: int | None,
    no_anchors: bool,
    progress: bool,
    backend: str,
    address: str | None,
) -> None:
    """Run an agent on tasks (every task × trial), appending trajectories to OUT/trajectories.jsonl.

    Running the same command again resumes: finished (task, trial) pairs are not redone."""
    from coworkenv.harness.agents.registry import AgentSpecError, make_agent
    from coworkenv.synth.model_io import ProviderConfigError
    from coworkenv.synth.providers import scrub

    try:
        sources = _task_sources(tasks)
        task_set = load_task_set(sources)
        agent = make_agent(agent_spec)
        check_ready = getattr(agent, "check_ready", None)
        if callable(check_ready):  # no API key, no executable: say so before anything is written
            check_ready()
    except (RunError, TaskFileError, AgentSpecError, ProviderConfigError) as exc:
        raise click.ClickException(scrub(str(exc))) from exc
    try:
        slow = parse_slow(tool_fault_slow)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--tool-fault-slow") from exc
    episode = EpisodeConfig(
        transport=transport,  # type: ignore[arg-type]
        max_turns=max_turns,
        max_tool_calls=max_tool_calls,
        wall_time_s=wall_time,
        anchors=not no_anchors,
        startup_timeout_s=startup_timeout,
        tool_faults=ToolFaults(tool_faults, seed if seed is not None else 0, slow) if tool_faults else None,
    )
    options = RunOptions(
        trials=trials,
        concurrency=concurrency,
        episode=episode,
        retries=retries,
        backoff_s=backoff,
        retry_infra=retry_infra,
        progress=progress,
    )
    faults = FaultInjector(inject_errors, inject_latency, seed) if inject_errors or inject_latency else None
    user = _user_factory(user_spec)
    runner_backend = None
    if backend == "ray":
        from coworkenv.harness.backend_ray import RayBackend

        runner_backend = RayBackend(agent_spec, address=address)
    try:
        report = anyio.run(
            lambda: run_tasks(
                task_set,
                agent,
                out,
                agent_spec=agent_spec,
                options=options,
                faults=faults,
                user=user,
                backend=runner_backend,
                task_sources=sources,
            )
        )
    except RunError as exc:
        raise click.ClickException(scrub(str(exc))) from exc
    click.echo(report.line())
    click.echo(f"next: coworkenv summary {out}")


@click.command("summary")
@click.argument("rundir", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "-k", "ks", type=click.IntRange(min=1), multiple=True, help="k of Pass@k / Pass^k (default 1 and trials)."
)
def summary_cmd(rundir: Path, as_json: bool, ks: tuple[int, ...]) -> None:
    """Mean score ×100, Pass@k and Pass^k (by scenario, difficulty, safety) and failures by kind."""
    result = summarize(_records(rundir), list(ks) or None)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        print_summary(result, sys.stdout)


@click.command("curate")
@click.argument("rundir", type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option(
    "--low", type=click.FloatRange(0, 1), default=0.2, show_default=True, help="Below: lowest group, dropped."
)
@click.option("--high", type=click.FloatRange(0, 1), default=1.0, show_default=True, help="At or above: always solved.")
@click.option(
    "--min-reward", type=float, default=0.75, show_default=True, help="Keep trajectories scoring at least this."
)
@click.option("--per-prefix", type=click.IntRange(min=1), default=1, show_default=True, help="Cap for always-solved.")
@click.option("--prefix-chars", type=click.IntRange(min=1), default=48, show_default=True)
@click.option("--prefix-from", type=click.Choice(["request", "id"]), default="request", show_default=True)
def curate_cmd(
    rundir: Path,
    out: Path,
    low: float,
    high: float,
    min_reward: float,
    per_prefix: int,
    prefix_chars: int,
    prefix_from: str,
) -> None:
    """Keep the informative teacher trajectories (the CoworkEnv recipe); writes OUT/trajectories.jsonl."""
    try:
        params = CurationParams(low, high, min_reward, per_prefix, prefix_chars, prefix_from)  # type: ignore[arg-type]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    report = write_curation(_records(rundir), out, params)
    click.echo(format_report(report))
    click.echo(f"written to {out / 'trajectories.jsonl'} (report: {out / 'curation.json'})")


COMMANDS: list[click.Command] = [run_cmd, summary_cmd, curate_cmd, export_cmd, report_cmd, export_tasks_cmd]
