"""The capability plan and the coverage plan it becomes (docs/ARCHITECTURE.md §4).

A **capability plan** (YAML or JSON; ``coworkenv schema plan`` prints its JSON Schema) says what to train:
capabilities with weights, the service combinations allowed (or, left out, any set of registered services a family
offers: the default plan's way, so a family on a new service is drawn without an edit), the difficulty levels with
weights, and the scenarios (procedural families) with weights. :func:`coverage_plan` turns it into **cells** — capability × scenario × services × difficulty —
with integer quotas that sum to the requested count:

1. the count is split across capabilities in proportion to their weights;
2. a capability's share across the scenarios that exercise it (scenario weights);
3. a scenario's share across its allowed service combinations (equally);
4. that share across difficulty levels (difficulty weights).

Every split is a largest-remainder apportionment; ties are broken by a shuffle drawn from
``random.Random(seed)``, so the same plan, count and seed always give the same cells. A default plan
ships with the package (``default_plan_path()``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from coworkenv.servers.kit.files import load_yaml, one_line, yaml_problem
from coworkenv.synth.contract.task import Difficulty
from coworkenv.synth.contract.taskfile import format_loc

if TYPE_CHECKING:
    from coworkenv.synth.generate.families.kit.base import Family

DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")
Families = Mapping[str, "Family"]
"""Families by name; by default every registered one (:data:`~coworkenv.synth.generate.families.FAMILIES`)."""


class PlanError(ValueError):
    """A plan that cannot be read or does not validate; the message names the file and the field."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CapabilitySpec(_Model):
    name: str = Field(min_length=1, description="Example: 'cross-service lookup'")
    weight: float = Field(default=1.0, gt=0, description="Share of the tasks, relative to the other capabilities.")
    description: str = ""


EVERY_OTHER = "*"
"""A scenario entry whose family is ``"*"``: every registered family the plan lists nowhere else."""


class ScenarioSpec(_Model):
    family: str = Field(
        min_length=1,
        description="A procedural family, or '*' for every family listed nowhere else. Example: 'bank-change-lookalike'",
    )
    weight: float = Field(default=1.0, gt=0)
    capabilities: list[str] | None = Field(
        default=None, description="Count this scenario only toward these capabilities (default: all it exercises)."
    )
    difficulties: list[Difficulty] | None = Field(default=None, description="Only these levels (default: the plan's).")


class CapabilityPlan(_Model):
    name: str = Field(min_length=1)
    description: str = ""
    count: int = Field(default=100, ge=1, description="How many tasks when no --count is given.")
    capabilities: list[CapabilitySpec] = Field(min_length=1)
    service_combinations: list[list[str]] | None = Field(
        default=None,
        min_length=1,
        description=(
            "The service sets a task may use. Example: [['tickets'], ['email', 'payments']]. Left out: any set a "
            "family offers whose services are all registered (a family on a new service is drawn with no edit)."
        ),
    )
    difficulties: dict[Difficulty, float] = Field(
        default_factory=lambda: dict.fromkeys(DIFFICULTIES, 1.0),
        description="Difficulty levels and their weights.",
    )
    scenarios: list[ScenarioSpec] | None = Field(
        default=None,
        min_length=1,
        description="The families to draw from (default: every registered family; '*' adds the ones not listed).",
    )

    @field_validator("service_combinations")
    @classmethod
    def _sorted_sets(cls, value: list[list[str]] | None) -> list[list[str]] | None:
        for combo in value or []:
            if not combo:
                raise ValueError("a service combination needs at least one service")
            if len(set(combo)) != len(combo):
                raise ValueError(f"service combination {combo} names a service twice")
        return value

    @field_validator("difficulties")
    @classmethod
    def _positive(cls, value: dict[Difficulty, float]) -> dict[Difficulty, float]:
        if not value:
            raise ValueError("give at least one difficulty level (easy, medium, hard)")
        bad = [k for k, w in value.items() if w <= 0]
        if bad:
            raise ValueError(f"difficulty weights must be above 0: {', '.join(bad)}")
        return value

    @model_validator(mode="after")
    def _names(self) -> CapabilityPlan:
        caps = [c.name for c in self.capabilities]
        if len(set(caps)) != len(caps):
            raise ValueError(f"capability names repeat: {sorted({c for c in caps if caps.count(c) > 1})}")
        fams = [s.family for s in self.scenarios or []]
        if len(set(fams)) != len(fams):
            raise ValueError(f"scenarios repeat: {sorted({f for f in fams if fams.count(f) > 1})}")
        for i, s in enumerate(self.scenarios or []):
            unknown = sorted(set(s.capabilities or []) - set(caps))
            if unknown:
                raise ValueError(f"scenarios[{i}] ({s.family}) names capabilities the plan does not list: {unknown}")
        return self


