"""What a folder of a user's files loads into: documents, sheets, mails and events, each with an id made from its
path (the same folder gives the same ids), and the lines about the files that could not be loaded.

Everything here is a frozen dataclass of plain values, so a resource set crosses process boundaries (the
procedural generator's worker processes) and hashes to one fingerprint (:meth:`ResourceSet.fingerprint`), which
a synthesis run's journal records so that ``--resume`` refuses a folder whose files changed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation

KINDS = ("document", "sheet", "mail", "event")


@dataclass(frozen=True)
class Document:
    """A Markdown or text file: its title is its first heading (or its file name)."""

    id: str
    path: str
    """Relative to the folder, with '/' between parts. Example: 'notes/offsite.md'"""
    name: str
    title: str
    text: str


@dataclass(frozen=True)
class Sheet:
    """A CSV file: its text as written, and its parsed header and rows (values as text)."""

    id: str
    path: str
    name: str
    text: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def column(self, name: str) -> list[str]:
        i = self.header.index(name)
        return [r[i] for r in self.rows]


@dataclass(frozen=True)
class Attachment:
    filename: str
    mime_type: str
    size_bytes: int


@dataclass(frozen=True)
class Mail:
    """An .eml message: sender, recipients, subject, date (UTC, ISO), the text of its body, attachments named."""

    id: str
    path: str
    from_address: str
    from_name: str
    to: tuple[str, ...]
    cc: tuple[str, ...]
    subject: str
    date: str
    body: str
    attachments: tuple[Attachment, ...] = ()
    message_id: str = ""


@dataclass(frozen=True)
class Attendee:
    email: str
    name: str = ""
    response: str = "needsAction"


@dataclass(frozen=True)
class Event:
    """A VEVENT of an .ics file: times in UTC (ISO), attendees, location, organizer (empty when none)."""

    id: str
    path: str
    summary: str
    start: str
    end: str
    location: str = ""
    description: str = ""
    organizer: str = ""
    organizer_name: str = ""
    attendees: tuple[Attendee, ...] = ()


@dataclass(frozen=True)
class ResourceSet:
    """The records loaded from one folder, and one line per file that could not be loaded."""

    folder: str
    documents: tuple[Document, ...] = ()
    sheets: tuple[Sheet, ...] = ()
    mails: tuple[Mail, ...] = ()
    events: tuple[Event, ...] = ()
    problems: tuple[str, ...] = field(default=(), compare=False)

    def __len__(self) -> int:
        return len(self.documents) + len(self.sheets) + len(self.mails) + len(self.events)

    def counts(self) -> dict[str, int]:
        return {
            "documents": len(self.documents),
            "sheets": len(self.sheets),
            "mails": len(self.mails),
            "events": len(self.events),
        }

    def fingerprint(self) -> str:
        """A hash of what was loaded (not of the folder's name): same files, same fingerprint."""
        data = {k: [asdict(x) for x in getattr(self, k)] for k in ("documents", "sheets", "mails", "events")}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def summary(self) -> str:
        """'3 documents, 2 sheets, 4 mails, 1 event'."""
        parts = [(len(self.documents), "document"), (len(self.sheets), "sheet"), (len(self.mails), "mail")]
        parts.append((len(self.events), "event"))
        return ", ".join(f"{n} {word}{'' if n == 1 else 's'}" for n, word in parts)


def number(text: str) -> Decimal | None:
    """A spreadsheet value as a number: '1,234.50', '$1234.5', '-12', '€ 40' → Decimal; anything else → None."""
    cleaned = text.strip().replace(",", "").replace(" ", "")
    for sign in ("$", "€", "£", "USD", "EUR", "GBP"):
        cleaned = cleaned.replace(sign, "")
    if not cleaned or len(cleaned) > 20:
        return None
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None
