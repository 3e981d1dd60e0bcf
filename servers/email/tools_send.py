"""Writing tools of the email service: send, reply, forward, and drafts.

Sending stores the sender's copy (label SENT) and delivers a copy (INBOX, UNREAD) to every recipient whose
mailbox this service holds; mail to other addresses leaves the service and is only in SENT.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.email.models import Message
from coworkenv.servers.email.tools_read import MessageId, Row, addresses, mailbox, message
from coworkenv.servers.kit import ServiceError, ToolContext, tool

To = Annotated[list[str], Field(description="Recipient addresses, one per item. Example: ['jamie.lee@northwind.com']")]
Cc = Annotated[list[str], Field(description="Addresses to copy. Example: ['priya.shah@brightwave.io']")]
Bcc = Annotated[list[str], Field(description="Blind copies, hidden from the other recipients. Example: []")]
Subject = Annotated[str, Field(min_length=1, max_length=998, description="Example: 'Your renewal quote'")]
Body = Annotated[str, Field(description="The plain-text body. Example: 'Hi Jamie,\\n\\nThanks for ...'")]
DraftId = Annotated[str, Field(description="The draft's message id, from create_draft. Example: 'msg_Q8w1ZtY6pLr0Ms'")]


def _prefixed(prefix: str, subject: str, also: tuple[str, ...] = ()) -> str:
    lowered = subject.lower()
    if any(lowered.startswith(p.lower()) for p in (prefix, *also)):
        return subject
    return f"{prefix} {subject}".strip()


def _insert(ctx: ToolContext, box: Row, fields: dict[str, Any]) -> Row:
    message_id = ctx.new_id("messages")
    row = {
        "id": message_id,
        "mailbox": box["address"],
        "thread_id": message_id,
        "from_address": box["address"],
        "from_name": box["name"],
        "date": ctx.now_iso(),
        **fields,
    }
    return ctx.table("messages").insert(row)


def _deliver(ctx: ToolContext, sent: Row) -> Message:
    """Deliver a sent message to the held mailboxes of its recipients; returns the sender's copy."""
    msgs = ctx.table("messages")
    for address in dict.fromkeys(sent["to"] + sent["cc"] + sent["bcc"]):
        if address == sent["mailbox"]:  # mail to oneself: one copy, in both SENT and INBOX
            sent = msgs.update(sent["id"], {"label_ids": sorted({*sent["label_ids"], "INBOX"})})
            continue
        if not ctx.table("mailboxes").count("address = ?", [address]):
            continue
        copy_id = ctx.new_id("messages")
        parent = msgs.select(
            "mailbox = ? AND internet_message_id = ?", [address, sent["in_reply_to"] or ""], "date, id", limit=1
        )
        keep = ("from_address", "from_name", "to", "cc", "subject", "body", "attachments", "date")
        msgs.insert(
            {
                **{k: sent[k] for k in keep},
                "id": copy_id,
                "mailbox": address,
                "thread_id": parent[0]["thread_id"] if parent else copy_id,
                "internet_message_id": sent["internet_message_id"],
                "in_reply_to": sent["in_reply_to"],
                "label_ids": ["INBOX", "UNREAD"],
            }
        )
    return Message.model_validate(sent)


def _recipients(to: list[str], cc: list[str], bcc: list[str]) -> dict[str, list[str]]:
    return {"to": addresses(to, "to"), "cc": addresses(cc, "cc"), "bcc": addresses(bcc, "bcc")}


def _require_recipients(fields: Row) -> None:
    if not (fields["to"] or fields["cc"] or fields["bcc"]):
        raise ServiceError("The message has no recipients.", "Give at least one address in to, cc or bcc.")


def _reply_target(box: Row, original: Row, reply_all: bool) -> tuple[list[str], list[str]]:
    """(to, cc) of a reply: the sender, or for one's own message its recipients; reply-all adds the others."""
    if original["from_address"] == box["address"]:
        return list(original["to"]), list(original["cc"]) if reply_all else []
    to = [original["from_address"]]
    if not reply_all:
        return to, []
    return to, [a for a in original["to"] + original["cc"] if a != box["address"] and a not in to]


