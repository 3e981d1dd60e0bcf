"""What the LLM task generator (:mod:`~coworkenv.synth.generate.llm_generator`, which hands the name on) made of
one (cell, seed): :class:`LLMOutcome`, an accepted task with its repairs, revisions and review rounds, or why it
gave up; with the tokens, requests and estimated cost it took.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.contract.task import Task
from coworkenv.synth.generate.llm_review import ReviewRound
from coworkenv.synth.generate.plan import Cell
from coworkenv.synth.model_io import Usage

Reason = Literal["invalid", "unparseable", "infrastructure"]


@dataclass
class LLMOutcome:
    """What the generator made of one (cell, seed): an accepted task, or why it gave up."""

    cell: Cell
    seed: int
    task: Task | None = None
    repairs: int = 0
    revisions: int = 0
    """Drafts revised on the reviewer's notes although they were valid."""
    reviews: list[ReviewRound] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    reason: Reason | None = None
    detail: str = ""
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    requests: int = 0
    rejected_drafts: list[str] = field(default_factory=list)
    """The first error code of each draft that failed (for the synthesis report's rejections by reason)."""
    kept: tuple[Task, list[Diagnostic]] | None = field(default=None, repr=False)
    """The last valid draft and its diagnostics (what a failed revision or an outage mid-review falls back to)."""

    @property
    def accepted(self) -> bool:
        return self.task is not None
