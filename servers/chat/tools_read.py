"""Reading tools of the chat service: channels, history, search, threads and the member directory."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coworkenv.servers.chat.common import (
    ChannelRef,
    MessageId,
    acting_user,
    channel_by_ref,
    channel_summary,
    message_by_id,
    message_view,
    readable_channel_ids,
    require_read,
    user_by_ref,
)
from coworkenv.servers.chat.models import ChannelPage, MessagePage, Thread, User, UserPage
from coworkenv.servers.kit import PageSize, PageToken, Timestamp, ToolContext, Where, tool

_IS_MEMBER = "json_has(channels.members, ?)"


@tool(read_only=True)
def list_channels(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the channel name or topic. Example: 'finance'")] = None,
    member_only: Annotated[
        bool, Field(description="true: only channels the acting user is a member of. Example: false")
    ] = False,
    include_direct_messages: Annotated[
        bool, Field(description="true: also list the acting user's direct-message conversations. Example: false")
    ] = False,
    page_size: PageSize = 50,
    page_token: PageToken = None,
) -> ChannelPage:
    """List the channels the acting user can see, by name: every public channel and the private ones they are a
    member of, with the topic, member count and whether they are a member (is_member). Set
    include_direct_messages to also list their DM conversations (after the channels)."""
    user = acting_user(ctx)
    where = Where().raw(f"((is_private = 0 AND is_dm = 0) OR {_IS_MEMBER})", user["id"])
    if not include_direct_messages:
        where.raw("is_dm = 0")
    if member_only:
        where.has_tag("channels.members", user["id"])
    where.text(["name", "topic"], query and query.lstrip("#"))
    rows, total, nxt = ctx.paginate("channels", where.sql, where.params, "is_dm, name, id", page_size, page_token)
    return ChannelPage(items=[channel_summary(r, user) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_channel_history(
    ctx: ToolContext,
    channel: ChannelRef,
    oldest: Annotated[
        Timestamp | None,
        Field(description="Only messages posted at or after this time. Example: '2026-02-27T00:00:00Z'"),
    ] = None,
    latest: Annotated[
        Timestamp | None, Field(description="Only messages posted before this time. Example: '2026-03-01T00:00:00Z'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> MessagePage:
    """Read a channel or DM conversation, newest message first. Lists top-level messages; a message with
    reply_count > 0 starts a thread, read it with get_thread. Public channels can be read without joining."""
    user = acting_user(ctx)
    row = channel_by_ref(ctx, channel)
    require_read(row, user)
    where = (
        Where().eq("channel_id", row["id"]).raw("thread_id IS NULL").gte("created_at", oldest).lt("created_at", latest)
    )
    rows, total, nxt = ctx.paginate(
        "messages", where.sql, where.params, "created_at DESC, id DESC", page_size, page_token
    )
    return MessagePage(items=[message_view(ctx, m, row) for m in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def search_messages(
    ctx: ToolContext,
    query: Annotated[
        str | None, Field(description="Text to find in messages (literal, any case). Example: 'bank details'")
    ] = None,
    channel: Annotated[
        str | None, Field(description="Only in this channel (id or name) or DM (id). Example: '#finance'")
    ] = None,
    from_user: Annotated[
        str | None, Field(description="Only messages by this member (id or email). Example: 'lena.ortiz@brightwave.io'")
    ] = None,
    after: Annotated[
        Timestamp | None, Field(description="Posted at or after this time. Example: '2026-02-20T00:00:00Z'")
    ] = None,
    before: Annotated[
        Timestamp | None, Field(description="Posted before this time. Example: '2026-03-01T00:00:00Z'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> MessagePage:
    """Search messages and thread replies in every conversation the acting user can read (public channels, their
    private channels and DMs), newest first. All filters combine (AND); omit one to not filter on it."""
    user = acting_user(ctx)
    if channel:
        row = channel_by_ref(ctx, channel)
        require_read(row, user)
        scope = [row["id"]]
    else:
        scope = readable_channel_ids(ctx, user)
    where = Where().any_of("channel_id", scope) if scope else Where().raw("0")
    where.text(["text"], query)
    if from_user:
        where.eq("user_id", user_by_ref(ctx, from_user, "from_user")["id"])
    where.gte("created_at", after).lt("created_at", before)
    rows, total, nxt = ctx.paginate(
        "messages", where.sql, where.params, "created_at DESC, id DESC", page_size, page_token
    )
    return MessagePage(items=[message_view(ctx, m) for m in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_thread(ctx: ToolContext, message_id: MessageId) -> Thread:
    """Read a whole thread: the message that started it and every reply, oldest first. Give the id of the first
    message or of any reply."""
    user = acting_user(ctx)
    msg = message_by_id(ctx, message_id)
    root = message_by_id(ctx, msg["thread_id"]) if msg["thread_id"] else msg
    channel = channel_by_ref(ctx, root["channel_id"])
    require_read(channel, user)
    replies = ctx.table("messages").select("thread_id = ?", [root["id"]], order_by="created_at, id")
    return Thread(
        channel_id=root["channel_id"],
        parent=message_view(ctx, root, channel),
        replies=[message_view(ctx, r, channel) for r in replies],
    )


@tool(read_only=True)
def list_users(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the name, email or title. Example: 'finance'")] = None,
    page_size: PageSize = 50,
    page_token: PageToken = None,
) -> UserPage:
    """List the members of the chat workspace by name, with their email and job title."""
    where = Where().text(["name", "email", "title"], query)
    rows, total, nxt = ctx.paginate("users", where.sql, where.params, "name, id", page_size, page_token)
    return UserPage(items=[User.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_user(
    ctx: ToolContext,
    user: Annotated[str, Field(description="The member's user id or email. Example: 'lena.ortiz@brightwave.io'")],
) -> User:
    """Read one member's profile: full name, email and job title. Use it to learn who someone is, or to turn
    a user id seen on a message into a name and email."""
    return User.model_validate(user_by_ref(ctx, user, "user"))