def _not_a_draft(original: Row, action: str) -> None:
    if "DRAFT" in original["label_ids"]:
        raise ServiceError(
            f"Message {original['id']} is a draft and cannot be {action}.",
            "Edit it with update_draft or send it with send_draft.",
        )


@tool()
def send_message(
    ctx: ToolContext,
    to: To,
    subject: Subject,
    body: Body,
    cc: Cc = [],  # noqa: B006
    bcc: Bcc = [],  # noqa: B006
) -> Message:
    """Send a new email (a new thread) from the mailbox. It lands in the sender's SENT and, unread, in the INBOX of
    each recipient whose mailbox this service holds. To answer an existing email use reply_to_message instead,
    which keeps the thread. Returns the sender's copy."""
    box = mailbox(ctx)
    fields: dict[str, Any] = _recipients(to, cc, bcc)
    _require_recipients(fields)
    sent = _insert(ctx, box, {**fields, "subject": subject, "body": body, "label_ids": ["SENT"]})
    return _deliver(ctx, sent)


@tool()
def reply_to_message(
    ctx: ToolContext,
    message_id: MessageId,
    body: Body,
    reply_all: Annotated[
        bool, Field(description="true: also to everyone else on the original's To and Cc lines. Example: false")
    ] = False,
    cc: Annotated[list[str], Field(description="More addresses to copy. Example: ['lena.ortiz@brightwave.io']")] = [],  # noqa: B006
) -> Message:
    """Reply to a message, in the same thread, with subject 'Re: <original subject>'. The reply goes to the
    original sender (or, for a message you sent, to its recipients); reply_all adds everyone else who was on it.
    Returns the sender's copy of the reply."""
    box = mailbox(ctx)
    original = message(ctx, box, message_id)
    _not_a_draft(original, "replied to")
    to, copy = _reply_target(box, original, reply_all)
    extra = [a for a in addresses(cc, "cc") if a not in to and a not in copy]
    fields = {"to": to, "cc": copy + extra, "bcc": []}
    _require_recipients(fields)
    sent = _insert(
        ctx,
        box,
        {
            **fields,
            "thread_id": original["thread_id"],
            "in_reply_to": original["internet_message_id"],
            "subject": _prefixed("Re:", original["subject"]),
            "body": body,
            "label_ids": ["SENT"],
        },
    )
    return _deliver(ctx, sent)


@tool()
def forward_message(
    ctx: ToolContext,
    message_id: MessageId,
    to: To,
    body: Annotated[
        str, Field(description="Your note above the forwarded message. Example: 'Lena, can you check this?'")
    ] = "",
    cc: Cc = [],  # noqa: B006
) -> Message:
    """Forward a message, with its attachments, to new recipients; subject 'Fwd: <original subject>'. Your note
    comes first, then the original's header lines and body. Returns the sender's copy."""
    box = mailbox(ctx)
    original = message(ctx, box, message_id)
    _not_a_draft(original, "forwarded")
    fields: dict[str, Any] = _recipients(to, cc, [])
    _require_recipients(fields)
    sender = (
        f"{original['from_name']} <{original['from_address']}>" if original["from_name"] else original["from_address"]
    )
    quoted = (
        "---------- Forwarded message ---------\n"
        f"From: {sender}\nDate: {original['date']}\nSubject: {original['subject']}\n"
        f"To: {', '.join(original['to'])}\n\n{original['body']}"
    )
    sent = _insert(
        ctx,
        box,
        {
            **fields,
            "thread_id": original["thread_id"],
            "subject": _prefixed("Fwd:", original["subject"], ("Fw:",)),
            "body": f"{body}\n\n{quoted}" if body else quoted,
            "attachments": original["attachments"],
            "label_ids": ["SENT"],
        },
    )
    return _deliver(ctx, sent)


