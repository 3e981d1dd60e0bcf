"""Reading tools of the docs service: search, read, the revision history, comments and folders."""

from __future__ import annotations

from typing import Annotated, TypeVar

from pydantic import Field

from coworkenv.servers.docs.access import (
    DocumentId,
    acting_user,
    document,
    revision_view,
    revisions,
    role_of,
    summary,
    view,
)
from coworkenv.servers.docs.models import (
    Comment,
    CommentPage,
    DocumentPage,
    DocumentView,
    Folder,
    FolderPage,
    RevisionPage,
    RevisionSummary,
    RevisionView,
)
from coworkenv.servers.kit import PageSize, PageToken, ServiceError, Timestamp, ToolContext, Where, tool
from coworkenv.servers.kit.members import visible_to

T = TypeVar("T")


def page_of(items: list[T], page_size: int, page_token: str | None) -> tuple[list[T], int, str | None]:
    """One page of a list built in Python, with the same tokens as ToolContext.paginate."""
    if page_token and not page_token.isdigit():
        raise ServiceError(f"page_token {page_token!r} is not valid.", "Pass the next_page_token of the previous page.")
    offset = int(page_token) if page_token else 0
    chunk = items[offset : offset + page_size]
    end = offset + len(chunk)
    return chunk, len(items), (str(end) if end < len(items) else None)


@tool(read_only=True)
def search_documents(
    ctx: ToolContext,
    query: Annotated[
        str | None, Field(description="Text to find in the title or content (literal, any case). Example: 'refund'")
    ] = None,
    owner: Annotated[
        str | None, Field(description="Only documents owned by this email; 'me' for the acting user. Example: 'me'")
    ] = None,
    folder_id: Annotated[
        str | None, Field(description="Only documents in this folder. Example: 'fld_policies'")
    ] = None,
    modified_after: Annotated[
        Timestamp | None, Field(description="Last edited at or after this time. Example: '2026-02-01T00:00:00Z'")
    ] = None,
    modified_before: Annotated[
        Timestamp | None, Field(description="Last edited before this time. Example: '2026-03-01T00:00:00Z'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> DocumentPage:
    """Find documents the acting user can open, most recently edited first. All filters combine (AND); omit one
    to not filter on it. Returns summaries with a snippet; read the whole content with get_document."""
    user = acting_user(ctx)
    where = visible_to(user["email"], "documents.shares").text(["title", "content"], query)
    if owner:
        where.raw("owner = ?", user["email"] if owner.strip().lower() == "me" else owner.strip().lower())
    where.eq("folder_id", folder_id).gte("updated_at", modified_after).lt("updated_at", modified_before)
    rows, total, nxt = ctx.paginate("documents", where.sql, where.params, "updated_at DESC, id", page_size, page_token)
    items = [summary(r, role_of(r, user["email"]) or "viewer") for r in rows]
    return DocumentPage(items=items, total=total, next_page_token=nxt)


@tool(read_only=True)
def get_document(ctx: ToolContext, document_id: DocumentId) -> DocumentView:
    """Read a document: title, full content, owner, sharing, and its current revision number. Pass that number
    as base_revision when you edit, so an edit made in between by someone else is not overwritten."""
    doc, role = document(ctx, document_id, acting_user(ctx))
    return view(doc, role)


@tool(read_only=True)
def list_revisions(
    ctx: ToolContext, document_id: DocumentId, page_size: PageSize = 20, page_token: PageToken = None
) -> RevisionPage:
    """The edit history of a document, newest first: each revision's number, author, time and what the edit did.
    Read one revision's full content with get_revision."""
    doc, _ = document(ctx, document_id, acting_user(ctx))
    rows, total, nxt = page_of(revisions(ctx, doc), page_size, page_token)
    items = [
        RevisionSummary(
            **{k: r[k] for k in ("number", "title", "author", "created_at", "summary")},
            length=len(r["content"]),
            is_current=r["number"] == doc["revision"],
        )
        for r in rows
    ]
    return RevisionPage(
        items=items, total=total, next_page_token=nxt, document_id=document_id, current_revision=doc["revision"]
    )


@tool(read_only=True)
def get_revision(
    ctx: ToolContext,
    document_id: DocumentId,
    revision: Annotated[
        int, Field(ge=1, le=1_000_000_000, description="The revision number, from list_revisions. Example: 2")
    ],
) -> RevisionView:
    """Read one revision of a document: its title and full content as they were right after that edit."""
    doc, _ = document(ctx, document_id, acting_user(ctx))
    history = revisions(ctx, doc)
    row = next((r for r in history if r["number"] == revision), None)
    if row is None:
        kept = ", ".join(str(r["number"]) for r in history)
        raise ServiceError(
            f"Document {document_id} has no revision {revision}.", f"Its history holds revisions: {kept}."
        )
    return revision_view(doc, row)


@tool(read_only=True)
def list_comments(
    ctx: ToolContext,
    document_id: DocumentId,
    include_resolved: Annotated[
        bool, Field(description="false: only open comments; true: resolved ones too. Example: false")
    ] = True,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> CommentPage:
    """The comments on a document, oldest first, with the text each one quotes and whether it is resolved."""
    document(ctx, document_id, acting_user(ctx))
    where = "document_id = ?" + ("" if include_resolved else " AND resolved = 0")
    rows, total, nxt = ctx.paginate("comments", where, [document_id], "created_at, id", page_size, page_token)
    return CommentPage(items=[Comment.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def list_folders(
    ctx: ToolContext,
    parent_id: Annotated[
        str | None, Field(description="Only the folders inside this folder; omit for all. Example: 'fld_policies'")
    ] = None,
    page_size: PageSize = 50,
    page_token: PageToken = None,
) -> FolderPage:
    """List the workspace's folders by name. Pass a folder's id to search_documents or create_document."""
    where = Where().eq("parent_id", parent_id)
    rows, total, nxt = ctx.paginate("folders", where.sql, where.params, "name, id", page_size, page_token)
    return FolderPage(items=[Folder.model_validate(r) for r in rows], total=total, next_page_token=nxt)
