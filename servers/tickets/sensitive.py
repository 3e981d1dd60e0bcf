"""The sensitive kinds of the tickets service: public replies to customers, tickets closed, records deleted.

An internal note (``public`` false) is not sensitive; neither is a public comment written by an end-user
(the customer's own words): only a public reply from our side, which the customer reads.
"""

from __future__ import annotations

from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, became, deletes

CLOSED = ("solved", "closed")


def public_reply(change: Change, ctx: SensitiveContext) -> str | None:
    """``public_reply:<ticket id>``: a public comment by an agent (or by no named author: the acting agent)."""
    comment = change.record
    if not comment.get("public"):
        return None
    author = comment.get("author_id")
    roles = {u["id"]: u.get("role") for u in ctx.rows("users")}
    if author is not None and roles.get(author) == "end-user":
        return None
    return f"public_reply:{comment['ticket_id']}"


def close(change: Change, ctx: SensitiveContext) -> str | None:
    """``close:<ticket id>``: a ticket's status changed to solved or closed."""
    return f"close:{change.id}" if became(change, "status", CLOSED) else None


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind("public_reply", "comments", ("create",), "a public reply the customer reads", public_reply),
    SensitiveKind("close", "tickets", ("create", "update"), "a ticket solved or closed", close),
    *deletes("organizations", "users", "tickets", "comments"),
)
