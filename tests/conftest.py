"""Shared test helpers: the anyio backend, an in-memory MCP client onto a fresh service, and a small tickets
seed (an enterprise customer with an old open ticket) that the synth and harness tests build tasks on."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from coworkenv.servers.kit import Environment, Service

NOW = "2026-03-02T09:00:00Z"
BIG_CORP_SEED: dict[str, Any] = {
    "organizations": [
        {"id": "org_big", "name": "Big Corp", "domain": "big.com", "tags": ["enterprise"]},
        {"id": "org_small", "name": "Small Shop", "domain": "small.com", "tags": ["starter"]},
    ],
    "users": [
        {"id": "usr_kim", "name": "Kim Nguyen", "email": "kim@brightwave.io", "role": "agent"},
        {"id": "usr_ann", "name": "Ann Big", "email": "ann@big.com", "organization_id": "org_big"},
    ],
    "tickets": [
        {
            "id": "tkt_1",
            "subject": "Outage at Big",
            "requester_id": "usr_ann",
            "organization_id": "org_big",
            "status": "open",
            "priority": "high",
            "created_at": "2026-02-20T09:00:00Z",
            "updated_at": "2026-02-20T09:00:00Z",
        }
    ],
}
"""Tickets seed: Big Corp (enterprise) with its old open ticket tkt_1; Small Shop (starter) with no one yet."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def service_client(
    service: Service, seed: Mapping[str, Any] | None = None, now: str = NOW
) -> AsyncIterator[tuple[Client, Environment]]:
    """A fresh in-memory environment of one service and an in-memory MCP client onto it (10 s budget)."""
    env = Environment.create({service.name: seed or {}}, now=now, registry={service.name: service})
    try:
        with anyio.fail_after(10):
            async with Client(env.server(service.name)) as client:
                yield client, env
    finally:
        env.close()


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call; fails the test with the error text otherwise."""
    assert not result.is_error, result.content[0].text if result.content else result
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    """The message of a call that must have failed as a business or argument error."""
    assert result.is_error, f"expected an error, got {result.structured_content}"
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


def member_call(service: str, env: Environment, member: str, tool: str, **args: Any) -> dict[str, Any]:
    """A call run as another workspace member: a privileged act of the Python API, not a tool argument."""
    result = env.state(service).call_now(tool, args, member=member)
    assert not result.is_error and result.data is not None, result.text
    return result.data


def member_fail(service: str, env: Environment, member: str, tool: str, **args: Any) -> str:
    """The error text of a call run as another workspace member (it must fail)."""
    result = env.state(service).call_now(tool, args, member=member)
    assert result.is_error, result.data
    return result.text


def drop_audit_column(db: Path, column: str) -> None:
    """Make a service's database file look as an older version wrote it: its audit table without ``column``."""
    conn = sqlite3.connect(db)
    conn.execute(f"ALTER TABLE _audit DROP COLUMN {column}")
    conn.commit()
    conn.close()
