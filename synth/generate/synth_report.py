"""The synthesis report: what a run made (accepted, rejected by reason, repaired, duplicates, coverage, usage),
as the JSON written last into the output folder and as a table for people."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coworkenv.synth.generate.dedup import Deduplicator
from coworkenv.synth.generate.generator import TaskGenerator
from coworkenv.synth.generate.plan import CapabilityPlan, Cell

REPORT_FILE = "synthesis_report.json"
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "requests", "cost_usd")


@dataclass
class Tally:
    rejected: Counter[str] = field(default_factory=Counter)
    repaired: int = 0
    failed: set[int] = field(default_factory=set)
    """Slots whose earlier attempt failed validation (so a later acceptance used the feedback)."""
    ids: set[str] = field(default_factory=set)
    gave_up: list[dict[str, Any]] = field(default_factory=list)
    by_family: dict[str, Counter[str]] = field(default_factory=dict)
    """Rejected drafts per family (the cell's scenario), by reason."""
    adversaries: dict[str, Counter[str]] = field(default_factory=dict)
    """Per family, the adversaries that beat a given-up draft (from its diagnostics)."""


def usage_of(gen: TaskGenerator, before: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The generator's usage (tokens, requests, cost) so far, plus what earlier sessions of a resumed run spent."""
    totals = gen.report()
    earlier = before or {}
    return {k: _added(earlier[k], totals.get(k, 0)) if k in earlier else totals.get(k, 0) for k in USAGE_KEYS}


def _added(earlier: Any, now: Any) -> Any:
    """Two sessions' figure together; None (not known: a model without a price) stays None when both are."""
    if earlier is None and now is None:
        return None
    return (0 if earlier is None else earlier) + (0 if now is None else now)


def build_report(
    plan: CapabilityPlan,
    cells: list[Cell],
    slots: list[tuple[Cell, int]],
    accepted: Mapping[int, tuple[str, str]],
    gen: TaskGenerator,
    tally: Tally,
    dedup: Deduplicator,
    seed: int,
    rounds: int,
    model: str | None,
    usage_before: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The report's JSON; ``usage_before``: what earlier sessions of a resumed run spent."""
    made: Counter[str] = Counter(slots[k][0].key for k in accepted)
    per_cell = [{**c.as_dict(), "accepted": made[c.key]} for c in cells]
    by: dict[str, dict[str, dict[str, int]]] = {"capability": {}, "scenario": {}, "service": {}, "difficulty": {}}
    for c in per_cell:
        keys = {"capability": [c["capability"]], "scenario": [c["scenario"]], "difficulty": [c["difficulty"]]}
        keys["service"] = list(c["services"])
        for dim, names in keys.items():
            for name in names:
                slot = by[dim].setdefault(name, {"quota": 0, "accepted": 0})
                slot["quota"] += c["quota"]
                slot["accepted"] += c["accepted"]
    totals = gen.report()
    usage = usage_of(gen, usage_before)
    return {
        "plan": plan.name,
        "generator": gen.name,
        "model": model,
        "seed": seed,
        "requested": len(slots),
        "accepted": len(accepted),
        "unfilled": len(slots) - len(accepted),
        "rejected": {"drafts": sum(tally.rejected.values()), "by_reason": dict(sorted(tally.rejected.items()))},
        "rejected_by_family": {f: dict(sorted(c.items())) for f, c in sorted(tally.by_family.items()) if c},
        "adversaries_by_family": {f: dict(sorted(c.items())) for f, c in sorted(tally.adversaries.items()) if c},
        "repaired": tally.repaired,
        "duplicates": dedup.duplicates,
        "duplicates_dropped": [list(p) for p in dedup.dropped],
        "rounds": rounds,
        "usage": usage,
        **({"review": totals["review"]} if "review" in totals else {}),
        "coverage": {"cells": per_cell, **{f"by_{dim}": dict(sorted(v.items())) for dim, v in by.items()}},
        "gave_up": tally.gave_up[:50],
        "tasks": [tid for tid, _ in (accepted[k] for k in sorted(accepted))],
    }


def _rejections_by_family(report: dict[str, Any]) -> list[str]:
    """Rejected drafts per family by reason, with the adversaries that beat the drafts given up on."""
    by_family: dict[str, dict[str, int]] = report.get("rejected_by_family", {})
    if not by_family:
        return []
    adversaries: dict[str, dict[str, int]] = report.get("adversaries_by_family", {})
    width = max(len(f) for f in by_family)
    out = ["\nrejected drafts by family:"]
    for family, reasons in by_family.items():
        text = ", ".join(f"{k} {v}" for k, v in reasons.items())
        if adversaries.get(family):
            text += "; adversaries that passed: " + ", ".join(f"{k} {v}" for k, v in adversaries[family].items())
        out.append(f"  {family:<{width}}  {text}")
    return out


def _known(figure: Any) -> str:
    """A usage figure for people: 'unknown' where the model did not say."""
    return "unknown" if figure is None else str(figure)


def format_report(report: dict[str, Any], seconds: float | None = None, workers: int = 1) -> str:
    """The report as a table for people."""
    usage = report["usage"]
    reasons = ", ".join(f"{k} {v}" for k, v in report["rejected"]["by_reason"].items()) or "-"
    lines = [
        f"synthesis with the {report['generator']} generator, plan {report['plan']!r}, seed {report['seed']}",
        f"  {'requested':<12}{report['requested']:>7}",
        f"  {'accepted':<12}{report['accepted']:>7}"
        + (f"   ({report['unfilled']} unfilled)" if report["unfilled"] else ""),
        f"  {'rejected':<12}{report['rejected']['drafts']:>7}   drafts; by reason: {reasons}",
        f"  {'repaired':<12}{report['repaired']:>7}",
        f"  {'duplicates':<12}{report['duplicates']:>7}",
        f"  {'tokens':<12}{_known(usage['input_tokens']):>7} in, {_known(usage['output_tokens'])} out; cost "
        + ("unknown" if usage["cost_usd"] is None else f"${float(usage['cost_usd']):.4f}"),
    ]
    if seconds is not None:
        rate = report["accepted"] / seconds if seconds > 0 else 0.0
        lines.append(f"  {'time':<12}{seconds:>7.1f} s   ({rate:.1f} tasks/s, {workers} worker(s))")
    lines += _rejections_by_family(report)
    cov = report["coverage"]
    for dim in ("scenario", "difficulty", "service", "capability"):
        items = cov[f"by_{dim}"]
        width = max(len(k) for k in items) if items else 0
        lines.append(f"\ncoverage by {dim} (accepted/quota):")
        lines += [f"  {k:<{width}}  {v['accepted']:>4}/{v['quota']:<4}" for k, v in items.items()]
    short = [c for c in cov["cells"] if c["accepted"] < c["quota"]]
    filled = sum(1 for c in cov["cells"] if c["quota"] and c["accepted"] >= c["quota"])
    lines.append(f"\ncells: {filled} of {sum(1 for c in cov['cells'] if c['quota'])} reached their quota")
    for c in short:
        lines.append(
            f"  short: {c['scenario']} {'+'.join(c['services'])} {c['difficulty']} ({c['capability']}) {c['accepted']}/{c['quota']}"
        )
    return "\n".join(lines)
