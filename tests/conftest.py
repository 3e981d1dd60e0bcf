"""Shared test helpers: the anyio backend, and an in-memory MCP client onto a fresh service."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from coworkenv.servers.kit import Environment, Service

NOW = "2026-03-02T09:00:00Z"


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
