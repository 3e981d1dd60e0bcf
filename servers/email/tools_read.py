"""Reading tools of the email service, and the helpers every email tool shares."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import Field

from coworkenv.servers.email.models import (
    SYSTEM_LABELS,
    LabelInfo,
    LabelList,
    Message,
    MessagePage,
    MessageSummary,
    Profile,
    Thread,
    normalise_address,
)
from coworkenv.servers.kit import (
    NotFound,
    PageSize,
    PageToken,
    ServiceError,
    Timestamp,
    ToolContext,
    Where,
    tool,
)
from coworkenv.servers.kit.sqlfunctions import list_holds_text

Row = dict[str, Any]

MessageId = Annotated[str, Field(description="The message's id, from search_messages. Example: 'msg_7Hq2LkP0aZ31Xc'")]


# ---------------------------------------------------------------------------------------------- helpers
def addresses(values: Iterable[str], argument: str) -> list[str]:
    """Normalised, de-duplicated addresses; a malformed one is a business error naming the argument."""
    out: list[str] = []
    for value in values:
        try:
            address = normalise_address(value)
        except ValueError as exc:
            raise ServiceError(
                f"{argument}: {exc}.", "Fix the address and call again; each list item holds one address."
            ) from None
        if address not in out:
            out.append(address)
    return out


def mailbox(ctx: ToolContext) -> Row:
    """The mailbox a tool acts in: the user's own (the primary one). Only the Python API acts in another held
    mailbox, by naming its address as ``ToolContext.member``; no tool argument can."""
    boxes = ctx.table("mailboxes")
    if ctx.member is None:
        rows = boxes.select("is_primary = 1", order_by="id", limit=1)
        if rows:
            return rows[0]
        raise ServiceError("This email service has no primary mailbox, so no one to act as.", _held(ctx))
    address = addresses([ctx.member], "member")[0]
    rows = boxes.select("address = ?", [address], order_by="id", limit=1)
    if not rows:
        raise ServiceError(f"No mailbox for {address!r} in this service.", _held(ctx))
    return rows[0]


def _held(ctx: ToolContext) -> str:
    held = ", ".join(r["address"] for r in ctx.table("mailboxes").select(order_by="address"))
    return f"Mailboxes held: {held or '(none)'}."


def message(ctx: ToolContext, box: Row, message_id: str) -> Row:
    row = ctx.table("messages").get(message_id)
    if row is None or row["mailbox"] != box["address"]:
        raise NotFound(
            "message", message_id, f"Use search_messages to find the message's id in {box['address']}'s mailbox."
        )
    return row


def label_id(ctx: ToolContext, box: Row, label: str) -> str:
    """A label id from a system label name, a user label id, or a user label name (any case)."""
    if label.upper() in SYSTEM_LABELS:
        return label.upper()
    labels = ctx.table("labels")
    row = labels.get(label)
    if row is not None and row["mailbox"] == box["address"]:
        return label
    named = labels.select("mailbox = ? AND casefold(name) = ?", [box["address"], label.casefold()], limit=1)
    if named:
        return str(named[0]["id"])
    raise NotFound("label", label, "Use list_labels to see this mailbox's labels, or create_label to make one.")


def has_label(column: str = "label_ids") -> str:
    return f"json_has(messages.{column}, ?)"


_NOT_SPAM_TRASH = (
    f"NOT ({list_holds_text('messages.label_ids', 'TRASH')} OR {list_holds_text('messages.label_ids', 'SPAM')})"
)


# ---------------------------------------------------------------------------------------------- tools
@tool(read_only=True)
def get_profile(ctx: ToolContext) -> Profile:
    """Who you are in this email service: the mailbox's address and display name, and its message, thread and
    unread-inbox counts. Call it first to learn the user's own address."""
    box = mailbox(ctx)
    msgs = ctx.table("messages")
    where = "mailbox = ?"
    total = msgs.count(where, [box["address"]])
    threads = {r["thread_id"] for r in msgs.select(where, [box["address"]])}
    unread = msgs.count(
        f"{where} AND {has_label()} AND {has_label()} AND {_NOT_SPAM_TRASH}",
        [box["address"], "INBOX", "UNREAD"],
    )
    return Profile(
        address=box["address"],
        name=box["name"],
        is_primary=box["is_primary"],
        messages_total=total,
        threads_total=len(threads),
        inbox_unread=unread,
    )


