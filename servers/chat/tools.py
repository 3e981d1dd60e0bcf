"""Tools of the chat service. Names and vocabulary follow the widely used Slack Web API.

The tools live in three modules (reading, posting, channels); this one gathers them in the order the agent
sees them.
"""

from __future__ import annotations

from coworkenv.servers.chat.tools_channels import create_channel, invite_to_channel, join_channel
from coworkenv.servers.chat.tools_read import (
    get_channel_history,
    get_thread,
    get_user,
    list_channels,
    list_users,
    search_messages,
)
from coworkenv.servers.chat.tools_write import add_reaction, post_message, reply_in_thread, send_direct_message

TOOLS = (
    list_channels,
    get_channel_history,
    search_messages,
    get_thread,
    post_message,
    reply_in_thread,
    send_direct_message,
    add_reaction,
    join_channel,
    create_channel,
    invite_to_channel,
    list_users,
    get_user,
)