@dataclass(frozen=True, order=True)
class Cell:
    """One cell of the coverage plan; ``quota`` tasks are to be made for it."""

    capability: str
    scenario: str
    services: tuple[str, ...]
    difficulty: Difficulty
    quota: int = 0

    @property
    def key(self) -> str:
        return f"{self.scenario}|{'+'.join(self.services)}|{self.difficulty}|{self.capability}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "capability": self.capability,
            "scenario": self.scenario,
            "services": list(self.services),
            "difficulty": self.difficulty,
            "quota": self.quota,
        }


# ---------------------------------------------------------------------------------------------- loading
def default_plan_path() -> Path:
    return Path(str(files("coworkenv.synth").joinpath("plans", "default.yaml")))


def load_plan(path: str | Path | None = None, *, families: Families | None = None) -> CapabilityPlan:
    """Read and validate a plan file (YAML or JSON); the default plan when no path is given. ``families``: the
    families it may name and ``'*'`` draws from (default: every registered one)."""
    p = Path(path) if path is not None else default_plan_path()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanError(f"{p}: cannot read the plan: {exc.strerror}") from exc
    try:
        data = json.loads(text) if p.suffix == ".json" else load_yaml(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"{p}: not valid JSON: {exc}") from exc
    except yaml.YAMLError as exc:
        raise PlanError(one_line(f"{p}: not valid YAML: {yaml_problem(exc)}")) from exc
    return parse_plan(data, source=str(p), families=families)


def plan_json_schema() -> dict[str, Any]:
    """The JSON Schema of a capability plan (what ``coworkenv schema plan`` prints)."""
    schema = CapabilityPlan.model_json_schema()
    schema["title"] = "coworkenv capability plan"
    schema["description"] = (
        "What `coworkenv plan` and `coworkenv synth --plan` make tasks of: capabilities with weights, the service "
        "sets a task may use (left out: any set of registered services a family offers), difficulty levels with "
        "weights, and scenarios (procedural families with weights; '*' for every registered family listed nowhere "
        "else). `coworkenv plan` prints the coverage plan it becomes: capability x scenario x services x level."
    )
    return schema


