"""The procedural generator: scenario families written as code, seeded, no network.

For a cell it asks the cell's family (the cell's scenario) to build a task for the cell's services and
difficulty from ``random.Random(seed)``, then validates it (static checks, then by execution). A draft
that fails is not patched: the family is asked again with a seed derived from the first, up to
``max_repairs`` times, and the failed drafts' error codes are kept for the synthesis report. Everything
is a pure function of (cell, seed): no global random state, no clock.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.validation.validate import validate_task
from coworkenv.synth.generate.families import get_family
from coworkenv.synth.generate.plan import Cell
from coworkenv.synth.generate.resources import ResourceSet


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from any parts (stable across processes and Python versions, unlike ``hash``)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass
class ProceduralOutcome:
    cell: Cell
    seed: int
    task: Task | None = None
    repairs: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    reason: str | None = None
    detail: str = ""
    rejected_drafts: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.task is not None


def build_task(cell: Cell, seed: int, resources: ResourceSet | None = None) -> Task:
    """The family's task for this cell and seed (on a user's loaded files, where given), labelled with the cell's
    capability (listed first)."""
    family = get_family(cell.scenario)
    task = family.make(tuple(cell.services), cell.difficulty, seed, resources)
    capabilities = [cell.capability, *(c for c in task.capabilities if c != cell.capability)]
    metadata = {**task.metadata, "capability": cell.capability}
    return task.model_copy(update={"capabilities": capabilities, "metadata": metadata})


class ProceduralGenerator:
    """Tasks from the procedural families; implements :class:`coworkenv.synth.generate.generator.TaskGenerator`."""

    name = "procedural"

    def __init__(self, max_repairs: int = 2, execute: bool = True, resources: ResourceSet | None = None) -> None:
        self.max_repairs = max_repairs
        self.execute = execute
        self.resources = resources
        """A user's loaded files (``--from``), handed to every family (those that take them ground tasks on them)."""
        self.made = 0
        self.failed = 0

    async def generate(self, cell: Cell, seed: int, feedback: list[Diagnostic] | None = None) -> ProceduralOutcome:
        outcome = ProceduralOutcome(cell, seed)
        for attempt in range(self.max_repairs + 1):
            draft_seed = seed if attempt == 0 else derive_seed(seed, "repair", attempt)
            try:
                task = build_task(cell, draft_seed, self.resources)
            except Exception as exc:  # a family bug is a rejected draft, not a crashed run
                outcome.diagnostics = [
                    Diagnostic(
                        code="FAMILY_FAILED",
                        path="$",
                        message=f"family {cell.scenario} could not build a task: {type(exc).__name__}: {exc}",
                        fix="Fix the family's code for this cell.",
                    )
                ]
            else:
                report = await validate_task(task, execute=self.execute)
                outcome.diagnostics = report.diagnostics
                if report.valid:
                    outcome.task = task
                    outcome.repairs = attempt
                    self.made += 1
                    return outcome
            errors = [d for d in outcome.diagnostics if d.severity == "error"]
            outcome.rejected_drafts.append(errors[0].code if errors else "INVALID")
        self.failed += 1
        outcome.repairs = self.max_repairs
        outcome.reason = "invalid"
        errors = [d for d in outcome.diagnostics if d.severity == "error"]
        outcome.detail = f"gave up after {self.max_repairs} repair(s): " + "; ".join(d.line() for d in errors[:3])
        return outcome

    def report(self) -> dict[str, Any]:
        return {
            "generator": self.name,
            "made": self.made,
            "failed": self.failed,
            "input_tokens": 0,
            "output_tokens": 0,
            "cost_usd": 0.0,
        }
