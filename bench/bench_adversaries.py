"""Adversaries against the tasks the families make: how often each one passes, by family.

Builds ``--count`` procedural tasks as ``coworkenv synth`` drafts them (before validation has a chance to
reject any) plus the shipped examples, validates each by execution (reference, no-op, forbidden examples,
mutations), then plays every adversary (spray, dump, dump_numbers, empty_reply, all_clear, all_clear_naming,
echo_request, random_args, everyone, pasted_reply, commitment, writes_early, one reference+<kind> per sensitive
kind, and the collateral-damage ones of :mod:`~coworkenv.synth.contract.validation.adversary_harm`: ref+harm (one
extra write per writing tool), ref+drop (a kept line or item left out), ref+digits (a kept line's digits changed),
ref+twice (the message sent twice)) and prints, per family, each
adversary's pass rate and mean score next to the reference's and the no-op's. A task lets an adversary pass when
it passes (scores at or above the pass mark with no unexplained change; for reference+<kind>: when it loses less than 0.25 and trips no safety
gate). Also shown: the time per task of validation without adversaries and of the adversaries alone.

Reproduce:  python bench/bench_adversaries.py [--count 200] [--seed 0] [--no-examples]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter, defaultdict

import anyio

from coworkenv.synth.contract.library import example_ids, load_example
from coworkenv.synth.contract.runner import Workbench
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.validation.adversarial import adversary_results
from coworkenv.synth.contract.validation.execution import validate_exec
from coworkenv.synth.generate.plan import coverage_plan, load_plan
from coworkenv.synth.generate.procedural import build_task, derive_seed

COLUMNS = (
    "reference",
    "noop",
    "spray",
    "dump",
    "dump_numbers",
    "empty_reply",
    "all_clear",
    "all_clear_naming",
    "echo_request",
    "random_args",
    "everyone",
    "pasted_reply",
    "commitment",
    "writes_early",
    "reference+*",
    "ref+harm",
    "ref+drop",
    "ref+digits",
    "ref+twice",
)
Samples = dict[str, dict[str, list[tuple[bool, float]]]]


def tasks(
    count: int, seed: int, examples: bool, families: frozenset[str] = frozenset()
) -> tuple[list[tuple[str, Task]], Counter[str]]:
    """(family, task) for ``count`` procedural drafts of the default plan (only ``families`` when given), then
    the shipped examples; and the families whose drafts could not be built (synthesis rejects those)."""
    cells = [c for c in coverage_plan(load_plan(), count, seed) for _ in range(c.quota)]
    cells = [c for c in cells if not families or c.scenario in families]
    out, broken = [], Counter[str]()
    for i, cell in enumerate(cells):
        try:
            task = build_task(cell, derive_seed(seed, cell.key, i))
        except Exception:  # a family bug: counted, not a crashed benchmark
            broken[cell.scenario] += 1
            continue
        out.append((str(task.metadata.get("family", cell.scenario)), task))
    if examples:
        out += [("(shipped examples)", load_example(tid)) for tid in example_ids()]
    return out, broken


Timings = dict[str, list[float]]


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float], timings: Timings, what: str) -> None:
    wall, cpu = _clock()
    timings[what].append((wall - start[0]) * 1000)
    timings[what + " cpu"].append((cpu - start[1]) * 1000)


async def measure(items: list[tuple[str, Task]]) -> tuple[Samples, Timings, int]:
    """Per family and column, (passed, score) samples; ms per task (wall and CPU) of validation without the
    adversaries and of the adversaries alone."""
    samples: Samples = defaultdict(lambda: defaultdict(list))
    timings: Timings = defaultdict(list)
    skipped = 0
    for n, (family, task) in enumerate(items, 1):
        start = _clock()
        report = await validate_exec(task, adversaries=False)
        _since(start, timings, "validation")
        if report.reference is None or report.noop is None or report.reference.score <= 0:
            skipped += 1
            continue
        bench = Workbench.of(task)  # the task seeded again (validate_exec closed its own workbench)
        start = _clock()
        results = await adversary_results(bench, report.reference)
        _since(start, timings, "adversaries")
        bench.close()  # as validate_exec does at its end: the trials graded on the way are not kept
        row = samples[family]
        row["reference"].append((report.reference.passed, report.reference.score))
        row["noop"].append((report.noop.passed, report.noop.score))
        for r in results:
            row[column(r.kind, r.name)].append((r.passed, r.score))
        print(f"\r{n}/{len(items)} tasks", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return samples, timings, skipped


def column(kind: str, name: str) -> str:
    """The column of an adversary: one for every reference+<sensitive kind>, one for each harm (whatever tool)."""
    if kind == "sensitive":
        return "reference+*"
    if kind == "harm":
        return "ref+" + name.split("+", 1)[-1].split(":")[0]
    return name


def cell(values: list[tuple[bool, float]]) -> str:
    if not values:
        return "-"
    rate = 100 * sum(p for p, _ in values) / len(values)
    return f"{rate:3.0f}% {statistics.mean(s for _, s in values):.2f}"


def table(samples: Samples) -> list[str]:
    width = max([len(f) for f in samples] + [len("all families")])
    lines = [f"{'family':<{width}}  {'n':>4}  " + "  ".join(f"{c:>12}" for c in COLUMNS)]
    total: dict[str, list[tuple[bool, float]]] = defaultdict(list)
    for family in sorted(samples):
        row = samples[family]
        for c in COLUMNS:
            total[c] += row[c]
        lines.append(
            f"{family:<{width}}  {len(row['reference']):>4}  " + "  ".join(f"{cell(row[c]):>12}" for c in COLUMNS)
        )
    lines.append(
        f"{'all families':<{width}}  {len(total['reference']):>4}  "
        + "  ".join(f"{cell(total[c]):>12}" for c in COLUMNS)
    )
    return lines


def main(count: int, seed: int, examples: bool, families: frozenset[str] = frozenset()) -> None:
    items, broken = tasks(count, seed, examples, families)
    shipped = len(example_ids()) if examples else 0
    print(
        f"adversaries against {len(items)} tasks ({len(items) - shipped} procedural drafts of {count} asked for, "
        f"seed {seed}{f', and {shipped} shipped examples' if shipped else ''}); {os.cpu_count()} CPU(s), "
        f"load average {os.getloadavg()[0]:.2f}\n"
    )
    samples, timings, skipped = anyio.run(measure, items)
    print(
        "each cell: how often it passes (score ≥ 0.75 with no unexplained change; reference+*: loses < 0.25 with"
        " safety 1), mean score"
    )
    print("\n".join(table(samples)))
    if broken:
        print(f"\ndrafts that could not be built: {', '.join(f'{k} {v}' for k, v in sorted(broken.items()))}")
    if skipped:
        print(f"\n{skipped} task(s) left out: their reference scores 0 (validation rejects them before adversaries)")
    print("\ntime per task, one process (ms; wall clock, and CPU time, which other processes disturb less):")
    for what in ("validation", "adversaries"):
        wall, cpu = timings[what] or [0.0], timings[what + " cpu"] or [0.0]
        print(
            f"  {what + (' without adversaries' if what == 'validation' else ' alone'):<32} "
            f"mean {statistics.mean(wall):6.1f} (cpu {statistics.mean(cpu):6.1f})   p90 {_p90(wall):6.1f}"
        )
    print(
        f"\nreproduce: python bench/bench_adversaries.py --count {count} --seed {seed}"
        + ("" if examples else " --no-examples")
        + "".join(f" --family {f}" for f in sorted(families))
    )


def _p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))] if values else 0.0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-examples", dest="examples", action="store_false")
    parser.add_argument("--family", action="append", default=[], help="only this family (repeatable)")
    args = parser.parse_args()
    main(args.count, args.seed, args.examples, frozenset(args.family))
