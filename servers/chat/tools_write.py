"""Posting tools of the chat service: messages, thread replies, direct messages and reactions."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coworkenv.servers.chat.common import (
    ChannelRef,
    MessageId,
    Text,
    acting_user,
    channel_by_ref,
    message_by_id,
    message_view,
    post,
    require_member,
    require_read,
    user_by_ref,
)
from coworkenv.servers.chat.models import REACTION_NAME, MessageView
from coworkenv.servers.kit import ServiceError, ToolContext, tool


@tool()
def post_message(ctx: ToolContext, channel: ChannelRef, text: Text) -> MessageView:
    """Post a new top-level message in a channel the acting user is a member of (join a public channel first with
    join_channel). To answer a message use reply_in_thread; to write to one person use send_direct_message."""
    user = acting_user(ctx)
    row = channel_by_ref(ctx, channel)
    require_member(row, user)
    return post(ctx, row, user, text)


@tool()
def reply_in_thread(ctx: ToolContext, message_id: MessageId, text: Text) -> MessageView:
    """Reply in the thread of a message (starting the thread if it has none). Replying to a reply adds to the same
    thread. The acting user must be a member of the message's channel."""
    user = acting_user(ctx)
    msg = message_by_id(ctx, message_id)
    root = message_by_id(ctx, msg["thread_id"]) if msg["thread_id"] else msg
    channel = channel_by_ref(ctx, root["channel_id"])
    require_member(channel, user)
    return post(ctx, channel, user, text, thread_id=root["id"])


@tool()
def send_direct_message(
    ctx: ToolContext,
    to: Annotated[
        str, Field(description="The member to write to: user id or email. Example: 'marco.rossi@brightwave.io'")
    ],
    text: Text,
) -> MessageView:
    """Send a private direct message to one member. The DM conversation between the two is opened if it does not
    exist yet; its channel_id can then be read with get_channel_history."""
    user = acting_user(ctx)
    other = user_by_ref(ctx, to, "to")
    if other["id"] == user["id"]:
        raise ServiceError("A direct message needs another member.", "Name someone else in to.")
    pair = sorted([user["id"], other["id"]])
    channels = ctx.table("channels")
    found = [c for c in channels.select("is_dm = 1", order_by="id") if sorted(set(c["members"])) == pair]
    if found:
        channel = found[0]
    else:  # a failed post below rolls the new conversation back with it
        channel = channels.insert(
            {
                "id": ctx.new_id("channels"),
                "name": "",
                "is_private": True,
                "is_dm": True,
                "members": pair,
                "created_by": user["id"],
                "created_at": ctx.now_iso(),
            }
        )
    return post(ctx, channel, user, text)


@tool(idempotent=True)
def add_reaction(
    ctx: ToolContext,
    message_id: MessageId,
    name: Annotated[
        str, Field(min_length=1, max_length=66, description="The emoji name, colons optional. Example: 'thumbsup'")
    ],
) -> MessageView:
    """Add an emoji reaction from the acting user to a message they can read. Reacting twice with the same emoji
    changes nothing."""
    user = acting_user(ctx)
    msg = message_by_id(ctx, message_id)
    channel = channel_by_ref(ctx, msg["channel_id"])
    require_read(channel, user)
    emoji = name.strip().strip(":").lower()
    if not REACTION_NAME.match(emoji):
        raise ServiceError(
            f"{name!r} is not an emoji name.", "Use a name like 'thumbsup', 'eyes' or 'white_check_mark'."
        )
    reactions = [dict(r) for r in msg["reactions"]]
    current = next((r for r in reactions if r["name"] == emoji), None)
    if current is not None and user["id"] in current["users"]:
        return message_view(ctx, msg, channel)
    if current is None:
        reactions.append({"name": emoji, "users": [user["id"]]})
    else:
        current["users"] = [*current["users"], user["id"]]
    row = ctx.table("messages").update(message_id, {"reactions": reactions})
    return message_view(ctx, row, channel)
