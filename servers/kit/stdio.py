"""stdio that answers every line: a line that is not JSON, or not a JSON-RPC message, gets an error answer.

The SDK's stdio transport (``mcp.server.stdio.stdio_server``) reads stdin line by line and, for a line it cannot
parse, passes the exception on to the server, which logs it and answers nothing: a client that sent a lone
surrogate, 10,000-deep JSON or plain text waits for its own timeout. The streamable-HTTP transport answers such
a body with status 400 and a JSON-RPC error. Here the stdio transport does the same: the screen between the
SDK's reader and the server answers a line that is not JSON with a parse error (-32700) and valid JSON that is
not a JSON-RPC message with an invalid-request error (-32600), both with id null (the id of a message that
could not be read is unknown), and the server goes on serving the next line.
"""

from __future__ import annotations

from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from coworkenv.servers.kit.audit import clip


def error_answer(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error for a line the transport could not read as a message: parse error or invalid request."""
    problems = exc.errors(include_input=False) if isinstance(exc, ValidationError) else []
    if not problems or problems[0]["type"] == "json_invalid":
        detail = problems[0]["msg"] if problems else str(exc)
        code, message = PARSE_ERROR, f"Parse error: the line is not valid JSON ({clip(detail, 200)})"
    else:
        code = INVALID_REQUEST
        message = "Invalid request: the line is JSON but not a JSON-RPC 2.0 request, notification or response"
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message))


async def _screen(incoming: Any, server_in: MemoryObjectSendStream[SessionMessage | Exception], outgoing: Any) -> None:
    """Pass messages on to the server; answer what the SDK's reader could not read (it hands us the exception)."""
    async with server_in:
        async for item in incoming:
            if isinstance(item, Exception):
                await outgoing.send(SessionMessage(error_answer(item)))
            else:
                await server_in.send(item)


_streams: tuple[Any, Any] | None = None


def use_streams(stdin: Any, stdout: Any) -> None:
    """Serve stdio on these text streams (anyio files) instead of the process's stdin and stdout: the quick
    start-up (:mod:`coworkenv.servers.quick`) hands its own pipe and its filtered output to the server it starts."""
    global _streams
    _streams = (stdin, stdout)


async def serve_stdio(lowlevel: Any) -> None:
    """What the SDK's ``MCPServer.run_stdio_async`` does, with the screen between the reader and the server."""
    stdin, stdout = _streams or (None, None)
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        server_in, server_read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_screen, read_stream, server_in, write_stream)
            await lowlevel.run(server_read, write_stream, lowlevel.create_initialization_options())
            tg.cancel_scope.cancel()
