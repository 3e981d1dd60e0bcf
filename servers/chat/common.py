"""Helpers every chat tool shares: who acts, finding users, channels and messages, access, and views."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.chat.models import ChannelSummary, MessageView
from coworkenv.servers.kit import NotFound, ServiceError, ToolContext

Row = dict[str, Any]

ChannelRef = Annotated[
    str, Field(min_length=1, description="The channel's id or name ('#' optional). Example: '#support'")
]
MessageId = Annotated[str, Field(description="The message's id, from a history or search. Example: 'M1001'")]
Text = Annotated[
    str, Field(min_length=1, max_length=40_000, description="The message text. Example: 'Ticket tkt_1001 is fixed.'")
]


def acting_user(ctx: ToolContext) -> Row:
    """The member a call acts as: the workspace's primary user, the person the agent works for. (Only the Python
    API may run a call as another member, through ``ToolContext.member``; no tool argument can.)"""
    if ctx.member is None:
        rows = ctx.table("users").select("is_primary = 1", limit=1)
        if not rows:
            raise ServiceError("This workspace has no primary user, so no one to act as.", "Mark one is_primary.")
        return rows[0]
    return user_by_ref(ctx, ctx.member, "member")


def user_by_ref(ctx: ToolContext, ref: str, argument: str) -> Row:
    users = ctx.table("users")
    key = ref.strip()
    row = users.get(key) or next(iter(users.select("email = ?", [key.lower()], limit=1)), None)
    if row is None:
        raise ServiceError(f"{argument}: no member with id or email {ref!r}.", "Use list_users to find members.")
    return row


def channel_by_ref(ctx: ToolContext, ref: str) -> Row:
    """A channel by id or by name (with or without '#'); DMs are found by id."""
    channels = ctx.table("channels")
    key = ref.strip()
    row = channels.get(key)
    if row is None:
        name = key.lstrip("#").lower()
        row = next(iter(channels.select("is_dm = 0 AND name = ?", [name], limit=1)), None)
    if row is None:
        raise NotFound("channel", ref, "Use list_channels to see channel names and ids.")
    return row


def message_by_id(ctx: ToolContext, message_id: str) -> Row:
    return ctx.fetch("messages", message_id, "message", "Use search_messages or get_channel_history to find its id.")


def label(ctx: ToolContext, channel: Row) -> str:
    """How a conversation is shown: '#support', or 'DM: Dana Whitfield & Priya Shah'."""
    if not channel["is_dm"]:
        return f"#{channel['name']}"
    names = sorted(_name(ctx, member) for member in channel["members"])
    return "DM: " + " & ".join(names)


def _name(ctx: ToolContext, user_id: str) -> str:
    row = ctx.table("users").get(user_id)
    return row["name"] if row else user_id


def can_read(channel: Row, user: Row) -> bool:
    return not (channel["is_private"] or channel["is_dm"]) or user["id"] in channel["members"]


def require_read(channel: Row, user: Row) -> None:
    if can_read(channel, user):
        return
    if channel["is_dm"]:
        raise ServiceError(f"{user['name']} is not part of this direct message conversation.")
    raise ServiceError(
        f"#{channel['name']} is a private channel and {user['name']} is not a member.",
        "Ask a member to invite you with invite_to_channel.",
    )


def require_member(channel: Row, user: Row) -> None:
    """Posting needs membership: join a public channel first; a private one needs an invitation."""
    require_read(channel, user)
    if user["id"] not in channel["members"]:
        raise ServiceError(
            f"{user['name']} is not a member of #{channel['name']}.",
            f"Join it with join_channel (channel '#{channel['name']}') first, then post.",
        )


def readable_channel_ids(ctx: ToolContext, user: Row) -> list[str]:
    return [c["id"] for c in ctx.table("channels").select(order_by="id") if can_read(c, user)]


def message_view(ctx: ToolContext, msg: Row, channel: Row | None = None) -> MessageView:
    channel = channel or channel_by_ref(ctx, msg["channel_id"])
    replies = 0 if msg["thread_id"] else ctx.table("messages").count("thread_id = ?", [msg["id"]])
    return MessageView.model_validate(
        {**msg, "user_name": _name(ctx, msg["user_id"]), "channel_name": label(ctx, channel), "reply_count": replies}
    )


def channel_summary(channel: Row, user: Row) -> ChannelSummary:
    others = [m for m in channel["members"] if m != user["id"]]
    return ChannelSummary(
        **{k: channel[k] for k in ("id", "name", "topic", "is_private", "is_dm")},
        member_count=len(channel["members"]),
        is_member=user["id"] in channel["members"],
        dm_with=(others[0] if others else None) if channel["is_dm"] else None,
    )


def post(ctx: ToolContext, channel: Row, user: Row, text: str, thread_id: str | None = None) -> MessageView:
    """Store a message from ``user`` in ``channel`` (membership already checked) and return its view."""
    if not text.strip():
        raise ServiceError("The message text is empty.", "Write the text to post.")
    row = ctx.table("messages").insert(
        {
            "id": ctx.new_id("messages"),
            "channel_id": channel["id"],
            "user_id": user["id"],
            "text": text,
            "thread_id": thread_id,
            "created_at": ctx.now_iso(),
        }
    )
    return message_view(ctx, row, channel)
