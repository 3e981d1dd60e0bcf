"""Start-up of a stdio server: from spawning it to its ``initialize`` answer, and on to its ``tools/list`` answer.

An MCP client (Claude Code among them) starts each stdio server as a process and waits for both answers before it
lists the server's tools, so start-up is import time plus what ``serve`` does before it reads its first line.
Measured side by side, each the median of ``--runs`` spawns (a fresh database each, seeded from the example):

- ``floor``: a bare ``mcp.server.mcpserver.MCPServer`` with one tool, run over stdio (the SDK's own cost);
- ``coworkenv serve``: the console script, ``coworkenv serve tickets --db DB --seed servers/examples/tickets.json``;
- ``python -m coworkenv.servers serve``: the services' own command line, same arguments;
- ``quick start``: ``python -m coworkenv.servers.quick serve``, same arguments, its answers recorded by one start
  before the runs (what every start after a service's first one does: :mod:`coworkenv.servers.quick`);
- and, for the record, the import of ``coworkenv.servers`` alone and of the interpreter alone (``-c pass``).

Each row also gives the child's CPU time (user + system, from ``wait4``), which a busy machine inflates less
than wall time; the ratio column is against the floor's median. Timings are for reading, not a test.

Reproduce:  python bench/bench_startup.py [--runs 9] [--service tickets]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "servers" / "examples"
FLOOR = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("floor", log_level="WARNING")
@server.tool()
async def noop() -> str:
    '''Does nothing.'''
    return "ok"
server.run("stdio")
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench_startup", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def _line(message: dict[str, object]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def _answer(stdout: object, want: int) -> dict[str, object]:
    """The next JSON-RPC answer with id ``want`` (notifications and log lines before it are skipped)."""
    while True:
        raw = stdout.readline()  # type: ignore[attr-defined]
        if not raw:
            raise RuntimeError("the server closed stdout before answering")
        message = json.loads(raw)
        if message.get("id") == want:
            return dict(message)


def spawn_once(command: list[str]) -> tuple[float, float, float]:
    """Seconds from spawn to the ``initialize`` answer and to the ``tools/list`` answer, and the child's CPU
    seconds over its whole life (it exits when its stdin closes)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_line(INITIALIZE))
    proc.stdin.flush()
    init = _answer(proc.stdout, 1)
    initialized = time.perf_counter() - start
    if "result" not in init:
        raise RuntimeError(f"initialize failed: {init}")
    proc.stdin.write(_line(INITIALIZED) + _line(LIST))
    proc.stdin.flush()
    listed = _answer(proc.stdout, 2)
    tools_listed = time.perf_counter() - start
    if "result" not in listed:
        raise RuntimeError(f"tools/list failed: {listed}")
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return initialized, tools_listed, usage.ru_utime + usage.ru_stime


def run_once(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of a command that exits by itself."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command} failed")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def coworkenv_script() -> str:
    found = Path(sys.executable).with_name("coworkenv")
    return str(found) if found.exists() else (shutil.which("coworkenv") or "coworkenv")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="spawns per row (the median is shown)")
    parser.add_argument("--service", default="tickets")
    args = parser.parse_args()
    seed = EXAMPLES / f"{args.service}.json"
    work = Path(tempfile.mkdtemp(prefix="bench_startup-"))
    counter = iter(range(10**9))

    def serve(head: list[str]) -> list[str]:
        db = work / f"{next(counter)}.db"  # a fresh database each spawn: serve seeds it before it answers
        return [*head, "serve", args.service, "--db", str(db), "--seed", str(seed)]

    servers = {
        "floor: bare MCPServer, one tool": lambda: [sys.executable, "-c", FLOOR],
        "coworkenv serve": lambda: serve([coworkenv_script()]),
        "python -m coworkenv.servers serve": lambda: serve([sys.executable, "-m", "coworkenv.servers"]),
        "quick start, answers recorded": lambda: serve([sys.executable, "-m", "coworkenv.servers.quick"]),
    }
    os.environ["COWORKENV_STDIO_CACHE"] = str(work / "records")  # the quick rows' record, made by one start first
    spawn_once(servers["quick start, answers recorded"]())
    imports = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import coworkenv.servers": [sys.executable, "-c", "import coworkenv.servers"],
        "import mcp": [sys.executable, "-c", "import mcp"],
    }
    rows: dict[str, tuple[float, float | None, float]] = {}
    samples: dict[str, list[tuple[float, ...]]] = {name: [] for name in [*servers, *imports]}
    for _ in range(args.runs):  # interleaved, so a burst of load falls on every row alike
        for name, command in servers.items():
            samples[name].append(spawn_once(command()))
        for name, line in imports.items():
            samples[name].append(run_once(line))
    for name in servers:
        init, listed, cpu = (statistics.median(column) for column in zip(*samples[name], strict=True))
        rows[name] = (init, listed, cpu)
    for name in imports:
        wall, cpu = (statistics.median(column) for column in zip(*samples[name], strict=True))
        rows[name] = (wall, None, cpu)
    shutil.rmtree(work, ignore_errors=True)

    floor = rows["floor: bare MCPServer, one tool"][0]
    print(f"stdio start-up, median of {args.runs} spawns each ({os.cpu_count()} cores, load {os.getloadavg()[0]:.2f})")
    print(f"{'':38} {'initialize':>11} {'tools/list':>11} {'child CPU':>10} {'÷ floor':>8}")
    for name, (first, listed, cpu) in rows.items():
        shown = f"{listed:10.3f}s" if listed is not None else f"{'(exits)':>11}"
        print(f"{name:38} {first:10.3f}s {shown} {cpu:9.3f}s {first / floor:7.2f}x")
    print("(import rows: wall time to exit in the 'initialize' column)")
    print(f"reproduce: python bench/bench_startup.py --runs {args.runs} --service {args.service}")


if __name__ == "__main__":
    main()
