"""Channel tools of the chat service: join, create, invite."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coworkenv.servers.chat.common import ChannelRef, acting_user, channel_by_ref, require_member, user_by_ref
from coworkenv.servers.chat.models import CHANNEL_NAME, Channel
from coworkenv.servers.kit import ServiceError, ToolContext, tool

Members = Annotated[
    list[str],
    Field(max_length=100, description="Members by user id or email. Example: ['lena.ortiz@brightwave.io']"),
]


@tool(idempotent=True)
def join_channel(ctx: ToolContext, channel: ChannelRef) -> Channel:
    """Join a public channel so the acting user can post in it. Private channels need an invitation from a member
    (invite_to_channel). Joining a channel one is already in changes nothing."""
    user = acting_user(ctx)
    row = channel_by_ref(ctx, channel)
    if row["is_dm"]:
        raise ServiceError("A direct message conversation cannot be joined.", "Use send_direct_message instead.")
    if user["id"] in row["members"]:
        return Channel.model_validate(row)
    if row["is_private"]:
        raise ServiceError(
            f"#{row['name']} is private and cannot be joined.", "Ask a member to invite you with invite_to_channel."
        )
    return Channel.model_validate(ctx.table("channels").update(row["id"], {"members": [*row["members"], user["id"]]}))


@tool()
def create_channel(
    ctx: ToolContext,
    name: Annotated[
        str,
        Field(
            min_length=1,
            max_length=81,
            description="Lower-case letters, digits, '-' and '_', up to 80 characters ('#' optional). "
            "Example: 'northwind-onboarding'",
        ),
    ],
    topic: Annotated[
        str, Field(max_length=250, description="What the channel is for. Example: 'Northwind SSO rollout'")
    ] = "",
    is_private: Annotated[
        bool, Field(description="true: only invited members can see and join it. Example: false")
    ] = False,
    members: Members = [],  # noqa: B006
) -> Channel:
    """Create a channel with the acting user as its first member, adding the members given. Names are unique;
    if the channel exists already, join it instead."""
    user = acting_user(ctx)
    clean = name.strip().lstrip("#")
    if not CHANNEL_NAME.match(clean):
        raise ServiceError(
            f"{name!r} is not a valid channel name.",
            "Use lower-case letters, digits, '-' and '_' only, up to 80 characters, e.g. 'q1-refunds'.",
        )
    channels = ctx.table("channels")
    if channels.count("is_dm = 0 AND name = ?", [clean]):
        raise ServiceError(f"A channel #{clean} already exists.", "Join it with join_channel, or choose another name.")
    member_ids = [user["id"]]
    for ref in members:
        member = user_by_ref(ctx, ref, "members")
        if member["id"] not in member_ids:
            member_ids.append(member["id"])
    row = channels.insert(
        {
            "id": ctx.new_id("channels"),
            "name": clean,
            "topic": topic,
            "is_private": is_private,
            "members": member_ids,
            "created_by": user["id"],
            "created_at": ctx.now_iso(),
        }
    )
    return Channel.model_validate(row)


@tool(idempotent=True)
def invite_to_channel(ctx: ToolContext, channel: ChannelRef, users: Members) -> Channel:
    """Add members to a channel the acting user is a member of (the only way into a private channel). Members
    already in the channel are left as they are."""
    user = acting_user(ctx)
    row = channel_by_ref(ctx, channel)
    if row["is_dm"]:
        raise ServiceError("Nobody can be added to a direct message conversation.", "Create a channel instead.")
    require_member(row, user)
    if not users:
        raise ServiceError("users is empty.", "Name at least one member to invite.")
    member_ids = list(row["members"])
    for ref in users:
        member = user_by_ref(ctx, ref, "users")
        if member["id"] not in member_ids:
            member_ids.append(member["id"])
    if member_ids == row["members"]:
        return Channel.model_validate(row)
    return Channel.model_validate(ctx.table("channels").update(row["id"], {"members": member_ids}))
