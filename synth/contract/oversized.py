"""Oversized writes: the note, message or file a task asks for, stuffed with every record the agent read so that a
check for a few words in it passes. A write whose text is far longer than anything the reference writes, or
that names far more of the seed's records than any write of the reference (a short dump with a sentence of
every kind of word: "please check and confirm, refund refused, we're on it" and the names of everyone), costs
completion, like an unexplained change (:mod:`.guard`), and is listed with them in the grade report."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from coworkenv.synth.contract.facts import MEMO_LIMIT, SeedNames, TaskFacts
from coworkenv.synth.contract.guard import UNEXPLAINED_PENALTY, FieldChange, UnexplainedChange
from coworkenv.synth.contract.task import Task, ToolStep

OVERSIZED_PENALTY = 0.5
"""Completion lost per oversized write (:func:`oversized_writes`): a note or message stuffed with everything."""
OVERSIZED_FLOOR = 3000
OVERSIZED_FACTOR = 4
"""A write is oversized when its text is longer than both :data:`OVERSIZED_FLOOR` characters and
:data:`OVERSIZED_FACTOR` times the longest text any one call of the reference (or an alternative) writes."""
STUFFED_FLOOR = 8
STUFFED_FACTOR = 4
"""A write is stuffed when its free text names more of the seed's records than both :data:`STUFFED_FLOOR` and
:data:`STUFFED_FACTOR` times the most any one write of the reference (or an alternative) names."""
NAMING_FIELDS = frozenset({"id", "name", "email", "domain", "address", "subject", "title", "summary"})
"""The fields whose values name a record (an id, a person's or company's name or address, a mail's subject)."""
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


def _limit(task: Task, measure: Callable[[Any], int], floor: int, factor: int) -> int:
    """``floor`` or ``factor`` times the most any one call of the reference (or an alternative) measures, the
    larger."""
    most = 0
    for steps in (task.reference_solution, *(task.alternative_solutions or [])):
        for step in steps:
            if isinstance(step, ToolStep):
                most = max(most, measure(step.arguments))
    return max(floor, factor * most)


def write_limit(task: Task, facts: TaskFacts) -> int:
    """The most text one write may hold before it counts as oversized (see :data:`OVERSIZED_FACTOR`); worked out
    once per task (``facts``)."""
    if facts.write_limit is None:
        facts.write_limit = _limit(task, _text_size, OVERSIZED_FLOOR, OVERSIZED_FACTOR)
    return facts.write_limit


_TOKEN = re.compile(r"[\w@.+-]+")


def _free_text(value: Any) -> Iterator[str]:
    """The free texts in a call's arguments: every string but a single token (an id, an address, an enum)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _TOKEN.fullmatch(item.strip()) is None:
                yield item
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def _names(task: Task, facts: TaskFacts) -> SeedNames:
    """What names the seed's records, case-folded, and which records (by position) each name names: one-word
    names (ids, addresses, domains) by name, names of several words (people, companies, subjects) in a tuple."""
    if facts.seed_names is not None:
        return facts.seed_names
    words: dict[str, set[int]] = {}
    phrases: dict[str, set[int]] = {}
    n = 0
    for tables in task.initial_records.values():
        for rows in tables.values():
            for row in rows if isinstance(rows, list) else ():
                n += 1
                if not isinstance(row, Mapping):
                    continue
                for key, value in row.items():
                    if key in NAMING_FIELDS and isinstance(value, str) and 4 <= len(value.strip()) <= 80:
                        name = value.strip().casefold()
                        (phrases if " " in name else words).setdefault(name, set()).add(n)
    found = facts.seed_names = (words, tuple(sorted(phrases.items())))
    return found


def records_named(task: Task, facts: TaskFacts, arguments: Any) -> int:
    """How many of the seed's records a call's free text names (by an id, an address, a person's or company's
    name, a subject), each counted once however often or by whichever of its names."""
    text = "\n".join(_free_text(arguments)).casefold()
    if not text:
        return 0
    seen = facts.records_named  # a write recurs in many trials
    if text in seen:
        return seen[text]
    if len(seen) >= MEMO_LIMIT:
        seen.clear()
    seen[text] = found = _count_named(task, facts, text)
    return found


def _count_named(task: Task, facts: TaskFacts, text: str) -> int:
    words, phrases = _names(task, facts)
    named: set[int] = set()
    for token in {t.rstrip(".") for t in _TOKEN.findall(text)}:
        named |= words.get(token, set())
    for phrase, records in phrases:
        if phrase in text:
            named |= records
    return len(named)


def naming_limit(task: Task, facts: TaskFacts) -> int:
    """The most records one write may name before it counts as stuffed (see :data:`STUFFED_FACTOR`); worked out
    once per task (``facts``)."""
    if facts.naming_limit is None:
        named = lambda arguments: records_named(task, facts, arguments)  # noqa: E731
        facts.naming_limit = _limit(task, named, STUFFED_FLOOR, STUFFED_FACTOR)
    return facts.naming_limit


def oversized_writes(task: Task, facts: TaskFacts, audit: Sequence[Mapping[str, Any]]) -> list[UnexplainedChange]:
    """The agent's successful writes whose arguments hold far more text than any call of the reference
    (:func:`write_limit`): the note, message or file the task asks for, stuffed with every record the agent read
    so that a check for some words in it passes. Each costs :data:`OVERSIZED_PENALTY`; the reply to the user has
    its own rules (``said``)."""
    limit = write_limit(task, facts)
    out = []
    for row in audit:
        if not str(row.get("actor", "")).startswith("agent") or row.get("outcome") != "ok":
            continue
        if not row.get("state_changed"):
            continue
        arguments = row.get("arguments")
        size = _text_size(arguments)
        if size > limit:
            change = FieldChange(field="text", old=f"at most {limit} characters", new=f"{size} characters")
        else:
            named, most = records_named(task, facts, arguments), naming_limit(task, facts)
            if named <= most:
                continue
            change = FieldChange(field="records named", old=f"at most {most}", new=f"{named}")
        out.append(
            UnexplainedChange(
                service=str(row.get("service", "")),
                table=str(row.get("tool", "")),
                id=f"call {row.get('seq', '?')}",
                op=OVERSIZED,
                fields=[change],
            )
        )
    return out


def penalty_of(unexplained: Sequence[UnexplainedChange]) -> float:
    """The completion the changes cost: :data:`UNEXPLAINED_PENALTY` each, :data:`OVERSIZED_PENALTY` for an
    oversized write."""
    return sum(OVERSIZED_PENALTY if u.op == OVERSIZED else UNEXPLAINED_PENALTY for u in unexplained)
