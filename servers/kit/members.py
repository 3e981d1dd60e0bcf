"""Who a call acts as, for services with a ``users`` table of workspace members (docs, files)."""

from __future__ import annotations

from coworkenv.servers.kit.context import ToolContext
from coworkenv.servers.kit.errors import ServiceError
from coworkenv.servers.kit.store import Row


def acting_user(ctx: ToolContext) -> Row:
    """The member a call acts as: the workspace's primary user, the person the agent works for. (Only the Python
    API may run a call as another member, through ``ToolContext.member``; no tool argument can.)"""
    users = ctx.table("users")
    if ctx.member is None:
        rows = users.select("is_primary = 1", limit=1)
        if not rows:
            raise ServiceError("This workspace has no primary user, so no one to act as.", members_hint(ctx))
        return rows[0]
    key = ctx.member.strip()
    row = users.get(key) or next(iter(users.select("email = ?", [key.lower()], limit=1)), None)
    if row is None:
        raise ServiceError(f"{ctx.member[:200]!r} is not a member of this workspace.", members_hint(ctx))
    return row


def members_hint(ctx: ToolContext) -> str:
    emails = ", ".join(r["email"] for r in ctx.table("users").select(order_by="email"))
    return f"Members are: {emails or '(none)'}."
