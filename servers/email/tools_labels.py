"""Organising tools of the email service: labels, read/unread, trash."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coworkenv.servers.email.models import MANUAL_LABELS, SYSTEM_LABELS, Label, Message
from coworkenv.servers.email.tools_read import MessageId, Row, label_id, mailbox, message
from coworkenv.servers.kit import ServiceError, ToolContext, tool

_WHY_NOT = {
    "DRAFT": "DRAFT follows from create_draft and send_draft.",
    "SENT": "SENT follows from sending.",
    "TRASH": "Use trash_message or untrash_message.",
}


def _set_labels(ctx: ToolContext, row: Row, labels: set[str]) -> Message:
    if labels == set(row["label_ids"]):
        return Message.model_validate(row)
    return Message.model_validate(ctx.table("messages").update(row["id"], {"label_ids": sorted(labels)}))


@tool(idempotent=True)
def modify_labels(
    ctx: ToolContext,
    message_id: MessageId,
    add_label_ids: Annotated[
        list[str], Field(description="Labels to add (ids or names). Example: ['STARRED', 'lbl_Vx81bQ2mTn0Ksa']")
    ] = [],  # noqa: B006
    remove_label_ids: Annotated[
        list[str], Field(description="Labels to remove (ids or names). Example: ['UNREAD', 'INBOX']")
    ] = [],  # noqa: B006
) -> Message:
    """Add and remove labels on one message. Mark it read by removing UNREAD, unread by adding UNREAD; archive it
    by removing INBOX; star it with STARRED; report spam with SPAM. System labels you may change: INBOX, SPAM,
    STARRED, IMPORTANT, UNREAD; user labels come from list_labels or create_label. Returns the updated message."""
    box = mailbox(ctx)
    row = message(ctx, box, message_id)
    if not add_label_ids and not remove_label_ids:
        raise ServiceError("Nothing to change.", "Pass label ids in add_label_ids or remove_label_ids.")
    add = {label_id(ctx, box, label) for label in add_label_ids}
    remove = {label_id(ctx, box, label) for label in remove_label_ids}
    for label in sorted(add | remove):
        if label in SYSTEM_LABELS and label not in MANUAL_LABELS:
            raise ServiceError(f"The {label} label cannot be added or removed with modify_labels.", _WHY_NOT[label])
    both = add & remove
    if both:
        raise ServiceError(
            f"{', '.join(sorted(both))} is both added and removed.", "Name each label in only one of the two lists."
        )
    return _set_labels(ctx, row, (set(row["label_ids"]) | add) - remove)


@tool(destructive=True, idempotent=True)
def trash_message(ctx: ToolContext, message_id: MessageId) -> Message:
    """Move a message to the trash (label TRASH). It drops out of searches unless include_spam_trash is true or
    TRASH is asked for; untrash_message brings it back with its other labels. Returns the updated message."""
    box = mailbox(ctx)
    row = message(ctx, box, message_id)
    return _set_labels(ctx, row, {*row["label_ids"], "TRASH"})


@tool(idempotent=True)
def untrash_message(ctx: ToolContext, message_id: MessageId) -> Message:
    """Take a message out of the trash, back where it was (its other labels were kept). Returns the message."""
    box = mailbox(ctx)
    row = message(ctx, box, message_id)
    return _set_labels(ctx, row, set(row["label_ids"]) - {"TRASH"})


@tool()
def create_label(
    ctx: ToolContext,
    name: Annotated[
        str,
        Field(min_length=1, max_length=225, description="The label's name; '/' nests it. Example: 'Vendors/Stellar'"),
    ],
) -> Label:
    """Create a user label in the mailbox, to file messages with modify_labels. Names are unique per mailbox
    (ignoring case) and cannot be a system label's name. Returns the label with its id."""
    box = mailbox(ctx)
    clean = name.strip()
    if not clean:
        raise ServiceError("A label name cannot be blank.", "Give a name such as 'Vendors/Stellar'.")
    if clean.upper() in SYSTEM_LABELS:
        raise ServiceError(f"{clean!r} is a system label.", f"Use the system label id {clean.upper()!r} directly.")
    labels = ctx.table("labels")
    taken = labels.select("mailbox = ? AND casefold(name) = ?", [box["address"], clean.casefold()], limit=1)
    if taken:
        raise ServiceError(
            f"The label {taken[0]['name']!r} already exists (id {taken[0]['id']}).", "Use that label's id."
        )
    row = labels.insert({"id": ctx.new_id("labels"), "mailbox": box["address"], "name": clean})
    return Label.model_validate(row)
