"""Grading and validation cost on the shipped example tasks.

For each task: the time to grade one trajectory (the reference run's final state, audit log and answer),
and the time of a full validation (static checks, then execution: reference, no-op, each forbidden
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

from coworkenv.synth.grader import grade
from coworkenv.synth.library import load_examples
from coworkenv.synth.runner import run_steps
from coworkenv.synth.task import Task
from coworkenv.synth.validate import validate_task
from coworkenv.synth.validate_static import validate_static


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def median_ms_async(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def measure(task: Task, repeat: int) -> dict[str, Any]:
    trial = await run_steps(task, task.reference_solution)
    grade_ms = median_ms(lambda: grade(task, trial.state, trial.audit, trial.messages), repeat * 20)
    static_ms = median_ms(lambda: validate_static(task), repeat * 5)
    direct_ms = await median_ms_async(lambda: validate_task(task), repeat)
    mcp_ms = await median_ms_async(lambda: validate_task(task, via_mcp=True), max(1, repeat // 3))
    report = await validate_task(task)
    runs = 3 + len(task.forbidden_actions) + len(report.execution.mutations if report.execution else [])
    return {
        "task": task.id,
        "audit_rows": len(trial.audit),
        "grade_ms": grade_ms,
        "static_ms": static_ms,
        "runs": runs,
        "direct_ms": direct_ms,
        "mcp_ms": mcp_ms,
        "valid": report.valid,
    }


async def main(repeat: int) -> None:
    rows = [await measure(task, repeat) for task in load_examples()]
    width = max(len(r["task"]) for r in rows)
    print(f"{'task':<{width}}  rows  grade/traj  static   runs  validate(direct)  validate(mcp)  mcp/direct  valid")
    for r in rows:
        print(
            f"{r['task']:<{width}}  {r['audit_rows']:>4}  {r['grade_ms']:>7.3f} ms  {r['static_ms']:>5.2f} ms  {r['runs']:>4}"
            f"  {r['direct_ms']:>12.1f} ms  {r['mcp_ms']:>10.1f} ms  {r['mcp_ms'] / r['direct_ms']:>9.1f}x  {r['valid']}"
        )
    total = {k: sum(r[k] for r in rows) for k in ("grade_ms", "static_ms", "direct_ms", "mcp_ms", "runs")}
    print(
        f"\n{len(rows)} tasks: grading {total['grade_ms'] / len(rows):.3f} ms per trajectory (mean); full validation "
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
