"""Services benchmark: environment creation and the latency of one tool call through each door.

Run:  python bench/bench_services.py            (about a minute on 2 cores)
      python bench/bench_services.py --quick    (fewer calls)

Prints figures measured side by side in this one run, and ratios to the direct in-process door.
Nothing here passes or fails: it reports.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from coworkenv.servers import Environment

EXAMPLES = Path(__file__).resolve().parents[1] / "servers/examples"
FOUR = ("email", "tickets", "crm", "payments")  # the design card's four services
UNIQUE = {("email", "mailboxes"), ("email", "labels")}  # one per address: not copied
CALL = ("tickets", "get_ticket", {"ticket_id": "tkt_1001"})


def scaled_seeds(target: int) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The example seeds of every service, copied with fresh ids until they hold about `target` records."""
    base = {name: json.loads((EXAMPLES / f"{name}.json").read_text()) for name in FOUR}
    total = sum(len(rows) for seed in base.values() for rows in seed.values())
    copies = max(1, round(target / total))
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name, seed in base.items():
        out[name] = {
            t: [
                r if i == 0 else {**r, "id": f"{r['id']}_{i}"}
                for i in range(1 if (name, t) in UNIQUE else copies)
                for r in rows
            ]
            for t, rows in seed.items()
        }
    return out


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


async def atimed(fn: Callable[[], Awaitable[Any]], n: int, warmup: int = 20) -> list[float]:
    for _ in range(warmup):
        await fn()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def bench_calls(n: int, n_remote: int, tmp: Path) -> dict[str, list[float]]:
    service, tool, args = CALL
    seed = json.loads((EXAMPLES / f"{service}.json").read_text())
    results: dict[str, list[float]] = {}
    with Environment.create({service: seed}) as env:
        results["direct (in-process door)"] = await atimed(lambda: env.call(service, tool, args), n)
        async with Client(env.server(service)) as client:
            results["MCP in-process Client"] = await atimed(lambda: client.call_tool(tool, args), n)
    db = tmp / "stdio.db"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "coworkenv.servers",
            "serve",
            service,
            "--db",
            str(db),
            "--seed",
            str(EXAMPLES / f"{service}.json"),
        ],
    )
    async with Client(params) as client:
        results["MCP stdio"] = await atimed(lambda: client.call_tool(tool, args), n_remote)
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "coworkenv.servers",
            "serve",
            service,
            "--db",
            str(tmp / "http.db"),
            "--seed",
            str(EXAMPLES / f"{service}.json"),
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        await anyio.to_thread.run_sync(proc.stderr.readline)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            results["MCP streamable HTTP"] = await atimed(lambda: client.call_tool(tool, args), n_remote)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return results


def bench_sqlite_hop(n: int) -> dict[str, float]:
    """Why the kit calls sqlite3 on the event loop: one SELECT through aiosqlite's thread vs directly."""
    out: dict[str, float] = {}
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    conn.executemany("INSERT INTO t (v) VALUES (?)", [(str(i),) for i in range(100)])
    out["sqlite3 SELECT by id"] = statistics.median(
        timed(lambda: conn.execute("SELECT * FROM t WHERE id = 7").fetchall(), n)
    )
    try:
        import aiosqlite
    except ImportError:
        return out

    async def run() -> float:
        async with aiosqlite.connect(":memory:") as db:
            await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
            samples = await atimed(lambda: db.execute_fetchall("SELECT * FROM t WHERE id = 7"), n)
            return statistics.median(samples)

    out["aiosqlite SELECT by id"] = anyio.run(run)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--records", type=int, default=500)
    opts = parser.parse_args()
    n, n_remote, n_env = (300, 100, 30) if opts.quick else (3000, 1000, 200)

    seeds = scaled_seeds(opts.records)
    records = sum(len(rows) for seed in seeds.values() for rows in seed.values())
    create = timed(lambda: Environment.create(seeds).close(), n_env)
    with Environment.create(seeds) as pristine:
        fork = timed(lambda: pristine.fork().close(), n_env)

    with tempfile.TemporaryDirectory() as tmp:
        calls = anyio.run(bench_calls, n, n_remote, Path(tmp))
    hop = bench_sqlite_hop(n)

    print(f"coworkenv services benchmark — {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(f"\nEnvironment of {len(seeds)} services ({', '.join(seeds)}) from {records} seed records, {n_env} runs:")
    c50, f50 = statistics.median(create), statistics.median(fork)
    print(f"  create from seed   p50 {c50:7.3f} ms   p99 {pct(create, 0.99):7.3f} ms   (target ≤ 5 ms)")
    print(
        f"  fork of a seeded   p50 {f50:7.3f} ms   p99 {pct(fork, 0.99):7.3f} ms   ({c50 / f50:.0f}x faster than create)"
    )
    service, tool, _ = CALL
    print(f"\nOne tool call ({service}.{tool}, audited, in a transaction):")
    base = statistics.median(calls["direct (in-process door)"])
    for door, samples in calls.items():
        p50 = statistics.median(samples)
        print(
            f"  {door:<26} p50 {p50:7.3f} ms   p99 {pct(samples, 0.99):7.3f} ms   {p50 / base:6.1f}x direct  (n={len(samples)})"
        )
    if hop:
        print("\nOne SELECT, for the choice of driver:")
        first = next(iter(hop.values()))
        for name, value in hop.items():
            print(f"  {name:<26} p50 {value:7.4f} ms   {value / first:6.1f}x sqlite3")
    print("\nReproduce: python bench/bench_services.py" + (" --quick" if opts.quick else ""))


if __name__ == "__main__":
    main()
