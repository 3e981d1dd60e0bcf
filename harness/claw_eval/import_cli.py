"""``coworkenv import``: other benchmarks' tasks as coworkenv task files (``coworkenv import claw-eval``)."""

from __future__ import annotations

from pathlib import Path

import click

from coworkenv.harness.claw_eval.importer import REPORT_FILE, NotACheckout, OutError, import_claw_eval


@click.group("import")
def import_group() -> None:
    """Import another benchmark's tasks as coworkenv task files."""


def _parity(checkout: Path, out: Path) -> None:
    """Run the parity check of the imported tasks of ``out`` against the mocks of ``checkout``; its lines to stdout
    (the agreement last), one progress line per task to stderr."""
    from coworkenv.harness.claw_eval.parity import ParityError, run_parity

    try:
        run_parity(checkout, out, echo=click.echo, progress=lambda line: click.echo(line, err=True))
    except ParityError as exc:
        raise click.ClickException(str(exc)) from exc


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
