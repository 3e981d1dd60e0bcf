"""Command line of the services: list them, serve one, read its state and audit log, write .mcp.json.

Its group ends every unexpected error in one line: :class:`~coworkenv.servers.cli_errors.CommandGroup` (with
``TRACEBACK_ENV`` and ``os_error_line``, in :mod:`coworkenv.servers.cli_errors`; importable from here too).
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import click

from coworkenv.servers import registry
from coworkenv.servers.cli_errors import TRACEBACK_ENV as TRACEBACK_ENV
from coworkenv.servers.cli_errors import CommandGroup
from coworkenv.servers.cli_errors import os_error_line as os_error_line
from coworkenv.servers.demo import demo_cmd
from coworkenv.servers.kit import (
    EnvironmentConfigError,
    SeedError,
    ServiceServer,
    ServiceState,
    canonical_json,
)
from coworkenv.servers.kit.files import DocumentError, one_line, read_document
from coworkenv.servers.kit.http_auth import TOKEN_ENV, allow_host_problem, token_problem
from coworkenv.servers.kit.tool_faults import FaultSwitch
from coworkenv.servers.mcp_config import CLIENTS, Client, ClientConfigError, claude_mcp_add, client_config
from coworkenv.servers.registry import describe as describe_service
from coworkenv.servers.registry import format_description, get_service
from coworkenv.servers.serve_options import fault_settings, served_service
from coworkenv.servers.snapshot import snapshot_cmd


class ServiceChoice(click.Choice[str]):
    """A registered service's name. A shipped one is taken as it is, so that ``serve tickets`` imports the tickets
    service alone; any other name, the help and the error for an unknown name read every service."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(sorted(registry.SERVICES))

    @choices.setter
    def choices(self, value: object) -> None:
        """click.Choice sets its choices when made: these are read when needed instead."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in registry.SHIPPED:
            return value
        return super().convert(value, param, ctx)


SERVICE_NAMES = ServiceChoice()


def _fail(message: str) -> None:
    raise click.ClickException(message)


def open_existing(service: str, db: Path) -> ServiceState:
    """Open a served database for reading; a clear error if it is missing or holds something else. Creates
    nothing."""
    if not db.is_file():
        what = "is a folder" if db.is_dir() else "does not exist"
        _fail(f"{db} {what}; create it with `coworkenv serve {service} --db {db} --seed FILE` first")
    try:
        return ServiceState.open(get_service(service), path=db, create=False)
    except EnvironmentConfigError as exc:
        raise click.ClickException(one_line(str(exc), 2000)) from exc


def make_folder(folder: Path, option: str) -> None:
    """Create ``folder`` (and its parents) if missing; a one-line error if that cannot be done."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _fail(f"cannot create the folder {folder} for {option}: {exc.strerror or exc}; pass a writable path")


def read_seed(service: str, seed: Path) -> dict[str, Any]:
    """A seed file's document, checked against the service's record models; nothing is written."""
    try:
        doc = read_document(seed, "seed")
    except DocumentError as exc:
        raise click.ClickException(str(exc)) from exc
    if not isinstance(doc, dict):
        _fail(
            f"seed file {seed} must hold an object {{table: [records]}}; see `coworkenv services {service} --describe`"
        )
    return doc


def seed_advice(service: str, message: str) -> str:
    return f"{one_line(message, 2000)} (tables and fields: `coworkenv services {service} --describe`)"


