"""What a task's reference solution changes (part of the grader's baseline, :mod:`.baseline`).

Validation derives a task's expected changes from its run of the reference solution (its user turns included)
and stores them with the task (``Task.expected_changes``); for a task that does not carry them, the caller that
builds its baseline derives them (:meth:`~coworkenv.synth.contract.baseline.Baseline.of`). The grader never does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.synth.contract.guard import ServiceLookup, State, checks_met, service_changes
from coworkenv.synth.contract.task import ExpectedChange, Task
from coworkenv.synth.contract.values import history, is_free, value_terms


def derive_expected(
    services: ServiceLookup, task: Task, initial: State, final: State, audit: Sequence[Mapping[str, Any]] = ()
) -> list[ExpectedChange]:
    """The expected changes of a task, from the states before and after its reference solution and the run's
    audit rows (who wrote what: the simulated user's edits are the baseline, :mod:`.values`)."""
    out: list[ExpectedChange] = []
    creates: dict[tuple[str, str, tuple[str, ...]], list[tuple[dict[str, Any], list[str]]]] = {}
    changes = service_changes(services, task.services, initial, final)
    run = history(audit, initial)
    made = {c.change.id for c in changes if c.change.op == "create"}
    for c in changes:
        ch = c.change
        if ch.op == "create":
            met = [task.completion_checks[i].id for i in checks_met(task, ch.service, ch.table, ch.after)]
            creates.setdefault((ch.service, ch.table, tuple(c.keys)), []).append((template(ch.after or {}, made), met))
        elif ch.op == "delete":
            out.append(ExpectedChange(service=ch.service, table=ch.table, op=ch.op, id=ch.id, keys=c.keys))
        else:
            fields = sorted(ch.fields)
            key = (ch.service, ch.table, ch.id)
            values, kept, by_user = value_terms(key, ch.before or {}, ch.after or {}, fields, run, made)
            out.append(
                ExpectedChange(
                    service=ch.service,
                    table=ch.table,
                    op=ch.op,
                    id=ch.id,
                    fields=fields,
                    keys=c.keys,
                    values=values,
                    kept=kept or None,
                    by_user=by_user or None,
                )
            )
    for (service, table, keys), made_here in sorted(creates.items()):
        made_here.sort(key=lambda r: json.dumps(r, sort_keys=True, default=str))
        out.append(
            ExpectedChange(
                service=service,
                table=table,
                op="create",
                keys=list(keys),
                count=len(made_here),
                records=[r for r, _ in made_here],
                meets=[m for _, m in made_here],
            )
        )
    return out


def template(record: Mapping[str, Any], made: set[str]) -> dict[str, Any]:
    """What a created record holds in its determined fields (:func:`determined`): its single values, less its id
    and any value that holds the id of a record the run made (a new thread, an id-derived message id)."""
    return {
        name: value
        for name, value in record.items()
        if name != "id" and determined(value) and not (isinstance(value, str) and any(m in value for m in made))
    }


def determined(value: Any) -> bool:
    """Whether a created record's value is one a right run must repeat: a number, a flag, null, or a string without
    spaces (an id, an address, a status, a time, a currency); not free text, a title or a list."""
    if isinstance(value, str):  # an empty text is a text left empty, not a value
        return bool(value.strip()) and not is_free(value) and not any(c.isspace() for c in value.strip())
    return value is None or isinstance(value, bool | int | float)


_AUDIENCE_KINDS = ("external_share:", "external_invite:", "external_post:")


def stale_keys(expected: Sequence[ExpectedChange]) -> bool:
    """Whether stored expected changes were derived before the sharing, invitation and outside-post kinds named
    their audience (``external_share:<id>`` where now ``external_share:<id>:<outsiders>``): matched against
    today's keys they would explain nothing; or before updates kept their values (issue 31): they would explain
    any value; or before creates kept their records (issue 42): they would explain any record. A baseline treats them
    as missing (derived again)."""
    return any(k.startswith(_AUDIENCE_KINDS) and k.count(":") == 1 for e in expected for k in e.keys) or any(
        (e.op == "update" and e.values is None) or (e.op == "create" and (e.records is None or e.meets is None))
        for e in expected
    )
