"""MCP client configurations for the services: what a client needs to start or reach each one. Plain data, no
command line: the CLI, the demo, the synthesizer and the harness all build on it.

Each client documents its own shape:

==================  ===========================  =====================================================
client              file                         shape
==================  ===========================  =====================================================
``claude-code``     ``.mcp.json``                ``mcpServers``: ``command``/``args``, or ``type: http``
                                                 with ``url`` and ``headers`` (``${VAR}`` expanded)
``claude-desktop``  ``claude_desktop_config``    ``mcpServers``: ``command``/``args`` only (remote
                    ``.json``                    servers are added in the app, under Connectors)
``cursor``          ``.cursor/mcp.json``         ``mcpServers``: ``command``/``args``, or ``url`` and
                                                 ``headers`` (``${env:VAR}`` expanded)
``vscode``          ``.vscode/mcp.json``         ``servers`` with ``type`` (``stdio`` or ``http``); the
                                                 token is an ``inputs`` entry, asked for once
==================  ===========================  =====================================================

:func:`claude_mcp_add` gives the ``claude mcp add …`` command lines that register the same servers.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from coworkenv.servers.kit.http_auth import TOKEN_ENV

Client = Literal["claude-code", "claude-desktop", "cursor", "vscode"]
CLIENTS: tuple[Client, ...] = ("claude-code", "claude-desktop", "cursor", "vscode")
HTTP_AUTH_HEADER = {"Authorization": f"Bearer ${{{TOKEN_ENV}}}"}
VSCODE_TOKEN_INPUT = "coworkenv-token"
_BEARER = {
    "claude-code": f"Bearer ${{{TOKEN_ENV}}}",
    "cursor": f"Bearer ${{env:{TOKEN_ENV}}}",
    "vscode": f"Bearer ${{input:{VSCODE_TOKEN_INPUT}}}",
}


class ClientConfigError(ValueError):
    """A configuration the client cannot express; the message says what to do instead."""


def stdio_command(db_dir: Path, name: str, python: str | None = None, extra: Sequence[str] = ()) -> list[str]:
    """The command line that serves ``name`` over stdio on its database in ``db_dir``; ``extra``: more options of
    ``serve`` (a tool profile, injected faults). It starts through :mod:`coworkenv.servers.quick`, which lists the
    tools within milliseconds while the service imports (clients that wait only a few seconds for them)."""
    db = str((db_dir / f"{name}.db").resolve())
    return [python or sys.executable, "-m", "coworkenv.servers.quick", "serve", name, "--db", db, *extra]


def _http_entry(client: Client, name: str, url: str) -> dict[str, Any]:
    if client == "claude-desktop":
        raise ClientConfigError(
            f"Claude Desktop's config file only starts local (stdio) servers, so {name} cannot be given by URL; "
            "add the URL in the app under Settings > Connectors, or drop --url to get a stdio entry"
        )
    headers = {"Authorization": _BEARER[client]}
    if client == "cursor":
        return {"url": url, "headers": headers}
    return {"type": "http", "url": url, "headers": headers}


def _stdio_entry(client: Client, command: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": command[0], "args": command[1:]}
    return {"type": "stdio", **entry} if client == "vscode" else entry


def client_config(
    client: Client,
    db_dir: Path | None,
    services: list[str],
    python: str | None = None,
    urls: dict[str, str] | None = None,
    extra: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The config file of ``client``: one stdio server per service, or an HTTP entry for a service with a URL in
    ``urls``, whose Authorization header takes the token from ``$COWORKENV_TOKEN`` (VS Code asks for it once).
    ``extra``: per service, more options of its stdio ``serve`` command (see :func:`stdio_command`)."""
    if client not in CLIENTS:
        raise ClientConfigError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")
    urls = urls or {}
    entries: dict[str, Any] = {}
    for name in services:
        if name in urls:
            entries[name] = _http_entry(client, name, urls[name])
        else:
            if db_dir is None:
                raise ClientConfigError(f"stdio entries need a database folder (--db-dir) for {name}")
            entries[name] = _stdio_entry(client, stdio_command(db_dir, name, python, (extra or {}).get(name, ())))
    if client != "vscode":
        return {"mcpServers": entries}
    out: dict[str, Any] = {"servers": entries}
    if urls:
        out["inputs"] = [
            {
                "type": "promptString",
                "id": VSCODE_TOKEN_INPUT,
                "description": f"Bearer token of the coworkenv services (the {TOKEN_ENV} they were served with)",
                "password": True,
            }
        ]
    return out


def mcp_config(
    db_dir: Path | None,
    services: list[str],
    python: str | None = None,
    urls: dict[str, str] | None = None,
    extra: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """A Claude Code ``.mcp.json`` (the shape ``claude --mcp-config`` reads); see :func:`client_config`."""
    return client_config("claude-code", db_dir, services, python, urls, extra)


def claude_mcp_add(
    db_dir: Path | None,
    services: list[str],
    python: str | None = None,
    urls: dict[str, str] | None = None,
    scope: str = "local",
) -> list[str]:
    """``claude mcp add`` command lines (POSIX shell) registering the same servers with Claude Code. An HTTP
    entry's header is double-quoted so the shell puts in ``$COWORKENV_TOKEN`` when the line is run."""
    urls = urls or {}
    lines = []
    for name in services:
        if name in urls:
            head = shlex.join(["claude", "mcp", "add", "--scope", scope, "--transport", "http", name, urls[name]])
            lines.append(f'{head} --header "Authorization: Bearer ${TOKEN_ENV}"')
        else:
            if db_dir is None:
                raise ClientConfigError(f"stdio entries need a database folder (--db-dir) for {name}")
            command = stdio_command(db_dir, name, python)
            lines.append(shlex.join(["claude", "mcp", "add", "--scope", scope, name, "--", *command]))
    return lines
