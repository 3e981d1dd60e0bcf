"""The sensitive kinds of the todo service: a task marked completed (someone's open work closed: reopening it undoes
that) and records deleted (a deleted task is gone, with whatever it said)."""

from __future__ import annotations

from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, became, deletes


def complete(change: Change, _ctx: SensitiveContext) -> str | None:
    """``complete:<task id>``: a task that was not completed became completed."""
    return f"complete:{change.id}" if change.op == "update" and became(change, "status", ("completed",)) else None


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind("complete", "tasks", ("update",), "a task marked completed", complete, reversible=True),
    *deletes("projects", "tasks"),
)
