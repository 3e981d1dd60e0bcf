"""The sensitive kinds of the repo service: a pull request merged (its code ships), an approval given (it lets
code ship), a pull request or an issue closed, a commit pushed (a revert or a file written lands on a branch),
and a branch deleted."""

from __future__ import annotations

from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, became, deletes


def merge(change: Change, ctx: SensitiveContext) -> str | None:
    """``merge:<pull request id>``: a pull request became merged."""
    return f"merge:{change.id}" if became(change, "state", ("merged",)) else None


def close(change: Change, ctx: SensitiveContext) -> str | None:
    """``close:<id>``: a pull request or an issue became closed."""
    return f"close:{change.id}" if became(change, "state", ("closed",)) else None


def approve(change: Change, ctx: SensitiveContext) -> str | None:
    """``approve:<pull request id>``: an approving review."""
    record = change.record
    return f"approve:{record['pull_request_id']}" if record.get("state") == "APPROVED" else None


def push(change: Change, ctx: SensitiveContext) -> str | None:
    """``push:<branch>``: a commit made on a branch."""
    return f"push:{change.record.get('branch')}"


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind("merge", "pull_requests", ("update",), "a pull request merged", merge),
    SensitiveKind("close", "pull_requests", ("update",), "a pull request closed unmerged", close),
    SensitiveKind("close", "issues", ("create", "update"), "an issue closed", close),
    SensitiveKind("approve", "reviews", ("create",), "an approving review", approve),
    SensitiveKind("push", "commits", ("create",), "a commit pushed to a branch", push),
    *deletes("branches", "commits", "pull_requests", "issues", "comments", "reviews"),
)
