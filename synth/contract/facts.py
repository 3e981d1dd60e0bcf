"""What grading works out once and reads many times, as plain typed objects that their owners pass down.

- :class:`TaskFacts`: about one task (its seed as the services store it, the names its records go by, how much text
  and how many names one write of its reference holds), the same for every trial of the task. The task's
  :class:`~coworkenv.synth.contract.baseline.Baseline` holds them.
- :class:`GradeMemo`: about trials graded before (a check's verdict on a list of rows, the changes of a state),
  for a caller that grades many read-only trials of one task (validation grades a task ~15 times). The
  :class:`~coworkenv.synth.contract.runner.Workbench` of the task holds it; ``grade(..., reuse=memo)`` uses it.
- :data:`ParsedSeeds`: what static validation parsed of a task's seeds, handed to the baseline so the seeds are
  not validated again when the task is seeded.

Nothing here is kept on the task itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from coworkenv.servers.kit import Service
from coworkenv.servers.kit.records import Seed
from coworkenv.synth.contract.flow import FlowFacts
from coworkenv.synth.contract.guard import UnexplainedChange
from coworkenv.synth.contract.verdict import AuditInput, SeedRows, State, VerdictMemo

ParsedSeeds = dict[str, tuple[Service, Mapping[str, Any], Seed]]
"""Per service: (the service, the seed it parsed, what ``parse_seed`` returned), as static validation left them."""

SeedNames = tuple[dict[str, set[int]], tuple[tuple[str, set[int]], ...]]
"""What names the seed's records (:func:`~coworkenv.synth.contract.oversized.records_named`)."""

MEMO_LIMIT = 4096
"""Entries a memo keeps before it starts afresh."""
UNEXPLAINED_LIMIT = 256


@dataclass
class TaskFacts:
    """What grading works out once about a task: its seeds as the services store them (defaults filled, times
    normalised), the names of its records, the most text and the most names one write of the reference holds, and
    how many records each text written in its trials names (a write recurs in many trials)."""

    seeds: SeedRows = field(default_factory=dict)
    seed_names: SeedNames | None = None
    write_limit: int | None = None
    naming_limit: int | None = None
    records_named: dict[str, int] = field(default_factory=dict)
    flow: FlowFacts | None = None
    """What the data-flow and instruction rules read (:mod:`.flow`), worked out at the first grading."""


@dataclass
class GradeMemo:
    """What grading read-only trials of one task has worked out: each check's verdict on a list of rows (trials
    share the lists of the tables their run did not write) and the unexplained changes of a (state, audit) pair
    (validation grades one run again with other words said). Entries keep their keys' objects alive, so an
    ``id`` is not reused while its entry lasts."""

    verdicts: VerdictMemo = field(default_factory=dict)
    unexplained: dict[tuple[int, int, bool], tuple[State, AuditInput, list[UnexplainedChange]]] = field(
        default_factory=dict
    )

    def unexplained_of(self, state: State, audit: AuditInput, explain: bool) -> list[UnexplainedChange] | None:
        kept = self.unexplained.get((id(state), id(audit), explain))
        return None if kept is None or kept[0] is not state or kept[1] is not audit else list(kept[2])

    def keep_unexplained(
        self, state: State, audit: AuditInput, explain: bool, found: Sequence[UnexplainedChange]
    ) -> None:
        if len(self.unexplained) >= UNEXPLAINED_LIMIT:
            self.unexplained.clear()
        self.unexplained[(id(state), id(audit), explain)] = (state, audit, list(found))

    def clear(self) -> None:
        """Drop every trial kept (the end of a validation)."""
        self.verdicts.clear()
        self.unexplained.clear()
