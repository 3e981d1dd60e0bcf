"""Loaded files as seed records of our services: documents in ``docs`` (or, where a task has no docs service,
files in ``files``), sheets as files in ``files`` (in a folder 'My files'), mail as messages of the user's mailbox
in ``email``, events on the user's calendar in ``calendar``. Ids are the loaded ids with the table's prefix
(``doc_``, ``file_``, ``msg_``, ``evt_``).

:func:`grounded_seed` makes a whole seed of them for one user (the LLM generator shows it and keeps it in its
drafts); the families place the same records beside their procedural ones
(``families/kit/resources_common.py``).
"""

from __future__ import annotations

from typing import Any

from coworkenv.synth.generate.resources.model import Document, Event, Mail, ResourceSet, Sheet

Json = dict[str, Any]
Seed = dict[str, dict[str, list[Json]]]
MY_FILES = "fld_my_files"
"""The files folder loaded files are put in."""


def document_record(doc: Document, owner: str, created_at: str) -> Json:
    return {
        "id": f"doc_{doc.id}",
        "title": doc.title,
        "content": doc.text,
        "owner": owner,
        "workspace_role": "editor",
        "revision": 1,
        "created_at": created_at,
    }


def file_names(items: list[Document | Sheet]) -> dict[str, str]:
    """Names the files service takes, by resource id: the file's own ('.markdown' as '.md'), or, for names two
    files share, its path with ' - ' between the folders."""
    plain = {i.id: _md(i.name) for i in items}
    taken = [n.casefold() for n in plain.values()]
    return {
        i.id: n if taken.count(n.casefold()) == 1 else _md(i.path.replace("/", " - "))
        for i, n in zip(items, plain.values(), strict=True)
    }


def _md(name: str) -> str:
    return name[: -len(".markdown")] + ".md" if name.lower().endswith(".markdown") else name


def file_record(item: Document | Sheet, owner: str, created_at: str, name: str | None = None) -> Json:
    return {
        "id": f"file_{item.id}",
        "name": name or _md(item.name),
        "folder_id": MY_FILES,
        "content": item.text,
        "owner": owner,
        "shares": [],
        "created_at": created_at,
    }


def folder_record() -> Json:
    return {"id": MY_FILES, "name": "My files", "parent_id": None, "created_at": "2025-10-01T09:00:00Z"}


def message_record(mail: Mail, mailbox: str) -> Json:
    record: Json = {
        "id": f"msg_{mail.id}",
        "mailbox": mailbox,
        "from_address": mail.from_address,
        "from_name": mail.from_name,
        "to": list(mail.to),
        "cc": list(mail.cc),
        "subject": mail.subject,
        "body": mail.body,
        "label_ids": ["SENT"] if mail.from_address == mailbox else ["INBOX"],
        "attachments": [
            {"filename": a.filename, "mime_type": a.mime_type, "size_bytes": a.size_bytes} for a in mail.attachments
        ],
        "date": mail.date,
    }
    if mail.message_id:
        record["internet_message_id"] = mail.message_id
    return record


def event_record(event: Event, calendar_id: str, user: str, created_at: str) -> Json:
    """The event on ``calendar_id``; organized by the file's ORGANIZER, else by ``user``."""
    return {
        "id": f"evt_{event.id}",
        "calendar_id": calendar_id,
        "summary": event.summary[:300],
        "description": event.description,
        "location": event.location,
        "start": event.start,
        "end": event.end,
        "organizer": event.organizer or user,
        "attendees": [{"email": a.email, "response_status": a.response} for a in event.attendees],
        "created_at": min(created_at, event.start),
    }


def organizers(events: tuple[Event, ...] | list[Event], members: set[str]) -> list[Json]:
    """Calendar members for the events' organizers who are not members yet (the service needs them)."""
    out: list[Json] = []
    for e in events:
        if e.organizer and e.organizer not in members:
            members.add(e.organizer)
            key = "usr_" + "".join(ch if ch.isalnum() else "_" for ch in e.organizer.split("@")[0].lower())
            name = e.organizer_name or e.organizer.split("@")[0]
            out.append({"id": f"{key}_{len(members)}", "email": e.organizer, "name": name, "is_primary": False})
    return out


def grounded_seed(rs: ResourceSet, services: tuple[str, ...], user: str, name: str, created_at: str) -> Seed:
    """The loaded records of ``services`` as a seed of their own, with ``user`` (named ``name``) as the primary
    member, mailbox and calendar owner of each: what the LLM generator shows and keeps."""
    member = {"id": "usr_me", "email": user, "name": name, "is_primary": True}
    seed: Seed = {}
    if "docs" in services and rs.documents:
        docs = [document_record(d, user, created_at) for d in rs.documents]
        seed["docs"] = {"users": [dict(member)], "documents": docs}
    files: list[Document | Sheet] = [*rs.sheets, *(rs.documents if "docs" not in services else ())]
    if "files" in services and files:
        names = file_names(files)
        rows = [file_record(f, user, created_at, names[f.id]) for f in files]
        seed["files"] = {"users": [dict(member)], "folders": [folder_record()], "files": rows}
    if "email" in services and rs.mails:
        box = {"id": "mbx_me", "address": user, "name": name, "is_primary": True}
        seed["email"] = {"mailboxes": [box], "messages": [message_record(m, user) for m in rs.mails]}
    if "calendar" in services and rs.events:
        users = [dict(member), *organizers(rs.events, {user})]
        cal = {"id": "cal_me", "owner": user, "summary": name, "is_primary": True}
        events = [event_record(e, "cal_me", user, created_at) for e in rs.events]
        seed["calendar"] = {"users": users, "calendars": [cal], "events": events}
    return seed
