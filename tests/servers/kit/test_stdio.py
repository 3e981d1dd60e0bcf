"""stdio answers every line, as HTTP does: through a raw pipe to a real `coworkenv serve`, a line that is not JSON
(plain text, a lone surrogate, 10,000-deep nesting) gets a parse error and JSON that is not JSON-RPC an invalid
request, both with id null, and the server goes on serving."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


async def exchange(process: Process, line: bytes, buffer: bytearray) -> dict[str, Any]:
    """Write one line, read one answer line."""
    assert process.stdin is not None and process.stdout is not None
    await process.stdin.send(line + b"\n")
    while b"\n" not in buffer:
        buffer.extend(await process.stdout.receive())
    answer, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return dict(json.loads(answer))


async def test_lines_that_are_not_json_rpc_get_an_error_answer_with_id_null_and_serving_goes_on(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "coworkenv.servers", "serve", "tickets", "--db", str(tmp_path / "t.db")]
    with anyio.fail_after(60):
        async with await anyio.open_process(command, env={**os.environ, "PYTHONUNBUFFERED": "1"}) as process:
            buffer = bytearray()
            not_json = [
                b"hello",
                b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"x": "\\ud800"}}',
                b"[" * 10_000 + b"]" * 10_000,
                b'{"jsonrpc": "2.0", "id": 8, "method": ',
            ]
            for line in not_json:
                answer = await exchange(process, line, buffer)
                assert answer["id"] is None and answer["error"]["code"] == -32700, (line[:40], answer)
                assert answer["error"]["message"].startswith("Parse error")
            for line in (b'{"a": 1}', b"[1, 2]", b'"text"', b'{"jsonrpc": "2.0", "id": 9, "method": 3}'):
                answer = await exchange(process, line, buffer)
                assert answer["id"] is None and answer["error"]["code"] == -32600, (line, answer)
            started = await exchange(process, json.dumps(INITIALIZE).encode(), buffer)
            assert started["id"] == 1 and started["result"]["serverInfo"]["name"] == "coworkenv-tickets"
            assert (await exchange(process, b"not json either", buffer))["error"]["code"] == -32700
            assert process.stdin is not None
            await process.stdin.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
            listed = await exchange(process, b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}', buffer)
            assert listed["id"] == 2 and any(t["name"] == "search_tickets" for t in listed["result"]["tools"])
            await process.stdin.aclose()
            assert await process.wait() == 0
