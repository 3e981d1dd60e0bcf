"""What parity found: per task, how many calls, audits and grader outputs agreed of those compared, and the first
disagreement of each kind with both sides' values; the totals per Claw-Eval service and overall."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KINDS = ("status", "result", "audit", "grader")
"""The kinds of disagreement: an HTTP status, a result's JSON, a service's final ``/audit``, a grader's scores."""


@dataclass(frozen=True)
class Disagreement:
    kind: str
    sequence: str
    tool: str | None
    """The call's tool (a status or result), the service (an audit), or None (grader outputs)."""
    call: int | None
    """The call's place in its sequence, from 1."""
    arguments: dict[str, Any] | None
    path: str
    """Where the read values first differ (a JSON path)."""
    mock: Any
    ours: Any

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None or k in ("mock", "ours")}


@dataclass
class Tally:
    compared: int = 0
    agreeing: int = 0

    def add(self, agrees: bool) -> None:
        self.compared += 1
        self.agreeing += int(agrees)

    def merge(self, other: Tally) -> None:
        self.compared += other.compared
        self.agreeing += other.agreeing

    def percent(self) -> float:
        return 100.0 * self.agreeing / self.compared if self.compared else 100.0

    def as_json(self) -> dict[str, int]:
        return {"agreeing": self.agreeing, "compared": self.compared}


@dataclass
class TaskParity:
    """One imported task's parity."""

    task: str
    source: str
    services: list[str]
    calls: Tally = field(default_factory=Tally)
    audits: Tally = field(default_factory=Tally)
    grades: Tally = field(default_factory=Tally)
    calls_by_service: dict[str, Tally] = field(default_factory=dict)
    audits_by_service: dict[str, Tally] = field(default_factory=dict)
    first: dict[str, Disagreement] = field(default_factory=dict)
    grading: str | None = None
    """Why grader outputs were not compared, where they were not."""
    problem: str | None = None
    """Why the task was not compared (a mock that did not start, say); None when it was."""

    def progress_line(self) -> str:
        """How this task went, in a few words."""
        if self.problem is not None:
            return f"not compared: {self.problem}"
        total = Tally()
        for part in (self.calls, self.audits, self.grades):
            total.merge(part)
        kinds = f" (differs in: {', '.join(sorted(self.first))})" if self.first else ""
        return f"{total.agreeing}/{total.compared} agree{kinds}"

    def note(self, found: Disagreement) -> None:
        self.first.setdefault(found.kind, found)

    def call(self, service: str, agrees: bool) -> None:
        self.calls.add(agrees)
        self.calls_by_service.setdefault(service, Tally()).add(agrees)

    def audit(self, service: str, agrees: bool) -> None:
        self.audits.add(agrees)
        self.audits_by_service.setdefault(service, Tally()).add(agrees)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "task": self.task,
            "source": self.source,
            "services": self.services,
            "calls": self.calls.as_json(),
            "audits": self.audits.as_json(),
            "grader_outputs": self.grades.as_json(),
            "calls_by_service": {k: v.as_json() for k, v in sorted(self.calls_by_service.items())},
            "first_disagreements": {k: self.first[k].as_json() for k in KINDS if k in self.first},
        }
        if self.grading:
            out["grading"] = self.grading
        if self.problem:
            out["problem"] = self.problem
        return out


@dataclass
class ParityReport:
    """Parity over every imported task.

    **Agreement** is the share of comparisons that agreed, over three kinds pooled: every tool call (status and
    result JSON, read by the rules of :mod:`.parity_compare`), every service's final ``/audit`` after each sequence,
    and every grader output (the task's grader run on each side's records of one sequence: its four dimension
    scores equal to 4 decimals)."""

    tasks: list[TaskParity] = field(default_factory=list)
    sequences: int = 0
    seed: int = 0

    def totals(self) -> tuple[Tally, Tally, Tally]:
        calls, audits, grades = Tally(), Tally(), Tally()
        for t in self.tasks:
            calls.merge(t.calls)
            audits.merge(t.audits)
            grades.merge(t.grades)
        return calls, audits, grades

    def by_service(self) -> dict[str, tuple[Tally, Tally, int]]:
        """Per Claw-Eval service: its calls, its audits, and how many tasks use it."""
        out: dict[str, tuple[Tally, Tally, int]] = {}
        for t in self.tasks:
            for name in t.services:
                calls, audits, count = out.get(name, (Tally(), Tally(), 0))
                if name in t.calls_by_service:
                    calls.merge(t.calls_by_service[name])
                if name in t.audits_by_service:
                    audits.merge(t.audits_by_service[name])
                out[name] = (calls, audits, count + 1)
        return dict(sorted(out.items()))

    def percent(self) -> float:
        calls, audits, grades = self.totals()
        compared = calls.compared + audits.compared + grades.compared
        agreeing = calls.agreeing + audits.agreeing + grades.agreeing
        return 100.0 * agreeing / compared if compared else 0.0

    def lines(self) -> list[str]:
        """Per-service figures, the tasks not compared, and last the overall agreement."""
        out = []
        for name, (calls, audits, count) in self.by_service().items():
            out.append(
                f"  {name}: {calls.percent():.1f} % of calls ({calls.agreeing} of {calls.compared}), "
                f"{audits.agreeing} of {audits.compared} audits, {count} task(s)"
            )
        skipped = [t for t in self.tasks if t.problem]
        for t in skipped[:10]:
            out.append(f"  not compared: {t.source}: {t.problem}")
        if len(skipped) > 10:
            out.append(f"  not compared: {len(skipped) - 10} more task(s) (see parity_report.json)")
        calls, audits, grades = self.totals()
        out.append(
            f"parity: {self.percent():.1f} % agreement ({calls.agreeing} of {calls.compared} calls, "
            f"{audits.agreeing} of {audits.compared} audits, {grades.agreeing} of {grades.compared} grader outputs)"
        )
        return out

    def as_json(self) -> dict[str, Any]:
        calls, audits, grades = self.totals()
        return {
            "agreement_percent": round(self.percent(), 2),
            "definition": "agreeing / compared over tool calls, final /audit JSONs and grader outputs pooled",
            "calls": calls.as_json(),
            "audits": audits.as_json(),
            "grader_outputs": grades.as_json(),
            "sequences_per_task": {"scripted": 1, "random": self.sequences, "seed": self.seed},
            "by_service": {
                name: {"calls": c.as_json(), "audits": a.as_json(), "tasks": n}
                for name, (c, a, n) in self.by_service().items()
            },
            "tasks": [t.as_json() for t in self.tasks],
        }
