"""Tools of the notes service. Each tool is a plain ``def`` whose first argument is the kit's context, with typed
arguments that say what they mean and give an example; the docstring is what the agent reads. The kit wraps it
once: argument checks, the simulated clock, one transaction, one audit row."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, ToolContext, Where, tool
from coworkenv.servers.template.models import Note, NotePage, Title

NoteId = Annotated[str, Field(description="The note's id. Example: 'note_standup'")]
_FIND = "Use list_notes to find the note's id (ids start with 'note_')."


class DeletedNote(BaseModel):
    id: str = Field(description="The id of the note that was deleted.")
    deleted: bool = Field(description="True: the note no longer exists.")


@tool(read_only=True)
def list_notes(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the title or body. Example: 'standup'")] = None,
    author: Annotated[str | None, Field(description="Only notes by this author. Example: 'dana@brightwave.io'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> NotePage:
    """List notes, newest first, optionally only those containing some text or written by one author."""
    where = Where().text(["title", "body"], query)
    if author is not None:
        where.raw("author = ?", author)
    rows, total, nxt = ctx.paginate("notes", where.sql, where.params, "created_at DESC, id", page_size, page_token)
    return NotePage(items=[Note.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_note(ctx: ToolContext, note_id: NoteId) -> Note:
    """Read one note in full."""
    return Note.model_validate(ctx.fetch("notes", note_id, "note", _FIND))


@tool()
def create_note(
    ctx: ToolContext,
    title: Annotated[Title, Field(description="One line. Example: 'Standup moved to 10:00'")],
    body: Annotated[str, Field(max_length=10_000, description="The text. Example: 'From Monday on.'")] = "",
) -> Note:
    """Write a new note as the current user (author 'me'); returns it with its new id."""
    row = {"id": ctx.new_id("notes"), "title": title, "body": body, "author": ctx.member or "me"}
    row["created_at"] = ctx.now_iso()
    return Note.model_validate(ctx.table("notes").insert(row))


@tool(idempotent=True)
def update_note(
    ctx: ToolContext,
    note_id: NoteId,
    title: Annotated[Title | None, Field(description="A new title, or leave out. Example: 'Standup at 10:30'")] = None,
    body: Annotated[str | None, Field(max_length=10_000, description="A new text, or leave out.")] = None,
) -> Note:
    """Edit a note's title or text (what is left out stays as it is); returns the note as it is now."""
    ctx.fetch("notes", note_id, "note", _FIND)
    changes = {k: v for k, v in {"title": title, "body": body}.items() if v is not None}
    if not changes:
        raise ServiceError("Nothing to change.", "Give a new title, a new body, or both.")
    return Note.model_validate(ctx.table("notes").update(note_id, {**changes, "updated_at": ctx.now_iso()}))


@tool(destructive=True, idempotent=True)
def delete_note(ctx: ToolContext, note_id: NoteId) -> DeletedNote:
    """Delete a note permanently. This cannot be undone."""
    ctx.fetch("notes", note_id, "note", _FIND)
    ctx.table("notes").delete(note_id)
    return DeletedNote(id=note_id, deleted=True)


TOOLS = (list_notes, get_note, create_note, update_note, delete_note)
