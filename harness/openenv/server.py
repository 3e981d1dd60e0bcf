"""The OpenEnv environment server: our tasks behind the HTTP and WebSocket routes of OpenEnv's protocol.

Routes (as OpenEnv's ``EnvClient``, ``GenericEnvClient`` and ``MCPToolClient`` reach them):

- ``WS /ws``: a session of its own per connection (``?session_id=`` attaches to one made over ``POST /mcp``), frames
  ``reset``/``step``/``state``/``close``/``mcp``; the session and its workspace go when the socket closes;
- ``POST /mcp`` (and ``WS /mcp``): JSON-RPC ``openenv/session/create``, ``openenv/session/close``, ``tools/list``,
  ``tools/call`` (``params.session_id`` names the session);
- ``POST /reset``, ``POST /step``, ``GET /state``: stateless, as OpenEnv's are (each request gets a fresh episode,
  closed after it): a ``/reset`` shows a task's first observation, a ``/step`` lists tools; play over ``/ws``;
- ``GET /schema``, ``/metadata``, ``/health``; and ours, ``GET /tasks`` (the served tasks' ids).

Sessions are independent episodes (each its own fork, lock and user); at most ``max_sessions`` at once (another
is refused with ``CAPACITY_REACHED``); a session made over HTTP that nothing used for ``idle_timeout_s`` is closed.
Everything runs on the event loop: the direct door's calls never wait, so a step is never interleaved with another.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from coworkenv.harness.openenv import protocol
from coworkenv.harness.openenv.episode import Episode, Limits, ResetError, TaskPool
from coworkenv.harness.openenv.sessions import (
    IDLE_TIMEOUT_S,
    MAX_SESSIONS,
    CapacityError,
    Session,
    SessionTable,
    reaper,
    rss_kib,
    run_locked,
)

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------- JSON-RPC
def _rpc_error(code: int, message: str, request_id: Any = None, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "data": data}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _rpc_ok(result: Any, request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _flat(wire: dict[str, Any]) -> dict[str, Any]:
    """A step's result as one observation object (what ``tools/call`` answers): its fields, done and reward."""
    return {**wire["observation"], "done": wire["done"], "reward": wire["reward"]}


async def rpc(table: SessionTable, message: Any, bound: Session | None = None) -> dict[str, Any]:
    """Answer one JSON-RPC request; ``bound``: the session of the socket it came on."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return _rpc_error(protocol.INVALID_REQUEST, "Invalid request: a JSON-RPC 2.0 request with a method")
    request_id, method, params = message.get("id"), message["method"], message.get("params", {})
    if not isinstance(params, dict):
        return _rpc_error(protocol.INVALID_PARAMS, "Params must be an object", request_id)
    if method == "openenv/session/create":
        if bound is not None:
            return _rpc_ok({"session_id": bound.id}, request_id)
        try:
            created = table.create()
        except CapacityError as exc:
            data = {"active_sessions": exc.active, "max_sessions": exc.limit}
            return _rpc_error(protocol.SERVER_ERROR, str(exc), request_id, data)
        return _rpc_ok({"session_id": created.id}, request_id)
    if method == "openenv/session/close":
        target = params.get("session_id")
        if not target:
            return _rpc_error(protocol.INVALID_PARAMS, "Invalid params - 'session_id' is required", request_id)
        if bound is not None and target == bound.id:
            return _rpc_error(protocol.INVALID_REQUEST, "the session of this socket closes with the socket", request_id)
        session = table.open.get(target)
        if session is None:
            return _rpc_error(protocol.INVALID_PARAMS, f"Unknown session_id: {target}", request_id)
        if session.attached:
            session.closing = True
            return _rpc_ok({"session_id": target, "closed": False, "closing": True}, request_id)
        table.close(target)
        return _rpc_ok({"session_id": target, "closed": True}, request_id)
    if method not in ("tools/list", "tools/call"):
        return _rpc_error(protocol.METHOD_NOT_FOUND, f"Method not found: {method}", request_id)
    session = bound
    if session is None and params.get("session_id"):
        session = table.open.get(str(params["session_id"]))
        if session is None:
            return _rpc_error(protocol.INVALID_PARAMS, f"Unknown session_id: {params['session_id']}", request_id)
    if method == "tools/list":
        episode = session.episode if session is not None else Episode(table.pool, table.limits)
        return _rpc_ok({"tools": episode.tools()}, request_id)
    name, arguments = params.get("name"), params.get("arguments", {})
    if not isinstance(name, str) or not name:
        return _rpc_error(protocol.INVALID_PARAMS, "Missing 'name' in params", request_id)
    action = {"type": "call_tool", "tool_name": name, "arguments": arguments}
    try:
        if session is None:
            wire = await Episode(table.pool, table.limits).step(action)
        else:
            wire = await run_locked(session, lambda episode: episode.step(action))
    except protocol.ActionError as exc:
        return _rpc_error(protocol.INVALID_PARAMS, str(exc), request_id)
    return _rpc_ok(_flat(wire), request_id)


# ---------------------------------------------------------------------------------------------- WebSocket
async def _frames(websocket: WebSocket) -> AsyncIterator[str]:
    """The socket's messages as text, until it closes."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            text = (message.get("bytes") or b"").decode("utf-8", errors="replace")
        yield text