def parse_plan(data: Any, source: str = "plan", *, families: Families | None = None) -> CapabilityPlan:
    """Validate a plan document; errors name the field and what is wrong, and check the families exist."""
    if not isinstance(data, dict):
        raise PlanError(f"{source}: a plan must be a mapping, got {type(data).__name__}")
    try:
        plan = CapabilityPlan.model_validate(data)
    except ValidationError as exc:
        problems = [f"field {format_loc(e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise PlanError(f"{source}: " + "; ".join(problems)) from exc
    _check_against_families(plan, source, families)
    return plan.model_copy(update={"scenarios": _expand(plan, families)})


def _families(families: Families | None) -> Families:
    if families is not None:
        return families
    from coworkenv.synth.generate.families import FAMILIES

    return FAMILIES


def _expand(plan: CapabilityPlan, families: Families | None = None) -> list[ScenarioSpec]:
    """The plan's scenarios with ``'*'`` (or no scenarios at all) made into every other registered family that
    fits the plan's service combinations and capabilities."""
    FAMILIES = _families(families)
    listed = plan.scenarios if plan.scenarios is not None else [ScenarioSpec(family=EVERY_OTHER)]
    named = {s.family for s in listed}
    out: list[ScenarioSpec] = []
    for s in listed:
        if s.family != EVERY_OTHER:
            out.append(s)
            continue
        for name, fam in FAMILIES.items():
            spec = s.model_copy(update={"family": name})
            fits = _services_for(plan, fam.service_options) and _capabilities_for(plan, spec, fam.capabilities)
            if name not in named and fits:
                out.append(spec)
    if not out:
        raise PlanError("no registered family fits the plan's service combinations and capabilities")
    return out


def _check_against_families(plan: CapabilityPlan, source: str, families: Families | None = None) -> None:
    FAMILIES = _families(families)
    for i, s in enumerate(plan.scenarios or []):
        if s.family == EVERY_OTHER:
            continue
        fam = FAMILIES.get(s.family)
        where = f"{source}: field scenarios[{i}]"
        if fam is None:
            raise PlanError(f"{where}.family: unknown family {s.family!r}; known: {', '.join(sorted(FAMILIES))}")
        if not _services_for(plan, fam.service_options):
            options = ", ".join("+".join(o) for o in fam.service_options)
            if plan.service_combinations is None:
                raise PlanError(
                    f"{where}: {s.family} needs one of the service sets {options}, and some service of each is not "
                    "registered; install the package that adds it (`coworkenv services` lists those known)"
                )
            raise PlanError(
                f"{where}: {s.family} needs one of the service sets {options}, none of which is in "
                "service_combinations; add one there or drop the scenario"
            )
        if not _capabilities_for(plan, s, fam.capabilities):
            raise PlanError(
                f"{where}: {s.family} exercises {', '.join(fam.capabilities)}, none of them a capability of the plan"
            )


def _services_for(
    plan: CapabilityPlan, options: Sequence[tuple[str, ...]], known: Collection[str] | None = None
) -> list[tuple[str, ...]]:
    """The service sets of a family the plan allows: those in its ``service_combinations``, or, where it lists none,
    those whose services are all registered (``known``: the registry's names by default)."""
    if plan.service_combinations is None:
        if known is None:
            from coworkenv.servers import registry

            known = set(registry.SERVICES)
        return [o for o in options if set(o) <= set(known)]
    allowed = {frozenset(c) for c in plan.service_combinations}
    return [o for o in options if frozenset(o) in allowed]


def _capabilities_for(plan: CapabilityPlan, scenario: ScenarioSpec, exercised: Sequence[str]) -> list[str]:
    wanted = scenario.capabilities if scenario.capabilities is not None else list(exercised)
    listed = [c.name for c in plan.capabilities]
    return [c for c in listed if c in wanted and c in exercised]


# ---------------------------------------------------------------------------------------------- coverage
def apportion(total: int, weights: Sequence[float], rng: random.Random) -> list[int]:
    """Split ``total`` into integers proportional to ``weights`` (largest remainder; seeded tie-break)."""
    if total <= 0 or not weights:
        return [0] * len(weights)
    s = sum(weights)
    exact = [total * w / s for w in weights]
    out = [int(x) for x in exact]
    order = list(range(len(weights)))
    rng.shuffle(order)
    order.sort(key=lambda i: -(exact[i] - out[i]))
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out


def coverage_plan(
    plan: CapabilityPlan, count: int | None = None, seed: int = 0, *, families: Families | None = None
) -> list[Cell]:
    """The cells of the plan with quotas summing to ``count`` (the plan's own count by default)."""
    FAMILIES = _families(families)
    n = plan.count if count is None else count
    rng = random.Random(seed)
    caps = [c.name for c in plan.capabilities]
    by_cap: dict[str, list[ScenarioSpec]] = {c: [] for c in caps}
    for s in _expand(plan, FAMILIES):
        for c in _capabilities_for(plan, s, FAMILIES[s.family].capabilities):
            by_cap[c].append(s)
    live = [c for c in plan.capabilities if by_cap[c.name]]
    if not live:
        raise PlanError("no capability of the plan is exercised by any of its scenarios")
    cells: list[Cell] = []
    for cap, cap_n in zip(live, apportion(n, [c.weight for c in live], rng), strict=True):
        scenarios = by_cap[cap.name]
        for s, s_n in zip(scenarios, apportion(cap_n, [s.weight for s in scenarios], rng), strict=True):
            options = _services_for(plan, FAMILIES[s.family].service_options)
            for services, o_n in zip(options, apportion(s_n, [1.0] * len(options), rng), strict=True):
                levels = [d for d in DIFFICULTIES if d in plan.difficulties and d in (s.difficulties or DIFFICULTIES)]
                shares = apportion(o_n, [plan.difficulties[d] for d in levels], rng)
                cells += [Cell(cap.name, s.family, services, d, q) for d, q in zip(levels, shares, strict=True)]
    return cells


def summarise(cells: Sequence[Cell]) -> dict[str, dict[str, int]]:
    """Quotas per capability, scenario, service and difficulty (a service counts for every cell that uses it)."""
    out: dict[str, dict[str, int]] = {"capability": {}, "scenario": {}, "service": {}, "difficulty": {}}
    for c in cells:
        for dim, key in (("capability", c.capability), ("scenario", c.scenario), ("difficulty", c.difficulty)):
            out[dim][key] = out[dim].get(key, 0) + c.quota
        for svc in c.services:
            out["service"][svc] = out["service"].get(svc, 0) + c.quota
    return {dim: dict(sorted(v.items())) for dim, v in out.items()}


def format_coverage(cells: Sequence[Cell], show_empty: bool = False) -> str:
    """The coverage plan as a table, then the totals per dimension."""
    shown = [c for c in cells if c.quota or show_empty]
    w_cap = max([len(c.capability) for c in shown] + [10])
    w_sc = max([len(c.scenario) for c in shown] + [8])
    w_sv = max([len("+".join(c.services)) for c in shown] + [8])
    lines = [f"{'CAPABILITY':<{w_cap}}  {'SCENARIO':<{w_sc}}  {'SERVICES':<{w_sv}}  {'LEVEL':<6}  QUOTA"]
    for c in shown:
        lines.append(
            f"{c.capability:<{w_cap}}  {c.scenario:<{w_sc}}  {'+'.join(c.services):<{w_sv}}  {c.difficulty:<6}  {c.quota:>5}"
        )
    total = sum(c.quota for c in cells)
    lines.append(f"\n{len(shown)} cell(s), {total} task(s)")
    for dim, counts in summarise(cells).items():
        lines.append(f"by {dim}: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v))
    return "\n".join(lines)
