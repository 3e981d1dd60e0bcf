"""The simulated user's edits are the baseline, never a licence (issue 31).

A field the simulated user set (actor ``user`` in the audit log) and the reference left as the user set it is
expected at the user's value (``ExpectedChange.by_user``). A run that changes it to anything else is judged by
value like any expected field (:mod:`.guard`, :mod:`.values`); a run that puts it back as it was in the seed
leaves no change of that field in the final diff, so :func:`undone_user_edits` finds it here: the user wrote it
in this run, and the run's final record holds the seed's value instead of the user's. A record the user
created (where the reference leaves created records in that table) and the agent deleted is found here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.synth.contract.guard import FieldChange, State, UnexplainedChange
from coworkenv.synth.contract.matchers import short
from coworkenv.synth.contract.task import ExpectedChange
from coworkenv.synth.contract.values import history, same_value

UNDONE_USER_EDIT = "undone user edit"


def _row(state: State, service: str, table: str, rid: str) -> Mapping[str, Any] | None:
    return next((r for r in state.get(service, {}).get(table, ()) if str(r.get("id")) == rid), None)


def undone_user_edits(
    initial: State,
    final: State,
    expected: Sequence[ExpectedChange],
    audit: Sequence[Mapping[str, Any]],
    *,
    explain: bool = True,
) -> list[UnexplainedChange]:
    """The fields the simulated user set in this run that the run put back to the seed's value (each an
    unexplained change: the user's work undone)."""
    wanted = [e for e in expected if e.op == "update" and e.by_user and e.id is not None and e.values is not None]
    creates = {(e.service, e.table) for e in expected if e.op == "create"}
    if not wanted and not creates:
        return []
    run = history(audit, initial)
    out = [
        UnexplainedChange(
            service=service,
            table=table,
            id=rid,
            op=UNDONE_USER_EDIT,
            fields=[FieldChange(field="record", old="created by the user", new="deleted")],
        )
        for (service, table, rid), actor in sorted(run.created_by.items())
        if actor == "user"
        and (service, table) in creates
        and run.deleted_by.get((service, table, rid), "").startswith("agent")
        and _row(final, service, table, rid) is None
    ]
    for e in wanted:
        assert e.id is not None and e.by_user is not None and e.values is not None
        if (e.service, e.table, e.id) not in run.user_versions:
            continue  # the user never made that edit in this run (its turn did not come)
        before, after = _row(initial, e.service, e.table, e.id), _row(final, e.service, e.table, e.id)
        if before is None or after is None:
            continue  # a deleted record is judged by the diff
        undone = [
            f
            for f in e.by_user
            if f in e.values and same_value(after.get(f), before.get(f)) and not same_value(e.values[f], before.get(f))
        ]
        if undone:
            fields = [
                FieldChange(
                    field=f,
                    old=short(e.values[f], 60) if explain else "",
                    new=short(after.get(f), 60) if explain else "",
                )
                for f in undone
            ]
            out.append(UnexplainedChange(service=e.service, table=e.table, id=e.id, op=UNDONE_USER_EDIT, fields=fields))
    return out
