"""Command line of tasks: the schema, validation, and working with an outside agent (workspace, grade).

``COMMANDS`` are wired into the top-level ``coworkenv`` group.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import click

from coworkenv.servers.kit import AuditRow, EnvironmentConfigError, SeedError, ServiceState
from coworkenv.servers.kit.atomic import write_atomic
from coworkenv.servers.mcp_config import mcp_config
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.grader import PASS_THRESHOLD, grade
from coworkenv.synth.contract.library import example_ids, load_example
from coworkenv.synth.contract.task import Task, task_json_schema
from coworkenv.synth.contract.taskfile import TaskFileError, load_tasks, task_files
from coworkenv.synth.contract.validation.validate import TaskReport, validate_paths


def resolve_task(ref: str, task_id: str | None = None) -> Task:
    """A task from a file (one task, or the one with ``task_id``) or the id of a shipped example."""
    path = Path(ref)
    if not path.exists():
        if ref in example_ids():
            return load_example(ref)
        raise click.ClickException(f"{ref} is neither a task file nor a shipped example ({', '.join(example_ids())})")
    try:
        tasks = load_tasks(path)
    except TaskFileError as exc:
        raise click.ClickException(str(exc)) from exc
    if task_id is not None:
        chosen = [t for t in tasks if t.id == task_id]
        if not chosen:
            raise click.ClickException(f"{path} has no task {task_id!r}; it has: {', '.join(t.id for t in tasks)}")
        return chosen[0]
    if len(tasks) != 1:
        raise click.ClickException(f"{path} holds {len(tasks)} tasks; pick one with --task-id")
    return tasks[0]


# ---------------------------------------------------------------------------------------------- schema
@click.group("schema")
def schema_group() -> None:
    """Print the JSON Schema of coworkenv's file formats."""


@schema_group.command("task")
def schema_task() -> None:
    """The JSON Schema of a task file."""
    click.echo(json.dumps(task_json_schema(), indent=2))


@schema_group.command("plan")
def schema_plan() -> None:
    """The JSON Schema of a capability plan (the --plan FILE of plan and synth)."""
    from coworkenv.synth.generate.plan import plan_json_schema

    click.echo(json.dumps(plan_json_schema(), indent=2))


# ---------------------------------------------------------------------------------------------- validate
def _print_reports(reports: list[TaskReport], verbose: bool) -> None:
    width = max([len(r.task_id or "-") for r in reports] + [4])
    click.echo(f"{'STATUS':<8} {'TASK':<{width}} {'ERRORS':>6} {'WARNINGS':>8}  SOURCE")
    for r in reports:
        status = "ok" if r.valid else "INVALID"
        click.echo(f"{status:<8} {r.task_id or '-':<{width}} {len(r.errors):>6} {len(r.warnings):>8}  {r.source}")
    _print_adversaries(reports, width)
    for r in reports:
        shown = r.diagnostics if verbose else r.errors
        if shown:
            click.echo(f"\n{r.task_id or r.source}:")
            for d in shown:
                click.echo(f"  {d.line()}")


def _print_adversaries(reports: list[TaskReport], width: int) -> None:
    """One line per task: each adversary's score, '!' after one that beats the task."""
    played = [r for r in reports if r.execution is not None and r.execution.adversaries]
    if not played:
        return
    click.echo(
        f"\nadversaries (score; ! = beats the task: ≥ {PASS_THRESHOLD} with no unexplained change, or a sensitive"
        " extra left unnoticed):"
    )
    for r in played:
        assert r.execution is not None
        scores = " ".join(f"{a.name} {a.score:.2f}{'!' if a.passed else ''}" for a in r.execution.adversaries)
        click.echo(f"  {r.task_id or '-':<{width}}  {scores}")


