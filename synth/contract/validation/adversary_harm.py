"""Adversaries of collateral damage (issue 31): the reference's work plus one harm that no check asks about.

- ``reference+harm:<service>.<tool>``: the reference plus one non-sensitive write on a record it does not touch
  (one call of each writing tool that neither moves money nor deletes, on a record of the table it writes:
  a colleague's meeting moved, a ticket reassigned, a contact's phone overwritten, a post in a channel);
- ``reference+drop``: the reference, then one more write of a field it (or the simulated user) changed, as the
  reference left it but for one line, row, attendee or list item kept from before (a row deleted from the payout
  sheet, a line of the shared doc, an invitee dropped);
- ``reference+digits``: the same with the digits of one kept line changed (every digit of a payout row);
- ``reference+twice``: the reference with the message it was asked to send (mail, chat post, comment) sent a
  second time.

A variant counts only when its run shows the harm (:func:`shows_harm`): the extra write changed a record the
reference leaves alone with no sensitive kind and no allowance covering it; the rewrite lost a unit the
reference keeps; the second message made one more record than the reference makes. A variant that does not
show it is not played against the task (nothing was harmed). One that shows it and still passes the task makes
the task invalid (``ADVERSARY_PASSES``). Deterministic: seeded by the task's id.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from coworkenv.servers.kit import SensitiveContext
from coworkenv.synth.contract.runner import Trial, Workbench, play_now
from coworkenv.synth.contract.task import Step, Task, ToolStep
from coworkenv.synth.contract.validation.adversaries import Adversary
from coworkenv.synth.contract.validation.adversary_args import ArgBuilder, is_money_tool, pools, seed_of, target_ids
from coworkenv.synth.contract.validation.adversary_pools import target_arg, target_table
from coworkenv.synth.contract.validation.adversary_sensitive import touched_ids
from coworkenv.synth.contract.validation.lookup import services
from coworkenv.synth.contract.values import is_free, units

State = Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]]
MAX_HARM_TOOLS = 12
"""At most this many ``reference+harm`` variants a task (one per writing tool, the services taking turns)."""
MESSAGE_TOOL = re.compile(r"send|post|reply|comment|forward|message")
"""The tools that send the message a task asks for (mail, chat post, ticket comment)."""
_DIGIT = str.maketrans("0123456789", "1234567890")
HARM_FIX = (
    "The grader's guard fails a run with any unexplained change; this one went unnoticed. Keep allowed_changes "
    "narrow (by record and field), and let no check or expected change explain more than the task asks for."
)


def reference_trial(bench: Workbench) -> Trial:
    """The reference's own run through the direct door (once per workbench)."""
    memos = bench.validation
    if memos.reference is None:
        memos.reference = play_now(bench, bench.task.reference_solution)
    return memos.reference


def _harm(name: str, description: str, steps: Sequence[Step], detail: str, key: str) -> Adversary:
    return Adversary(name, "harm", description, steps, detail, key)


def _write_calls(task: Task) -> Iterator[tuple[int, ToolStep]]:
    for i, step in enumerate(task.reference_solution):
        spec = services()[step.service].tools_by_name.get(step.tool) if isinstance(step, ToolStep) else None
        if isinstance(step, ToolStep) and spec is not None and not spec.read_only:
            yield i, step


def extra_writes(bench: Workbench) -> list[Adversary]:
    """``reference+harm:<service>.<tool>``: the reference plus one call of each writing tool that neither moves
    money nor deletes, on a record the reference does not touch (the task's distractors first)."""
    task, p = bench.task, pools(bench)
    touched = touched_ids(task, bench.baseline.initial, reference_trial(bench).state)
    distractors = {str(x) for x in task.metadata.get("distractors", [])}
    builder = ArgBuilder(p, random.Random(seed_of(task.id, "reference+harm")))
    queues: list[list[Adversary]] = []
    for service in task.services:
        made: list[Adversary] = []
        for spec in services()[service].tools_by_name.values():
            if spec.read_only or is_money_tool(spec.name) or spec.name.startswith(("delete", "trash", "remove")):
                continue
            ids = target_ids(service, spec, p)
            if ids is not None:
                ids = sorted((i for i in ids if i not in touched), key=lambda i: i not in distractors)
                if not ids:
                    continue
            args = builder.call(service, spec, ids[0] if ids else None)
            if args is None:
                continue
            step = ToolStep(service=service, tool=spec.name, arguments=args)
            on = f" on {ids[0]}" if ids else ""
            made.append(
                _harm(
                    f"reference+harm:{service}.{spec.name}",
                    f"does the reference's work plus one {spec.name}{on}, a write nothing asks for",
                    [*task.reference_solution, step],
                    f"{service}.{spec.name}{on}",
                    f"extra:{service}",
                )
            )
        queues.append(made)
    depth = max((len(q) for q in queues), default=0)
    return [q[i] for i in range(depth) for q in queues if i < len(q)][:MAX_HARM_TOOLS]


def _seed_texts(task: Task) -> list[str]:
    """Every text of the seed and of the user's scripted edits: what a unit kept 'from before' can come from."""
    out: list[str] = []
    stack: list[Any] = [task.initial_records]
    if task.user is not None:
        stack.append([t.model_dump() for t in task.user.turns])
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return out


def _old_units(bench: Workbench) -> set[str]:
    memos = bench.validation
    if memos.old_units is None:
        memos.old_units = {u for text in _seed_texts(bench.task) for u in units(text) or ()}
    return memos.old_units


