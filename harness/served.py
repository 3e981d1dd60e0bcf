"""``coworkenv play``: a task's reference solution played against its services where they are served (``coworkenv
serve --transport http``), as an outside agent would reach them: Harbor's oracle (``solution/solve.sh`` of an
exported task folder) runs it against the task's MCP sidecars.

Each service is one streamable-HTTP MCP client, carrying ``Authorization: Bearer $COWORKENV_TOKEN`` when a token is
given; the steps go through the kit's door (:func:`~coworkenv.servers.kit.door.open_mcp_door`) and the task
contract's player (:func:`~coworkenv.synth.contract.play.play_steps`), so ``$ref`` arguments resolve from earlier
results as they do in validation. What the reference says to the user is written to ``--answer``, where the
verifier reads the agent's final message. A task's user turns have no one to make them here (the services act for
the agent alone): their edits are not made, and the command says so.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import click
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from coworkenv.servers.kit.atomic import write_atomic
from coworkenv.servers.kit.door import MCPDoor, open_mcp_door
from coworkenv.servers.kit.files import one_line
from coworkenv.servers.kit.http_auth import TOKEN_ENV
from coworkenv.synth.contract.play import StepOutcome, play_steps
from coworkenv.synth.contract.task import Task


@asynccontextmanager
async def open_http_door(urls: Mapping[str, str], token: str | None = None) -> AsyncIterator[MCPDoor]:
    """An :class:`MCPDoor` onto services served over streamable HTTP (``{service: url}``), each request carrying
    the bearer ``token`` when one is given; closed on exit."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with AsyncExitStack() as stack:
        targets: dict[str, Any] = {}
        for name, url in urls.items():
            http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
            targets[name] = streamable_http_client(url, http_client=http)
        async with open_mcp_door(targets) as door:
            yield door


async def play_served(
    task: Task, urls: Mapping[str, str], token: str | None = None
) -> tuple[list[StepOutcome], list[str]]:
    """Play ``task``'s reference solution against its served services; each step's outcome and what the reference
    said to the user."""
    async with open_http_door({name: urls[name] for name in task.services}, token) as door:
        return await play_steps(door, task.reference_solution)


def _cause(exc: BaseException) -> BaseException:
    """The first error inside task groups' exception groups (a refused connection, a 401)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _failure_line(outcome: StepOutcome) -> str:
    step = outcome.step
    what = f"{getattr(step, 'service', '')}.{getattr(step, 'tool', '')}"
    return one_line(f"step {outcome.index} ({what}) failed: {outcome.text}", 600)


@click.command("play")
@click.argument("task_ref", metavar="TASK")
@click.option("--task-id", help="Which task, when the file holds several.")
@click.option(
    "--url",
    "url_values",
    multiple=True,
    required=True,
    help="SERVICE=URL of each of the task's services, served with `coworkenv serve --transport http` "
    "(e.g. tickets=http://tickets:8000/mcp). Repeatable.",
)
@click.option(
    "--token",
    envvar=TOKEN_ENV,
    show_envvar=True,
    help="The services' bearer token (prefer the environment variable: command lines are visible to other users).",
)
@click.option(
    "--answer",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write what the reference says to the user here (the file the verifier reads as the final message).",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0.1), default=300.0, show_default=True, help="Seconds for the whole play."
)
def play_cmd(
    task_ref: str,
    task_id: str | None,
    url_values: tuple[str, ...],
    token: str | None,
    answer: Path | None,
    timeout: float,
) -> None:
    """Play a task's reference solution against its services where they are served (Harbor's oracle): exit 0 when
    every step succeeded, 1 (each failed step on a line) otherwise."""
    from coworkenv.servers.cli import parse_urls
    from coworkenv.synth.cli import resolve_task

    task = resolve_task(task_ref, task_id)
    urls = parse_urls(url_values)
    missing = [name for name in task.services if name not in urls]
    if missing:
        given = ", ".join(urls) or "none"
        raise click.ClickException(
            f"task {task.id} uses {', '.join(task.services)}; give a --url SERVICE=URL for {', '.join(missing)} "
            f"(given: {given})"
        )

    async def go() -> tuple[list[StepOutcome], list[str]]:
        with anyio.fail_after(timeout):
            return await play_served(task, urls, token)

    try:
        outcomes, messages = anyio.run(go)
    except TimeoutError:
        raise click.ClickException(
            f"the reference of {task.id} did not finish within {timeout:g} s; check that the services are up "
            "(coworkenv serve ... --transport http) and reachable at the --url given, or raise --timeout"
        ) from None
    except Exception as exc:  # a connection refused, a 401, a bad URL: one line that says what to do
        cause = _cause(exc)
        raise click.ClickException(
            f"cannot play {task.id} against {', '.join(f'{k}={v}' for k, v in urls.items())}: "
            f"{one_line(f'{type(cause).__name__}: {cause}', 400)}; check the services are served there and that "
            f"{TOKEN_ENV} (or --token) holds their token"
        ) from exc
    if answer is not None:
        answer.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(answer, "\n\n".join(messages) + ("\n" if messages else ""))
    if task.user is not None and task.user.turns:
        click.echo(f"note: {task.id} has user turns; their edits were not made (no simulated user here)", err=True)
    failed = [o for o in outcomes if not o.ok]
    for outcome in failed:
        click.echo(_failure_line(outcome), err=True)
    steps = sum(1 for o in outcomes if o.actor == "agent")
    click.echo(f"played the reference of {task.id}: {steps - len(failed)}/{steps} steps ok")
    if failed:
        raise SystemExit(1)


COMMANDS: list[click.Command] = [play_cmd]
