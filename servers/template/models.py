"""Records of the notes service: one table. Copy this file's shape: a :class:`Record` per table (its first field
is ``id``), a :class:`Table` naming it with the prefix of the ids the service hands out, a page type per list."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from coworkenv.servers.kit import Page, Record, Table, Timestamp

Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class Note(Record):
    """A short note a teammate wrote: a title, a body and who wrote it."""

    id: str = Field(description="The note's id. Example: 'note_standup'")
    title: Title = Field(description="One line. Example: 'Standup moved to 10:00'")
    body: str = Field(default="", max_length=10_000, description="The text. Example: 'From Monday on.'")
    author: str = Field(description="Who wrote it (an email address). Example: 'dana@brightwave.io'")
    created_at: Timestamp = Field(description="When it was written (ISO 8601, UTC).")
    updated_at: Timestamp | None = Field(default=None, description="When it was last edited (ISO 8601, UTC).")


class NotePage(Page[Note]):
    pass


TABLES = (Table("notes", Note, "note_", indexes=(("author",),), volatile=("updated_at",)),)
"""``volatile``: ``update_note`` bumps ``updated_at`` beside a real edit, so the grader's state diff leaves it out (see
``servers/README.md`` for every option of a :class:`Table`)."""