def _report_json(r: TaskReport) -> dict[str, Any]:
    """A task's report: its diagnostics, and what running it found (``execution``: the reference solution's
    and the do-nothing run's grades, each mutation's score, each adversary's; null when it was not run)."""
    data = r.model_dump(mode="json", exclude={"execution"})
    adversaries = r.execution.adversaries if r.execution is not None else []
    data["adversaries"] = [a.model_dump(mode="json") for a in adversaries]
    data["execution"] = (
        r.execution.model_dump(mode="json", exclude={"diagnostics", "task_id"}) if r.execution is not None else None
    )
    return data


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), help="Write the diagnostics here."
)
@click.option("--no-exec", is_flag=True, help="Static checks only; do not run the tasks.")
@click.option("--mcp", "via_mcp", is_flag=True, help="Execute through the MCP in-memory client (slower).")
@click.option("--verbose", "-v", is_flag=True, help="Show warnings too.")
@click.option("--no-adversaries", is_flag=True, help="Do not run the adversarial agents (spray, dump, ...).")
def validate_cmd(
    paths: tuple[Path, ...], json_file: Path | None, no_exec: bool, via_mcp: bool, verbose: bool, no_adversaries: bool
) -> None:
    """Validate task files or folders of them: static checks, then execution. Exits 1 if any task is invalid."""
    if not task_files(paths):
        raise click.ClickException(f"no task files (.json, .yaml, .yml, .jsonl) under {', '.join(map(str, paths))}")
    if json_file is not None and not json_file.parent.is_dir():
        raise click.ClickException(f"--json {json_file}: the folder {json_file.parent} does not exist; create it first")

    async def main() -> list[TaskReport]:
        return await validate_paths(paths, execute=not no_exec, via_mcp=via_mcp, adversaries=not no_adversaries)

    reports = anyio.run(main)
    _print_reports(reports, verbose)
    invalid = [r for r in reports if not r.valid]
    n_err = sum(len(r.errors) for r in reports)
    n_warn = sum(len(r.warnings) for r in reports)
    click.echo(
        f"\n{len(reports)} task(s): {len(reports) - len(invalid)} valid, {len(invalid)} invalid "
        f"({n_err} error(s), {n_warn} warning(s))" + ("" if not no_exec else "; static checks only")
    )
    if json_file is not None:
        data = [_report_json(r) for r in reports]
        try:
            write_atomic(json_file, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        except OSError as exc:
            raise click.ClickException(f"cannot write --json {json_file}: {exc.strerror or exc}") from exc
        click.echo(f"diagnostics written to {json_file}")
    if invalid:
        sys.exit(1)


# ---------------------------------------------------------------------------------------------- workspace and grade
def request_markdown(task: Task) -> str:
    lines = [f"# {task.scenario}", "", task.request, "", f"Tools: the {', '.join(task.services)} MCP servers."]
    if task.user and task.user.persona:
        lines += ["", f"You are working for: {task.user.persona}"]
    return "\n".join(lines) + "\n"


@click.command("workspace")
@click.argument("task_ref", metavar="TASK")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--task-id", help="Which task, when the file holds several.")
def workspace_cmd(task_ref: str, directory: Path, task_id: str | None) -> None:
    """Seed DIR/<service>.db for a task, write DIR/.mcp.json and DIR/REQUEST.md for an outside MCP client."""
    from coworkenv.servers.kit import Environment

    task = resolve_task(task_ref, task_id)
    directory.mkdir(parents=True, exist_ok=True)
    try:
        Environment.create(task.seeds(), now=task.now, db_dir=directory).close()
    except (SeedError, EnvironmentConfigError) as exc:
        raise click.ClickException(str(exc)) from exc
    config = mcp_config(directory.resolve(), list(task.services))
    write_atomic(directory / ".mcp.json", json.dumps(config, indent=2) + "\n")
    write_atomic(directory / "REQUEST.md", request_markdown(task))
    click.echo(
        f"workspace for {task.id} in {directory}: {', '.join(f'{s}.db' for s in task.services)}, .mcp.json, REQUEST.md"
    )
    click.echo(f"when the agent is done: coworkenv grade {task_ref} --dir {directory}")


def read_workspace(task: Task, directory: Path) -> tuple[dict[str, dict[str, list[dict[str, Any]]]], list[AuditRow]]:
    """The state and audit rows of every service database of a workspace."""
    from coworkenv.servers.registry import get_service

    state: dict[str, dict[str, list[dict[str, Any]]]] = {}
    audit: list[AuditRow] = []
    for name in task.services:
        path = directory / f"{name}.db"
        if not path.exists():
            raise click.ClickException(f"{path} does not exist; create the workspace with `coworkenv workspace` first")
        try:
            service_state = ServiceState.open(get_service(name), path=path)
        except EnvironmentConfigError as exc:
            raise click.ClickException(str(exc)) from exc
        try:
            state[name] = service_state.dump()
            audit += service_state.audit()
        finally:
            service_state.close()
    return state, audit


def _read_answer(path: Path) -> str:
    """The agent's final message from a text file; a one-line error for a file that is not UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise click.ClickException(
            f"--answer {path} is not UTF-8 text (bad byte at offset {exc.start}); save the agent's message as UTF-8"
        ) from exc
    except OSError as exc:
        raise click.ClickException(f"cannot read --answer {path}: {exc.strerror or exc}") from exc


@click.command("grade")
@click.argument("task_ref", metavar="TASK")
@click.option("--dir", "directory", type=click.Path(exists=True, file_okay=False, path_type=Path), required=True)
@click.option("--task-id", help="Which task, when the file holds several.")
@click.option(
    "--answer", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="The agent's final message."
)
@click.option("--json", "as_json", is_flag=True, help="Print the grade as JSON.")
def grade_cmd(task_ref: str, directory: Path, task_id: str | None, answer: Path | None, as_json: bool) -> None:
    """Grade a workspace after an agent has worked in it: per-check report (exit 0 whatever the score)."""
    task = resolve_task(task_ref, task_id)
    state, audit = read_workspace(task, directory)
    messages = [_read_answer(answer)] if answer else []
    baseline = Baseline.of(task)  # the task seeded (and its expected changes derived, when it carries none)
    try:
        result = grade(baseline, state, audit, messages)
    finally:
        baseline.close()
    click.echo(json.dumps(result.model_dump(mode="json"), indent=2) if as_json else result.report())


COMMANDS: list[click.Command] = [schema_group, validate_cmd, workspace_cmd, grade_cmd]
