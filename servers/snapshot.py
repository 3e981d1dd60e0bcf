"""``coworkenv snapshot``: a consistent copy of a served database, taken while its server may still be running.

A served database is a WAL file: its latest changes may still sit in ``-wal`` beside it, so copying the file alone
can lose them. The snapshot is SQLite's online backup of the whole database (state, audit log, clock) into one new
file, written beside ``--out`` and moved onto it only once complete. What reads it (``coworkenv grade --dir``,
``state``, ``audit``) sees the database as it was when the snapshot was taken. Harbor task folders take one of each
service after the agent stopped, inside the service's own container, for their verifier.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click

from coworkenv.servers.kit import EnvironmentConfigError, ServiceState
from coworkenv.servers.kit.atomic import atomic_path
from coworkenv.servers.kit.files import one_line
from coworkenv.servers.registry import get_service


def snapshot(service: str, db: Path, out: Path) -> int:
    """Copy the served database ``db`` of ``service`` into ``out`` (replaced whole, or left as it was on an error);
    the number of audit rows the copy holds. Raises :class:`EnvironmentConfigError` for a file that holds no
    database of the service."""
    state = ServiceState.open(get_service(service), path=db, create=False)
    try:
        with atomic_path(out) as tmp:
            target = sqlite3.connect(str(tmp))
            try:
                state.conn.backup(target)
            finally:
                target.close()
        return len(state.audit())
    finally:
        state.close()


@click.command("snapshot")
@click.argument("service")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), required=True, help="The served database.")
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Where the copy goes (replaced)."
)
def snapshot_cmd(service: str, db: Path, out: Path) -> None:
    """Copy a served database (state, audit log, clock) into one file, consistently, while it may still be served;
    `coworkenv grade --dir` reads a folder of such copies."""
    if not db.is_file():
        what = "is a folder" if db.is_dir() else "does not exist"
        raise click.ClickException(f"{db} {what}; pass the --db the service was served with")
    if out.resolve() == db.resolve():
        raise click.ClickException(f"--out {out} is the served database itself; pass another path")
    try:
        get_service(service)  # an unknown name: one line listing the services
        out.parent.mkdir(parents=True, exist_ok=True)
        rows = snapshot(service, db, out)
    except EnvironmentConfigError as exc:
        raise click.ClickException(one_line(str(exc), 2000)) from exc
    click.echo(f"snapshot of {service} ({rows} audit rows) written to {out}")
