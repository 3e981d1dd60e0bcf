"""Records of the chat service (a Slack-like team chat: members, channels, direct messages, threads).

A direct message conversation is a channel with ``is_dm`` set and exactly two members, as Slack models an
IM. Messages are top-level posts (``thread_id`` null) or replies in a thread (``thread_id`` = the id of the
top-level message that started it). Message ids sort in posting order.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from coworkenv.servers.kit import Page, Record, SeedError, Table, Timestamp

CHANNEL_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")
REACTION_NAME = re.compile(r"^[a-z0-9_+-]{1,64}$")


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


Email = Annotated[str, BeforeValidator(_lower), Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", max_length=254)]


class User(Record):
    name: str = Field(min_length=1, description="Full name, e.g. 'Priya Shah'")
    email: Email
    title: str = ""
    is_primary: bool = Field(default=False, description="The member the tools act as: the person the agent works for")


class Channel(Record):
    name: str = Field(default="", description="Lower-case name without '#', e.g. 'support'; empty for a DM")
    topic: str = ""
    is_private: bool = False
    is_dm: bool = Field(default=False, description="A direct-message conversation between exactly two members")
    members: list[str] = Field(default=[], description="User ids of the members")
    created_by: str | None = None
    created_at: Timestamp


class Reaction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Emoji name without colons, e.g. 'thumbsup'")
    users: list[str] = Field(description="User ids who reacted, in order")


class Message(Record):
    channel_id: str
    user_id: str = Field(description="The author")
    text: str = Field(min_length=1)
    thread_id: str | None = Field(default=None, description="For a reply: the id of the thread's first message")
    reactions: list[Reaction] = []
    created_at: Timestamp


TABLES = (
    Table("users", User, "U", indexes=(("email",),)),
    Table("channels", Channel, "C", indexes=(("name",),), refs=(("created_by", "users"),)),
    Table(
        "messages",
        Message,
        "M",
        indexes=(("channel_id", "created_at"), ("thread_id",)),
        refs=(("channel_id", "channels"), ("user_id", "users"), ("thread_id", "messages")),
    ),
)


# ---------------------------------------------------------------------------------------------- views
class MessageView(Message):
    user_name: str = Field(description="The author's full name")
    channel_name: str = Field(description="'#name' for a channel, 'DM: A & B' for a direct message")
    reply_count: int = Field(description="Replies in the thread this message starts (0 for a reply)")


class MessagePage(Page[MessageView]):
    pass


class ChannelSummary(BaseModel):
    id: str
    name: str
    topic: str
    is_private: bool
    is_dm: bool
    member_count: int
    is_member: bool = Field(description="Whether the acting user is a member (and so may post)")
    dm_with: str | None = Field(description="For a DM: the other member's user id")


class ChannelPage(Page[ChannelSummary]):
    pass


class UserPage(Page[User]):
    pass


class Thread(BaseModel):
    channel_id: str
    parent: MessageView = Field(description="The message that started the thread")
    replies: list[MessageView] = Field(description="The replies, oldest first")


# ---------------------------------------------------------------------------------------------- seed rules
def check_seed(seed: dict[str, list[dict[str, Any]]]) -> None:
    """Rules across records: unique emails, one primary member at most; valid, unique channel names; members and
    reactions naming users of the seed; DMs between exactly two members; replies to a top-level message of the
    same channel."""
    user_ids = {u["id"] for u in seed.get("users", [])}
    emails: set[str] = set()
    primary = 0
    for index, user in enumerate(seed.get("users", [])):
        if user["email"] in emails:
            raise SeedError(f"chat.users[{index}] field 'email': {user['email']!r} is already a member")
        emails.add(user["email"])
        primary += bool(user["is_primary"])
        if primary > 1:
            raise SeedError(f"chat.users[{index}] field 'is_primary': only one member can be the primary user")
    names: set[str] = set()
    for index, ch in enumerate(seed.get("channels", [])):
        where = f"chat.channels[{index}]"
        for member in ch["members"]:
            if member not in user_ids:
                raise SeedError(f"{where} field 'members': {member!r} is not the id of any users record in the seed")
        if ch["is_dm"]:
            if len(set(ch["members"])) != 2:
                raise SeedError(f"{where} field 'members': a DM is between exactly two different members")
            continue
        if not CHANNEL_NAME.match(ch["name"]):
            raise SeedError(f"{where} field 'name': {ch['name']!r} is not a channel name (lower case, no '#')")
        if ch["name"] in names:
            raise SeedError(f"{where} field 'name': there is already a channel #{ch['name']}")
        names.add(ch["name"])
    messages = {m["id"]: m for m in seed.get("messages", [])}
    for index, msg in enumerate(seed.get("messages", [])):
        parent = messages.get(msg["thread_id"] or "")
        if parent is not None and (parent["thread_id"] is not None or parent["channel_id"] != msg["channel_id"]):
            raise SeedError(
                f"chat.messages[{index}] field 'thread_id': {parent['id']!r} must be a top-level message of the "
                "same channel"
            )
        for reaction in msg["reactions"]:
            for user in reaction["users"]:
                if user not in user_ids:
                    raise SeedError(
                        f"chat.messages[{index}] field 'reactions': {user!r} is not the id of any users record"
                    )