async def _answer(table: SessionTable, session: Session, frame: dict[str, Any]) -> dict[str, Any] | None:
    """The reply to one frame of ``/ws`` (None for ``close``)."""
    kind = frame.get("type")
    if kind == "reset":
        data = frame.get("data", {})
        if not isinstance(data, dict):
            return protocol.error_frame("reset data is an object of reset arguments", protocol.VALIDATION_ERROR)
        try:
            return {"type": "observation", "data": await run_locked(session, lambda e: e.reset(data))}
        except ResetError as exc:
            return protocol.error_frame(str(exc), protocol.VALIDATION_ERROR)
    if kind == "step":
        if "data" not in frame:
            return protocol.error_frame("a step frame carries its action as data", protocol.VALIDATION_ERROR)
        try:
            return {"type": "observation", "data": await run_locked(session, lambda e: e.step(frame["data"]))}
        except protocol.ActionError as exc:
            return protocol.error_frame(str(exc), protocol.VALIDATION_ERROR)
    if kind == "state":
        return {"type": "state", "data": session.episode.state()}
    if kind == "close":
        return None
    if kind == "mcp":
        return {"type": "mcp", "data": await rpc(table, frame.get("data"), bound=session)}
    return protocol.error_frame(f"Unknown message type: {kind}", protocol.UNKNOWN_TYPE)


async def _refuse(websocket: WebSocket, answer: dict[str, Any]) -> None:
    """Say why a socket gets no session, and close it."""
    await websocket.send_text(json.dumps(answer))
    await websocket.close()


async def _ws_session(table: SessionTable, websocket: WebSocket) -> None:
    await websocket.accept()
    wanted = websocket.query_params.get("session_id")
    owned = not wanted
    try:
        session = table.create() if owned else table.open.get(str(wanted))
    except CapacityError as exc:
        await _refuse(websocket, protocol.error_frame(str(exc), protocol.CAPACITY_REACHED, active_sessions=exc.active))
        return
    if session is None or session.attached:
        why = f"Unknown session_id: {wanted}" if session is None else f"Session {wanted} already has a WebSocket"
        await _refuse(websocket, protocol.error_frame(why, protocol.SESSION_ERROR))
        return
    session.attached = True
    try:
        async for text in _frames(websocket):
            try:
                frame = json.loads(text)
            except ValueError as exc:
                await websocket.send_text(
                    json.dumps(protocol.error_frame(f"Invalid JSON: {exc}", protocol.INVALID_JSON))
                )
                continue
            if not isinstance(frame, dict):
                reply: dict[str, Any] | None = protocol.error_frame(
                    "a frame is a JSON object", protocol.VALIDATION_ERROR
                )
            else:
                try:
                    reply = await _answer(table, session, frame)
                except Exception as exc:  # a fault of ours: say so, keep the session
                    log.exception("OpenEnv session %s failed on a %s frame", session.id, frame.get("type"))
                    reply = protocol.error_frame(f"{type(exc).__name__}: {exc}", protocol.EXECUTION_ERROR)
            if reply is None:
                break
            await websocket.send_text(json.dumps(reply))
    except WebSocketDisconnect:
        pass
    finally:
        session.attached = False
        if owned or session.closing:
            table.close(session.id)
        with contextlib.suppress(Exception):
            await websocket.close()


