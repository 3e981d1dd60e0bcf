"""Checks bound to a user turn: ``after_turn: N`` on a completion check ("paid after the approval"),
``before_turn: N`` on a forbidden action ("paying before the approval").

**Where a turn came.** The audit log holds no message, only calls; a user turn that edits the workspace leaves
its edits there (actor ``user``), in order, made just before its message. So the user's N-th later turn came at
the audit row of its first edit: the user rows of the log are matched to ``user.turns`` by their numbers of
edits. A turn without edits cannot be located, and static validation rejects binding a check to it.

**What counts.** A bound check is judged on the audit rows of its window only — from the turn's first edit on
(``after_turn``), or before it (``before_turn``) — and of a table only the records the agent wrote (created or
changed) in that window: the user's own edits there are the baseline, not the agent's work. A turn that never came opens no window for ``after_turn`` (nothing counts) and
closes none for ``before_turn`` (everything counts).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.verdict import Context


def turn_starts(task: Task, audit: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """For each of the user's later turns, the audit index of its first edit (None: no edits, or it never came)."""
    turns = task.user.turns if task.user is not None else []
    users = [i for i, row in enumerate(audit) if str(row.get("actor", "")).split(":", 1)[0] == "user"]
    out: list[int | None] = []
    seen = 0
    for turn in turns:
        n = len(turn.edits)
        out.append(users[seen] if n and seen < len(users) else None)
        seen += n
    return out


def bound(ctx: Context, after_turn: int | None = None, before_turn: int | None = None) -> Context:
    """The context a check bound to a turn is judged in (the same context when it is not bound)."""
    if after_turn is None and before_turn is None:
        return ctx
    starts = turn_starts(ctx.task, ctx.audit)
    end = len(ctx.audit)
    first, last = 0, end
    if after_turn is not None:
        at = starts[after_turn - 1] if after_turn <= len(starts) else None
        first = end if at is None else at
    if before_turn is not None:
        at = starts[before_turn - 1] if before_turn <= len(starts) else None
        last = end if at is None else at
    return dataclasses.replace(ctx, window=(first, max(first, last)))


__all__ = ["bound", "turn_starts"]
