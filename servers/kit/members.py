"""Who a call acts as, and who a record is shared with, for services with a ``users`` table of workspace
members (docs, files)."""

from __future__ import annotations

from typing import Any

from coworkenv.servers.kit.context import ToolContext
from coworkenv.servers.kit.errors import ServiceError
from coworkenv.servers.kit.query import Where
from coworkenv.servers.kit.sqlfunctions import field_holds
from coworkenv.servers.kit.store import Row


def acting_user(ctx: ToolContext) -> Row:
    """The member a call acts as: the workspace's primary user, the person the agent works for. (Only the Python
    API may run a call as another member, through ``ToolContext.member``; no tool argument can.)"""
    named = named_member(ctx)
    if named is not None:
        return named
    rows = ctx.table("users").select("is_primary = 1", limit=1)
    if not rows:
        raise ServiceError("This workspace has no primary user, so no one to act as.", members_hint(ctx))
    return rows[0]


def named_member(ctx: ToolContext) -> Row | None:
    """The member the Python API runs this call as (``ToolContext.member``, by id or email), or None when it names
    none: the call is the acting identity's own. Services whose users carry no primary user (tickets, crm) write
    this member as the author of what a call records, and no one (the agent's side) otherwise."""
    if ctx.member is None:
        return None
    key = ctx.member.strip()
    users = ctx.table("users")
    row = users.get(key) or next(iter(users.select("email = ?", [key.lower()], limit=1)), None)
    if row is None:
        raise ServiceError(f"{ctx.member[:200]!r} is not a member of this workspace.", members_hint(ctx))
    return row


def visible_to(email: str, shares: str) -> Where:
    """The records a member can open: those they own, those every workspace member has a role on, and those
    whose ``shares`` (a column: a JSON list of ``{"email", "role"}``) name them."""
    shared, params = field_holds(shares, "email", email)
    return Where().raw(f"(owner = ? OR workspace_role IS NOT NULL OR {shared})", email, *params)


def members_hint(ctx: ToolContext) -> str:
    emails = ", ".join(r["email"] for r in ctx.table("users").select(order_by="email"))
    return f"Members are: {emails or '(none)'}."


def shared_with(shares: list[dict[str, Any]], address: str, role: str) -> list[dict[str, Any]]:
    """``shares`` with ``address`` given ``role`` (in place of any role it had)."""
    return [*(s for s in shares if s["email"] != address), {"email": address, "role": role}]


def unshared(shares: list[dict[str, Any]], address: str, what: str) -> list[dict[str, Any]]:
    """``shares`` without ``address``; an error naming who it is shared with when ``address`` is not there.
    ``what`` names the record, e.g. "File fil_123"."""
    kept = [s for s in shares if s["email"] != address]
    if len(kept) == len(shares):
        names = ", ".join(s["email"] for s in shares) or "nobody"
        raise ServiceError(f"{what} is not shared with {address}.", f"It is shared with: {names}.")
    return kept
