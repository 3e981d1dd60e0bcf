"""Tools of the bookmarks service: plain ``def`` tools the kit wraps once (argument checks, the simulated clock, one
transaction, one audit row). ``update_bookmark`` shows a record update: ``ctx.table(name).update(id, changes)``
merges the changes, validates the whole record again and returns it."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, ToolContext, Where, tool
from coworkenv_bookmarks.models import Bookmark, BookmarkPage, Folder, FolderPage, Status, Title

BookmarkId = Annotated[str, Field(description="The bookmark's id. Example: 'bm_style_guide'")]
FolderId = Annotated[str, Field(description="A folder's id. Example: 'fld_reading'")]
Tags = Annotated[list[Annotated[str, Field(max_length=50)]], Field(max_length=20, description="Example: ['design']")]
_FIND = "Use list_bookmarks to find the bookmark's id (ids start with 'bm_')."
_FOLDERS = "Use list_folders to find the folder's id (ids start with 'fld_')."


class DeletedBookmark(BaseModel):
    id: str = Field(description="The id of the bookmark that was deleted.")
    deleted: bool = Field(description="True: the bookmark no longer exists.")


@tool(read_only=True)
def list_bookmarks(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the title, URL or tags. Example: 'style'")] = None,
    folder_id: Annotated[str | None, Field(description="Only bookmarks in this folder. Example: 'fld_reading'")] = None,
    status: Annotated[Status | None, Field(description="Only bookmarks with this status. Example: 'broken'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> BookmarkPage:
    """List bookmarks, newest first, optionally only those matching some text, in one folder or of one status."""
    where = Where().text(["title", "url"], query, lists=["tags"])
    if folder_id is not None:
        where.raw("folder_id = ?", folder_id)
    if status is not None:
        where.raw("status = ?", status)
    rows, total, nxt = ctx.paginate("bookmarks", where.sql, where.params, "created_at DESC, id", page_size, page_token)
    return BookmarkPage(items=[Bookmark.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def list_folders(ctx: ToolContext, page_size: PageSize = 20, page_token: PageToken = None) -> FolderPage:
    """List the folders bookmarks can be filed in, by name."""
    rows, total, nxt = ctx.paginate("folders", "", [], "name, id", page_size, page_token)
    return FolderPage(items=[Folder.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_bookmark(ctx: ToolContext, bookmark_id: BookmarkId) -> Bookmark:
    """Read one bookmark in full."""
    return Bookmark.model_validate(ctx.fetch("bookmarks", bookmark_id, "bookmark", _FIND))


@tool()
def add_bookmark(
    ctx: ToolContext,
    url: Annotated[str, Field(min_length=1, max_length=2_000, description="Example: 'https://brightwave.io/style'")],
    title: Annotated[Title, Field(description="Example: 'Style guide'")],
    folder_id: Annotated[str | None, Field(description="File it in this folder. Example: 'fld_reading'")] = None,
    tags: Tags = [],  # noqa: B006 (the kit validates a copy)
) -> Bookmark:
    """Save a new bookmark as the current user; returns it with its new id."""
    if folder_id is not None:
        ctx.fetch("folders", folder_id, "folder", _FOLDERS)
    row = {"id": ctx.new_id("bookmarks"), "url": url, "title": title, "tags": tags, "folder_id": folder_id}
    row |= {"saved_by": ctx.member or "me", "created_at": ctx.now_iso()}
    return Bookmark.model_validate(ctx.table("bookmarks").insert(row))


@tool(idempotent=True)
def update_bookmark(
    ctx: ToolContext,
    bookmark_id: BookmarkId,
    title: Annotated[Title | None, Field(description="A new title, or leave out. Example: 'Style guide (v2)'")] = None,
    folder_id: Annotated[str | None, Field(description="Move it to this folder, or leave out.")] = None,
    tags: Annotated[
        list[Annotated[str, Field(max_length=50)]] | None,
        Field(max_length=20, description="The new tags (all of them), or leave out. Example: ['docs']"),
    ] = None,
    status: Annotated[Status | None, Field(description="'archived' keeps it aside; 'ok' brings it back.")] = None,
) -> Bookmark:
    """Change a bookmark's title, folder, tags or status (what is left out stays as it is); returns it as it is
    now. Archive a bookmark (status 'archived') rather than deleting it when it may be wanted again."""
    ctx.fetch("bookmarks", bookmark_id, "bookmark", _FIND)
    if folder_id is not None:
        ctx.fetch("folders", folder_id, "folder", _FOLDERS)
    changes = {"title": title, "folder_id": folder_id, "tags": tags, "status": status}
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes:
        raise ServiceError("Nothing to change.", "Give a new title, folder_id, tags or status.")
    updated = ctx.table("bookmarks").update(bookmark_id, {**changes, "updated_at": ctx.now_iso()})
    return Bookmark.model_validate(updated)


@tool(destructive=True, idempotent=True)
def delete_bookmark(ctx: ToolContext, bookmark_id: BookmarkId) -> DeletedBookmark:
    """Delete a bookmark permanently. This cannot be undone: archive it with update_bookmark to keep it aside."""
    ctx.fetch("bookmarks", bookmark_id, "bookmark", _FIND)
    ctx.table("bookmarks").delete(bookmark_id)
    return DeletedBookmark(id=bookmark_id, deleted=True)


TOOLS = (list_bookmarks, list_folders, get_bookmark, add_bookmark, update_bookmark, delete_bookmark)
