"""Curation of teacher trajectories into demonstrations, the CoworkEnv recipe.

1. Group tasks by the teacher's mean completion over their scored trials:
   ``lowest`` (mean < ``low``), ``middle`` (``low`` ≤ mean < ``high``), ``always`` (mean ≥ ``high``).
2. Drop the lowest group: the teacher could not do those tasks, so their trajectories teach nothing good.
3. Keep the middle group's trajectories whose reward (the grade's score, safety included) is at least
   ``min_reward`` — the informative tasks, solved only sometimes.
4. Cap the always-solved group at ``per_prefix`` demonstration(s) per normalised task prefix (the request's
   first ``prefix_chars`` characters, lower-cased, with numbers, ids, emails and amounts made generic), so
   near-identical easy tasks do not flood the data. The best trajectory wins: highest score, then fewest
   tool calls, then shortest.
Only ``completed`` trajectories are candidates (limits, timeouts and errors are not demonstrations), and none
that did collateral damage (an unexplained state change: a run that does not pass whatever its score is no
demonstration).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any, Literal

from coworkenv.harness.trajectory import Trajectory, to_line
from coworkenv.servers.kit.atomic import atomic_open, write_atomic

Group = Literal["lowest", "middle", "always"]
REPORT_FILE = "curation.json"
_GENERIC = [
    (re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+"), "<email>"),
    (re.compile(r"\b[a-z]{2,5}_[a-z0-9_]+\b"), "<id>"),
    (re.compile(r"[$€£]\s?\d[\d,]*(?:\.\d+)?"), "<amount>"),
    (re.compile(r"\d+(?:[.,:/-]\d+)*"), "#"),
    (re.compile(r"[^\w#<> ]+"), " "),
    (re.compile(r"\s+"), " "),
]


@dataclass(frozen=True)
class CurationParams:
    low: float = 0.2
    high: float = 1.0
    min_reward: float = 0.75
    per_prefix: int = 1
    prefix_chars: int = 48
    prefix_from: Literal["request", "id"] = "request"

    def __post_init__(self) -> None:
        if not 0 <= self.low <= self.high <= 1:
            raise ValueError(f"need 0 <= low <= high <= 1, got low={self.low}, high={self.high}")
        if self.per_prefix < 1 or self.prefix_chars < 1:
            raise ValueError("per_prefix and prefix_chars must be at least 1")


@dataclass
class Curation:
    kept: list[Trajectory]
    groups: dict[str, Group]
    mean_completion: dict[str, float]
    dropped: Counter[str] = field(default_factory=Counter)

    def report(self, params: CurationParams, total: int) -> dict[str, Any]:
        by_group = Counter(self.groups.values())
        return {
            "params": asdict(params),
            "trajectories_in": total,
            "kept": len(self.kept),
            "dropped": dict(sorted(self.dropped.items())),
            "tasks_by_group": {g: by_group.get(g, 0) for g in ("lowest", "middle", "always")},
            "tasks": {
                tid: {"mean_completion": round(self.mean_completion[tid], 4), "group": self.groups[tid]}
                for tid in sorted(self.groups)
            },
        }


def normalise_prefix(text: str, chars: int) -> str:
    out = text.lower()
    for pattern, repl in _GENERIC:
        out = pattern.sub(repl, out)
    return out.strip()[:chars]


def task_prefix(record: Trajectory, params: CurationParams) -> str:
    if params.prefix_from == "id":
        return normalise_prefix(re.sub(r"[-_.]?[0-9a-f]*\d[0-9a-f]*$", "", record.task_id), params.prefix_chars)
    return normalise_prefix(record.request, params.prefix_chars)


def group_of(mean_completion: float, params: CurationParams) -> Group:
    if mean_completion < params.low:
        return "lowest"
    if mean_completion >= params.high:
        return "always"
    return "middle"


def _rank(r: Trajectory) -> tuple[float, int, int, str, int]:
    length = sum(len(m.content) for m in r.messages)
    calls = sum(len(m.tool_calls) for m in r.messages)
    return (-r.score, calls, length, r.task_id, r.trial)


def curate(records: Sequence[Trajectory], params: CurationParams | None = None) -> Curation:
    """Apply the recipe to a run's records (one per (task, trial))."""
    params = params or CurationParams()
    per_task: dict[str, list[Trajectory]] = defaultdict(list)
    for r in records:
        if r.scored:
            per_task[r.task_id].append(r)
    means = {tid: mean(r.completion for r in rs) for tid, rs in per_task.items()}
    groups = {tid: group_of(m, params) for tid, m in means.items()}
    result = Curation([], groups, means)
    always: dict[str, list[Trajectory]] = defaultdict(list)
    for r in records:
        group = groups.get(r.task_id)
        if group is None:
            result.dropped["not_scored"] += 1
        elif group == "lowest":
            result.dropped["lowest_group"] += 1
        elif r.status != "completed":
            result.dropped["not_completed"] += 1
        elif r.score < params.min_reward:
            result.dropped["below_reward"] += 1
        elif r.grade is not None and r.grade.unexplained:
            result.dropped["collateral_damage"] += 1
        elif group == "always":
            always[task_prefix(r, params)].append(r)
        else:
            result.kept.append(r)
    for candidates in always.values():
        candidates.sort(key=_rank)
        result.kept += candidates[: params.per_prefix]
        result.dropped["prefix_cap"] += max(0, len(candidates) - params.per_prefix)
    result.kept.sort(key=lambda r: (r.task_id, r.trial))
    return result


def write_curation(records: Sequence[Trajectory], out: str | Path, params: CurationParams) -> dict[str, Any]:
    """Curate and write ``OUT/trajectories.jsonl`` and ``OUT/curation.json``; returns the report."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "trajectories.jsonl"
    result = curate(records, params)
    with atomic_open(target) as handle:  # a kill leaves the old curated set or the new one, never a part
        handle.writelines(to_line(r) + "\n" for r in result.kept)
    report = result.report(params, len(records))
    write_atomic(folder / REPORT_FILE, json.dumps(report, indent=2) + "\n")
    return report


def format_report(report: dict[str, Any]) -> str:
    groups = report["tasks_by_group"]
    dropped = ", ".join(f"{k} {v}" for k, v in report["dropped"].items()) or "nothing"
    return (
        f"tasks: {groups['lowest']} lowest (dropped), {groups['middle']} middle (kept above the reward threshold), "
        f"{groups['always']} always solved (capped per prefix)\n"
        f"trajectories: {report['trajectories_in']} in, {report['kept']} kept; dropped: {dropped}"
    )