@click.command("services")
@click.argument("service", type=SERVICE_NAMES, required=False)
@click.option("--describe", is_flag=True, help="Print tables with their fields and tools with their arguments.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def services_cmd(service: str | None, describe: bool, as_json: bool) -> None:
    """Each service, its tool count and tool names; with --describe, a service's tables and tools in full."""
    chosen = [get_service(service)] if service else list(registry.SERVICES.values())
    if describe:
        described = [describe_service(s) for s in chosen]
        if as_json:
            click.echo(json.dumps(described[0] if service else described, indent=2, ensure_ascii=False))
        else:
            click.echo("\n\n".join(format_description(d) for d in described))
        return
    rows = [{"service": s.name, "title": s.title, "tools": [t.name for t in s.tools]} for s in chosen]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        click.echo(f"{row['service']:<10} {len(row['tools']):>3} tools  {', '.join(row['tools'])}")
    if not service:
        click.echo("\nTables, fields and tool arguments of one: coworkenv services SERVICE --describe")


@click.command("serve")
@click.argument("service", type=SERVICE_NAMES)
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), required=True, help="SQLite file of the state.")
@click.option(
    "--seed", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Seed records {table: [records]}."
)
@click.option("--now", help="The simulated time, ISO 8601 (e.g. 2026-03-02T09:00:00Z).")
@click.option(
    "--reset", is_flag=True, help="Rebuild an existing database from the seed (validated first, swapped in whole)."
)
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="HTTP port (0 picks a free one)."
)
@click.option(
    "--token",
    envvar=TOKEN_ENV,
    show_envvar=True,
    help="HTTP: every request must carry `Authorization: Bearer TOKEN`; required beyond loopback. "
    "Prefer the environment variable (command lines are visible to other users).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    help="HTTP: a Host (and Origin) value clients may use, e.g. myhost.internal or 10.0.0.5:8000; repeatable; "
    "* allows any. Loopback names and the bind address are always allowed.",
)
@click.option(
    "--profile",
    help="Serve another tool surface on this service's state instead of its own tools: claw-eval:SERVICE[,SERVICE] "
    "(Claw-Eval's tools of those services, e.g. claw-eval:gmail on email).",
)
@click.option("--only", help="With --profile: only these of its tools, comma-separated.")
@click.option(
    "--declared",
    help="With --profile: the tools as a task declares them, a JSON list of {name, description, input_schema} "
    "(only those, listed with that description and schema); @FILE reads it from a file.",
)
@click.option(
    "--faults",
    type=click.FloatRange(0, 1),
    default=0.0,
    help="Rate of injected tool faults on the agent's calls: 429 or 500 answers (nothing runs) or slow calls.",
)
@click.option("--fault-seed", type=int, help="Seed of the injected tool faults (same seed, same faults).")
@click.option("--fault-slow", default="2,4", show_default=True, help="MIN,MAX seconds a slow injected fault waits.")
def serve_cmd(
    service: str,
    db: Path,
    seed: Path | None,
    now: str | None,
    reset: bool,
    transport: str,
    host: str,
    port: int,
    token: str | None,
    allow_hosts: tuple[str, ...],
    profile: str | None = None,
    only: str | None = None,
    declared: str | None = None,
    faults: float = 0.0,
    fault_seed: int | None = None,
    fault_slow: str = "2,4",
) -> None:
    """Serve one service over MCP (stdio for Claude Code and other clients, or streamable HTTP).

    The database's folder is created when missing. A new database is built beside its path and moved in
    only when complete; --reset does the same over an existing one, so a bad seed never loses it.
    """
    if transport == "http":
        problem = token_problem(host, token) or next(filter(None, map(allow_host_problem, allow_hosts)), None)
        if problem:
            _fail(problem)
    try:
        served = served_service(service, profile, only, declared)
        switch = fault_settings(faults, fault_seed, fault_slow)
    except ValueError as exc:
        raise click.ClickException(one_line(str(exc), 2000)) from exc
    seed_doc = read_seed(service, seed) if seed else None
    make_folder(db.parent, "--db")
    try:
        state = ServiceState.open(served, seed_doc, now, db, reset=reset)
    except SeedError as exc:
        raise click.ClickException(seed_advice(service, str(exc))) from exc
    except (EnvironmentConfigError, ValueError) as exc:
        raise click.ClickException(one_line(str(exc), 2000)) from exc
    state.faults = FaultSwitch(switch) if switch is not None else None  # --fault-seed seeds it as it is
    server = ServiceServer(state)
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            serve_http(server, host, port, token, allow_hosts)
    finally:
        state.close()


def serve_http(
    server: ServiceServer, host: str, port: int, token: str | None = None, allow_hosts: tuple[str, ...] = ()
) -> None:
    """Streamable HTTP on host:port (port 0 picks a free one); prints the endpoint on stderr once listening.
    With a token, every request must carry it; Host/Origin must be loopback, the bind address or allowed."""
    import anyio
    import uvicorn

    if port == 0:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, 0))
            port = int(probe.getsockname()[1])
    url = f"http://{host}:{port}/mcp"

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                click.echo(f"serving {server.state.service.name} on {url}", err=True)
                sys.stderr.flush()

    app = server.http_app(host, token, allow_hosts)
    uv = AnnouncingServer(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False))
    anyio.run(uv.serve)
    if not uv.started:
        raise click.ClickException(f"cannot listen on {host}:{port}; try another --port")