@tool(read_only=True)
def search_messages(
    ctx: ToolContext,
    text: Annotated[
        str | None, Field(description="Words to find in the subject, body or sender (literal). Example: 'invoice'")
    ] = None,
    from_address: Annotated[
        str | None, Field(description="Part of the sender's address or name. Example: 'stellarprint.com'")
    ] = None,
    to_address: Annotated[
        str | None, Field(description="Part of a To, Cc or Bcc address. Example: 'jamie.lee@northwind.com'")
    ] = None,
    subject: Annotated[str | None, Field(description="Text in the subject. Example: 'renewal'")] = None,
    label_ids: Annotated[
        list[str] | None,
        Field(description="Only messages carrying all these labels (ids or names). Example: ['INBOX', 'UNREAD']"),
    ] = None,
    is_unread: Annotated[bool | None, Field(description="true: only unread; false: only read. Example: true")] = None,
    has_attachment: Annotated[
        bool | None, Field(description="true: only messages with attachments. Example: true")
    ] = None,
    after: Annotated[
        Timestamp | None, Field(description="Dated at or after this time. Example: '2026-02-20T00:00:00Z'")
    ] = None,
    before: Annotated[
        Timestamp | None, Field(description="Dated before this time. Example: '2026-03-01T00:00:00Z'")
    ] = None,
    include_spam_trash: Annotated[
        bool, Field(description="Also search messages in TRASH and SPAM (left out unless asked for). Example: false")
    ] = False,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> MessagePage:
    """Search one mailbox's messages, newest first, like Gmail's search box. All filters combine (AND); omit a
    filter to not use it. Text filters match literally and ignore case. Returns summaries with a snippet; use
    get_message for the whole body or get_thread for the conversation."""
    box = mailbox(ctx)
    where = (
        Where()
        .eq("mailbox", box["address"])
        .text(["subject", "body", "from_name", "from_address"], text)
        .text(["from_address", "from_name"], from_address)
        .text(["subject"], subject)
        .text([], to_address, lists=['messages."to"', 'messages."cc"', 'messages."bcc"'])
    )
    wanted = [label_id(ctx, box, label) for label in label_ids or []]
    if is_unread is not None:
        (where.has_tag if is_unread else where.lacks_tag)("messages.label_ids", "UNREAD")
    for label in wanted:
        where.has_tag("messages.label_ids", label)
    if not include_spam_trash and not {"TRASH", "SPAM"} & set(wanted):
        where.raw(_NOT_SPAM_TRASH)
    if has_attachment is not None:
        where.raw(f"json_array_length(attachments) {'>' if has_attachment else '='} 0")
    where.gte("date", after).lt("date", before)
    rows, total, nxt = ctx.paginate("messages", where.sql, where.params, "date DESC, id", page_size, page_token)
    return MessagePage(items=[MessageSummary.of(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_message(ctx: ToolContext, message_id: MessageId) -> Message:
    """Read one message in full: sender, recipients, subject, body, labels, attachments and thread id.
    Reading does not mark it read; remove the UNREAD label with modify_labels for that."""
    return Message.model_validate(message(ctx, mailbox(ctx), message_id))


@tool(read_only=True)
def get_thread(
    ctx: ToolContext,
    thread_id: Annotated[str, Field(description="The thread id of a message. Example: 'msg_7Hq2LkP0aZ31Xc'")],
) -> Thread:
    """Read a whole conversation in one mailbox, oldest message first (drafts and trashed messages included)."""
    box = mailbox(ctx)
    rows = ctx.table("messages").select("mailbox = ? AND thread_id = ?", [box["address"], thread_id], "date, id")
    if not rows:
        raise NotFound("thread", thread_id, "Use search_messages; each message carries its thread_id.")
    messages = [Message.model_validate(r) for r in rows]
    return Thread(id=thread_id, subject=messages[0].subject, messages=messages)


@tool(read_only=True)
def list_labels(ctx: ToolContext) -> LabelList:
    """List a mailbox's labels: the system labels (INBOX, SENT, DRAFT, TRASH, SPAM, STARRED, IMPORTANT, UNREAD)
    and the user's own labels, each with how many messages carry it and how many of those are unread."""
    box = mailbox(ctx)
    msgs = ctx.table("messages")
    where = f"mailbox = ? AND {has_label()}"
    labels: list[tuple[str, str, Literal["system", "user"]]] = [(name, name, "system") for name in SYSTEM_LABELS]
    labels += [
        (r["id"], r["name"], "user") for r in ctx.table("labels").select("mailbox = ?", [box["address"]], "name, id")
    ]
    return LabelList(
        labels=[
            LabelInfo(
                id=lid,
                name=name,
                type=kind,
                messages_total=msgs.count(where, [box["address"], lid]),
                messages_unread=msgs.count(f"{where} AND {has_label()}", [box["address"], lid, "UNREAD"]),
            )
            for lid, name, kind in labels
        ]
    )
