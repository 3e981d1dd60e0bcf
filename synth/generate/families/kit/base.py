"""What a scenario family is, and the builder that every family fills in to make one task.

A family is code: given a :class:`TaskBuilder` (a seeded ``random.Random``, the difficulty, the services
and the task's ``now``), it adds seed records (targets, distractors and filler), weighted checks,
forbidden actions each with an example call, and a reference solution, and returns the request in the
user's words. The difficulty sets how many distractors and filler records there are and how many steps
of reasoning the task takes (:data:`LEVELS`). Helpers for text, patterns and weights (``rx``, ``warns``, ``tidy``,
``money``, ...) are :mod:`coworkenv.synth.generate.families.kit.writing`, importable from here too.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError

from coworkenv.servers.kit import format_time
from coworkenv.synth.contract.checks import AnyCheck
from coworkenv.synth.contract.task import (
    AllowedChange,
    CompletionCheck,
    Difficulty,
    ForbiddenAction,
    SayStep,
    Step,
    Task,
    ToolStep,
    UserSpec,
)
from coworkenv.synth.generate.families.kit.names import NamePool, slug
from coworkenv.synth.generate.families.kit.vocabulary import Phrasebook
from coworkenv.synth.generate.families.kit.writing import Json, tidy
from coworkenv.synth.generate.families.kit.writing import money as money
from coworkenv.synth.generate.families.kit.writing import money_rx as money_rx
from coworkenv.synth.generate.families.kit.writing import possessive as possessive
from coworkenv.synth.generate.families.kit.writing import rx as rx
from coworkenv.synth.generate.families.kit.writing import shares as shares
from coworkenv.synth.generate.families.kit.writing import warns as warns

if TYPE_CHECKING:
    from coworkenv.synth.generate.resources import ResourceSet

CROSS = "cross-service lookup"
WINDOW = "time-window filtering"
DISTRACTORS = "distractor rejection"
SAFETY = "safety under suspicious instructions"
MULTISTEP = "multi-step updates"
CLARIFY = "clarification with the user"
REPORT = "reporting to the user"
COMMS = "communication"
CAPABILITIES = (CROSS, WINDOW, DISTRACTORS, SAFETY, MULTISTEP, CLARIFY, REPORT, COMMS)

_M = TypeVar("_M", bound=BaseModel)


class FamilyError(ValueError):
    """A family wrote a malformed check, forbidden action, reference step or task; says which, and why."""


@dataclass(frozen=True)
class Level:
    """How hard a task is: distractor records, filler volume, how many targets, an extra reasoning step."""

    distractors: tuple[int, int]
    filler: tuple[int, int]
    targets: int
    extra: bool


LEVELS: dict[str, Level] = {
    "easy": Level(distractors=(1, 2), filler=(1, 3), targets=1, extra=False),
    "medium": Level(distractors=(2, 3), filler=(4, 7), targets=2, extra=False),
    "hard": Level(distractors=(4, 5), filler=(8, 12), targets=3, extra=True),
}
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_EPOCH = datetime(2026, 1, 5, tzinfo=UTC)


class TaskBuilder:
    """Collects one task. Families call :meth:`add`, :meth:`check`, :meth:`forbid`, :meth:`call`, :meth:`say`."""

    def __init__(
        self,
        family: Family,
        services: tuple[str, ...],
        difficulty: Difficulty,
        seed: int,
        resources: ResourceSet | None = None,
    ) -> None:
        self.family = family
        self.resources = resources
        """A user's loaded files (``coworkenv synth --from``), for families that take them as their subject."""
        self.services = services
        self.difficulty = difficulty
        self.seed = seed
        self.rng = random.Random(seed)
        self.level = LEVELS[difficulty]
        day = self.rng.randrange(0, 180)
        start = _EPOCH + timedelta(days=day)
        start += timedelta(days=(7 - start.weekday()) % 7 if start.weekday() >= 5 else 0)
        self.now = start.replace(hour=self.rng.randrange(8, 11), minute=self.rng.choice((0, 15, 30, 45)))
        self.names = NamePool(self.rng)
        self.book = Phrasebook(self.rng)
        """Background texts, none twice in the task."""
        self.records: dict[str, dict[str, list[Json]]] = {s: {} for s in services}
        self.checks: list[CompletionCheck] = []
        self.forbidden: list[ForbiddenAction] = []
        self.steps: list[Step] = []
        self.alternatives: list[list[Step]] = []
        self.allowed: list[AllowedChange] = []
        self.distractors: list[str] = []
        self.may_name: list[str] = []
        self._user: UserSpec | None = None
        self._ids: set[str] = set()
        self._next: dict[str, int] = {}

    # ------------------------------------------------------------------------------------------ level
    @property
    def hard(self) -> bool:
        return self.level.extra

    @property
    def targets(self) -> int:
        return self.level.targets

    def n_distractors(self) -> int:
        return self.rng.randint(*self.level.distractors)

    def n_filler(self) -> int:
        return self.rng.randint(*self.level.filler)

    def pick(self, *options: Any) -> Any:
        return self.rng.choice(options)

    # ------------------------------------------------------------------------------------------ time
    @property
    def now_iso(self) -> str:
        return format_time(self.now)

    def ago(self, days: float = 0, hours: float = 0, minutes: float = 0) -> str:
        return format_time(self.now - timedelta(days=days, hours=hours, minutes=minutes))

    def ahead(self, days: float = 0, hours: float = 0) -> str:
        return format_time(self.now + timedelta(days=days, hours=hours))

    @staticmethod
    def spoken_day(iso: str) -> str:
        """'2026-03-03T10:00:00Z' → 'March 3'."""
        d = datetime.fromisoformat(iso.replace("Z", "+00:00"))
        return f"{_MONTHS[d.month - 1]} {d.day}"

    def month(self, back: int = 1) -> tuple[str, str, str]:
        """(start, end, 'February 2026') of the calendar month ``back`` months before now's month."""
        y, m = self.now.year, self.now.month - back
        while m < 1:
            y, m = y - 1, m + 12
        ny, nm = (y, m + 1) if m < 12 else (y + 1, 1)
        start, end = datetime(y, m, 1, tzinfo=UTC), datetime(ny, nm, 1, tzinfo=UTC)
        return format_time(start), format_time(end), f"{_MONTHS[m - 1]} {y}"

    # ------------------------------------------------------------------------------------------ ids and records
    def uid(self, prefix: str, hint: str | None = None) -> str:
        """A fresh id: ``prefix`` + a slug of ``hint``, or + a number drawn once per prefix and counted up."""
        if hint is not None:
            base = prefix + slug(hint)
            candidate, n = base, 2
            while candidate in self._ids:
                candidate, n = f"{base}_{n}", n + 1
        else:
            if prefix not in self._next:
                self._next[prefix] = self.rng.randrange(1000, 8000, 10)
            while True:
                self._next[prefix] += self.rng.randint(1, 3)
                candidate = f"{prefix}{self._next[prefix]}"
                if candidate not in self._ids:
                    break
        self._ids.add(candidate)
        return candidate

    def add(self, service: str, table: str, record: Json) -> Json:
        self._ids.add(str(record["id"]))
        self.records.setdefault(service, {}).setdefault(table, []).append(record)
        return record

    def rows(self, service: str, table: str) -> list[Json]:
        return self.records.get(service, {}).get(table, [])

    def distract(self, *ids: str) -> None:
        self.distractors += [i for i in ids if i not in self.distractors]

    # ------------------------------------------------------------------------------------------ checks and steps
    def _typed(self, model: type[_M], what: str, doc: Json | BaseModel) -> _M:
        """``doc`` as a ``model``, or a :class:`FamilyError` naming the family, the part and the fields at fault."""
        try:
            return model.model_validate(doc)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(the whole thing)'}: {e['msg']}" for e in exc.errors()
            )
            raise FamilyError(f"family {self.family.name}: {what} is malformed: {problems}") from None

    def check(
        self,
        cid: str,
        weight: float,
        description: str,
        check: Json | AnyCheck,
        requires: tuple[str, ...] = (),
        after_turn: int | None = None,
    ) -> CompletionCheck:
        """Add a completion check. ``weight`` is its share (0 < weight ≤ 1); :meth:`finish` rescales the shares
        to sum to exactly 1. ``after_turn``: only what the agent does after the user's N-th later turn counts.
        A malformed check raises :class:`FamilyError` here, where it is written."""
        entry: Json = {"id": cid, "weight": weight, "description": description, "check": check}
        if requires:
            entry["requires"] = list(requires)
        if after_turn is not None:
            entry["after_turn"] = after_turn
        typed = self._typed(CompletionCheck, f"completion check {cid!r}", entry)
        self.checks.append(typed)
        return typed

    def forbid(
        self,
        fid: str,
        description: str,
        match: Json | AnyCheck,
        example: Json | Step,
        before_turn: int | None = None,
    ) -> ForbiddenAction:
        """Add a forbidden action: ``match`` passing means it happened; ``example`` is a call (or a message)
        that commits it. ``before_turn``: only what the agent does before the user's N-th later turn counts."""
        entry: Json = {"id": fid, "description": description, "match": match, "example": example}
        if before_turn is not None:
            entry["before_turn"] = before_turn
        typed = self._typed(ForbiddenAction, f"forbidden action {fid!r}", entry)
        self.forbidden.append(typed)
        return typed

    def forbid_call(
        self,
        fid: str,
        description: str,
        service: str,
        tool: str,
        match: Json,
        example: Json,
        before_turn: int | None = None,
    ) -> ForbiddenAction:
        """Forbid any call (succeeded or not) of ``service``.``tool`` whose arguments match ``match`` (before the
        user's N-th later turn, with ``before_turn``); the example call passes ``example`` as its arguments."""
        return self.forbid(
            fid,
            description,
            {"kind": "tool_called", "service": service, "tool": tool, "outcome": "any", "arguments": match},
            {"service": service, "tool": tool, "arguments": example},
            before_turn,
        )

    def call(self, service: str, tool: str, step_id: str | None = None, **arguments: Any) -> ToolStep:
        """Add a reference step calling ``service``.``tool``; name it ``step_id`` to ``$ref`` its result later."""
        step: Json = {"service": service, "tool": tool, "arguments": arguments}
        if step_id:
            step["id"] = step_id
        what = f"reference step {step_id or len(self.steps) + 1!r} ({service}.{tool})"
        typed = self._typed(ToolStep, what, step)
        self.steps.append(typed)
        return typed

    def allow(
        self, service: str, table: str, reason: str, where: Json | None = None, fields: list[str] | None = None
    ) -> AllowedChange:
        """Allow changes beyond the reference's (records of ``table`` matching ``where``; for updates, only
        ``fields``): another correct solution may make them (refund the other of two identical charges)."""
        entry: Json = {"service": service, "table": table, "reason": reason, "where": where or {}}
        if fields:
            entry["fields"] = fields
        typed = self._typed(AllowedChange, f"allowed change ({service}.{table})", entry)
        self.allowed.append(typed)
        return typed

    @contextmanager
    def alternative(self) -> Iterator[None]:
        """Steps added inside (``call``, ``say``) make another correct solution, not the reference's:
        validation requires it to score 1.0 too (``alternative_solutions``)."""
        reference, self.steps = self.steps, []
        try:
            yield
        finally:
            alternative, self.steps = self.steps, reference
            if alternative:
                self.alternatives.append(alternative)

    def say(self, text: str) -> SayStep:
        """Add what the agent tells the user (the reference answer)."""
        typed = self._typed(SayStep, f"reference step {len(self.steps) + 1} (say)", {"say": text})
        self.steps.append(typed)
        return typed

    @property
    def user(self) -> UserSpec | None:
        """The simulated user (persona, facts held back until asked, later turns), when the task has one."""
        return self._user

    @user.setter
    def user(self, spec: Json | UserSpec) -> None:
        self._user = self._typed(UserSpec, "the user (persona, held_back, turns)", spec)

    # ------------------------------------------------------------------------------------------ the task
    def finish(self, request: str) -> Task:
        """The task: check weights rescaled to sum to 1, everything gathered and validated as a whole."""
        if not self.checks:
            raise FamilyError(f"family {self.family.name}: a task needs at least one completion check")
        total = sum(c.weight for c in self.checks)
        weights = [round(c.weight / total, 4) for c in self.checks]
        weights[-1] = round(1.0 - sum(weights[:-1]), 6)
        checks = [c.model_copy(update={"weight": w}) for c, w in zip(self.checks, weights, strict=True)]
        fam = self.family
        metadata: Json = {
            "generator": "procedural",
            "family": fam.name,
            "seed": self.seed,
            "distractors": self.distractors,
        }
        if self.may_name:
            metadata["request_may_name"] = self.may_name
        doc: Json = {
            "id": f"{fam.name}-{self.difficulty}-{self.seed & 0xFFFFFFFFFF:010x}",
            "version": 1,
            "scenario": fam.scenario,
            "capabilities": list(fam.capabilities),
            "difficulty": self.difficulty,
            "safety": fam.safety,
            "services": list(self.services),
            "now": self.now_iso,
            "request": tidy(request),
            "initial_records": {s: t for s, t in self.records.items() if t},
            "completion_checks": checks,
            "forbidden_actions": self.forbidden,
            "reference_solution": self.steps,
            "metadata": metadata,
        }
        if self.alternatives:
            doc["alternative_solutions"] = self.alternatives
        if self.allowed:
            doc["allowed_changes"] = self.allowed
        if self.user is not None:
            doc["user"] = self.user
        return self._typed(Task, "the task", doc)


class Family(ABC):
    """A scenario family: code that builds tasks of one kind of work situation."""

    name: ClassVar[str]
    scenario: ClassVar[str]
    capabilities: ClassVar[tuple[str, ...]]
    service_options: ClassVar[tuple[tuple[str, ...], ...]]
    safety: ClassVar[bool] = False
    distractors: ClassVar[str] = ""
    """In words: the records that look relevant and are not."""

    @abstractmethod
    def build(self, b: TaskBuilder) -> str:
        """Fill the builder for one task and return the request, in the user's words."""

    def make(
        self, services: tuple[str, ...], difficulty: Difficulty, seed: int, resources: ResourceSet | None = None
    ) -> Task:
        if services not in self.service_options:
            options = ", ".join("+".join(o) for o in self.service_options)
            raise ValueError(f"{self.name} builds tasks for the service sets {options}, not {'+'.join(services)}")
        b = TaskBuilder(self, services, difficulty, seed, resources)
        return b.finish(self.build(b))
