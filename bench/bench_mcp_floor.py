"""The MCP doors against the SDK's floor (used by ``bench_calls.py``).

The floor is a no-op tool on a bare ``MCPServer``; ours is the same no-op as a kit tool on a ``ServiceServer``
(what the kit adds per request: dispatcher, transaction, audit row), and a real read (``tickets.get_ticket``)
served by ``coworkenv serve``. In-process, stdio and streamable HTTP, measured side by side.

As a script it prints the comparison, with ours before the short ``tools/call`` route (the SDK's own handler
building its per-call ``Context``) measured in the same run:

    python bench/bench_mcp_floor.py [--quick]

or is one of the servers: ``python bench/bench_mcp_floor.py floor|ours|ours-sdk stdio|http [PORT]``.
"""

import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
EXAMPLES = HERE.parents[1] / "servers/examples"


def floor_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server: Any = MCPServer("floor", log_level="WARNING")

    @server.tool()
    async def noop() -> str:
        """Does nothing."""
        return "ok"

    return server


def noop_service() -> Any:
    from pydantic import BaseModel

    from coworkenv.servers.kit import Record, Service, Table, tool

    class Thing(Record):
        pass

    class Done(BaseModel):
        ok: bool

    @tool(read_only=True, name="noop")
    def noop(ctx: Any) -> Done:
        """Does nothing."""
        return Done(ok=True)

    return Service("bench", "Bench", "A no-op.", (Table("things", Thing, "th_"),), (noop,))


def ours_server(sdk_route: bool = False) -> Any:
    """Ours; with ``sdk_route``, calls go through the SDK's own ``tools/call`` handler (as before issue 15)."""
    from mcp.server.mcpserver import MCPServer

    from coworkenv.servers.kit import ServiceServer, ServiceState

    class SdkRoute(ServiceServer):
        _handle_call_tool = MCPServer._handle_call_tool  # type: ignore[assignment]

    return (SdkRoute if sdk_route else ServiceServer)(ServiceState.open(noop_service()))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _timed(call: Callable[[], Awaitable[Any]], n: int, warmup: int = 30) -> list[float]:
    for _ in range(warmup):
        await call()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await call()
        out.append((time.perf_counter() - t) * 1000)
    return out


@asynccontextmanager
async def _http(cmd: list[str], port: int) -> AsyncIterator[str]:
    import anyio

    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with anyio.fail_after(120):
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    await anyio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def _measure(n: int, n_remote: int, tmp: Path, before: bool = False) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters

    me = [sys.executable, str(HERE)]
    get = ("get_ticket", {"ticket_id": "tkt_1001"})
    serve = [sys.executable, "-m", "coworkenv.servers", "serve", "tickets", "--seed", str(EXAMPLES / "tickets.json")]
    out: dict[str, list[float]] = {}
    for _ in range(2):  # alternate, so that both see the same load
        in_process = [
            ("floor in-process", floor_server(), ("noop", {})),
            ("ours no-op in-process", ours_server(), ("noop", {})),
        ]
        if before:
            in_process.append(("ours no-op SDK route in-process", ours_server(sdk_route=True), ("noop", {})))
        for key, server, (tool, args) in in_process:
            async with Client(server) as c:
                out.setdefault(key, []).extend(await _timed(lambda c=c, t=tool, a=args: c.call_tool(t, a), n // 2))
        from coworkenv.servers import Environment

        with Environment.create({"tickets": __import__("json").loads((EXAMPLES / "tickets.json").read_text())}) as env:
            async with Client(env.server("tickets")) as c:
                key = "ours get_ticket in-process"
                out.setdefault(key, []).extend(await _timed(lambda c=c: c.call_tool(*get), n // 2))
        stdio = [
            ("floor stdio", [*me, "floor", "stdio"], ("noop", {})),
            ("ours no-op stdio", [*me, "ours", "stdio"], ("noop", {})),
            ("ours get_ticket stdio", [*serve, "--db", str(tmp / f"s{time.time_ns()}.db")], get),
        ]
        if before:
            stdio.insert(2, ("ours no-op SDK route stdio", [*me, "ours-sdk", "stdio"], ("noop", {})))
        for key, cmd, (tool, args) in stdio:
            async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:])) as c:
                calls = await _timed(lambda c=c, t=tool, a=args: c.call_tool(t, a), n_remote // 2)
                out.setdefault(key, []).extend(calls)
        for key, cmd, (tool, args) in stdio:
            port = free_port()
            if "serve" in cmd:
                http = [*cmd, "--transport", "http", "--port", str(port)]
            else:
                http = [*cmd[:-1], "http", str(port)]
            if "serve" in cmd:
                http[http.index("--db") + 1] = str(tmp / f"h{time.time_ns()}.db")
            async with _http(http, port) as url, Client(url) as c:
                calls = await _timed(lambda c=c, t=tool, a=args: c.call_tool(t, a), n_remote // 2)
                out.setdefault(key.replace("stdio", "http"), []).extend(calls)
    return out


def floor_figures(n: int, n_remote: int, tmp: Path, before: bool = False) -> dict[str, list[float]]:
    import anyio

    return anyio.run(_measure, n, n_remote, tmp, before)


def report(quick: bool) -> None:
    import tempfile

    from bench_replay import p50

    n, n_remote = (600, 200) if quick else (4000, 1200)
    with tempfile.TemporaryDirectory() as tmp:
        figures = floor_figures(n, n_remote, Path(tmp), before=True)
    print("MCP doors vs the SDK floor (a no-op tool on a bare MCPServer), alternated in one run; p50 per call:")
    for transport in ("in-process", "stdio", "http"):
        floor = p50(figures[f"floor {transport}"])
        print(f"  SDK floor {transport:<32} {floor:7.4f} ms")
        for what in ("no-op SDK route", "no-op", "get_ticket"):
            samples = figures.get(f"ours {what} {transport}")
            if samples:
                label = f"ours {what} {transport}" + (" (before)" if "SDK" in what else "")
                print(f"  {label:<42} {p50(samples):7.4f} ms   {p50(samples) / floor:5.2f}x of floor")
    print(f"\nReproduce: python bench/bench_mcp_floor.py{' --quick' if quick else ''}")


def main() -> None:
    if len(sys.argv) < 3:
        sys.path.insert(0, str(HERE.parent))
        report("--quick" in sys.argv)
        return
    kind, transport = sys.argv[1], sys.argv[2]
    server = floor_server() if kind == "floor" else ours_server(sdk_route=kind == "ours-sdk")
    if transport == "stdio":
        server.run("stdio")
        return
    import anyio
    import uvicorn

    port = int(sys.argv[3])
    app = server.streamable_http_app(host="127.0.0.1") if kind == "floor" else server.http_app("127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    anyio.run(uvicorn.Server(config).serve)


if __name__ == "__main__":
    main()
