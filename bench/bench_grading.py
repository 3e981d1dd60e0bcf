"""Grading and validation cost on the shipped example tasks.

For each task: the time to grade one trajectory (the reference run's final state, audit log and answer,
with the collateral-damage guard diffing every table), p50 and p99, for the reference's own reply and
for the same trajectory with a 1 MB reply (the reply cap keeps it in milliseconds), and the time of a full
validation (static checks, then execution: reference, no-op, each forbidden
example, every mutation) through the direct door and through the MCP in-memory client.

Reproduce:  python bench/bench_grading.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import anyio

from coworkenv.synth.contract.grader import grade
from coworkenv.synth.contract.library import load_examples
from coworkenv.synth.contract.runner import Workbench, run_steps
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.validation.static import validate_static
from coworkenv.synth.contract.validation.validate import validate_task


def samples_ms(fn: Callable[[], Any], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return sorted(samples)


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    return statistics.median(samples_ms(fn, repeat))


def p99(samples: list[float]) -> float:
    return samples[min(len(samples) - 1, int(len(samples) * 0.99))]


MEGABYTE_REPLY = ("The totals are 1, 2, 3 and $4,500.00; see tkt_1001 and ch_1037. " * 16_000)[:1_000_000]


async def median_ms_async(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def measure(task: Task, repeat: int) -> dict[str, Any]:
    bench = Workbench.of(task)  # the baseline (initial state, expected changes), built once as a run does
    trial = await run_steps(bench, task.reference_solution)
    baseline = bench.baseline
    normal = samples_ms(lambda: grade(baseline, trial.state, trial.audit, trial.messages), repeat * 40)
    big = samples_ms(lambda: grade(baseline, trial.state, trial.audit, [*trial.messages, MEGABYTE_REPLY]), repeat * 10)
    static_ms = median_ms(lambda: validate_static(task), repeat * 5)
    direct_ms = await median_ms_async(lambda: validate_task(task), repeat)
    mcp_ms = await median_ms_async(lambda: validate_task(task, via_mcp=True), max(1, repeat // 3))
    report = await validate_task(task)
    runs = 3 + len(task.forbidden_actions) + len(report.execution.mutations if report.execution else [])
    return {
        "task": task.id,
        "audit_rows": len(trial.audit),
        "grade_ms": statistics.median(normal),
        "grade_p99": p99(normal),
        "big_ms": statistics.median(big),
        "big_p99": p99(big),
        "static_ms": static_ms,
        "runs": runs,
        "direct_ms": direct_ms,
        "mcp_ms": mcp_ms,
        "valid": report.valid,
    }


async def main(repeat: int) -> None:
    rows = [await measure(task, repeat) for task in load_examples()]
    width = max(len(r["task"]) for r in rows)
    print(
        f"{'task':<{width}}  rows  grade p50/p99 (ms)  1MB reply p50/p99 (ms)  static   runs  validate(direct)"
        "  validate(mcp)  mcp/direct  valid"
    )
    for r in rows:
        print(
            f"{r['task']:<{width}}  {r['audit_rows']:>4}  {r['grade_ms']:>8.3f} / {r['grade_p99']:<7.3f}"
            f"  {r['big_ms']:>10.3f} / {r['big_p99']:<9.3f}  {r['static_ms']:>5.2f} ms  {r['runs']:>4}"
            f"  {r['direct_ms']:>12.1f} ms  {r['mcp_ms']:>10.1f} ms  {r['mcp_ms'] / r['direct_ms']:>9.1f}x  {r['valid']}"
        )
    total = {k: sum(r[k] for r in rows) for k in ("grade_ms", "big_ms", "static_ms", "direct_ms", "mcp_ms", "runs")}
    print(
        f"\n{len(rows)} tasks: grading {total['grade_ms'] / len(rows):.3f} ms per trajectory (mean of p50s; worst p99 "
        f"{max(r['grade_p99'] for r in rows):.3f} ms), {total['big_ms'] / len(rows):.3f} ms with a 1 MB reply (worst "
        f"p99 {max(r['big_p99'] for r in rows):.3f} ms, {total['big_ms'] / total['grade_ms']:.1f}x); full validation "
        f"{total['direct_ms'] / len(rows):.1f} ms per task direct ({total['direct_ms'] / total['runs']:.2f} ms per run), "
        f"{total['mcp_ms'] / len(rows):.1f} ms over MCP ({total['mcp_ms'] / total['direct_ms']:.1f}x); "
        f"static checks {total['static_ms'] / len(rows):.2f} ms per task."
    )
    print("reproduce: python bench/bench_grading.py --repeat", repeat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions of each validation (default 5)")
    args = parser.parse_args()
    anyio.run(main, args.repeat)
