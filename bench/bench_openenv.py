"""The OpenEnv server under load, beside our in-process door: sessions per second and step latency with 1, 64 and
512 sessions in flight.

A session: open (a WebSocket to ``/ws``, or an in-process ``Episode``), reset to one of the shipped example tasks,
play its reference solution (each tool call and reply a step) until the episode is done and graded, close. Each
level runs ``--rounds`` sessions per slot in flight. The server is a real ``coworkenv openenv serve`` subprocess on
127.0.0.1 (its own process: the client and the server share the machine's cores); the in-process door plays the same
sessions through :class:`coworkenv.harness.openenv.episode.Episode` on one event loop (the direct door, no network).
Rewards are checked (every reference scores 1.0).

Reproduce:  python bench/bench_openenv.py [--levels 1 64 512] [--rounds 2]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.agents.registry import make_agent
from coworkenv.harness.episode import run_episode
from coworkenv.harness.openenv.client import AsyncOpenEnvSession
from coworkenv.harness.openenv.episode import Episode, TaskPool
from coworkenv.synth.contract.library import examples_dir
from coworkenv.synth.contract.taskfile import load_task

Script = tuple[str, list[tuple[str, dict[str, Any]]]]


def scripts() -> list[Script]:
    """Each example task's reference solution as (name, arguments) steps, ending with a reply."""

    async def replay(task: Any) -> Any:
        return await run_episode(task, make_agent("replay"))

    out = []
    for path in sorted(examples_dir().glob("*.json")):
        task = load_task(path)
        steps: list[tuple[str, dict[str, Any]]] = []
        for message in anyio.run(replay, task).messages:
            if message.role == "assistant":
                steps += [(c.name, dict(c.arguments)) for c in message.tool_calls]
                if not message.tool_calls:
                    steps.append(("reply", {"text": message.content}))
        steps.append(("reply", {"text": "Done."}))
        out.append((task.id, steps))
    return out


class Tally:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.sessions = 0
        self.rewards: list[float] = []


async def play_over_socket(url: str, script: Script, tally: Tally) -> None:
    task_id, steps = script
    async with AsyncOpenEnvSession(url) as session:
        await session.reset(task_id=task_id)
        for name, arguments in steps:
            t0 = time.perf_counter()
            result = await session.call_tool(name, arguments)
            tally.latencies.append(time.perf_counter() - t0)
            if result["done"]:
                tally.rewards.append(result["reward"])
                break
    tally.sessions += 1


async def play_in_process(pool: TaskPool, script: Script, tally: Tally) -> None:
    task_id, steps = script
    episode = Episode(pool)
    try:
        await episode.reset({"task_id": task_id})
        for name, arguments in steps:
            t0 = time.perf_counter()
            result = await episode.call_tool(name, arguments)
            tally.latencies.append(time.perf_counter() - t0)
            await anyio.lowlevel.checkpoint()  # let the other sessions in, as a socket would
            if result["done"]:
                tally.rewards.append(result["reward"])
                break
    finally:
        episode.close()
    tally.sessions += 1


async def level(play: Any, target: Any, plays: list[Script], in_flight: int, rounds: int) -> tuple[Tally, float]:
    tally = Tally()

    async def slot(k: int) -> None:
        for r in range(rounds):
            await play(target, plays[(k + r) % len(plays)], tally)

    t0 = time.perf_counter()
    with anyio.fail_after(600):
        async with anyio.create_task_group() as group:
            for k in range(in_flight):
                group.start_soon(slot, k)
    return tally, time.perf_counter() - t0


def start_server(tasks: Path, max_sessions: int) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "coworkenv.train.cli", "openenv", "serve", "--tasks", str(tasks), "--port", "0"]
    process = subprocess.Popen(
        [*command, "--max-sessions", str(max_sessions)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    found: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            match = re.search(r"on (http://\S+)", line)
            if match and not found:
                found.append(match.group(1))

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + 60
    while not found and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    if not found:
        process.kill()
        raise SystemExit("the server did not start")
    return process, found[0]


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 64, 512])
    parser.add_argument("--rounds", type=int, default=2, help="sessions each slot in flight plays, one after another")
    args = parser.parse_args()
    plays = scripts()
    pool = TaskPool([load_task(p) for p in sorted(examples_dir().glob("*.json"))])
    process, url = start_server(examples_dir(), max(args.levels))
    rows = []
    try:
        for in_flight in args.levels:
            anyio.run(level, play_over_socket, url, plays, min(in_flight, 8), 1)  # warm the server's baselines
            anyio.run(level, play_in_process, pool, plays, min(in_flight, 8), 1)
            remote, remote_s = anyio.run(level, play_over_socket, url, plays, in_flight, args.rounds)
            local, local_s = anyio.run(level, play_in_process, pool, plays, in_flight, args.rounds)
            for tally in (remote, local):
                assert tally.rewards and all(r == 1.0 for r in tally.rewards), tally.rewards
            rows.append((in_flight, remote, remote_s, local, local_s))
    finally:
        process.terminate()
        process.wait(timeout=10)
    steps = statistics.mean(len(s) for _, s in plays)
    print(f"{len(plays)} example tasks, ~{steps:.1f} steps a session (reference + reply), {args.rounds} rounds a slot")
    header = "in flight | OpenEnv sessions/s  p50 ms  p99 ms | in-process sessions/s  p50 ms  p99 ms | ratio s/s  p50"
    print(header)
    print("-" * len(header))
    for in_flight, remote, remote_s, local, local_s in rows:
        remote_rate, local_rate = remote.sessions / remote_s, local.sessions / local_s
        print(
            f"{in_flight:9d} | {remote_rate:18.1f} {ms(remote.latencies, 0.5):7.2f} {ms(remote.latencies, 0.99):7.2f} |"
            f" {local_rate:21.1f} {ms(local.latencies, 0.5):7.2f} {ms(local.latencies, 0.99):7.2f} |"
            f" {local_rate / remote_rate:8.1f}x {ms(remote.latencies, 0.5) / ms(local.latencies, 0.5):5.1f}x"
        )
    print("ratio: in-process over OpenEnv (sessions/s), OpenEnv over in-process (p50 step latency)")
    print(f"reproduce: python bench/bench_openenv.py --levels {' '.join(map(str, args.levels))} --rounds {args.rounds}")


if __name__ == "__main__":
    main()
