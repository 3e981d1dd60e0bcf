"""Tools of the email service. Names and arguments follow the widely used Gmail API vocabulary.

The tools live in three modules (reading, sending, organising); this one gathers them in the order the
agent sees them.
"""

from __future__ import annotations

from coworkenv.servers.email.tools_labels import create_label, modify_labels, trash_message, untrash_message
from coworkenv.servers.email.tools_read import get_message, get_profile, get_thread, list_labels, search_messages
from coworkenv.servers.email.tools_send import (
    create_draft,
    forward_message,
    reply_to_message,
    send_draft,
    send_message,
    update_draft,
)

TOOLS = (
    get_profile,
    search_messages,
    get_message,
    get_thread,
    send_message,
    reply_to_message,
    forward_message,
    create_draft,
    update_draft,
    send_draft,
    modify_labels,
    trash_message,
    untrash_message,
    list_labels,
    create_label,
)
