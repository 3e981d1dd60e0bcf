"""Attacks on what a task's writes say: the reference's actions, its words replaced. Per family, how often it
still passes (score ≥ 0.75):

- ``hollow``: every free text the reference writes (replies, notes, posts, mail bodies, reasons) is "Hi.";
- ``stuffed``: every free text is one sentence with every kind of word a content check looks for ("please check
  and confirm", "refund refused", "we're looking into it", "accepted") and a dump of the records nearest the
  request and their figures, kept under the length floor of an oversized write.

Where saying is part of the work, both should fail; a family whose texts are incidental (a payout's memo, an
RSVP's comment, a forward's note) may pass ``hollow``. Nothing here passes or fails: it reports.

Reproduce:  python bench/bench_content_attacks.py [--tasks 4] [--seed 900]
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio

from coworkenv.synth.contract.grader import PASS_THRESHOLD
from coworkenv.synth.contract.oversized import OVERSIZED_FLOOR
from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.task import Step, Task, ToolStep
from coworkenv.synth.contract.validation.adversary_texts import numbers_text, records_text
from coworkenv.synth.generate.families import FAMILIES

TEXT_FIELDS = ("body", "text", "subject", "description", "comment", "reason", "loss_reason", "summary", "content")
UNIVERSAL = (
    "Heads up: this looks suspicious, please check and confirm. Did you ask for this? We are looking into it and "
    "will update you. Refund refused: outside the policy window, not refunded. Refunded the duplicate. Accepted "
    "the renewal; declined. Shared the final version."
)


def _replace(value: Any, text: str, key: str | None = None) -> Any:
    if isinstance(value, dict):
        return {k: _replace(v, text, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, text, key) for v in value]
    if isinstance(value, str) and key in TEXT_FIELDS and len(value.split()) >= 2:
        return text
    return value


def saying(task: Task, text: str) -> list[Step]:
    return [
        s.model_copy(update={"arguments": _replace(s.arguments, text)}) if isinstance(s, ToolStep) else s
        for s in task.reference_solution
    ]


def stuffing(bench: Workbench) -> str:
    dump = f"{records_text(bench, 1200)}\n{numbers_text(bench)}"
    return f"{UNIVERSAL}\n{dump}"[: OVERSIZED_FLOOR - 800]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=4, help="Tasks per family (half easy, half hard)")
    parser.add_argument("--seed", type=int, default=900)
    opts = parser.parse_args()
    print(f"{'family':38} {'tasks':>5} {'hollow':>8} {'stuffed':>8}")
    totals = [0, 0, 0]
    for name, family in sorted(FAMILIES.items()):
        counts = [0, 0, 0]
        for i in range(opts.tasks):
            task = family.make(family.service_options[0], "easy" if i % 2 == 0 else "hard", opts.seed + i)
            bench = Workbench.of(task)
            hollow, stuffed = saying(task, "Hi."), saying(task, stuffing(bench))
            if hollow == list(task.reference_solution):
                continue  # the reference writes no free text
            counts[0] += 1
            for k, steps in ((1, hollow), (2, stuffed)):
                grade = grade_trial(bench, await run_steps(bench, steps), explain=False)
                counts[k] += grade.score >= PASS_THRESHOLD
        if counts[0]:
            print(f"{name:38} {counts[0]:>5} {counts[1]:>8} {counts[2]:>8}")
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
    print(f"{'all families':38} {totals[0]:>5} {totals[1]:>8} {totals[2]:>8}")
    print(f"\nreproduce: python bench/bench_content_attacks.py --tasks {opts.tasks} --seed {opts.seed}")


if __name__ == "__main__":
    anyio.run(main)
