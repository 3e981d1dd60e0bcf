"""Procedural synthesis speed: tasks per second with full validation, by number of worker processes.

Each accepted task has been built by its family and validated statically and by execution (reference,
alternative solutions, no-op, every forbidden example, the mutations of the reference, and the adversaries:
spray, dump, dump with numbers, emptied reply, random arguments, reference plus one sensitive call), exactly as
``coworkenv synth`` does. Also shown: building alone (no validation), so the share of validation in the cost is
visible, and tasks per CPU-second (what the rate would be per idle core: the machine may be shared).

Reproduce:  python bench/bench_synth.py [--count 200] [--workers 1 2] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from collections import defaultdict

import anyio

from coworkenv.synth.contract.validation.validate import validate_task
from coworkenv.synth.generate.plan import coverage_plan, load_plan
from coworkenv.synth.generate.procedural import build_task, derive_seed
from coworkenv.synth.generate.synthesize import synthesize


def build_only(count: int, seed: int) -> tuple[float, dict[str, list[float]]]:
    """Seconds to build ``count`` tasks without validating them, and validation ms per family (one process)."""
    cells = [c for c in coverage_plan(load_plan(), count, seed) for _ in range(c.quota)]
    started = time.perf_counter()
    tasks = [build_task(c, derive_seed(seed, c.key, i)) for i, c in enumerate(cells)]
    built = time.perf_counter() - started
    per_family: dict[str, list[float]] = defaultdict(list)

    async def validate_all() -> None:
        for task in tasks[: min(len(tasks), 85)]:
            t0 = time.perf_counter()
            await validate_task(task)
            per_family[str(task.metadata["family"])].append((time.perf_counter() - t0) * 1000)

    anyio.run(validate_all)
    return built, per_family


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the worker processes)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(count: int, workers: list[int], seed: int) -> None:
    plan = load_plan()
    print(f"procedural synthesis of {count} tasks, default plan, seed {seed}, {os.cpu_count()} CPU(s) here\n")
    print(f"load average before: {os.getloadavg()[0]:.2f} (other processes compete for the CPUs when it is high)")
    print(
        f"{'workers':>7}  {'seconds':>8}  {'tasks/s':>8}  {'cpu s':>7}  {'tasks/cpu-s':>11}  {'accepted':>8}  rejected"
    )
    rates = {}
    for w in workers:
        started, cpu = time.perf_counter(), cpu_seconds()
        result = synthesize(plan, count=count, seed=seed, workers=w)
        seconds, used = time.perf_counter() - started, cpu_seconds() - cpu
        accepted = result.report["accepted"]
        rates[w] = accepted / seconds
        print(
            f"{w:>7}  {seconds:>8.2f}  {rates[w]:>8.1f}  {used:>7.2f}  {accepted / used:>11.1f}  {accepted:>8}  "
            f"{result.report['rejected']['drafts']}"
        )
    print("(tasks/cpu-s times the number of idle cores is the rate those cores reach)")
    built, per_family = build_only(count, seed)
    print(f"\nbuilding alone: {count / built:.0f} tasks/s ({built / count * 1000:.2f} ms a task, no validation)")
    print("full validation per task, by family (ms, one process):")
    for family, samples in sorted(per_family.items(), key=lambda kv: -statistics.mean(kv[1])):
        print(f"  {family:<36} {statistics.mean(samples):>7.1f}  (n={len(samples)})")
    if len(rates) > 1:
        low, high = min(rates), max(rates)
        print(f"\n{high} workers vs {low}: {rates[high] / rates[low]:.2f}x")
    print(
        f"\nreproduce: python bench/bench_synth.py --count {count} --workers {' '.join(map(str, workers))} --seed {seed}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(args.count, args.workers, args.seed)
