"""``coworkenv openenv serve``: the tasks of a folder as an OpenEnv environment server.

Importing this module loads click alone: the server (Starlette, uvicorn, the tasks) is imported when it runs."""

from __future__ import annotations

import os
import socket
import sys

import click


@click.group("openenv")
def openenv_group() -> None:
    """Our tasks as an OpenEnv environment: TRL, verifiers, SkyRL and other trainers reach it through OpenEnv's
    clients (see the README's "Train elsewhere")."""


@openenv_group.command("serve")
@click.option("--tasks", "tasks", multiple=True, required=True, help="Task file or folder (repeatable), or 'examples'.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; beyond loopback needs a token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="0 picks a free port.")
@click.option("--max-sessions", type=click.IntRange(min=1), default=1024, show_default=True, help="Open at once.")
@click.option("--max-steps", type=click.IntRange(min=1), default=100, show_default=True, help="Steps an episode.")
@click.option(
    "--session-timeout",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    help="Seconds before an idle session made over HTTP (no socket holding it) is closed.",
)
@click.option("--token", default=None, help="Bearer token every request must carry (or COWORKENV_TOKEN).")
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    help="Another Host (and Origin) the server answers to besides loopback and the bind address; * for any.",
)
def serve_cmd(
    tasks: tuple[str, ...],
    host: str,
    port: int,
    max_sessions: int,
    max_steps: int,
    session_timeout: float,
    token: str | None,
    allow_hosts: tuple[str, ...],
) -> None:
    """Serve the tasks as an OpenEnv environment: reset(task_id=...) starts a task in a workspace of the session's
    own; call_tool runs its <service>__<tool> tools; reply(text) talks to the user, and the last reply's reward is
    the grader's score. WebSocket sessions at ws://HOST:PORT/ws, HTTP at http://HOST:PORT."""
    from coworkenv.harness.cli import _task_sources
    from coworkenv.harness.openenv.episode import Limits, TaskPool
    from coworkenv.harness.openenv.server import create_app
    from coworkenv.harness.run import RunError
    from coworkenv.servers.kit.http_auth import (
        TOKEN_ENV,
        BearerTokenMiddleware,
        HostGuardMiddleware,
        allow_host_problem,
        security_settings,
        token_problem,
    )
    from coworkenv.synth.contract.taskfile import TaskFileError

    token = token if token is not None else os.environ.get(TOKEN_ENV) or None
    problem = token_problem(host, token) or next(filter(None, map(allow_host_problem, allow_hosts)), None)
    if problem is not None:
        raise click.ClickException(problem)
    if not _websockets_available():
        raise click.ClickException(
            "the OpenEnv server needs a WebSocket library for uvicorn: pip install 'coworkenv[openenv]'"
        )
    try:
        pool = TaskPool.load(_task_sources(tasks))
    except (RunError, TaskFileError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    app = create_app(pool, limits=Limits(max_steps), max_sessions=max_sessions, idle_timeout_s=session_timeout)
    guarded = HostGuardMiddleware(app, security_settings(host, allow_hosts))
    serve(BearerTokenMiddleware(guarded, token) if token else guarded, host, port, f"{len(pool.ids)} tasks")


def _websockets_available() -> bool:
    import importlib.util

    return any(importlib.util.find_spec(name) is not None for name in ("websockets", "wsproto"))


def serve(app: object, host: str, port: int, what: str) -> None:
    """Run the app with uvicorn on host:port (0 picks a free port); one line on stderr once it listens."""
    import anyio
    import uvicorn

    if port == 0:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, 0))
            port = int(probe.getsockname()[1])
    shown = f"[{host}]" if ":" in host else host

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                click.echo(f"serving {what} as an OpenEnv environment on http://{shown}:{port} (ws /ws)", err=True)
                sys.stderr.flush()

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)  # type: ignore[arg-type]
    server = AnnouncingServer(config)
    anyio.run(server.serve)
    if not server.started:
        raise click.ClickException(f"cannot listen on {host}:{port}; try another --port")


COMMANDS = [openenv_group]