async def _ws_mcp(table: SessionTable, websocket: WebSocket) -> None:
    """``WS /mcp``: JSON-RPC over a socket, in a session of its own."""
    await websocket.accept()
    try:
        session = table.create()
    except CapacityError as exc:
        await _refuse(websocket, _rpc_error(protocol.SERVER_ERROR, str(exc)))
        return
    session.attached = True
    try:
        async for text in _frames(websocket):
            try:
                message = json.loads(text)
            except ValueError:
                await websocket.send_text(json.dumps(_rpc_error(protocol.PARSE_ERROR, "Parse error")))
                continue
            await websocket.send_text(json.dumps(await rpc(table, message, bound=session)))
    except WebSocketDisconnect:
        pass
    finally:
        table.close(session.id)
        with contextlib.suppress(Exception):
            await websocket.close()


# ---------------------------------------------------------------------------------------------- HTTP
async def _body(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        return {}
    return json.loads(raw)


def _detail(status: int, detail: Any) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def create_app(
    pool: TaskPool,
    *,
    limits: Limits | None = None,
    max_sessions: int = MAX_SESSIONS,
    idle_timeout_s: float = IDLE_TIMEOUT_S,
) -> Starlette:
    """The server's ASGI app; ``app.state.sessions`` is its :class:`SessionTable`."""
    table = SessionTable(pool, limits or Limits(), max_sessions, idle_timeout_s)

    async def reset(request: Request) -> JSONResponse:
        try:
            body = await _body(request)
        except ValueError:
            return _detail(422, "the body is a JSON object of reset arguments (task_id, seed, episode_id)")
        if not isinstance(body, dict):
            return _detail(422, "the body is a JSON object of reset arguments (task_id, seed, episode_id)")
        episode = Episode(pool, table.limits)
        try:
            return JSONResponse(await episode.reset(body))
        except ResetError as exc:
            return _detail(400, str(exc))
        finally:
            episode.close()

    async def step(request: Request) -> JSONResponse:
        try:
            body = await _body(request)
        except ValueError:
            body = None
        if not isinstance(body, dict) or "action" not in body:
            return _detail(422, "the body is {'action': {...}}: a list_tools or call_tool action")
        try:
            return JSONResponse(await Episode(pool, table.limits).step(body["action"]))
        except protocol.ActionError as exc:
            return _detail(422, str(exc))

    async def mcp(request: Request) -> JSONResponse:
        try:
            message = await _body(request)
        except ValueError:
            return JSONResponse(_rpc_error(protocol.PARSE_ERROR, "Parse error"))
        return JSONResponse(await rpc(table, message))

    async def state(request: Request) -> JSONResponse:
        return JSONResponse(Episode(pool, table.limits).state())

    async def schema(request: Request) -> JSONResponse:
        return JSONResponse(protocol.SCHEMAS)

    async def metadata(request: Request) -> JSONResponse:
        from importlib.metadata import version

        description = (
            f"coworkenv: {len(pool.ids)} workplace tasks over mock services (mail, tickets, CRM, payments, ...). "
            "reset(task_id=...) starts one; call its <service>__<tool> tools and reply(text) to the user; the final "
            "reply's reward is the grader's score."
        )
        return JSONResponse({"name": "coworkenv", "description": description, "version": version("coworkenv")})

    async def health(request: Request) -> JSONResponse:
        counts = {"sessions": len(table.open), "max_sessions": table.max_sessions, "rss_kib": rss_kib()}
        return JSONResponse({"status": "healthy", **counts})

    async def tasks(request: Request) -> JSONResponse:
        listed = [
            {"id": t.id, "services": list(t.services), "scenario": t.scenario, "difficulty": t.difficulty}
            for t in (pool.tasks[i] for i in pool.ids)
        ]
        return JSONResponse({"tasks": listed})

    async def ws(websocket: WebSocket) -> None:
        await _ws_session(table, websocket)

    async def ws_mcp(websocket: WebSocket) -> None:
        await _ws_mcp(table, websocket)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            group.start_soon(reaper, table)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                table.close_all()

    app = Starlette(
        routes=[
            Route("/reset", reset, methods=["POST"]),
            Route("/step", step, methods=["POST"]),
            Route("/state", state, methods=["GET"]),
            Route("/schema", schema, methods=["GET"]),
            Route("/metadata", metadata, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/tasks", tasks, methods=["GET"]),
            Route("/mcp", mcp, methods=["POST"]),
            WebSocketRoute("/mcp", ws_mcp),
            WebSocketRoute("/ws", ws),
        ],
        lifespan=lifespan,
    )
    app.state.sessions = table
    return app
