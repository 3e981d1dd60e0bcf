"""Commands of the harness that write a run or tasks out for other tools: ``export`` (chat records for SFT, or
Inspect AI logs), ``report`` (one self-contained HTML page) and ``export-tasks`` (Harbor task folders); and
:func:`_task_sources`, the task files, folders or 'examples' a command is given (``run`` reads it too).

:data:`coworkenv.harness.cli.COMMANDS` lists them with the other commands of the harness.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from coworkenv.harness.agents.hf_agent import tool_names_option
from coworkenv.harness.export.chat import ExportParams, export
from coworkenv.harness.run import RunError, load_task_set
from coworkenv.synth.contract.taskfile import TaskFileError


def _task_sources(values: tuple[str, ...]) -> list[Path]:
    from coworkenv.synth.contract.library import examples_dir

    out = []
    for v in values:
        p = Path(v)
        if not p.exists():
            if v == "examples":
                p = examples_dir()
            else:
                raise click.BadParameter(f"{v} does not exist (give task files or folders, or 'examples')")
        elif v == "examples":  # a folder of that name here wins: say so, and where the bundled ones are
            click.echo(
                f"note: reading tasks from the folder ./{v} here; for the bundled examples give {examples_dir()}",
                err=True,
            )
        out.append(p)
    return out


def _export_inspect(sources: tuple[Path, ...], out: Path) -> None:
    from coworkenv.harness.export.inspect_log import export_inspect

    if out.exists() and not out.is_dir():
        raise click.BadParameter(f"{out} is a file; --format inspect writes into a folder", param_hint="--out")
    try:
        written = export_inspect(list(sources), out)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from exc
    for path in written:
        click.echo(f"wrote {path}")
    click.echo(f"open them: inspect view --log-dir {out}")


@click.command("export")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="chat: the .jsonl to write; inspect: a folder."
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["chat", "inspect"]),
    default="chat",
    show_default=True,
    help="chat: SFT records; inspect: Inspect AI eval logs (needs coworkenv[export]), one per run.",
)
@click.option("--min-score", type=float, default=0.0, show_default=True)
@click.option("--min-assistant-turns", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--max-tool-calls", type=click.IntRange(min=0), default=40, show_default=True)
@click.option("--max-chars", type=click.IntRange(min=1), default=60_000, show_default=True)
@click.option("--system/--no-system", default=True, show_default=True, help="Keep the system prompt.")
@click.option(
    "--tools",
    type=click.Choice(["task", "used", "none"]),
    default="task",
    show_default=True,
    help="Tool schemas to write: all of the task's services, only those used, or none.",
)
@click.option(
    "--template",
    type=click.Choice(["full", "compact"]),
    default="full",
    show_default=True,
    help="full: JSON schemas in 'tools'; compact: one line a tool in the system message (as hf:PATH?template=compact).",
)
@click.option(
    "--tool-names",
    help="Only these of the task's tools, comma-separated (prompt the model with hf:PATH?tools=... alike).",
)
@click.option(
    "--tasks", "task_paths", multiple=True, help="Task files/folders: closing replies for demos ending on a tool."
)
@click.option(
    "--max-length", type=click.IntRange(min=1), default=16384, show_default=True, help="Report lengths over it."
)
@click.option("--tokenizer", help="Model folder/id whose tokenizer counts tokens. [default: estimate, chars/4]")
@click.option(
    "--recoveries",
    type=click.FloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="Fraction of demonstrations given a recovery: a wrong call, the service's real error, then the right call "
    "(needs the tasks: --tasks or the run's task files).",
)
@click.option("--recovery-seed", type=int, default=0, show_default=True, help="Which rows get one, and which mistake.")
def export_cmd(
    sources: tuple[Path, ...],
    out: Path,
    format_: str,
    min_score: float,
    min_assistant_turns: int,
    max_tool_calls: int,
    max_chars: int,
    system: bool,
    tools: str,
    template: str = "full",
    tool_names: str | None = None,
    task_paths: tuple[str, ...] = (),
    max_length: int = 16384,
    tokenizer: str | None = None,
    recoveries: float = 0.0,
    recovery_seed: int = 0,
) -> None:
    """Write chat records (messages with tool calls, tools as a JSON string) for SFT; reports what was dropped.
    With --format inspect, write Inspect AI eval logs (scores and per-check metadata) that `inspect view` opens."""
    if format_ == "inspect":
        _export_inspect(sources, out)
        return
    params = ExportParams(
        min_score,
        min_assistant_turns,
        max_tool_calls,
        max_chars,
        system,
        tools,
        template,
        max_length,
        tokenizer,
        recoveries,
        recovery_seed,
        tool_names_option(tool_names),
    )
    try:
        report = export(list(sources), out, params, task_paths)
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(report.line())
    if report.written == 0:
        print("warning: nothing was written", file=sys.stderr)


@click.command("report")
@click.argument("rundirs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("report.html"), show_default=True)
@click.option("--title", help="The page's title. [default: the run folders' names]")
def report_cmd(rundirs: tuple[Path, ...], out: Path, title: str | None) -> None:
    """Write one self-contained HTML file (no server, no network) of one or more runs: summary tables, plots and
    a trajectory viewer with filters; open it in a browser. Several runs are shown side by side by agent."""
    from coworkenv.harness.report.build import build_report

    try:
        info = build_report(list(rundirs), out, title)
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(info.line())
    click.echo(f"open it: file://{out.resolve()}")


@click.command("export-tasks")
@click.argument("tasks", nargs=-1, required=True)
@click.option("--format", "format_", type=click.Choice(["harbor"]), default="harbor", show_default=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Folder of task folders.")
@click.option(
    "--install",
    help="What each task image pip-installs: a requirement or a path to a coworkenv wheel (copied into the task). "
    "[default: this coworkenv version]",
)
def export_tasks_cmd(tasks: tuple[str, ...], format_: str, out: Path, install: str | None) -> None:
    """Write tasks (files, folders, or 'examples') as Harbor task directories: the services as MCP sidecars
    (seeded, streamable HTTP), an oracle that plays the reference (`coworkenv play`), and a verifier that grades
    the services' final state and audit log with `coworkenv grade`."""
    from coworkenv.harness.export.harbor import HarborExportError, export_harbor
    from coworkenv.servers.kit.http_auth import TOKEN_ENV

    try:
        sources = _task_sources(tasks)
        task_set = load_task_set(sources)
        written = export_harbor(task_set, out, install)
    except (RunError, TaskFileError, HarborExportError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{len(written)} Harbor task folder(s) ({format_}) written to {out}")
    click.echo(f"run one (with {TOKEN_ENV} set): harbor run -p {out / written[0].name if written else out} -a oracle")
