"""What a check is judged on and what judging it says: the :class:`Context` of one trial (final state, audit
rows, what the agent said) and the :class:`Verdict` an evaluator returns (:mod:`~coworkenv.synth.contract.evaluate`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from coworkenv.servers.kit import AuditRow, SeedError, Service, parse_seed
from coworkenv.synth.contract.task import Task

Row = Mapping[str, Any]
State = Mapping[str, Mapping[str, Sequence[Row]]]
AuditInput = Sequence[AuditRow | Mapping[str, Any]]
SeedRows = dict[str, dict[str, list[dict[str, Any]]]]
"""Per service, per table: the seed's records as the service stores them."""


@dataclass(frozen=True)
class Verdict:
    passed: bool
    expected: str
    found: str


VerdictMemo = dict[tuple[int, int, bool], tuple[object, Sequence[Row], Verdict]]
"""A check's verdict on a list of rows, by (check, rows, explain) identity (:class:`~.facts.GradeMemo`)."""


@dataclass
class Context:
    task: Task
    state: State
    audit: list[dict[str, Any]]
    said: str
    seeds: SeedRows = field(default_factory=dict)
    """The task's seeds as the services store them, filled as checks ask (shared by the task's trials:
    :class:`~.facts.TaskFacts`)."""
    explain: bool = True
    """False when only whether each check holds is wanted: the verdicts' words are then left empty (cheaper)."""
    verdicts: VerdictMemo | None = None
    """Where the state is never changed once made: the verdicts of checks on lists of rows judged before (trials
    share the lists of the tables their run did not write), kept by the caller (:class:`~.facts.GradeMemo`)."""
    window: tuple[int, int] | None = None
    """For a check bound to a user turn (``after_turn``, ``before_turn``): the audit rows ``[start, end)`` that
    count. Calls outside it do not count, and of a table only the records the agent wrote inside it."""
    read_text: str | None = None
    """What the run read (:func:`~coworkenv.synth.contract.copied.read_text`), once worked out."""
    own_words: dict[bool, str] = field(default_factory=dict)
    """What the agent said with the text it copied from tool results taken out (:mod:`.copied`), once worked out:
    keeping short quotations (True) or not (False)."""
    services: Mapping[str, Service] | None = None
    """The task's services by name (the grader sets those of the task's baseline); None: every known service."""

    def window_rows(self) -> list[dict[str, Any]]:
        """The audit rows that count (all of them unless the check is bound to a turn)."""
        return self.audit if self.window is None else self.audit[self.window[0] : self.window[1]]

    def rows(self, service: str, table: str) -> Sequence[Row] | None:
        tables = self.state.get(service)
        if tables is None or table not in tables:
            return None
        if self.window is None:
            return tables[table]
        written = {
            change.get("id")
            for row in self.window_rows()
            if row.get("service") == service and str(row.get("actor", "")).split(":", 1)[0] == "agent"
            for change in row.get("changes") or []
            if change.get("table") == table
        }
        return [r for r in tables[table] if r.get("id") in written]

    def seed_rows(self, service: str, table: str) -> list[dict[str, Any]]:
        """Seed records as the service stores them (defaults filled, times normalised)."""
        if service not in self.seeds:
            self.seeds[service] = _normalise_seed(service, self.task.seed(service), self.services)
        return self.seeds[service].get(table, [])


def _normalise_seed(
    service: str, seed: Mapping[str, Any], services: Mapping[str, Service] | None
) -> dict[str, list[dict[str, Any]]]:
    if services is None:
        from coworkenv.servers.registry import SERVICES

        services = SERVICES
    spec = services.get(service)
    if spec is None:
        return {k: list(v) for k, v in seed.items()}
    try:
        return parse_seed(spec, seed)
    except SeedError:
        return {k: list(v) for k, v in seed.items()}


def audit_dicts(audit: AuditInput) -> list[dict[str, Any]]:
    """Audit rows as dicts in call order (simulated-then-wall time order of the environment)."""
    rows = [dict(vars(r)) if isinstance(r, AuditRow) else dict(r) for r in audit]
    if all("wall_time" in r for r in rows):
        rows.sort(key=lambda r: (str(r["wall_time"]), str(r.get("service", "")), int(r.get("seq", 0))))
    return rows