@tool()
def create_draft(
    ctx: ToolContext,
    to: To = [],  # noqa: B006
    subject: Annotated[str, Field(max_length=998, description="Example: 'Draft: renewal terms'")] = "",
    body: Body = "",
    cc: Cc = [],  # noqa: B006
    bcc: Bcc = [],  # noqa: B006
    reply_to_message_id: Annotated[
        str | None,
        Field(
            description="Make it a reply draft in this message's thread (default subject 'Re: ...', default "
            "recipient its sender). Example: 'msg_7Hq2LkP0aZ31Xc'"
        ),
    ] = None,
) -> Message:
    """Save a draft (label DRAFT) without sending it, for the user to review. Nobody receives it until
    send_draft; update_draft changes it. Returns the draft, whose id is the draft_id."""
    box = mailbox(ctx)
    fields: dict[str, Any] = {**_recipients(to, cc, bcc), "subject": subject, "body": body, "label_ids": ["DRAFT"]}
    if reply_to_message_id is not None:
        original = message(ctx, box, reply_to_message_id)
        _not_a_draft(original, "replied to")
        fields["thread_id"] = original["thread_id"]
        fields["in_reply_to"] = original["internet_message_id"]
        fields["subject"] = subject or _prefixed("Re:", original["subject"])
        if not (to or cc or bcc):
            fields["to"], fields["cc"] = _reply_target(box, original, False)
    return Message.model_validate(_insert(ctx, box, fields))


def _draft(ctx: ToolContext, box: Row, draft_id: str) -> Row:
    row = message(ctx, box, draft_id)
    if "DRAFT" not in row["label_ids"]:
        raise ServiceError(
            f"Message {draft_id} is not a draft.",
            "Only drafts can be changed or sent this way; create_draft makes one.",
        )
    return row


@tool(idempotent=True)
def update_draft(
    ctx: ToolContext,
    draft_id: DraftId,
    to: Annotated[
        list[str] | None, Field(description="New recipients (replace the old). Example: ['sam@acmerobotics.com']")
    ] = None,
    subject: Annotated[str | None, Field(max_length=998, description="New subject. Example: 'Updated quote'")] = None,
    body: Annotated[str | None, Field(description="New body (replaces the old). Example: 'Hi Sam, ...'")] = None,
    cc: Annotated[list[str] | None, Field(description="New Cc list (replaces the old). Example: []")] = None,
    bcc: Annotated[list[str] | None, Field(description="New Bcc list (replaces the old). Example: []")] = None,
) -> Message:
    """Change a draft before it is sent. Each given field replaces the draft's; omitted fields stay as they are."""
    box = mailbox(ctx)
    row = _draft(ctx, box, draft_id)
    changes: dict[str, Any] = {"date": ctx.now_iso()}
    for name, values in (("to", to), ("cc", cc), ("bcc", bcc)):
        if values is not None:
            changes[name] = addresses(values, name)
    for name, text in (("subject", subject), ("body", body)):
        if text is not None:
            changes[name] = text
    return Message.model_validate(ctx.table("messages").update(row["id"], changes))


@tool()
def send_draft(ctx: ToolContext, draft_id: DraftId) -> Message:
    """Send a saved draft as it stands: it loses the DRAFT label, gains SENT, and is delivered to its recipients.
    Returns the sent message (same id as the draft)."""
    box = mailbox(ctx)
    row = _draft(ctx, box, draft_id)
    if "TRASH" in row["label_ids"]:
        raise ServiceError(f"Draft {draft_id} is in the trash.", "Restore it with untrash_message first.")
    _require_recipients(row)
    if not row["subject"]:
        raise ServiceError(f"Draft {draft_id} has no subject.", "Give it one with update_draft, then send it.")
    labels = sorted({*row["label_ids"], "SENT"} - {"DRAFT"})
    sent = ctx.table("messages").update(row["id"], {"label_ids": labels, "date": ctx.now_iso()})
    return _deliver(ctx, sent)
