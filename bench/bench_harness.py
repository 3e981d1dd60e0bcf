"""Harness throughput and memory with the ``replay`` agent on the shipped example tasks.

- episodes per second at concurrency 1 and 32: bare episodes (fork, play, grade; nothing written) and full
  runs (``run_tasks``: plus the trajectory appended with fsync, one writer);
- the cost of the GiGPO anchors (a state hash before every tool call): episodes per second without them;
- the same with simulated model latency (up to 20 ms a step), where concurrency pays;
- memory per concurrent episode: N replay episodes held open at once (each waits at the end until all
  have started), RSS and tracemalloc deltas divided by N.

Reproduce:  python bench/bench_harness.py [--trials N] [--hold N]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import anyio

from coworkenv.harness.agents.base import EpisodeIO
from coworkenv.harness.agents.builtin import ReplayAgent
from coworkenv.harness.episode import EpisodeConfig, run_episode
from coworkenv.harness.faults import FaultInjector
from coworkenv.harness.run import RunOptions, run_tasks
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.library import load_examples
from coworkenv.synth.contract.task import Task


def rss_kib() -> int:
    """Current resident set size (Linux /proc), else the peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def bare(tasks: list[Task], trials: int, concurrency: int, anchors: bool = True, latency: float = 0.0) -> float:
    """Episodes per second: fork, replay, grade; nothing written. ``latency``: up to that many seconds of
    simulated model latency before each step (the fault injector's, with no errors)."""
    baselines = {t.id: Baseline.of(t) for t in tasks}
    work = iter([(t, k) for t in tasks for k in range(trials)])
    config = EpisodeConfig(anchors=anchors)
    agent = ReplayAgent()
    done = 0

    async def worker() -> None:
        nonlocal done
        for task, trial in work:
            faults = FaultInjector(latency_s=latency, seed=trial) if latency else None
            record = await run_episode(
                task, agent, trial=trial, baseline=baselines[task.id], config=config, faults=faults
            )
            assert record.grade is not None and record.grade.score == 1.0, task.id
            done += 1

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    elapsed = time.perf_counter() - started
    for baseline in baselines.values():
        baseline.close()
    return done / elapsed


async def full_run(tasks: list[Task], trials: int, concurrency: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        options = RunOptions(trials=trials, concurrency=concurrency, progress=False)
        report = await run_tasks(tasks, ReplayAgent(), tmp, options=options)
        assert report.statuses == {"completed": len(tasks) * trials}
        return report.episodes_per_s


class HeldReplay(ReplayAgent):
    """Replays, then waits until every episode of the batch is alive at once."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.started = 0
        self.all_in = anyio.Event()
        self.measured = anyio.Event()

    async def run_episode(self, io: EpisodeIO) -> None:
        await super().run_episode(io)
        self.started += 1
        if self.started == self.n:
            self.all_in.set()
        await self.measured.wait()


async def memory_per_episode(tasks: list[Task], n: int) -> tuple[float, float]:
    """(RSS KiB, tracemalloc KiB) per concurrently open episode."""
    agent = HeldReplay(n)
    baselines = {t.id: Baseline.of(t) for t in tasks}
    base_rss = rss_kib()
    tracemalloc.start()
    base_py = tracemalloc.get_traced_memory()[0]
    async with anyio.create_task_group() as tg:
        for i in range(n):
            task = tasks[i % len(tasks)]
            tg.start_soon(lambda t=task, k=i: run_episode(t, agent, trial=k, baseline=baselines[t.id]))
        await agent.all_in.wait()
        rss = rss_kib() - base_rss
        py = (tracemalloc.get_traced_memory()[0] - base_py) / 1024
        agent.measured.set()
    tracemalloc.stop()
    for baseline in baselines.values():
        baseline.close()
    return rss / n, py / n


async def main(trials: int, hold: int) -> None:
    tasks = load_examples()
    episodes = len(tasks) * trials
    await bare(tasks, 1, 1)  # warm-up: schemas, imports
    print(f"replay on {len(tasks)} example tasks × {trials} trials = {episodes} episodes (direct door)")
    for c in (1, 32):
        print(f"  concurrency {c:>2}: {await bare(tasks, trials, c):7.1f} episodes/s bare (fork + play + grade)")
        print(f"  concurrency {c:>2}: {await full_run(tasks, trials, c):7.1f} episodes/s full run (+ fsync'd append)")
    print(f"  without anchors : {await bare(tasks, trials, 1, anchors=False):7.1f} episodes/s bare, concurrency 1")
    few = max(1, trials // 5)
    print(f"with up to 20 ms of simulated model latency per step ({len(tasks) * few} episodes):")
    for c in (1, 32):
        print(f"  concurrency {c:>2}: {await bare(tasks, few, c, latency=0.02):7.1f} episodes/s bare")
    rss, py = await memory_per_episode(tasks, hold)
    print(f"memory per concurrent episode ({hold} open at once): {rss:.0f} KiB RSS, {py:.0f} KiB Python heap")
    print(f"command: python bench/bench_harness.py --trials {trials} --hold {hold}  (python {sys.version.split()[0]})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=25, help="trials per example task")
    parser.add_argument("--hold", type=int, default=256, help="episodes held open at once for the memory figure")
    args = parser.parse_args()
    anyio.run(main, args.trials, args.hold)