def _without(value: Any, unit: str, digits: bool = False) -> Any:
    """``value`` with one unit left out (or, with ``digits``, that unit's digits changed)."""
    if isinstance(value, list):
        return [v for v in value if (units([v]) or [""])[0] != unit]
    text = str(value)
    lines = text.split("\n") if "\n" in text else [text]
    out = []
    for line in lines:
        if "\n" not in text and line.strip() != unit:  # one line: the unit is a sentence of it
            line = line.replace(unit, unit.translate(_DIGIT) if digits else "").replace("  ", " ").strip()
        elif line.strip() == unit:
            if not digits:
                continue
            line = line.translate(_DIGIT)
        out.append(line)
    return "\n".join(out)


def _edit_tool(bench: Workbench, service: str, table: str, rid: str, field: str, value: Any) -> ToolStep | None:
    """A call that writes ``value`` into a record's field: a writing tool on that table with an argument named
    after the field (``update_document(content=…)``, ``update_event(attendees=…)``, ``write_file(content=…)``)."""
    p = pools(bench)
    builder = ArgBuilder(p, random.Random(seed_of(bench.task.id, "reference+edit")))
    for spec in services()[service].tools_by_name.values():
        if spec.read_only or field not in spec.args_model.model_fields:
            continue
        if target_table(service, spec, p) != table:
            continue
        args = builder.call(service, spec, rid)
        arg = target_arg(service, spec, p)
        if args is None or arg is None:
            continue
        args = {k: v for k, v in args.items() if k in (spec.args_model.model_json_schema().get("required") or [])}
        args.update({arg: rid, field: value})
        try:
            spec.args_model.model_validate(args)
        except ValidationError:
            continue
        return ToolStep(service=service, tool=spec.name, arguments=args)
    return None


def destructive_edits(bench: Workbench) -> list[Adversary]:
    """``reference+drop`` and ``reference+digits``: the reference, then one more write of a record it (or the
    simulated user) changed, with the field's value as the reference left it but for one line, row or item kept
    from before (in the seed or as the user wrote it): left out, or its digits changed."""
    task, old = bench.task, _old_units(bench)
    initial, final = bench.baseline.initial, reference_trial(bench).state
    found: dict[str, Adversary] = {}
    for service in task.services:
        spec = services()[service]
        for change in spec.diff(initial.get(service, {}), final.get(service, {})):
            if change.op != "update" or change.after is None:
                continue
            for field in change.fields:
                value = change.after.get(field)
                kept = [u for u in units(value) or () if u in old] if is_free(value) else []
                if len(kept) < 2:
                    continue
                numbered = [u for u in kept if any(ch.isdigit() for ch in u)]
                middle = numbered[len(numbered) // 2] if numbered else None
                for mode, unit in (("drop", kept[len(kept) // 2]), ("digits", middle)):
                    slot = f"{mode}{'-item' if isinstance(value, list) else ''}"
                    if slot in found or unit is None or (isinstance(value, list) and mode == "digits"):
                        continue
                    step = _edit_tool(
                        bench, service, change.table, change.id, field, _without(value, unit, mode == "digits")
                    )
                    if step is None:
                        continue
                    what = "leaves out" if mode == "drop" else "changes the digits of"
                    found[slot] = _harm(
                        f"reference+{mode}",
                        f"does the reference's work, then rewrites a field it changed but {what} one line or "
                        "item kept from before",
                        [*task.reference_solution, step],
                        f"{service}.{step.tool} {change.id}.{field}: {unit[:60]!r}",
                        f"{mode}:{service}:{unit}",
                    )
    return [found[m] for m in sorted(found)]


def message_twice(task: Task) -> list[Adversary]:
    """``reference+twice``: the reference with its first message-sending call made again at the end."""
    for _, step in _write_calls(task):
        if MESSAGE_TOOL.search(step.tool):
            return [
                _harm(
                    "reference+twice",
                    "does the reference's work and sends the asked-for message a second time",
                    [*task.reference_solution, step],
                    f"{step.service}.{step.tool} twice",
                    f"twice:{step.service}",
                )
            ]
    return []


def harm_adversaries(bench: Workbench) -> list[Adversary]:
    """Every collateral-damage adversary of the task (empty when the reference does not score: nothing to add
    harm to)."""
    if not any(isinstance(s, ToolStep) for s in bench.task.reference_solution):
        return []
    return [*extra_writes(bench), *destructive_edits(bench), *message_twice(bench.task)]


# ---------------------------------------------------------------------------------------------- proof of harm
def _rows(state: State, service: str) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {(t, str(r.get("id"))): r for t, rows in state.get(service, {}).items() for r in rows}


def _allowed(task: Task, service: str, table: str) -> bool:
    return any(a.service == service and a.table == table for a in task.allowed_changes)


def shows_harm(bench: Workbench, adversary: Adversary, final: State) -> bool:
    """Whether a run of a collateral-damage variant did the harm it was made for (compared with the reference's
    own final state)."""
    task = bench.task
    kind, _, rest = (adversary.key or "").partition(":")
    service, _, unit = rest.partition(":")
    spec = services().get(service)
    if spec is None:
        return False
    after_ref = reference_trial(bench).state.get(service, {})
    changes = spec.diff(after_ref, final.get(service, {}))
    if kind == "extra":
        context = SensitiveContext(bench.baseline.initial.get(service, {}), final.get(service, {}))
        return any(not spec.sensitive_hits(c, context) and not _allowed(task, service, c.table) for c in changes)
    if kind == "twice":
        ref_rows, rows = _rows(reference_trial(bench).state, service), _rows(final, service)
        return len(rows) > len(ref_rows)
    # drop / digits: a record the reference updated now lacks the unit in a field that held it there
    for c in changes:
        if c.op != "update" or c.before is None or c.after is None:
            continue
        for f in c.fields:
            if unit in (units(c.before.get(f)) or ()) and unit not in (units(c.after.get(f)) or ()):
                return True
    return False
