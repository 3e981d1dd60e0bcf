"""``coworkenv import``: other benchmarks' tasks as coworkenv task files (``coworkenv import claw-eval``)."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import click

from coworkenv.harness.claw_eval.importer import REPORT_FILE, NotACheckout, OutError, import_claw_eval


@click.group("import")
def import_group() -> None:
    """Import another benchmark's tasks as coworkenv task files."""


def _parity(checkout: Path, out: Path) -> None:
    """Run the parity check of the imported tasks, when its module is installed."""
    try:
        module = importlib.import_module("coworkenv.harness.claw_eval.parity")
    except ModuleNotFoundError as exc:
        if exc.name != "coworkenv.harness.claw_eval.parity":
            raise
        click.echo("--parity: coworkenv.harness.claw_eval.parity is not available; no parity check was run")
        return
    run_parity = getattr(module, "run_parity", None)
    if run_parity is None:
        click.echo("--parity: coworkenv.harness.claw_eval.parity has no run_parity; no parity check was run")
        return
    given: dict[str, Any] = {"checkout": checkout, "out": out, "tasks": out, "report": out / REPORT_FILE}
    params = inspect.signature(run_parity).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs = {k: v for k, v in given.items() if k in params} if not takes_any else given
    result = run_parity(**kwargs)
    if isinstance(result, str) and result:
        click.echo(result)


@import_group.command("claw-eval")
@click.argument("checkout", type=click.Path(path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Folder for the task files and import_report.json (made if missing; other files in it are left alone).",
)
@click.option("--parity", is_flag=True, help="Then check the imported tasks against Claw-Eval's mock services.")
def claw_eval_cmd(checkout: Path, out: Path, parity: bool) -> None:
    """Import the tasks of a Claw-Eval checkout (CHECKOUT/tasks/<ID>/task.yaml) that coworkenv can run.

    Writes one task file per imported task into --out (run them with `coworkenv run --tasks OUT`) and
    OUT/import_report.json, which says for each task folder whether it was imported and, if not, why.
    """
    try:
        report = import_claw_eval(checkout, out)
    except (NotACheckout, OutError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(report.summary())
    click.echo(f"wrote {len(report.imported)} task file(s) and {out / REPORT_FILE}")
    if parity:
        _parity(checkout, out)


COMMANDS = [import_group]
