"""Records of the email service (a Gmail-like mail system holding several mailboxes).

Every mailbox holds its own copy of a message, as in Gmail: the sender's copy is labelled SENT, each
recipient's copy INBOX and UNREAD. Read/unread is the UNREAD label. A thread's id is the id of its
first message; copies of one email share its ``internet_message_id`` (the RFC 822 Message-ID).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, model_validator

from coworkenv.servers.kit import Page, Record, SeedError, Table, Timestamp

# Labels every mailbox has; their ids are their names (Gmail's vocabulary).
SYSTEM_LABELS = ("INBOX", "SENT", "DRAFT", "TRASH", "SPAM", "STARRED", "IMPORTANT", "UNREAD")
# System labels that modify_labels may add or remove; the others change only through their own tools.
MANUAL_LABELS = ("INBOX", "SPAM", "STARRED", "IMPORTANT", "UNREAD")

_ADDRESS = re.compile(
    r"^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.[a-z]{2,}$"
)
_NAMED = re.compile(r"^\s*(?P<name>[^<>]*?)\s*<(?P<address>[^<>]+)>\s*$")


def normalise_address(value: str) -> str:
    """A bare, lower-case address from ``jamie.lee@northwind.com`` or ``Jamie Lee <jamie.lee@northwind.com>``.

    Raises ValueError for anything else (two addresses, no domain, spaces...).
    """
    named = _NAMED.match(value)
    address = (named.group("address") if named else value).strip().lower()
    if ".." in address or not _ADDRESS.match(address):
        raise ValueError(f"{value!r} is not a valid email address (write it like 'jamie.lee@northwind.com')")
    return address


Address = Annotated[str, AfterValidator(normalise_address)]


class Mailbox(Record):
    """A mailbox the service holds: the user's own (``is_primary``, where the tools act) or a colleague's (which
    receives the mail sent to it)."""

    address: Address
    name: str = Field(description="Display name used in the From line, e.g. 'Dana Whitfield'")
    is_primary: bool = Field(default=False, description="The user's own mailbox: the one every tool acts in")


class Attachment(BaseModel):
    filename: str = Field(description="e.g. 'INV-2291.pdf'")
    mime_type: str = "application/octet-stream"
    size_bytes: int = Field(default=0, ge=0)


class Message(Record):
    """One copy of an email, in one mailbox."""

    mailbox: Address = Field(description="The address of the mailbox holding this copy")
    thread_id: str = Field(default="", description="The conversation; the id of its first message in this mailbox")
    internet_message_id: str = Field(default="", description="RFC 822 Message-ID, shared by every copy of one email")
    in_reply_to: str | None = Field(default=None, description="internet_message_id of the message this answers")
    from_address: Address
    from_name: str = ""
    to: list[Address] = []
    cc: list[Address] = []
    bcc: list[Address] = Field(default=[], description="Blind copies; only the sender's copy lists them")
    subject: str = ""
    body: str = ""
    label_ids: list[str] = Field(default=[], description="System label names and user label ids, e.g. ['INBOX']")
    attachments: list[Attachment] = []
    date: Timestamp = Field(description="When it was sent or received; for a draft, when it was last saved")
    custom_fields: dict[str, Any] = Field(
        default={},
        description="Other attributes as the source system keeps them. Example: {'labels': ['inbox', 'important']}",
    )

    @model_validator(mode="after")
    def _defaults(self) -> Message:
        if not self.thread_id:
            self.thread_id = self.id
        if not self.internet_message_id:
            self.internet_message_id = f"<{self.id}@{self.from_address.split('@')[1]}>"
        return self


class Label(Record):
    """A user label of one mailbox (system labels are built in and are not stored)."""

    mailbox: Address
    name: str = Field(min_length=1, max_length=225)


TABLES = (
    Table("mailboxes", Mailbox, "mbx_", indexes=(("address",),)),
    Table("messages", Message, "msg_", indexes=(("mailbox", "date"), ("thread_id",), ("internet_message_id",))),
    Table("labels", Label, "lbl_", indexes=(("mailbox",),)),
)


class Profile(BaseModel):
    address: str
    name: str
    is_primary: bool
    messages_total: int = Field(description="Messages in this mailbox, drafts and trash included")
    threads_total: int
    inbox_unread: int = Field(description="Unread messages labelled INBOX (not in trash or spam)")


class MessageSummary(BaseModel):
    """A message as search lists it: read the whole body with get_message."""

    id: str
    thread_id: str
    from_address: str
    from_name: str
    to: list[str]
    cc: list[str]
    subject: str
    snippet: str = Field(description="The start of the body")
    label_ids: list[str]
    has_attachments: bool
    date: str

    @classmethod
    def of(cls, row: dict[str, Any]) -> MessageSummary:
        snippet = " ".join(row["body"].split())
        return cls(
            **{k: row[k] for k in ("id", "thread_id", "from_address", "from_name", "to", "cc", "subject", "date")},
            snippet=snippet if len(snippet) <= 160 else snippet[:157] + "...",
            label_ids=row["label_ids"],
            has_attachments=bool(row["attachments"]),
        )


class MessagePage(Page[MessageSummary]):
    pass


class Thread(BaseModel):
    id: str
    subject: str = Field(description="The subject of the first message")
    messages: list[Message] = Field(description="The conversation in this mailbox, oldest first")


class LabelInfo(BaseModel):
    id: str = Field(description="What to pass as a label id: the name for system labels, 'lbl_...' for user labels")
    name: str
    type: Literal["system", "user"]
    messages_total: int
    messages_unread: int


class LabelList(BaseModel):
    labels: list[LabelInfo] = Field(description="System labels first, then user labels by name")


def check_seed(seed: dict[str, list[dict[str, Any]]]) -> None:
    """Rules across records: at most one primary mailbox, unique addresses, and every message or label
    held by a mailbox of the seed."""
    addresses: set[str] = set()
    primary = 0
    for index, box in enumerate(seed.get("mailboxes", [])):
        if box["address"] in addresses:
            raise SeedError(f"email.mailboxes[{index}] field 'address': {box['address']!r} is already a mailbox")
        addresses.add(box["address"])
        primary += bool(box.get("is_primary"))
        if primary > 1:
            raise SeedError(f"email.mailboxes[{index}] field 'is_primary': only one mailbox can be the primary one")
    for table in ("messages", "labels"):
        for index, row in enumerate(seed.get(table, [])):
            if row["mailbox"] not in addresses:
                raise SeedError(
                    f"email.{table}[{index}] field 'mailbox': {row['mailbox']!r} is not a mailbox of the seed"
                )
