"""MCP client configurations for the services: what a client (Claude Code's ``.mcp.json``, ...) needs to start or
reach each one. Plain data, no command line: the CLI, the demo, the synthesizer and the harness all build on it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from coworkenv.servers.kit.http_auth import TOKEN_ENV

HTTP_AUTH_HEADER = {"Authorization": f"Bearer ${{{TOKEN_ENV}}}"}


def mcp_config(
    db_dir: Path | None, services: list[str], python: str | None = None, urls: dict[str, str] | None = None
) -> dict[str, Any]:
    """A Claude Code / MCP client config: one stdio server per service, or an HTTP entry for a service with a
    URL in ``urls`` whose Authorization header takes the token from the client's ``$COWORKENV_TOKEN``."""
    exe = python or sys.executable
    urls = urls or {}
    entries: dict[str, Any] = {}
    for name in services:
        if name in urls:
            entries[name] = {"type": "http", "url": urls[name], "headers": dict(HTTP_AUTH_HEADER)}
        else:
            assert db_dir is not None, "stdio entries need a database folder"
            db = str((db_dir / f"{name}.db").resolve())
            entries[name] = {"command": exe, "args": ["-m", "coworkenv.servers", "serve", name, "--db", db]}
    return {"mcpServers": entries}
