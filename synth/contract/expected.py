"""What a task's reference solution changes, and the task's initial state: the grader's baseline.

Validation derives a task's expected changes by running its reference solution in a fresh environment
(its user turns included) and stores them with the task (``Task.expected_changes``); for a task that does
not carry them, :func:`expected_changes` derives them here, once per task object. Both runs go through
the direct door, whose calls never suspend, so this works from synchronous code and inside an event loop.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.servers.registry import SERVICES
from coworkenv.synth.contract.guard import ServiceLookup, State, service_changes
from coworkenv.synth.contract.runner import Trial, initial_dump, play_now
from coworkenv.synth.contract.task import ExpectedChange, Task
from coworkenv.synth.contract.values import history, value_terms
from coworkenv.synth.contract.verdict import audit_dicts


def initial_state(task: Task) -> State:
    """The state every episode of the task starts from (a dump of its pristine environment), cached."""
    return initial_dump(task)


def expected_from_trial(task: Task, trial: Trial) -> list[ExpectedChange]:
    """The expected changes, from the trial of the task's reference solution."""
    return derive_expected(SERVICES, task, initial_state(task), trial.state, audit_dicts(trial.audit))


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
    any value. The grader derives them again instead."""
    return any(k.startswith(_AUDIENCE_KINDS) and k.count(":") == 1 for e in expected for k in e.keys) or any(
        e.op == "update" and e.values is None for e in expected
    )


def expected_changes(task: Task) -> list[ExpectedChange]:
    """The task's expected changes: as stored with it (unless :func:`stale_keys`), else derived by running its
    reference (cached)."""
    if task.expected_changes is not None and not stale_keys(task.expected_changes):
        return task.expected_changes
    cached = task._cache.get("expected_changes")
    if cached is None:
        trial = play_now(task, task.reference_solution)
        cached = expected_from_trial(task, trial)
        task._cache["expected_changes"] = cached
    return cached