@click.command("state")
@click.argument("service", type=SERVICE_NAMES)
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), required=True)
def state_cmd(service: str, db: Path) -> None:
    """Print a served database's state as canonical JSON (records of every table, sorted by id)."""
    state = open_existing(service, db)
    try:
        click.echo(json.dumps(state.dump(), indent=2, sort_keys=True, ensure_ascii=False))
    finally:
        state.close()


@click.command("audit")
@click.argument("service", type=SERVICE_NAMES)
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), required=True)
def audit_cmd(service: str, db: Path) -> None:
    """Print a served database's audit log, one JSON object per line."""
    state = open_existing(service, db)
    try:
        for row in state.audit():
            click.echo(canonical_json(row.to_dict()))
    finally:
        state.close()


def parse_urls(values: tuple[str, ...]) -> dict[str, str]:
    """``SERVICE=URL`` pairs of ``mcp-config --url``; a one-line error for a bad one."""
    urls: dict[str, str] = {}
    for value in values:
        name, eq, url = value.partition("=")
        name, url = name.strip(), url.strip()
        if not eq or name not in registry.SERVICES or not url.startswith(("http://", "https://")) or name in urls:
            why = f"{name} is given twice" if name in urls else "it is not SERVICE=http(s)://HOST:PORT/mcp"
            _fail(
                f"--url {one_line(value, 200)!r}: {why}; e.g. --url tickets=http://10.0.0.5:8000/mcp "
                f"(services: {', '.join(registry.SERVICES)})"
            )
        urls[name] = url
    return urls


@click.command("mcp-config")
@click.option(
    "--db-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the databases of stdio entries (created when missing); needed unless every service has --url.",
)
@click.option("--services", help="Comma-separated service names. [default: all; with --url, the services given a URL]")
@click.option(
    "--url",
    "url_values",
    multiple=True,
    help=f"SERVICE=URL: an HTTP entry for a service already served with `serve --transport http`; its "
    f"Authorization header reads the token from ${TOKEN_ENV} in the client's environment. Repeatable.",
)
@click.option(
    "--client",
    type=click.Choice(CLIENTS),
    default="claude-code",
    show_default=True,
    help="Whose config shape: .mcp.json (claude-code), claude_desktop_config.json, .cursor/mcp.json, .vscode/mcp.json.",
)
@click.option("--print-add", is_flag=True, help="Print `claude mcp add ...` command lines instead of a config file.")
@click.option(
    "--scope",
    type=click.Choice(["local", "project", "user"]),
    default="local",
    show_default=True,
    help="With --print-add: the Claude Code scope the servers are added to.",
)
def mcp_config_cmd(
    db_dir: Path | None,
    services: str | None,
    url_values: tuple[str, ...],
    client: Client,
    print_add: bool,
    scope: str,
) -> None:
    """Print an MCP client config: one stdio entry per service, or HTTP entries with --url (redirect it to the
    client's file, e.g. .mcp.json); or, with --print-add, the `claude mcp add` lines that register them."""
    urls = parse_urls(url_values)
    if services is None:
        services = ",".join(urls) if urls else ",".join(registry.SERVICES)
    names = [s.strip() for s in services.split(",") if s.strip()]
    unknown = [n for n in names if n not in registry.SERVICES]
    if unknown or not names:
        _fail(f"unknown service(s) {', '.join(unknown) or '(none given)'}; available: {', '.join(registry.SERVICES)}")
    stdio = [n for n in names if n not in urls]
    if stdio and db_dir is None:
        _fail(f"pass --db-dir DIR for the stdio entries ({', '.join(stdio)}), or a --url SERVICE=URL for each")
    try:
        if print_add:
            text = "\n".join(claude_mcp_add(db_dir, names, urls=urls, scope=scope))
        else:
            text = json.dumps(client_config(client, db_dir, names, urls=urls), indent=2)
    except ClientConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    if stdio and db_dir is not None:
        make_folder(db_dir, "--db-dir")  # so each `serve` the client starts can create its database there
    click.echo(text)


COMMANDS: list[click.Command] = [services_cmd, serve_cmd, state_cmd, audit_cmd, snapshot_cmd, mcp_config_cmd, demo_cmd]


@click.group(cls=CommandGroup)
def main() -> None:
    """coworkenv services: mock workplace services over MCP."""


for _cmd in COMMANDS:
    main.add_command(_cmd)
