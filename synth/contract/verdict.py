"""What a check is judged on and what judging it says: the :class:`Context` of one trial (final state, audit
rows, what the agent said) and the :class:`Verdict` an evaluator returns (:mod:`~coworkenv.synth.contract.evaluate`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from coworkenv.servers.kit import AuditRow, SeedError, parse_seed
from coworkenv.synth.contract.task import Task

Row = Mapping[str, Any]
State = Mapping[str, Mapping[str, Sequence[Row]]]
AuditInput = Sequence[AuditRow | Mapping[str, Any]]


@dataclass(frozen=True)
class Verdict:
    passed: bool
    expected: str
    found: str


@dataclass
class Context:
    task: Task
    state: State
    audit: list[dict[str, Any]]
    said: str
    _seeds: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    explain: bool = True
    """False when only whether each check holds is wanted: the verdicts' words are then left empty (cheaper)."""
    reuse: bool = False
    """Whether the state is never changed once made, so a check's verdict on a list of rows judged before (trials
    share the lists of the tables their run did not write) is taken from the task's cache."""
    window: tuple[int, int] | None = None
    """For a check bound to a user turn (``after_turn``, ``before_turn``): the audit rows ``[start, end)`` that
    count. Calls outside it do not count, and of a table only the records the agent wrote inside it."""
    read_text: str | None = None
    """What the run read (:func:`~coworkenv.synth.contract.copied.read_text`), once worked out."""
    own_words: dict[bool, str] = field(default_factory=dict)
    """What the agent said with the text it copied from tool results taken out (:mod:`.copied`), once worked out:
    keeping short quotations (True) or not (False)."""

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
        if service not in self._seeds:
            cache = self.task._cache.setdefault("normalised_seeds", {})
            if service not in cache:
                cache[service] = _normalise_seed(service, self.task.seed(service), self.task)
            self._seeds[service] = cache[service]
        return self._seeds[service].get(table, [])


def _normalise_seed(service: str, seed: Mapping[str, Any], task: Task) -> dict[str, list[dict[str, Any]]]:
    from coworkenv.servers.registry import SERVICES

    spec = SERVICES.get(service)
    kept = task._cache.get("parsed_seeds", {}).get(service)  # what static validation parsed of this very seed
    if kept is not None and spec is not None and kept[0] is spec and kept[1] is seed:
        return dict(kept[2])
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
