"""Oversized writes: the note, message or file a task asks for, stuffed with every record the agent read so that a
check for a few words in it passes. A write whose text is far longer than anything the reference writes costs
completion, like an unexplained change (:mod:`.guard`), and is listed with them in the grade report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.synth.contract.guard import UNEXPLAINED_PENALTY, FieldChange, UnexplainedChange
from coworkenv.synth.contract.task import Task, ToolStep

OVERSIZED_PENALTY = 0.5
"""Completion lost per oversized write (:func:`oversized_writes`): a note or message stuffed with everything."""
OVERSIZED_FLOOR = 3000
OVERSIZED_FACTOR = 4
"""A write is oversized when its text is longer than both :data:`OVERSIZED_FLOOR` characters and
:data:`OVERSIZED_FACTOR` times the longest text any one call of the reference (or an alternative) writes."""
OVERSIZED = "oversized write"


def _text_size(value: Any) -> int:
    """Characters of text in a call's arguments, all strings counted (nested lists and objects too)."""
    stack, total = [value], 0
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return total


def write_limit(task: Task) -> int:
    """The most text one write may hold before it counts as oversized (see :data:`OVERSIZED_FACTOR`)."""
    cached = task._cache.get("write_limit")
    if cached is not None:
        return int(cached)
    longest = 0
    for steps in (task.reference_solution, *(task.alternative_solutions or [])):
        for step in steps:
            if isinstance(step, ToolStep):
                longest = max(longest, _text_size(step.arguments))
    limit = task._cache["write_limit"] = max(OVERSIZED_FLOOR, OVERSIZED_FACTOR * longest)
    return limit


def oversized_writes(task: Task, audit: Sequence[Mapping[str, Any]]) -> list[UnexplainedChange]:
    """The agent's successful writes whose arguments hold far more text than any call of the reference
    (:func:`write_limit`): the note, message or file the task asks for, stuffed with every record the agent read
    so that a check for some words in it passes. Each costs :data:`OVERSIZED_PENALTY`; the reply to the user has
    its own rules (``said``)."""
    limit = write_limit(task)
    out = []
    for row in audit:
        if not str(row.get("actor", "")).startswith("agent") or row.get("outcome") != "ok":
            continue
        if not row.get("state_changed"):
            continue
        size = _text_size(row.get("arguments"))
        if size > limit:
            out.append(
                UnexplainedChange(
                    service=str(row.get("service", "")),
                    table=str(row.get("tool", "")),
                    id=f"call {row.get('seq', '?')}",
                    op=OVERSIZED,
                    fields=[FieldChange(field="text", old=f"at most {limit} characters", new=f"{size} characters")],
                )
            )
    return out


def penalty_of(unexplained: Sequence[UnexplainedChange]) -> float:
    """The completion the changes cost: :data:`UNEXPLAINED_PENALTY` each, :data:`OVERSIZED_PENALTY` for an
    oversized write."""
    return sum(OVERSIZED_PENALTY if u.op == OVERSIZED else UNEXPLAINED_PENALTY for u in unexplained)
