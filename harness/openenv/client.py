"""A small client of the OpenEnv protocol's WebSocket session (``/ws``), sync and async, for our own uses: the trl
environment over the server (:mod:`coworkenv.train.openenv_env`), the bench and the tests. Outside trainers use
OpenEnv's own clients; this one needs only ``websockets`` (the ``openenv`` extra).

A session is one socket: ``reset``, ``step`` and ``state`` frames go out, their answers come back in order; an
``error`` frame is raised as :class:`OpenEnvError` and the session goes on.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

DEFAULT_TIMEOUT_S = 60.0


class OpenEnvError(RuntimeError):
    """The server answered a frame with an error (``code``: ``VALIDATION_ERROR``, ``CAPACITY_REACHED``, ...)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code


def ws_url(base_url: str) -> str:
    """``http://host:port`` → ``ws://host:port/ws`` (``https`` → ``wss``)."""
    url = base_url.rstrip("/")
    for plain, socket in (("http://", "ws://"), ("https://", "wss://")):
        if url.startswith(plain):
            url = socket + url[len(plain) :]
    return url if url.endswith("/ws") else f"{url}/ws"


def _answer(raw: str | bytes) -> dict[str, Any]:
    frame = json.loads(raw)
    data: dict[str, Any] = frame.get("data") or {}
    if frame.get("type") == "error":
        raise OpenEnvError(str(data.get("message", "unknown error")), str(data.get("code", "UNKNOWN")))
    return data


def call_frame(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "step", "data": {"type": "call_tool", "tool_name": name, "arguments": arguments}}


def result_text(result: dict[str, Any]) -> str:
    """The text a ``call_tool`` result carries (an error's message for a failed call)."""
    observation = result.get("observation") or {}
    error = observation.get("error")
    if error:
        return f"Error: {error.get('message', '')}"
    content = (observation.get("result") or {}).get("content") or []
    return "".join(str(part.get("text", "")) for part in content)


class OpenEnvSession:
    """One session, synchronous (``websockets.sync``): what trl's environment instances hold."""

    def __init__(self, base_url: str, headers: dict[str, str] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.url, self.headers, self.timeout_s = ws_url(base_url), headers, timeout_s
        self._socket: Any = None

    def _send(self, frame: dict[str, Any]) -> dict[str, Any]:
        if self._socket is None:
            from websockets.sync.client import connect

            opened = connect(
                self.url, additional_headers=self.headers, open_timeout=self.timeout_s, max_size=None, proxy=None
            )
            self._socket = opened.__enter__()  # held across calls: closed by close()
        with contextlib.suppress(Exception):  # refused at once (at capacity): the error frame came first; read it
            self._socket.send(json.dumps(frame))
        return _answer(self._socket.recv(timeout=self.timeout_s))

    def reset(self, **arguments: Any) -> dict[str, Any]:
        return self._send({"type": "reset", "data": arguments})

    def step(self, action: dict[str, Any]) -> dict[str, Any]:
        return self._send({"type": "step", "data": action})

    def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = self.step({"type": "list_tools"})["observation"]["tools"]
        return tools

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self._send(call_frame(name, arguments))

    def state(self) -> dict[str, Any]:
        return self._send({"type": "state"})

    def close(self) -> None:
        """Close the socket: the server frees the session's workspace."""
        socket, self._socket = self._socket, None
        if socket is not None:
            with contextlib.suppress(Exception):
                socket.send(json.dumps({"type": "close"}))
            socket.close()


class AsyncOpenEnvSession:
    """One session on an event loop (``websockets.asyncio``): what the bench runs by the hundred."""

    def __init__(self, base_url: str, headers: dict[str, str] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.url, self.headers, self.timeout_s = ws_url(base_url), headers, timeout_s
        self._socket: Any = None

    async def __aenter__(self) -> AsyncOpenEnvSession:
        from websockets.asyncio.client import connect

        self._socket = await connect(
            self.url, additional_headers=self.headers, open_timeout=self.timeout_s, max_size=None, proxy=None
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            with contextlib.suppress(Exception):
                await socket.send(json.dumps({"type": "close"}))
            await socket.close()

    async def _send(self, frame: dict[str, Any]) -> dict[str, Any]:
        import anyio

        with contextlib.suppress(Exception):  # refused at once (at capacity): the error frame came first; read it
            await self._socket.send(json.dumps(frame))
        with anyio.fail_after(self.timeout_s):
            return _answer(await self._socket.recv())

    async def reset(self, **arguments: Any) -> dict[str, Any]:
        return await self._send({"type": "reset", "data": arguments})

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self._send(call_frame(name, arguments))

    async def state(self) -> dict[str, Any]:
        return await self._send({"type": "state"})
