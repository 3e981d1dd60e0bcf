"""What the resource families share: families whose subject is a record of a user's own files (``coworkenv
synth --from DIR``), placed in the task's services beside the usual procedural backdrop.

A :class:`ResourceFamily` says which loaded files it can take as its subject (:meth:`~ResourceFamily.fits`) and
makes stand-in files of its own (:meth:`~ResourceFamily.stand_in`) for runs without ``--from``, so it builds
tasks either way through one code path: :func:`grounding` picks the set, :func:`place` writes its records into
the builder (documents into docs, or files where the task has no docs; sheets into files; mail into the user's
mailbox; events onto the user's calendar), with the members, mailboxes and calendars they need.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field
from datetime import timedelta
from typing import ClassVar

from coworkenv.servers.kit import parse_time
from coworkenv.synth.generate.families.kit.base import Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.calendar_common import cal_id, calendar
from coworkenv.synth.generate.families.kit.files_common import Drive, drive
from coworkenv.synth.generate.families.kit.multiturn import workspace
from coworkenv.synth.generate.families.kit.names import USER
from coworkenv.synth.generate.families.kit.seeds import Cast
from coworkenv.synth.generate.resources.model import Document, Event, Mail, ResourceSet, Sheet
from coworkenv.synth.generate.resources.records import (
    document_record,
    event_record,
    file_names,
    file_record,
    folder_record,
    message_record,
    organizers,
)

MAX_PLACED = 25
"""The most loaded records of one kind placed in a task (its subject always among them)."""
CREATED = 30
"""Days before the task's now that loaded documents and files were created."""


class ResourceFamily(Family):
    """A family whose subject is one of a user's loaded files (or, without them, a stand-in of its own)."""

    grounded: ClassVar[bool] = True

    @classmethod
    @abstractmethod
    def fits(cls, rs: ResourceSet) -> bool:
        """Whether the loaded files hold a subject for this family."""

    @abstractmethod
    def stand_in(self, b: TaskBuilder) -> ResourceSet:
        """Files of the family's own making, for a task built without ``--from``."""


def grounding(family: ResourceFamily, b: TaskBuilder) -> tuple[ResourceSet, bool]:
    """(the files the task is about, whether they are the user's own): the builder's loaded files where they fit
    the family, else the family's stand-ins."""
    rs = b.resources
    if rs is not None and family.fits(rs):
        return rs, True
    return family.stand_in(b), False


@dataclass
class Placed:
    """Where a resource set's records went in one task: resource id → record id, per kind."""

    documents: dict[str, str] = field(default_factory=dict)
    """A document's id in docs (``doc_…``) or, where the task has no docs service, in files (``file_…``)."""
    sheets: dict[str, str] = field(default_factory=dict)
    mails: dict[str, str] = field(default_factory=dict)
    events: dict[str, str] = field(default_factory=dict)
    drive: Drive | None = None


def ground_time(b: TaskBuilder, rs: ResourceSet) -> None:
    """Move the task's now to the morning after the latest loaded mail (so 'this week' means those mails'
    week), a weekday; call it before anything is dated."""
    if "email" not in b.services or not rs.mails:
        return
    latest = max(parse_time(m.date) for m in rs.mails)
    now = (latest + timedelta(days=1)).replace(hour=b.now.hour, minute=b.now.minute, second=0)
    while now.weekday() >= 5:
        now += timedelta(days=1)
    b.now = now


def _chosen(b: TaskBuilder, items: tuple[object, ...], subjects: set[str]) -> list[object]:
    """The subjects and up to :data:`MAX_PLACED` others, in the files' order."""
    others = [x for x in items if getattr(x, "id", "") not in subjects]
    keep = set(map(id, b.rng.sample(others, min(len(others), MAX_PLACED - len(subjects)))))
    return [x for x in items if getattr(x, "id", "") in subjects or id(x) in keep]


def place(b: TaskBuilder, rs: ResourceSet, *subjects: str) -> Placed:
    """Write the loaded records of the task's services into the builder (members and containers included);
    ``subjects``: resource ids that must be among them."""
    wanted, placed = set(subjects), Placed()
    created = b.ago(days=CREATED)
    docs = [d for d in _chosen(b, rs.documents, wanted) if isinstance(d, Document)]
    sheets = [s for s in _chosen(b, rs.sheets, wanted) if isinstance(s, Sheet)]
    if "docs" in b.services:
        for u in workspace(b, 1).docs_users():
            b.add("docs", "users", u)
        for d in docs:
            placed.documents[d.id] = str(b.add("docs", "documents", document_record(d, USER.email, created))["id"])
    to_files: list[Document | Sheet] = [*sheets, *(docs if "docs" not in b.services else [])]
    if "files" in b.services:
        placed.drive = drive(b)
        b.add("files", "folders", folder_record())
        names = file_names(to_files)
        for f in to_files:
            rid = str(b.add("files", "files", file_record(f, USER.email, created, names[f.id]))["id"])
            (placed.sheets if isinstance(f, Sheet) else placed.documents)[f.id] = rid
    if "email" in b.services:
        Cast(b).email()
        for m in _chosen(b, rs.mails, wanted):
            assert isinstance(m, Mail)
            placed.mails[m.id] = str(b.add("email", "messages", message_record(m, USER.email))["id"])
    if "calendar" in b.services:
        cal = calendar(b)
        events = [e for e in _chosen(b, rs.events, wanted) if isinstance(e, Event)]
        for user in organizers(events, {s.email for s in cal.staff}):
            b.add("calendar", "users", user)
        for e in events:
            record = event_record(e, cal_id(USER), USER.email, created)
            placed.events[e.id] = str(b.add("calendar", "events", record)["id"])
    return placed


def record_of(b: TaskBuilder, service: str, table: str, rid: str) -> Json:
    return next(r for r in b.rows(service, table) if r["id"] == rid)
