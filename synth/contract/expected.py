"""What a task's reference solution changes (part of the grader's baseline, :mod:`.baseline`).

Validation derives a task's expected changes from its run of the reference solution (its user turns included)
and stores them with the task (``Task.expected_changes``); for a task that does not carry them, the caller that
builds its baseline derives them (:meth:`~coworkenv.synth.contract.baseline.Baseline.of`). The grader never does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.synth.contract.guard import ServiceLookup, State, service_changes
from coworkenv.synth.contract.task import ExpectedChange, Task
from coworkenv.synth.contract.values import history, value_terms


def derive_expected(
    services: ServiceLookup, task: Task, initial: State, final: State, audit: Sequence[Mapping[str, Any]] = ()
) -> list[ExpectedChange]:
    """The expected changes of a task, from the states before and after its reference solution and the run's
    audit rows (who wrote what: the simulated user's edits are the baseline, :mod:`.values`)."""
    out: list[ExpectedChange] = []
    creates: Counter[tuple[str, str, tuple[str, ...]]] = Counter()
    changes = service_changes(services, task.services, initial, final)
    run = history(audit, initial)
    made = {c.change.id for c in changes if c.change.op == "create"}
    for c in changes:
        ch = c.change
        if ch.op == "create":
            creates[(ch.service, ch.table, tuple(c.keys))] += 1
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
    for (service, table, keys), n in sorted(creates.items()):
        out.append(ExpectedChange(service=service, table=table, op="create", keys=list(keys), count=n))
    return out


_AUDIENCE_KINDS = ("external_share:", "external_invite:", "external_post:")


def stale_keys(expected: Sequence[ExpectedChange]) -> bool:
    """Whether stored expected changes were derived before the sharing, invitation and outside-post kinds named
    their audience (``external_share:<id>`` where now ``external_share:<id>:<outsiders>``): matched against
    today's keys they would explain nothing; or before updates kept their values (issue 31): they would explain
    any value. A baseline treats them as missing (derived again)."""
    return any(k.startswith(_AUDIENCE_KINDS) and k.count(":") == 1 for e in expected for k in e.keys) or any(
        e.op == "update" and e.values is None for e in expected
    )
