"""The sensitive kinds of the scheduler service: a job disabled (backups, syncs and reports stop), the command a job
runs changed (whatever it now says runs on the company's servers), a job run by hand outside its schedule (its action
really runs: a payment batch sent twice, a purge run early), records deleted.

Disabling a job and changing its action are undone by putting them back before the next run, so both kinds are
reversible; a run that started cannot be taken back.
"""

from __future__ import annotations

from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, became, deletes


def disable(change: Change, _ctx: SensitiveContext) -> str | None:
    """``disable:<job id>``: an enabled job disabled."""
    return f"disable:{change.id}" if change.op == "update" and became(change, "enabled", (False,)) else None


def action_change(change: Change, _ctx: SensitiveContext) -> str | None:
    """``action_change:<job id>``: what an existing job runs changed."""
    return f"action_change:{change.id}" if "action" in change.fields else None


def manual_run(change: Change, _ctx: SensitiveContext) -> str | None:
    """``manual_run:<job id>``: a job started by hand."""
    return f"manual_run:{change.record['job_id']}" if change.record.get("trigger") == "manual" else None


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind("disable", "jobs", ("update",), "a scheduled job disabled", disable, reversible=True),
    SensitiveKind(
        "action_change", "jobs", ("update",), "the command a scheduled job runs changed", action_change, reversible=True
    ),
    SensitiveKind("manual_run", "runs", ("create",), "a job run by hand outside its schedule", manual_run),
    *deletes("jobs", "runs"),
)
